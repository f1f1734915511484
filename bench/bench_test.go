package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/bench"
	"github.com/predictkit/predictkit/server"
)

const adminToken = "bench-test-admin-token"

// startServer serves the real server, on the memory store, on a loopback
// port, and returns its URL.
func startServer(t *testing.T) string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Demo = false
	cfg.AdminToken = adminToken
	cfg.BcryptCost = 4 // registering users is not what is measured
	// As the operator guide says to serve a benchmark: two users trading from
	// four clients outrun the per-user trade limit within a second.
	cfg.RateTrade, cfg.RatePartner = server.Rate{}, server.Rate{}
	cfg.Logger = slog.New(slog.DiscardHandler)
	app, err := server.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

func TestScenariosAgainstTheRealServer(t *testing.T) {
	url := startServer(t)
	cases := []struct {
		name   string
		cfg    bench.Config
		phases []string
		check  func(t *testing.T, r *bench.Report)
	}{
		{"hot trades on one market", bench.Config{Scenario: "hot"}, []string{"trade"}, nil},
		{"spread trades on a thousand markets", bench.Config{Scenario: "spread"}, []string{"trade"}, func(t *testing.T, r *bench.Report) {
			if r.Markets != 1000 {
				t.Errorf("markets %d, want 1000", r.Markets)
			}
		}},
		{"spread with fewer users than clients shares users safely", bench.Config{Scenario: "spread", Markets: 60, Users: 2}, []string{"trade"}, nil},
		{"hot at a constant rate runs an open loop", bench.Config{Scenario: "hot", Rate: 200}, []string{"trade"}, func(t *testing.T, r *bench.Report) {
			if r.Mode != "open" {
				t.Errorf("mode %q", r.Mode)
			}
			// An open loop sends no more than it schedules, however fast the
			// server; how many fewer depends on the machine, so is not tested.
			if n := r.Phases[0].Requests; n > 200*1.1+1 {
				t.Errorf("%d requests in 1s at a rate of 200/s", n)
			}
		}},
		{"read measures every public read route and auth/me against healthz", bench.Config{Scenario: "read"},
			[]string{"healthz", "events", "event", "pool", "market", "latest-trades", "leaderboard", "candles", "auth-me", "mix"}, func(t *testing.T, r *bench.Report) {
				for _, p := range r.Phases[1:] {
					if p.PercentOfHealthz <= 0 {
						t.Errorf("phase %s has no percentage of healthz", p.Name)
					}
				}
				if mix := r.Phases[9]; len(mix.Endpoints) != 3 || mix.Endpoints[0].Requests == 0 || mix.Endpoints[2].Requests == 0 {
					t.Errorf("the mix did not request all three endpoints: %+v", mix.Endpoints)
				}
			}},
		{"partner repeats of accepted bets are replayed identically", bench.Config{Scenario: "partner", Markets: 3}, []string{"bet"}, func(t *testing.T, r *bench.Report) {
			p := r.Partner
			if p == nil || p.Executed == 0 || p.Repeats == 0 {
				t.Fatalf("partner %+v: no bet or no repeat", p)
			}
			if p.Replayed != p.Repeats || p.Mismatched != 0 {
				t.Errorf("partner %+v: every repeat must be replayed", p)
			}
			if r.Phases[0].Trades != p.Executed {
				t.Errorf("trades %d, executed %d: replays are not trades", r.Phases[0].Trades, p.Executed)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each run prepares its own users and markets
			cfg := c.cfg
			cfg.URL, cfg.AdminToken = url, adminToken
			cfg.Clients = 4
			cfg.Duration = time.Second
			cfg.Warmup = 100 * time.Millisecond
			if cfg.Scenario == "read" {
				// Ten phases share the duration: give each enough time to
				// measure some requests even on a busy machine under -race.
				cfg.Duration = 10 * time.Second
			}
			var progress bytes.Buffer
			r, err := bench.Run(context.Background(), cfg, &progress)
			if err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			if len(r.Phases) != len(c.phases) {
				t.Fatalf("%d phases, want %v", len(r.Phases), c.phases)
			}
			for i, p := range r.Phases {
				if p.Name != c.phases[i] {
					t.Errorf("phase %d is %q, want %q", i, p.Name, c.phases[i])
				}
				if p.Requests == 0 || p.Throughput <= 0 || p.Latency.P50 <= 0 || p.Latency.Max < p.Latency.P99 {
					t.Errorf("phase %s: %d requests, %.1f/s, p50 %v, p99 %v, max %v", p.Name, p.Requests, p.Throughput, p.Latency.P50, p.Latency.P99, p.Latency.Max)
				}
				if p.Name == "trade" || p.Name == "bet" {
					if p.Trades == 0 || p.TradesPerSecond <= 0 {
						t.Errorf("phase %s: no trades", p.Name)
					}
				}
			}
			if n := r.Errors(); n != 0 {
				for _, p := range r.Phases {
					t.Logf("phase %s errors %v samples %v", p.Name, p.Errors, p.ErrorSamples)
				}
				t.Errorf("%d errors", n)
			}
			if !r.Audit.OK || !r.OK() {
				t.Errorf("audit %+v", r.Audit)
			}
			if c.check != nil {
				c.check(t, r)
			}

			var text, js bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"scenario: " + cfg.Scenario, "p99 ms", "errors: none", "audit: ok"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("the text report lacks %q:\n%s", want, text.String())
				}
			}
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var back bench.Report
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatalf("the JSON report does not decode: %v", err)
			}
			if back.Phases[0].Latency.P99 != r.Phases[0].Latency.P99 || back.Audit.OK != r.Audit.OK {
				t.Errorf("the JSON report differs from the report")
			}
		})
	}
}

func TestRunRefuses(t *testing.T) {
	url := startServer(t)
	cases := []struct {
		name  string
		cfg   bench.Config
		setup bool // a setup error rather than a configuration error
		says  string
	}{
		{"an unknown scenario", bench.Config{URL: url, AdminToken: adminToken, Scenario: "cold"}, false, `scenario "cold"`},
		{"a run without an admin token", bench.Config{URL: url}, false, "admin token"},
		{"a negative rate", bench.Config{URL: url, AdminToken: adminToken, Rate: -1}, false, "rate"},
		{"a URL without a scheme", bench.Config{URL: "localhost:8080", AdminToken: adminToken}, false, "http://"},
		{"too many markets", bench.Config{URL: url, AdminToken: adminToken, Scenario: "spread", Markets: 1_000_000}, false, "markets"},
		{"an admin token the server refuses", bench.Config{URL: url, AdminToken: "not-the-admin-token"}, true, "refuses the admin token"},
		{"a server that does not answer", bench.Config{URL: "http://127.0.0.1:1", AdminToken: adminToken}, true, "does not answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Duration = 100 * time.Millisecond
			r, err := bench.Run(context.Background(), cfg, nil)
			if err == nil || r != nil {
				t.Fatalf("Run = %v, %v; want an error", r, err)
			}
			if errors.Is(err, bench.ErrSetup) != c.setup {
				t.Errorf("errors.Is(%v, ErrSetup) = %v, want %v", err, !c.setup, c.setup)
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %q does not say %q", err, c.says)
			}
		})
	}
}
