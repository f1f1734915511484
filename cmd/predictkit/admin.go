package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

const adminUsage = `Usage: predictkit admin [-url URL] [-token TOKEN] [-json] <command> [flags]

Operator tasks over the admin API of a running server. The server is -url
(env PREDICTKIT_URL, default http://127.0.0.1:8080); the operator token is
-token (env PREDICTKIT_ADMIN_TOKEN, the server's own setting). Each command
prints a table, or the server's JSON answer with -json. Amounts are kopecks
(100 kopecks = 1 RUB).

Commands:
`

// adminCommand is one subcommand of predictkit admin.
type adminCommand struct {
	name, args, about string
	// flags defines the command's own flags on fs and returns the
	// function that runs it once they are parsed.
	flags func(fs *flag.FlagSet) func(ctx context.Context, a *adminClient, out *adminOutput) error
}

var adminCommands = []adminCommand{
	{"create-partner", "-name NAME", "create a partner and print its API key (shown this once)", adminCreatePartner},
	{"partners", "", "list every partner, oldest first", adminPartners},
	{"partner", "-id ID", "show a partner and its float", adminShowPartner},
	{"fund-float", "-partner ID -amount KOPECKS", "add to a partner's float", adminFundFloat},
	{"users", "[-query Q] [-limit N] [-cursor C]", "find users by part of their e-mail, name or nickname, or by id, newest first", adminUsers},
	{"credit", "-user ID -amount KOPECKS [-bonus]", "deposit to a user's balance (or bonus balance)", adminCredit},
	{"set-roles", "-user ID [-creator=BOOL] [-stats-viewer=BOOL]", "give or take a user's roles", adminSetRoles},
	{"create-ad", "-user ID -type buy|sell -currency XXX -rate KOPECKS -min KOPECKS -max KOPECKS -methods A,B -duration MINUTES", "publish a P2P ad (approved and active)", adminCreateAd},
	{"moderate-ad", "-id ID [-active=BOOL] [-status pending|approved|rejected]", "activate, deactivate, approve or reject a P2P ad", adminModerateAd},
	{"chats", "[-all] [-limit N]", "list the support chats waiting for an operator (escalated and open); -all lists every session", adminChats},
	{"audit", "", "run the ledger audit; exits 1 when it finds problems", adminAudit},
}

// adminCmd runs `predictkit admin`. It exits 0 on success, 1 when the
// server refuses (its status, error code and detail are printed) or
// cannot be reached, or the audit finds problems, 2 for bad usage.
func adminCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	common := adminCommonFlags{}
	top := flag.NewFlagSet("admin", flag.ContinueOnError)
	top.SetOutput(stderr)
	common.register(top)
	top.Usage = func() { printAdminUsage(top.Output()) }
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if top.NArg() == 0 {
		fmt.Fprintln(stderr, "predictkit admin: no command")
		printAdminUsage(stderr)
		return 2
	}
	name, rest := top.Arg(0), top.Args()[1:]
	var cmd *adminCommand
	for i := range adminCommands {
		if adminCommands[i].name == name {
			cmd = &adminCommands[i]
		}
	}
	if name == "help" {
		printAdminUsage(stdout)
		return 0
	}
	if cmd == nil {
		fmt.Fprintf(stderr, "predictkit admin: unknown command %q\n\n", name)
		printAdminUsage(stderr)
		return 2
	}
	fs := flag.NewFlagSet("admin "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	common.register(fs) // the common flags may also follow the command
	runFn := cmd.flags(fs)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: predictkit admin %s %s\n\n%s.\n\nFlags:\n", cmd.name, cmd.args, upperFirst(cmd.about))
		fs.PrintDefaults()
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "predictkit admin %s: unexpected arguments %q\n", cmd.name, fs.Args())
		return 2
	}
	if common.token == "" {
		fmt.Fprintf(stderr, "predictkit admin %s: no operator token: set PREDICTKIT_ADMIN_TOKEN or pass -token\n", cmd.name)
		return 2
	}
	base, err := url.Parse(strings.TrimRight(common.url, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		fmt.Fprintf(stderr, "predictkit admin %s: -url %q: must be an http or https URL such as http://127.0.0.1:8080\n", cmd.name, common.url)
		return 2
	}
	client := &adminClient{base: base.String(), token: common.token, http: &http.Client{Timeout: common.timeout}}
	out := &adminOutput{w: stdout, json: common.json}
	if err := runFn(ctx, client, out); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "predictkit admin %s: %v\n", cmd.name, err)
			return 2
		}
		fmt.Fprintf(stderr, "predictkit admin %s: %v\n", cmd.name, err)
		return 1
	}
	return 0
}

type adminCommonFlags struct {
	url, token string
	json       bool
	timeout    time.Duration
}

// register defines the common flags on fs. Registered on both the
// top-level and the command's flag set, they share their variables, so
// either position works; defaults come from the environment once.
func (c *adminCommonFlags) register(fs *flag.FlagSet) {
	if c.url == "" {
		c.url = os.Getenv("PREDICTKIT_URL")
		if c.url == "" {
			c.url = "http://127.0.0.1:8080"
		}
		c.token = os.Getenv("PREDICTKIT_ADMIN_TOKEN")
		c.timeout = 30 * time.Second
	}
	fs.StringVar(&c.url, "url", c.url, "base URL of the server (env PREDICTKIT_URL)")
	fs.Var(secretFlag{&c.token}, "token", "the server's operator `token` (env PREDICTKIT_ADMIN_TOKEN)")
	fs.BoolVar(&c.json, "json", c.json, "print the server's JSON answer instead of a table")
	fs.DurationVar(&c.timeout, "timeout", c.timeout, "limit of each request")
}

func printAdminUsage(w io.Writer) {
	fmt.Fprint(w, adminUsage)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range adminCommands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.about)
	}
	_ = tw.Flush()
	fmt.Fprint(w, "\nRun \"predictkit admin <command> -h\" for a command's flags.\n")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// usageError is a command line the command cannot run (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// apiError is the server's refusal: its status and {"error", "detail"}.
type apiError struct {
	Status int
	Code   string
	Detail string
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("the server answered %d %s", e.Status, e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	switch {
	case e.Status == http.StatusUnauthorized:
		s += " (is the token the server's PREDICTKIT_ADMIN_TOKEN?)"
	case e.Status == http.StatusNotFound && e.Code == "not_found":
		s += " (does the server have PREDICTKIT_ADMIN_TOKEN set?)"
	}
	return s
}

// adminClient calls the operator API.
type adminClient struct {
	base, token string
	http        *http.Client
}

// call sends body (JSON, when not nil) and decodes a 2xx answer into out;
// it returns the raw answer too (for -json).
func (a *adminClient) call(ctx context.Context, method, path string, body, out any) ([]byte, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("cannot reach the server at %s: %v", a.base, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read the answer of %s %s: %v", method, path, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		e := &apiError{Status: res.StatusCode}
		var body struct {
			Error  string `json:"error"`
			Detail string `json:"detail"`
		}
		if json.Unmarshal(raw, &body) == nil && body.Error != "" {
			e.Code, e.Detail = body.Error, body.Detail
		} else {
			e.Code = strings.ReplaceAll(strings.ToLower(http.StatusText(res.StatusCode)), " ", "_")
		}
		return raw, e
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return raw, fmt.Errorf("the server's answer to %s %s is not what this command expects: %v", method, path, err)
		}
	}
	return raw, nil
}

// adminOutput prints tables, or JSON with -json.
type adminOutput struct {
	w    io.Writer
	json bool
}

// rawJSON prints a JSON answer indented.
func (o *adminOutput) rawJSON(raw []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		_, err = o.w.Write(raw)
		return err
	}
	buf.WriteByte('\n')
	_, err := o.w.Write(buf.Bytes())
	return err
}

// table prints a header and rows, aligned.
func (o *adminOutput) table(header []string, rows ...[]string) error {
	tw := tabwriter.NewWriter(o.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// rub formats kopecks as roubles: 123456 → "1,234.56".
func rub(k int64) string {
	sign := ""
	if k < 0 {
		sign, k = "-", -k
	}
	whole := strconv.FormatInt(k/100, 10)
	var b strings.Builder
	for i, ch := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return fmt.Sprintf("%s%s.%02d", sign, b.String(), k%100)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// secretFlag is a string flag whose value -h never shows.
type secretFlag struct{ p *string }

func (f secretFlag) String() string { return "" }
func (f secretFlag) Set(s string) error {
	*f.p = s
	return nil
}

// boolFlag is an optional boolean flag: unset unless given.
type boolFlag struct{ v *bool }

func (f *boolFlag) String() string {
	if f == nil || f.v == nil {
		return ""
	}
	return strconv.FormatBool(*f.v)
}
func (f *boolFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("must be true or false")
	}
	f.v = &b
	return nil
}
func (f *boolFlag) IsBoolFlag() bool { return true }

func needID(name string, v int64) error {
	if v <= 0 {
		return usagef("-%s: a positive id is required", name)
	}
	return nil
}

func needAmount(v int64) error {
	if v <= 0 {
		return usagef("-amount: a positive number of kopecks is required")
	}
	return nil
}

// The commands.

func adminCreatePartner(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	name := fs.String("name", "", "the partner's name (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if strings.TrimSpace(*name) == "" {
			return usagef("-name is required")
		}
		var p struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
			Key  string `json:"key"`
		}
		raw, err := a.call(ctx, http.MethodPost, "/api/v1/admin/partners", map[string]string{"name": *name}, &p)
		if err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(raw)
		}
		if err := out.table([]string{"ID", "NAME", "KEY"}, []string{itoa(p.ID), p.Name, p.Key}); err != nil {
			return err
		}
		_, err = fmt.Fprintln(out.w, "\nThe key is shown this once (the server keeps only its hash): give it to the partner now.")
		return err
	}
}

type partnerOut struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Disabled     bool   `json:"disabled"`
	FloatKopecks int64  `json:"float_kopecks"`
	CreatedAt    string `json:"created_at"`
}

func adminShowPartner(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("id", 0, "the partner's id (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("id", *id); err != nil {
			return err
		}
		var p partnerOut
		raw, err := a.call(ctx, http.MethodGet, "/api/v1/admin/partners/"+itoa(*id), nil, &p)
		if err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(raw)
		}
		return out.table([]string{"ID", "NAME", "DISABLED", "FLOAT_KOPECKS", "FLOAT_RUB", "CREATED_AT"},
			[]string{itoa(p.ID), p.Name, yesNo(p.Disabled), itoa(p.FloatKopecks), rub(p.FloatKopecks), p.CreatedAt})
	}
}

func adminPartners(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		var r struct {
			Partners []struct {
				ID        int64  `json:"id"`
				Name      string `json:"name"`
				Disabled  bool   `json:"disabled"`
				CreatedAt string `json:"created_at"`
			} `json:"partners"`
		}
		raw, err := a.call(ctx, http.MethodGet, "/api/v1/admin/partners", nil, &r)
		if err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(raw)
		}
		if len(r.Partners) == 0 {
			_, err := fmt.Fprintln(out.w, "No partners.")
			return err
		}
		rows := make([][]string, 0, len(r.Partners))
		for _, p := range r.Partners {
			rows = append(rows, []string{itoa(p.ID), p.Name, yesNo(p.Disabled), p.CreatedAt})
		}
		return out.table([]string{"ID", "NAME", "DISABLED", "CREATED_AT"}, rows...)
	}
}

func adminFundFloat(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("partner", 0, "the partner's id (required)")
	amount := fs.Int64("amount", 0, "kopecks to add to the float (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("partner", *id); err != nil {
			return err
		}
		if err := needAmount(*amount); err != nil {
			return err
		}
		var r struct {
			PartnerID    int64 `json:"partner_id"`
			FloatKopecks int64 `json:"float_kopecks"`
		}
		raw, err := a.call(ctx, http.MethodPost, "/api/v1/admin/partners/"+itoa(*id)+"/float", map[string]int64{"amount_kopecks": *amount}, &r)
		if err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(raw)
		}
		return out.table([]string{"PARTNER", "ADDED_KOPECKS", "FLOAT_KOPECKS", "FLOAT_RUB"},
			[]string{itoa(r.PartnerID), itoa(*amount), itoa(r.FloatKopecks), rub(r.FloatKopecks)})
	}
}

func adminCredit(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("user", 0, "the user's id (required)")
	amount := fs.Int64("amount", 0, "kopecks to deposit (required)")
	bonus := fs.Bool("bonus", false, "deposit to the bonus balance instead")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *id); err != nil {
			return err
		}
		if err := needAmount(*amount); err != nil {
			return err
		}
		var r struct {
			UserID       int64 `json:"user_id"`
			Balance      int64 `json:"balance"`
			BonusBalance int64 `json:"bonus_balance"`
			TotalBalance int64 `json:"total_balance"`
		}
		raw, err := a.call(ctx, http.MethodPost, "/api/v1/admin/users/"+itoa(*id)+"/credit",
			map[string]any{"amount_kopecks": *amount, "bonus": *bonus}, &r)
		if err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(raw)
		}
		return out.table([]string{"USER", "BALANCE_KOPECKS", "BONUS_KOPECKS", "TOTAL_KOPECKS", "TOTAL_RUB"},
			[]string{itoa(r.UserID), itoa(r.Balance), itoa(r.BonusBalance), itoa(r.TotalBalance), rub(r.TotalBalance)})
	}
}

func adminUsers(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	query := fs.String("query", "", "part of an e-mail, name or nickname (any case), or a user id; empty lists every user")
	limit := fs.Int("limit", 0, "users per page, 1 to 100 (default: the server's, 20)")
	cursor := fs.String("cursor", "", "the cursor a previous page printed, for the page after it")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if *limit < 0 {
			return usagef("-limit must be positive")
		}
		v := url.Values{}
		if *query != "" {
			v.Set("query", *query)
		}
		if *limit > 0 {
			v.Set("limit", strconv.Itoa(*limit))
		}
		if *cursor != "" {
			v.Set("cursor", *cursor)
		}
		path := "/api/v1/admin/users"
		if len(v) > 0 {
			path += "?" + v.Encode()
		}
		var r struct {
			Users []struct {
				ID            int64   `json:"id"`
				Email         string  `json:"email"`
				Name          string  `json:"name"`
				Nickname      *string `json:"nickname"`
				IsCreator     bool    `json:"is_creator"`
				IsStatsViewer bool    `json:"is_stats_viewer"`
				PartnerID     *int64  `json:"partner_id"`
				ExternalID    *string `json:"external_id"`
				CreatedAt     string  `json:"created_at"`
			} `json:"users"`
			NextCursor *string `json:"next_cursor"`
		}
		raw, err := a.call(ctx, http.MethodGet, path, nil, &r)
		if err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(raw)
		}
		if len(r.Users) == 0 {
			_, err := fmt.Fprintln(out.w, "No user matches.")
			return err
		}
		rows := make([][]string, 0, len(r.Users))
		for _, u := range r.Users {
			nick, email := "-", u.Email
			if u.Nickname != nil {
				nick = *u.Nickname
			}
			if u.PartnerID != nil && u.ExternalID != nil {
				email = fmt.Sprintf("(partner %d: %s)", *u.PartnerID, *u.ExternalID)
			}
			rows = append(rows, []string{itoa(u.ID), email, u.Name, nick, yesNo(u.IsCreator), yesNo(u.IsStatsViewer), u.CreatedAt})
		}
		if err := out.table([]string{"ID", "EMAIL", "NAME", "NICKNAME", "CREATOR", "STATS_VIEWER", "CREATED_AT"}, rows...); err != nil {
			return err
		}
		if r.NextCursor != nil {
			next := "predictkit admin users"
			if *query != "" {
				next += " -query " + shellQuote(*query)
			}
			if *limit > 0 {
				next += " -limit " + strconv.Itoa(*limit)
			}
			_, err = fmt.Fprintf(out.w, "\nMore users: %s -cursor %s\n", next, *r.NextCursor)
		}
		return err
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func adminSetRoles(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("user", 0, "the user's id (required)")
	var creator, stats boolFlag
	fs.Var(&creator, "creator", "true: the user may create events; false: may not")
	fs.Var(&stats, "stats-viewer", "true or false: the statistics viewer role")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *id); err != nil {
			return err
		}
		if creator.v == nil && stats.v == nil {
			return usagef("give -creator=true|false and/or -stats-viewer=true|false")
		}
		body := map[string]bool{}
		if creator.v != nil {
			body["is_creator"] = *creator.v
		}
		if stats.v != nil {
			body["is_stats_viewer"] = *stats.v
		}
		var r struct {
			User struct {
				ID            int64  `json:"id"`
				Name          string `json:"name"`
				Email         string `json:"email"`
				IsCreator     bool   `json:"is_creator"`
				IsStatsViewer bool   `json:"is_stats_viewer"`
			} `json:"user"`
		}
		raw, err := a.call(ctx, http.MethodPatch, "/api/v1/admin/users/"+itoa(*id), body, &r)
		if err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(raw)
		}
		u := r.User
		return out.table([]string{"USER", "NAME", "EMAIL", "CREATOR", "STATS_VIEWER"},
			[]string{itoa(u.ID), u.Name, u.Email, yesNo(u.IsCreator), yesNo(u.IsStatsViewer)})
	}
}

// adOut is a P2P ad as the commands print it.
type adOut struct {
	ID               int64    `json:"id"`
	UserID           int64    `json:"user_id"`
	Type             string   `json:"type"`
	FiatCurrency     string   `json:"fiat_currency"`
	ExchangeRate     int64    `json:"exchange_rate"`
	MinAmount        int64    `json:"min_amount"`
	MaxAmount        int64    `json:"max_amount"`
	RemainingAmount  int64    `json:"remaining_amount"`
	PaymentMethods   []string `json:"payment_methods"`
	PaymentDuration  int64    `json:"payment_duration"`
	IsActive         bool     `json:"is_active"`
	ModerationStatus string   `json:"moderation_status"`
}

func printAd(out *adminOutput, raw []byte) error {
	if out.json {
		return out.rawJSON(raw)
	}
	var ad adOut
	if err := json.Unmarshal(raw, &ad); err != nil {
		return fmt.Errorf("the server's answer is not an ad: %v", err)
	}
	return out.table([]string{"ID", "USER", "TYPE", "CURRENCY", "RATE", "MIN", "MAX", "REMAINING", "METHODS", "MINUTES", "ACTIVE", "STATUS"},
		[]string{itoa(ad.ID), itoa(ad.UserID), ad.Type, ad.FiatCurrency, itoa(ad.ExchangeRate), itoa(ad.MinAmount), itoa(ad.MaxAmount),
			itoa(ad.RemainingAmount), strings.Join(ad.PaymentMethods, ","), itoa(ad.PaymentDuration), yesNo(ad.IsActive), ad.ModerationStatus})
}

func adminCreateAd(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	user := fs.Int64("user", 0, "the owner's user id (required)")
	typ := fs.String("type", "", "buy or sell (required)")
	currency := fs.String("currency", "", "fiat currency, three letters such as RUB (required)")
	rate := fs.Int64("rate", 0, "exchange rate: kopecks of platform balance per 1 unit of the currency (required)")
	minAmount := fs.Int64("min", 0, "smallest order, kopecks (required)")
	maxAmount := fs.Int64("max", 0, "largest order, kopecks (required)")
	remaining := fs.Int64("remaining", -1, "kopecks still available (default: -max)")
	methods := fs.String("methods", "", "comma-separated payment methods, such as SBP,Sberbank (required)")
	duration := fs.Int64("duration", 0, "minutes the buyer has to pay (required)")
	instructions := fs.String("instructions", "", "payment instructions shown on the ad")
	platform := fs.Bool("platform", false, "mark the ad as the platform's own")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *user); err != nil {
			return err
		}
		var missing []string
		for _, f := range []struct {
			name string
			ok   bool
		}{{"-type", *typ != ""}, {"-currency", *currency != ""}, {"-rate", *rate != 0}, {"-min", *minAmount != 0},
			{"-max", *maxAmount != 0}, {"-methods", *methods != ""}, {"-duration", *duration != 0}} {
			if !f.ok {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			return usagef("%s required", strings.Join(missing, ", "))
		}
		var ms []string
		for m := range strings.SplitSeq(*methods, ",") {
			if m = strings.TrimSpace(m); m != "" {
				ms = append(ms, m)
			}
		}
		body := map[string]any{
			"user_id": *user, "type": *typ, "fiat_currency": *currency, "exchange_rate": *rate,
			"min_amount": *minAmount, "max_amount": *maxAmount, "payment_methods": ms,
			"payment_duration": *duration, "instructions": *instructions, "is_platform_ad": *platform,
		}
		if *remaining >= 0 {
			body["remaining_amount"] = *remaining
		}
		raw, err := a.call(ctx, http.MethodPost, "/api/v1/admin/p2p/ads", body, nil)
		if err != nil {
			return err
		}
		return printAd(out, raw)
	}
}

func adminModerateAd(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("id", 0, "the ad's id (required)")
	var active boolFlag
	fs.Var(&active, "active", "true to show the ad on the board, false to hide it")
	status := fs.String("status", "", "moderation status: pending, approved or rejected")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("id", *id); err != nil {
			return err
		}
		if active.v == nil && *status == "" {
			return usagef("give -active=true|false and/or -status pending|approved|rejected")
		}
		body := map[string]any{}
		if active.v != nil {
			body["is_active"] = *active.v
		}
		if *status != "" {
			body["moderation_status"] = *status
		}
		raw, err := a.call(ctx, http.MethodPatch, "/api/v1/admin/p2p/ads/"+itoa(*id), body, nil)
		if err != nil {
			return err
		}
		return printAd(out, raw)
	}
}

// chatOut is a support session as the operator list gives it.
type chatOut struct {
	SessionID     string `json:"session_id"`
	UserID        *int64 `json:"user_id"`
	Language      string `json:"language"`
	Escalated     bool   `json:"escalated"`
	EscalatedAt   *int64 `json:"escalated_at"`
	Closed        bool   `json:"closed"`
	CreatedAt     int64  `json:"created_at"`
	LastMessageAt int64  `json:"last_message_at"`
	MessageCount  int64  `json:"message_count"`
}

// adminChatsPage is the server's largest page of sessions.
const adminChatsPage = 100

func adminChats(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	all := fs.Bool("all", false, "list every session, not only those waiting for an operator")
	limit := fs.Int("limit", 1000, "list at most this many sessions")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if *limit <= 0 {
			return usagef("-limit must be positive")
		}
		// The server lists open escalated sessions first, then the rest by
		// latest activity: read pages until the waiting ones end.
		list := []json.RawMessage{}
		var rows [][]string
	pages:
		for offset := 0; len(list) < *limit; offset += adminChatsPage {
			var page struct {
				Sessions []json.RawMessage `json:"sessions"`
			}
			if _, err := a.call(ctx, http.MethodGet, fmt.Sprintf("/api/v1/admin/chat/sessions?limit=%d&offset=%d", adminChatsPage, offset), nil, &page); err != nil {
				return err
			}
			for _, raw := range page.Sessions {
				var s chatOut
				if err := json.Unmarshal(raw, &s); err != nil {
					return fmt.Errorf("the server's answer is not a list of sessions: %v", err)
				}
				if !*all && (!s.Escalated || s.Closed) {
					break pages
				}
				if len(list) == *limit {
					break pages
				}
				list = append(list, raw)
				user := "anonymous"
				if s.UserID != nil {
					user = itoa(*s.UserID)
				}
				escalated := "-"
				if s.EscalatedAt != nil {
					escalated = millisTime(*s.EscalatedAt)
				}
				state := "open"
				if s.Closed {
					state = "closed"
				}
				rows = append(rows, []string{s.SessionID, user, s.Language, escalated, millisTime(s.LastMessageAt), itoa(s.MessageCount), state})
			}
			if len(page.Sessions) < adminChatsPage {
				break
			}
		}
		if out.json {
			b, err := json.Marshal(map[string]any{"sessions": list})
			if err != nil {
				return err
			}
			return out.rawJSON(b)
		}
		if len(rows) == 0 {
			what := "No chat is waiting for an operator."
			if *all {
				what = "No chat sessions."
			}
			_, err := fmt.Fprintln(out.w, what)
			return err
		}
		return out.table([]string{"SESSION", "USER", "LANG", "ESCALATED_AT", "LAST_MESSAGE_AT", "MESSAGES", "STATE"}, rows...)
	}
}

func millisTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z")
}

func adminAudit(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		var r struct {
			OK        bool     `json:"ok"`
			Sum       int64    `json:"sum"`
			Accounts  int64    `json:"accounts"`
			Postings  int64    `json:"postings"`
			Problems  []string `json:"problems"`
			CheckedAt string   `json:"checked_at"`
		}
		raw, err := a.call(ctx, http.MethodGet, "/api/v1/admin/audit", nil, &r)
		if err != nil {
			return err
		}
		if out.json {
			err = out.rawJSON(raw)
		} else {
			err = out.table([]string{"OK", "SUM", "ACCOUNTS", "POSTINGS", "PROBLEMS", "CHECKED_AT"},
				[]string{yesNo(r.OK), itoa(r.Sum), itoa(r.Accounts), itoa(r.Postings), strconv.Itoa(len(r.Problems)), r.CheckedAt})
			if err == nil && len(r.Problems) > 0 {
				fmt.Fprintln(out.w, "\nProblems:")
				for _, p := range r.Problems {
					fmt.Fprintf(out.w, "  %s\n", p)
				}
			}
		}
		if err != nil {
			return err
		}
		if !r.OK {
			return fmt.Errorf("the audit found %d problems", len(r.Problems))
		}
		return nil
	}
}
