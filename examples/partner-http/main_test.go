package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
)

const adminToken = "partner-http-test-admin-token-0123456789"

// startServer starts the server as `go run ./cmd/predictkit` does with
// PREDICTKIT_ADMIN_TOKEN set: the memory store with its demo event,
// listening on a free local port. It returns the base URL.
func startServer(t *testing.T) string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Store = memory.New()
	cfg.AdminToken = adminToken
	cfg.BcryptCost = 4
	cfg.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	var where *server.Listening
	app := server.New(cfg, fx.Populate(&where))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = app.Stop(context.Background()) })
	return "http://" + where.Addr()
}

// env is an environment of the given variables only.
func env(vars ...string) func(string) string {
	return func(name string) string {
		for i := 0; i+1 < len(vars); i += 2 {
			if vars[i] == name {
				return vars[i+1]
			}
		}
		return ""
	}
}

func runExample(t *testing.T, getenv func(string) string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, getenv, &out, &errOut)
	return out.String(), err
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRunAgainstAFreshServer(t *testing.T) {
	base := startServer(t)
	out, err := runExample(t, env("PREDICTKIT_URL", base, "PREDICTKIT_ADMIN_TOKEN", adminToken))
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	t.Run("the operator's token creates a partner and funds its float", func(t *testing.T) {
		if !regexp.MustCompile(`(?m)^partner: \d+ "Example Bookmaker" created, float 100000 kopecks; its key, shown once: pk_\S+$`).MatchString(out) {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("it bets on the first open market of the feed (the trending event's)", func(t *testing.T) {
		if !regexp.MustCompile(`(?m)^market:  \d+ "[^"]+", YES at 0\.\d\d$`).MatchString(out) {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("the retry is replayed", func(t *testing.T) {
		if !strings.Contains(out, "retry:   Idempotent-Replayed: true, the same receipt, nothing executed") {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("the states show the bet's shares, then half of them and the sale's payout", func(t *testing.T) {
		bet := regexp.MustCompile(`bet:     buy_yes (\d+) shares for (\d+) kopecks`).FindStringSubmatch(out)
		sell := regexp.MustCompile(`sell:    sell_yes (\d+) shares for (\d+) kopecks, kept on the sub-account`).FindStringSubmatch(out)
		states := regexp.MustCompile(`state:   exists=true balance=(\d+) open=\d+ \[market \d+ yes: (\d+) shares`).FindAllStringSubmatch(out, -1)
		if bet == nil || sell == nil || len(states) != 2 {
			t.Fatalf("output:\n%s", out)
		}
		shares, sold, payout := atoi(t, bet[1]), atoi(t, sell[1]), atoi(t, sell[2])
		if atoi(t, bet[2]) > 20_000 || sold != shares/2 || payout <= 0 {
			t.Errorf("output:\n%s", out)
		}
		if states[0][1] != "0" || atoi(t, states[0][2]) != shares || atoi(t, states[1][1]) != payout || atoi(t, states[1][2]) != shares-sold {
			t.Errorf("states %q after a bet of %d shares and a sale of %d for %d:\n%s", states, shares, sold, payout, out)
		}
	})
	t.Run("the float paid the bet", func(t *testing.T) {
		bet := regexp.MustCompile(`shares for (\d+) kopecks \(client_bet_id`).FindStringSubmatch(out)
		float := regexp.MustCompile(`(?m)^float:   (\d+) kopecks left$`).FindStringSubmatch(out)
		if bet == nil || float == nil || atoi(t, float[1]) != 100_000-atoi(t, bet[1]) {
			t.Errorf("output:\n%s", out)
		}
	})

	t.Run("a partner runs it with its key alone", func(t *testing.T) {
		key := regexp.MustCompile(`shown once: (pk_\S+)`).FindStringSubmatch(out)
		market := regexp.MustCompile(`market:  (\d+)`).FindStringSubmatch(out)
		if key == nil || market == nil {
			t.Fatalf("output:\n%s", out)
		}
		again, err := runExample(t, env("PREDICTKIT_URL", base), "-key", key[1], "-market", market[1], "-user", "customer-43", "-amount", "5000")
		if err != nil {
			t.Fatalf("run: %v\n%s", err, again)
		}
		if strings.Contains(again, "partner:") || strings.Contains(again, "float:") || !strings.Contains(again, "Idempotent-Replayed: true") {
			t.Errorf("output:\n%s", again)
		}
	})
}

func TestRunRefuses(t *testing.T) {
	base := startServer(t)
	cases := []struct {
		name   string
		getenv func(string) string
		args   []string
		says   string
	}{
		{"no key and no operator token", env("PREDICTKIT_URL", base), nil, "give the partner's key"},
		{"a key the server does not know: the server's 401", env("PREDICTKIT_URL", base), []string{"-key", "pk_unknown"}, "401 UNAUTHORIZED"},
		{"a wrong operator token: the server's 401", env("PREDICTKIT_URL", base, "PREDICTKIT_ADMIN_TOKEN", "wrong-token-wrong-token"), nil, "create a partner: predictkit: 401 unauthorized"},
		{"a market that does not exist: the server's 404", env("PREDICTKIT_URL", base, "PREDICTKIT_ADMIN_TOKEN", adminToken), []string{"-market", "999"}, "market 999: predictkit: 404 market_not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := runExample(t, c.getenv, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("got %v, want an error saying %q\n%s", err, c.says, out)
			}
		})
	}
}
