package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/bench"
	"github.com/predictkit/predictkit/server"
)

// serverTrades returns the trades the server executed, from its
// predictkit_trades_total counters.
func serverTrades(t *testing.T, url string) int64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for line := range strings.Lines(string(body)) {
		if !strings.HasPrefix(line, "predictkit_trades_total{") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndexByte(line, ' ')+1:]), 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		n += v
	}
	return int64(n)
}

// startStartedServer starts the real server as `predictkit serve` does
// (its start hooks run, the live stream's hub among them), on the memory
// store and a free loopback port, and returns its URL.
func startStartedServer(t *testing.T) string {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Demo = false
	cfg.Addr = "127.0.0.1:0"
	cfg.AdminToken = adminToken
	cfg.BcryptCost = 4
	cfg.RateTrade, cfg.RatePartner = server.Rate{}, server.Rate{}
	cfg.Logger = slog.New(slog.DiscardHandler)
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

func TestStreamScenarioAgainstTheRealServer(t *testing.T) {
	url := startStartedServer(t)
	base := bench.Config{
		URL: url, AdminToken: adminToken, Scenario: "stream",
		Clients: 2, Subscribers: 4, Rate: 20,
		Duration: time.Second, Warmup: -1, // every trade measured
	}
	t.Run("every trade reaches every subscriber once and in order", func(t *testing.T) {
		var progress bytes.Buffer
		r, err := bench.Run(context.Background(), base, &progress)
		if err != nil {
			t.Fatalf("%v\n%s", err, progress.String())
		}
		d := r.Stream.Delivery
		if d == nil || len(r.Phases) != 1 {
			t.Fatalf("no delivery check: %+v", r.Stream)
		}
		if d.Connected != 4 || d.Gaps != 0 || d.Duplicates != 0 || d.OutOfOrder != 0 || d.MissingIDs != 0 || d.Resets != 0 || d.Foreign != 0 {
			t.Errorf("delivery %+v", d)
		}
		// The report's counts are the trades made: each answered trade
		// is one the server holds, and each reached the four subscribers.
		made := serverTrades(t, url) // this server's first run
		if d.Trades == 0 || d.Trades != r.Phases[0].Trades || d.Trades+int64(d.ProbeTrades) != made {
			t.Errorf("%d trades answered, %d counted by the phase, %d probes; the server holds %d", d.Trades, r.Phases[0].Trades, d.ProbeTrades, made)
		}
		if d.Expected != 4*d.Trades || d.Delivered != d.Expected || d.TradeMessages != d.Expected {
			t.Errorf("%d deliveries owed, %d made, %d trade messages; want %d each", d.Expected, d.Delivered, d.TradeMessages, 4*d.Trades)
		}
		if d.Latency.Max < d.Latency.P99 || d.LatencyFromCreatedAt.P50 <= 0 || d.DeliveriesPerSecond <= 0 {
			t.Errorf("latency %+v, from created_at %+v, %.1f deliveries/s", d.Latency, d.LatencyFromCreatedAt, d.DeliveriesPerSecond)
		}
		if !r.OK() {
			t.Errorf("the report is not OK: audit %+v", r.Audit)
		}
		var text, js bytes.Buffer
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"scenario: stream", "gaps 0 (0 subscribers)", "from the answer", "audit: ok"} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("the text report lacks %q:\n%s", want, text.String())
			}
		}
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		var back bench.Report
		if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Stream == nil || back.Stream.Delivery.Delivered != d.Delivered {
			t.Errorf("the JSON report does not give the deliveries back: %v", err)
		}
	})
	t.Run("a sweep raises the rate and keeps the best step", func(t *testing.T) {
		cfg := base
		cfg.StreamMode, cfg.SweepSteps, cfg.SweepFactor, cfg.Duration = "sweep", 2, 2, 300*time.Millisecond
		cfg.SweepP99 = time.Minute // the limit is not what is tested
		r, err := bench.Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		sw := r.Stream.Sweep
		if sw == nil || len(sw.Steps) != 2 || len(r.Phases) != 2 {
			t.Fatalf("sweep %+v", sw)
		}
		if sw.Steps[0].Rate != 20 || sw.Steps[1].Rate != 40 || sw.Best < 0 {
			t.Errorf("steps at %v and %v trades/s, best %d", sw.Steps[0].Rate, sw.Steps[1].Rate, sw.Best)
		}
		for i, st := range sw.Steps {
			if !st.Within || st.Delivery.Gaps != 0 || st.Delivery.Trades == 0 {
				t.Errorf("step %d: %+v", i, st)
			}
		}
		if !r.OK() {
			t.Error("the report is not OK")
		}
	})
	t.Run("idle connections are counted and the server's memory read twice", func(t *testing.T) {
		cfg := base
		cfg.StreamMode, cfg.Subscribers, cfg.Duration = "idle", 20, 100*time.Millisecond
		r, err := bench.Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		ir := r.Stream.Idle
		if ir == nil || ir.Connected != 20 || ir.Before.GCCycles < 2 || ir.After.GCCycles < 2 || ir.After.HeapInuse <= 0 {
			t.Fatalf("idle %+v", ir)
		}
		// The bench and this server share a process, so the figures per
		// connection mix both sides: only their presence is checked.
		var text bytes.Buffer
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "20 of 20 connections open") || !strings.Contains(text.String(), "per connection") {
			t.Errorf("text report:\n%s", text.String())
		}
	})
}

func TestStreamSettingsAreChecked(t *testing.T) {
	cases := []struct {
		name string
		cfg  bench.Config
		says string
	}{
		{"an unknown mode", bench.Config{StreamMode: "loud"}, `stream mode "loud"`},
		{"a negative number of subscribers", bench.Config{Subscribers: -1}, "subscribers -1"},
		{"more subscribers than file descriptors", bench.Config{Subscribers: 1 << 29}, "file descriptors"},
		{"a sweep that raises something else", bench.Config{StreamMode: "sweep", SweepRaise: "users"}, `sweep "users"`},
		{"a sweep factor that does not raise", bench.Config{StreamMode: "sweep", SweepFactor: 0.5}, "sweep factor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.URL, cfg.AdminToken, cfg.Scenario = "http://127.0.0.1:1", adminToken, "stream"
			r, err := bench.Run(context.Background(), cfg, nil)
			if err == nil || r != nil {
				t.Fatalf("Run = %v, %v; want an error", r, err)
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %q does not say %q", err, c.says)
			}
		})
	}
}
