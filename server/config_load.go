package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ConfigError is every problem found in a configuration, each naming the
// setting (environment variable and flag) it is about.
type ConfigError struct {
	Problems []error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if len(e.Problems) == 1 {
		b.WriteString("invalid configuration: ")
		b.WriteString(e.Problems[0].Error())
		return b.String()
	}
	fmt.Fprintf(&b, "invalid configuration (%d problems):", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap gives the problems to errors.Is and errors.As.
func (e *ConfigError) Unwrap() []error { return e.Problems }

// LoadConfig reads the configuration the way `predictkit serve` does:
// DefaultConfig, then every PREDICTKIT_* variable lookup finds (an empty
// value counts as unset), then the flags in args, then Validate. It
// reports every problem at once in a *ConfigError, not just the first:
// malformed variables (unless a valid flag overrides them), malformed or
// unknown flags, stray arguments, and settings Validate refuses. Values of
// secret settings (database URL, admin token, webhook URL) are never
// repeated in the messages.
//
// With -h or -help in args it writes the settings table to usage and
// returns flag.ErrHelp.
func LoadConfig(args []string, lookup func(string) (string, bool), usage io.Writer) (Config, error) {
	c := DefaultConfig()
	ss := settings()
	envProblems := map[string]error{}
	for _, s := range ss {
		v, ok := lookup(s.env)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if err := s.set(&c, strings.TrimSpace(v)); err != nil {
			envProblems[s.flag] = settingError(s.env, shown(s, v)+problemText(err))
		}
	}

	var problems []error
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // problems are collected; the usage is printed once, on -h
	for _, s := range ss {
		fs.Var(collectingFlag{flagValue{&c, s}, &problems}, s.flag, s.help+" (env "+s.env+")")
	}
	rest := args
	for {
		collected := len(problems)
		err := fs.Parse(rest)
		if err == nil {
			break
		}
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(usage)
			fmt.Fprint(usage, "Usage: predictkit serve [flags]\n\nEvery setting is read from its environment variable, then from its flag.\n\n")
			PrintSettings(usage)
			return c, flag.ErrHelp
		}
		if len(problems) == collected { // an unknown flag or bad syntax; a bad value is collected already
			problems = append(problems, err)
		}
		next := fs.Args()
		if len(next) == len(rest) { // "bad flag syntax" consumes nothing
			next = next[1:]
		}
		rest = next
	}
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Errorf("unexpected arguments %q: settings are flags (-name value) or PREDICTKIT_* variables", fs.Args()))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envList []error
	for _, s := range ss { // in the settings' order
		if err, ok := envProblems[s.flag]; ok && !set[s.flag] {
			envList = append(envList, err)
		}
	}
	problems = append(envList, problems...)
	if err := c.Validate(); err != nil {
		vs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			vs = j.Unwrap()
		}
		// A value its setting refused may still be stored (lists are);
		// the setting's problem is reported once.
	next:
		for _, v := range vs {
			for _, p := range problems {
				if env, _, ok := strings.Cut(p.Error(), " "); ok && strings.HasPrefix(env, "PREDICTKIT_") && strings.HasPrefix(v.Error(), env+" ") {
					continue next
				}
			}
			problems = append(problems, v)
		}
	}
	if len(problems) > 0 {
		return c, &ConfigError{Problems: problems}
	}
	return c, nil
}

// collectingFlag records a value its setting refuses as a problem naming
// the variable and the flag.
type collectingFlag struct {
	flagValue
	problems *[]error
}

func (f collectingFlag) Set(v string) error {
	if err := f.s.set(f.c, v); err != nil {
		*f.problems = append(*f.problems, settingError(f.s.env, shown(f.s, v)+problemText(err)))
		return err
	}
	return nil
}

// shown is how a problem quotes a value: secrets are not repeated.
func shown(s setting, v string) string {
	if s.secret {
		return ""
	}
	return strconv.Quote(v) + ": "
}

// problemText drops a leading "rate \"x\": "-style repetition of the
// value from a setter's error, keeping its reason.
func problemText(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "\": "); i >= 0 && strings.Count(msg[:i], "\"") == 1 {
		return msg[i+3:]
	}
	return msg
}

// settingError is a problem with the setting whose variable is env:
// "PREDICTKIT_X (-x): msg".
func settingError(env, msg string) error {
	for _, s := range settings() {
		if s.env == env {
			return fmt.Errorf("%s (-%s): %s", env, s.flag, msg)
		}
	}
	return fmt.Errorf("%s: %s", env, msg)
}

// checkAddr accepts host:port, with an empty host (all interfaces) and a
// port from 0 to 65535 (0: any free port).
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("must be host:port, such as :8080 or 127.0.0.1:8080")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return errors.New("the port must be a number from 0 to 65535")
		}
	}
	return nil
}

// checkDatabaseURL parses a PostgreSQL connection string without
// connecting. Its error is not shown: it may quote the URL.
func checkDatabaseURL(url string) error {
	_, err := pgxpool.ParseConfig(url)
	return err
}

// shortDuration writes d as time.Duration does, without zero minutes or
// seconds after a larger unit: 2m, 720h, 1h30m, 1m30s, 0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// otherVariables are the PREDICTKIT_* variables read on purpose that are
// not settings of `predictkit serve`: the CLI's (admin, bench, migrate)
// and the tests'.
var otherVariables = []string{
	"PREDICTKIT_URL",               // predictkit admin: the server's base URL
	"PREDICTKIT_TEST_DATABASE_URL", // tests: the PostgreSQL database to use
	"PREDICTKIT_REQUIRE_POSTGRES",  // tests: fail, not skip, without it
	"PREDICTKIT_REQUIRE_CHROMIUM",  // tests: fail, not skip, without a browser
	"PREDICTKIT_TEST_NATS_URL",     // tests: the NATS server (JetStream) to use
	"PREDICTKIT_REQUIRE_NATS",      // tests: fail, not skip, without it
	"PREDICTKIT_PLAYWRIGHT_CORE",   // tests: where playwright-core is installed
	"PREDICTKIT_AXE_CORE",          // tests: where axe-core is installed
	"PREDICTKIT_WEBAPP_REPORT",     // tests: the web app's first-load measures go there (JSON)
	"PREDICTKIT_SCREENSHOTS",       // tests: the web app's screenshots go there
	"PREDICTKIT_WEBAPP_DEBUG",      // tests: the web app's browser driver logs its steps
	"PREDICTKIT_CI_CACHE",          // .ci/run: where it caches npm packages
	"PREDICTKIT_SOLCJS",            // tests: where solc-js is installed (the test chain's token)
	"PREDICTKIT_REQUIRE_SOLC",      // tests: fail, not skip, without solc-js
	"PREDICTKIT_CRASH_KILLS",       // reliability tests
	"PREDICTKIT_TEST_REDIS_URL",    // tests: the Redis the shared rate limits use
	"PREDICTKIT_REQUIRE_REDIS",     // tests: fail, not skip, without it
	"PREDICTKIT_TEST_PRIMARY_URL",  // tests: a primary with a streaming replica (.ci/replica.sh)
	"PREDICTKIT_TEST_REPLICA_URL",  // tests: that replica
	"PREDICTKIT_REQUIRE_REPLICA",   // tests: fail, not skip, without them
}

// otherPrefixes are families of such variables.
var otherPrefixes = []string{
	"PREDICTKIT_MODEL_", // reliability tests: the model checker's runs
	"PREDICTKIT_BENCH_", // benchmarks: their sizes and variants
}

// UnknownVariables returns a warning for every PREDICTKIT_* variable in
// environ ("NAME=value" pairs, as os.Environ gives them) that is neither a
// setting nor a variable the project reads elsewhere: such a variable,
// often a typo, would be ignored silently. A warning names the variable
// and, when one is close, the setting it probably meant:
//
//	PREDICTKIT_TRADE_BATCHSIZE is not a setting and is ignored; did you mean PREDICTKIT_TRADE_BATCH_SIZE?
//
// Values are never repeated (they may be secrets).
func UnknownVariables(environ []string) []string {
	known := map[string]bool{}
	var candidates []string
	for _, s := range settings() {
		known[s.env] = true
		candidates = append(candidates, s.env)
	}
	for _, v := range otherVariables {
		known[v] = true
		candidates = append(candidates, v)
	}
	var warnings []string
	seen := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "PREDICTKIT_") || known[name] || seen[name] {
			continue
		}
		seen[name] = true
		other := false
		for _, p := range otherPrefixes {
			other = other || strings.HasPrefix(name, p)
		}
		if other {
			continue
		}
		w := name + " is not a setting and is ignored"
		if near := nearest(name, candidates); near != "" {
			w += "; did you mean " + near + "?"
		} else {
			w += " (\"predictkit serve -h\" lists the settings)"
		}
		warnings = append(warnings, w)
	}
	sort.Strings(warnings)
	return warnings
}

// nearest is the candidate closest to name by edit distance, if it is
// close: at most a third of the differing part's length, and at most 4.
func nearest(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(strings.ToUpper(name), c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := min(4, max(1, (len(name)-len("PREDICTKIT_"))/3))
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
