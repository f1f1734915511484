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

	"github.com/predictkit/predictkit/client"
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
	// operand names the one argument the command takes before or among
	// its flags ("" for none); the command reads it as adminClient.arg.
	operand string
}

var adminCommands = []adminCommand{
	{"create-partner", "-name NAME", "create a partner and print its API key (shown this once)", adminCreatePartner, ""},
	{"partners", "", "list every partner, oldest first", adminPartners, ""},
	{"partner", "-id ID", "show a partner and its float", adminShowPartner, ""},
	{"fund-float", "-partner ID -amount KOPECKS", "add to a partner's float", adminFundFloat, ""},
	{"rotate-key", "-partner ID [-grace DURATION]", "give a partner a new key (printed once); the old one works for -grace (default 24h)", adminRotateKey, ""},
	{"set-webhook", "-partner ID -webhook-url URL", "set a partner's webhook and print its signing secret (shown this once)", adminSetWebhook, ""},
	{"webhook", "-partner ID", "show a partner's webhook (never its secret)", adminShowWebhook, ""},
	{"delete-webhook", "-partner ID", "remove a partner's webhook; its pending deliveries are marked failed", adminDeleteWebhook, ""},
	{"deliveries", "-partner ID [-limit N] [-cursor C]", "list a partner's webhook deliveries, newest first, with status and attempts", adminDeliveries, ""},
	{"redeliver", "-partner ID -delivery ID", "send a webhook delivery again now", adminRedeliver, ""},
	{"users", "[-query Q] [-limit N] [-cursor C]", "find users by part of their e-mail, name or nickname, or by id, newest first", adminUsers, ""},
	{"credit", "-user ID -amount KOPECKS [-bonus]", "deposit to a user's balance (or bonus balance)", adminCredit, ""},
	{"set-roles", "-user ID [-creator=BOOL] [-stats-viewer=BOOL]", "give or take a user's roles", adminSetRoles, ""},
	{"api-keys", "-user ID", "list a user's personal API keys, newest first (never their secrets)", adminAPIKeys, ""},
	{"revoke-api-key", "-user ID -key ID", "revoke a user's personal API key, at once on every server", adminRevokeAPIKey, ""},
	{"reset-password", "<email or user id>", "issue a one-time password reset token for a user and print it, with its link (for servers without SMTP)", adminResetPassword, "e-mail or user id"},
	{"create-ad", "-user ID -type buy|sell -currency XXX -rate KOPECKS -min KOPECKS -max KOPECKS -methods A,B -duration MINUTES", "publish a P2P ad (approved and active)", adminCreateAd, ""},
	{"moderate-ad", "-id ID [-active=BOOL] [-status pending|approved|rejected]", "activate, deactivate, approve or reject a P2P ad", adminModerateAd, ""},
	{"chats", "[-all] [-limit N]", "list the support chats waiting for an operator (escalated and open); -all lists every session", adminChats, ""},
	{"resolve", "-market ID -won YES|NO|VOID", "resolve or void any market as the operator (its creator gone, a wrong resolution about to happen)", adminResolve, ""},
	{"audit", "", "run the ledger audit; exits 1 when it finds problems", adminAudit, ""},
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
	var operand string
	if cmd.operand != "" {
		if fs.NArg() == 0 {
			fmt.Fprintf(stderr, "predictkit admin %s: give the %s: predictkit admin %s %s\n", cmd.name, cmd.operand, cmd.name, cmd.args)
			return 2
		}
		operand = fs.Arg(0)
		// Flags may follow the operand.
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
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
	api, err := client.NewClientWithResponses(base.String(),
		client.WithBearerToken(common.token),
		client.WithHTTPClient(&http.Client{Timeout: common.timeout}))
	if err != nil {
		fmt.Fprintf(stderr, "predictkit admin %s: %v\n", cmd.name, err)
		return 2
	}
	a := &adminClient{ClientWithResponses: api, base: base.String(), arg: operand}
	out := &adminOutput{w: stdout, json: common.json}
	if err := runFn(ctx, a, out); err != nil {
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

// apiError is the server's refusal, printed with a hint where the
// likely cause is the command line's.
type apiError struct{ *client.APIError }

func (e apiError) Error() string {
	s := fmt.Sprintf("the server answered %d %s", e.StatusCode, e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	switch {
	case e.StatusCode == http.StatusUnauthorized:
		s += " (is the token the server's PREDICTKIT_ADMIN_TOKEN?)"
	case e.StatusCode == http.StatusNotFound && e.Code == "not_found":
		s += " (does the server have PREDICTKIT_ADMIN_TOKEN set?)"
	}
	return s
}

// adminClient calls the operator API with the generated client, which
// sends the admin token with every request.
type adminClient struct {
	*client.ClientWithResponses
	base string
	// arg is the command's operand (adminCommand.operand), or "".
	arg string
}

// check turns the result of one of the client's calls into the error the
// command prints: the server could not be reached, its answer could not
// be read, or it refused (an apiError).
func (a *adminClient) check(res client.Response, err error) error {
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("cannot reach the server at %s: %v", a.base, ue.Err)
		}
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syntax) || errors.As(err, &typ) {
			return fmt.Errorf("the server's answer is not what this command expects: %v", err)
		}
		return fmt.Errorf("read the server's answer: %v", err)
	}
	if _, err := client.Check(res, nil); err != nil {
		var refused *client.APIError
		if errors.As(err, &refused) {
			return apiError{refused}
		}
		return err
	}
	return nil
}

// decoded returns the body the client decoded from a 2xx answer; nil
// means the answer was not the documented one (another server, say).
// shown is the decoded answer v for a command to print as a table, or,
// with -json, nil once body was printed as the server wrote it (and nil
// with an error when v is missing or the printing failed).
func shown[T any](out *adminOutput, body []byte, v *T) (*T, error) {
	if out.json {
		return nil, out.rawJSON(body)
	}
	return decoded(v)
}

func decoded[T any](v *T) (*T, error) {
	if v == nil {
		return nil, errors.New("the server's answer is not what this command expects")
	}
	return v, nil
}

// stamp prints a time of the API as the server wrote it (RFC 3339 in UTC,
// to the nanosecond without trailing zeros).
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

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
		res, err := a.AdminCreatePartnerWithResponse(ctx, client.NewPartnerRequest{Name: *name})
		if err := a.check(res, err); err != nil {
			return err
		}
		p, err := shown(out, res.Body, res.JSON201)
		if p == nil {
			return err
		}
		if err := out.table([]string{"ID", "NAME", "KEY"}, []string{itoa(p.ID), p.Name, p.Key}); err != nil {
			return err
		}
		_, err = fmt.Fprintln(out.w, "\nThe key is shown this once (the server keeps only its hash): give it to the partner now.")
		return err
	}
}

func adminShowPartner(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("id", 0, "the partner's id (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("id", *id); err != nil {
			return err
		}
		res, err := a.AdminGetPartnerWithResponse(ctx, *id)
		if err := a.check(res, err); err != nil {
			return err
		}
		p, err := shown(out, res.Body, res.JSON200)
		if p == nil {
			return err
		}
		return out.table([]string{"ID", "NAME", "DISABLED", "FLOAT_KOPECKS", "FLOAT_RUB", "CREATED_AT"},
			[]string{itoa(p.ID), p.Name, yesNo(p.Disabled), itoa(p.FloatKopecks), rub(p.FloatKopecks), stamp(p.CreatedAt)})
	}
}

func adminPartners(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		res, err := a.AdminListPartnersWithResponse(ctx)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		if len(r.Partners) == 0 {
			_, err := fmt.Fprintln(out.w, "No partners.")
			return err
		}
		rows := make([][]string, 0, len(r.Partners))
		for _, p := range r.Partners {
			rows = append(rows, []string{itoa(p.ID), p.Name, yesNo(p.Disabled), stamp(p.CreatedAt)})
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
		res, err := a.AdminFundPartnerFloatWithResponse(ctx, *id, client.FloatRequest{AmountKopecks: *amount})
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
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
		res, err := a.AdminCreditWithResponse(ctx, *id, client.CreditRequest{AmountKopecks: *amount, Bonus: bonus})
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
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
		params := &client.AdminSearchUsersParams{}
		if *query != "" {
			params.Query = query
		}
		if *limit > 0 {
			params.Limit = limit
		}
		if *cursor != "" {
			params.Cursor = cursor
		}
		res, err := a.AdminSearchUsersWithResponse(ctx, params)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
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
			rows = append(rows, []string{itoa(u.ID), email, u.Name, nick, yesNo(u.IsCreator), yesNo(u.IsStatsViewer), stamp(u.CreatedAt)})
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
		// An unset flag is a nil pointer, which the body leaves out.
		res, err := a.AdminSetRolesWithResponse(ctx, *id, client.RolesPatch{IsCreator: creator.v, IsStatsViewer: stats.v})
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		u := r.User
		return out.table([]string{"USER", "NAME", "EMAIL", "CREATOR", "STATS_VIEWER"},
			[]string{itoa(u.ID), u.Name, u.Email, yesNo(u.IsCreator), yesNo(u.IsStatsViewer)})
	}
}

func adminAPIKeys(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("user", 0, "the user's id (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *id); err != nil {
			return err
		}
		res, err := a.AdminListAPIKeysWithResponse(ctx, *id)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		rows := make([][]string, 0, len(r.Keys))
		for _, k := range r.Keys {
			scopes := make([]string, len(k.Scopes))
			for i, s := range k.Scopes {
				scopes[i] = string(s)
			}
			used := "never"
			if k.LastUsedAt != nil {
				used = stamp(*k.LastUsedAt)
			}
			rows = append(rows, []string{itoa(k.ID), k.Name, strings.Join(scopes, ","), stamp(k.CreatedAt), used})
		}
		return out.table([]string{"KEY", "NAME", "SCOPES", "CREATED", "LAST_USED"}, rows...)
	}
}

func adminRevokeAPIKey(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("user", 0, "the user's id (required)")
	key := fs.Int64("key", 0, "the key's id, as api-keys lists it (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *id); err != nil {
			return err
		}
		if err := needID("key", *key); err != nil {
			return err
		}
		res, err := a.AdminRevokeAPIKeyWithResponse(ctx, *id, *key)
		if err := a.check(res, err); err != nil {
			return err
		}
		if out.json {
			return out.rawJSON([]byte(`{"status":"revoked"}`))
		}
		_, err = fmt.Fprintf(out.w, "revoked key %d of user %d\n", *key, *id)
		return err
	}
}

// printAd prints the ad the server answered with.
func printAd(out *adminOutput, raw []byte, ad *client.P2PAd) error {
	if out.json {
		return out.rawJSON(raw)
	}
	ad, err := decoded(ad)
	if err != nil {
		return err
	}
	return out.table([]string{"ID", "USER", "TYPE", "CURRENCY", "RATE", "MIN", "MAX", "REMAINING", "METHODS", "MINUTES", "ACTIVE", "STATUS"},
		[]string{itoa(ad.ID), itoa(ad.UserID), string(ad.Type), ad.FiatCurrency, itoa(ad.ExchangeRate), itoa(ad.MinAmount), itoa(ad.MaxAmount),
			itoa(ad.RemainingAmount), strings.Join(ad.PaymentMethods, ","), itoa(ad.PaymentDuration), yesNo(ad.IsActive), string(ad.ModerationStatus)})
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
		ad := client.NewP2PAd{
			UserID: *user, Type: client.NewP2PAdType(*typ), FiatCurrency: *currency, ExchangeRate: *rate,
			MinAmount: *minAmount, MaxAmount: *maxAmount, PaymentMethods: ms,
			PaymentDuration: *duration, Instructions: instructions, IsPlatformAd: platform,
		}
		if *remaining >= 0 {
			ad.RemainingAmount = remaining
		}
		res, err := a.AdminCreateP2PAdWithResponse(ctx, ad)
		if err := a.check(res, err); err != nil {
			return err
		}
		return printAd(out, res.Body, res.JSON201)
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
		m := client.P2PModeration{IsActive: active.v}
		if *status != "" {
			s := client.P2PModerationModerationStatus(*status)
			m.ModerationStatus = &s
		}
		res, err := a.AdminModerateP2PAdWithResponse(ctx, *id, m)
		if err := a.check(res, err); err != nil {
			return err
		}
		return printAd(out, res.Body, res.JSON200)
	}
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
			res, err := a.AdminChatSessionsWithResponse(ctx, &client.AdminChatSessionsParams{
				Limit: new(strconv.Itoa(adminChatsPage)), Offset: new(strconv.Itoa(offset)),
			})
			if err := a.check(res, err); err != nil {
				return err
			}
			page, err := decoded(res.JSON200)
			if err != nil {
				return err
			}
			// -json prints each session as the server wrote it.
			var raw struct {
				Sessions []json.RawMessage `json:"sessions"`
			}
			if err := json.Unmarshal(res.Body, &raw); err != nil || len(raw.Sessions) != len(page.Sessions) {
				return fmt.Errorf("the server's answer is not a list of sessions: %v", err)
			}
			for i, s := range page.Sessions {
				if !*all && (!s.Escalated || s.Closed) {
					break pages
				}
				if len(list) == *limit {
					break pages
				}
				list = append(list, raw.Sessions[i])
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
				rows = append(rows, []string{s.SessionID, user, string(s.Language), escalated, millisTime(s.LastMessageAt), itoa(s.MessageCount), state})
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
		res, err := a.AdminAuditWithResponse(ctx)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := decoded(res.JSON200)
		if err != nil {
			return err
		}
		if out.json {
			err = out.rawJSON(res.Body)
		} else {
			err = out.table([]string{"OK", "SUM", "ACCOUNTS", "POSTINGS", "PROBLEMS", "CHECKED_AT"},
				[]string{yesNo(r.OK), itoa(r.Sum), itoa(r.Accounts), itoa(r.Postings), strconv.Itoa(len(r.Problems)), stamp(r.CheckedAt)})
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

func adminResolve(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("market", 0, "the market's id (required)")
	won := fs.String("won", "", "the outcome: YES, NO or VOID (refund every open position its net cost) (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("market", *id); err != nil {
			return err
		}
		side := client.ResolveRequestWonSide(strings.ToUpper(*won))
		if !side.Valid() {
			return usagef("-won %q: must be YES, NO or VOID", *won)
		}
		res, err := a.AdminResolveMarketWithResponse(ctx, *id, client.ResolveRequest{WonSide: side})
		if err := a.check(res, err); err != nil {
			return err
		}
		// The resolution answers only {"status":"ok"}; the market says
		// how and by whom it resolved.
		m, err := a.GetMarketWithResponse(ctx, *id)
		if err := a.check(m, err); err != nil {
			return err
		}
		if out.json {
			return out.rawJSON(m.Body)
		}
		v, err := decoded(m.JSON200)
		if err != nil {
			return err
		}
		outcome, by, at := "-", "-", "-"
		if v.WinningOutcome != nil {
			outcome = string(*v.WinningOutcome)
		}
		if v.ResolvedBy != nil {
			by = string(*v.ResolvedBy)
		}
		if v.ResolvedAt != nil {
			at = stamp(*v.ResolvedAt)
		}
		return out.table([]string{"MARKET", "OUTCOME", "RESOLVED_BY", "RESOLVED_AT"}, []string{itoa(v.ID), outcome, by, at})
	}
}

// adminResetPassword issues a reset token. A user is named by id, or by
// e-mail, which the user search finds (it matches parts of e-mails, so
// the command keeps the one exact match, case aside).
func adminResetPassword(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		id, err := strconv.ParseInt(a.arg, 10, 64)
		if err != nil {
			if !strings.Contains(a.arg, "@") {
				return usagef("%q is neither a user id nor an e-mail", a.arg)
			}
			if id, err = a.userByEmail(ctx, a.arg); err != nil {
				return err
			}
		}
		if id <= 0 {
			return usagef("a user id is a positive number")
		}
		res, err := a.AdminPasswordResetWithResponse(ctx, id)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON201)
		if r == nil {
			return err
		}
		if err := out.table([]string{"USER", "EMAIL", "EXPIRES_AT"}, []string{itoa(r.UserID), r.Email, stamp(r.ExpiresAt)}); err != nil {
			return err
		}
		fmt.Fprintf(out.w, "\nReset token (shown this once; it works once, until it expires):\n%s\n", r.Token)
		if r.Link != nil {
			fmt.Fprintf(out.w, "\nLink:\n%s\n", *r.Link)
		} else {
			fmt.Fprintln(out.w, "\nNo link: the server has no PREDICTKIT_PUBLIC_URL. The user sends the token with a new password to POST /api/v1/auth/password/reset.")
		}
		return nil
	}
}

// userByEmail finds the id of the user registered with email.
func (a *adminClient) userByEmail(ctx context.Context, email string) (int64, error) {
	want := strings.ToLower(strings.TrimSpace(email))
	limit := 100
	params := &client.AdminSearchUsersParams{Query: &want, Limit: &limit}
	for range 100 { // 10,000 users whose e-mail contains this one: give up
		res, err := a.AdminSearchUsersWithResponse(ctx, params)
		if err := a.check(res, err); err != nil {
			return 0, err
		}
		page, err := decoded(res.JSON200)
		if err != nil {
			return 0, err
		}
		for _, u := range page.Users {
			if strings.EqualFold(u.Email, want) {
				return u.ID, nil
			}
		}
		if page.NextCursor == nil {
			break
		}
		params.Cursor = page.NextCursor
	}
	return 0, fmt.Errorf("no user has the e-mail %s", want)
}
