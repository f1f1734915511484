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
	{"create-event", "-f FILE|- -creator ID [-activate]", "create an event (the JSON of POST /api/v1/events) owned by a creator, and print its pools and markets", adminCreateEvent, ""},
	{"resolve", "-market ID -won YES|NO|VOID", "resolve or void any market as the operator (its creator gone, a wrong resolution about to happen)", adminResolve, ""},
	{"audit", "", "run the ledger audit; exits 1 when it finds problems", adminAudit, ""},
	{"withdrawals", "[-status pending|paid|rejected|cancelled|all] [-limit N] [-cursor C]", "list withdrawals: the pending ones (the queue) oldest first, by default", adminWithdrawals, ""},
	{"withdrawals approve", "ID -tx HASH", "record that you paid withdrawal ID from your wallet, in transaction HASH (the user is told)", adminApproveWithdrawal, "withdrawal id"},
	{"withdrawals reject", "ID -reason TEXT", "reject withdrawal ID, refunding the user, who reads the reason", adminRejectWithdrawal, "withdrawal id"},
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
	// A command of two words ("withdrawals approve") is its first word's
	// verb.
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		for _, c := range adminCommands {
			if c.name == name+" "+rest[0] {
				name, rest = c.name, rest[1:]
				break
			}
		}
	}
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
	base, err := serverBase(common.url)
	if err != nil {
		fmt.Fprintf(stderr, "predictkit admin %s: %v\n", cmd.name, err)
		return 2
	}
	api, err := client.NewClientWithResponses(base,
		client.WithBearerToken(common.token),
		client.WithHTTPClient(&http.Client{Timeout: common.timeout}))
	if err != nil {
		fmt.Fprintf(stderr, "predictkit admin %s: %v\n", cmd.name, err)
		return 2
	}
	a := &adminClient{ClientWithResponses: api, base: base, arg: operand}
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

// serverBase checks a -url flag: the base URL of a server, http or https,
// without its trailing slashes.
func serverBase(raw string) (string, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("-url %q: must be an http or https URL such as http://127.0.0.1:8080", raw)
	}
	return u.String(), nil
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
