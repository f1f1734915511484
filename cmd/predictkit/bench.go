package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/predictkit/predictkit/bench"
)

const benchUsage = `Usage: predictkit bench [flags]

Load-tests a running predictkit server, like pgbench. It prepares its own
users, credits and markets through the operator API, runs a scenario for
-duration after a warm-up, and prints throughput, latency percentiles,
errors by status and the ledger audit.

Scenarios:
`

const readUsage = `
The read scenario measures every public read route and GET /api/v1/auth/me
each alone, with the same clients, against GET /healthz in the same run
(the "of healthz" column): the events feed's first page, an event, a
pool, a market, the latest trades, the leaderboard's first page and a
market's 1m candles of the last day. It then runs a 40/30/30 mix of the
pool, the latest trades and auth/me. Requests carry no If-None-Match:
every answer is a full one, and a 304 would count as an error.
`

const streamUsage = `
The stream scenario opens -subscribers connections to
GET /api/v1/stream?topics=market:{id} on one market and trades on it at
-rate trades/s (an open loop). Every trade answered must reach every
subscriber once, in order: gaps, duplicates, disorder, resets and
reconnections are counted, and the run fails if any is found. Delivery
latency runs from the trade's HTTP answer (the trade committed before it)
to its message, 0 if the message came first; it is also given from the
trade's created_at. Its modes (-stream-mode):
`

// benchCmd runs `predictkit bench`. It exits 0 when the run found the
// server sound, 1 when the setup failed, the audit found problems, a
// duplicate retry was answered differently or a stream subscriber missed,
// repeated or reordered a trade, 2 for bad flags.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg bench.Config
	var asJSON bool
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080", "base URL of the server")
	fs.StringVar(&cfg.AdminToken, "admin-token", os.Getenv("PREDICTKIT_ADMIN_TOKEN"), "the server's operator token (env PREDICTKIT_ADMIN_TOKEN)")
	fs.StringVar(&cfg.Scenario, "scenario", "hot", "hot, spread, read, partner or stream")
	fs.IntVar(&cfg.Clients, "clients", 64, "concurrent clients (connections)")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time, split between the phases of read; stream: of each sweep step, or how long idle connections are held")
	warmup := fs.Duration("warmup", time.Second, "unmeasured load before each phase; 0 for none")
	fs.Float64Var(&cfg.Rate, "rate", 0, "requests per second over all clients (open loop, latency from when each was due); 0 = closed loop (stream: trades per second, 0 = 100)")
	fs.IntVar(&cfg.Users, "users", 0, "users, or partner sub-accounts (default: one per client)")
	fs.IntVar(&cfg.Markets, "markets", 0, "markets: spread 1000, partner 1, read 4 in one pool by default; hot always 1")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the clients' random choices")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "limit of each request")
	fs.BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	fs.StringVar(&cfg.StreamMode, "stream-mode", "deliver", "stream: deliver, idle or sweep (see above)")
	fs.IntVar(&cfg.Subscribers, "subscribers", 0, "stream: subscriber connections (default 1000; idle 10000)")
	fs.DurationVar(&cfg.Drain, "drain", 5*time.Second, "stream: most time to wait after the trading for every subscriber to have every trade")
	fs.StringVar(&cfg.SweepRaise, "sweep", "rate", "stream sweep: what each step raises, rate or subscribers")
	fs.Float64Var(&cfg.SweepFactor, "sweep-factor", 1.5, "stream sweep: factor of each step (above 1)")
	fs.IntVar(&cfg.SweepSteps, "sweep-steps", 10, "stream sweep: most steps, each -duration long after -warmup")
	fs.DurationVar(&cfg.SweepP99, "sweep-p99", 100*time.Millisecond, "stream sweep: stop once the delivery latency's p99 passes this")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, benchUsage)
		for _, s := range bench.Scenarios {
			fmt.Fprintf(w, "  %-8s  %s\n", s.Name, s.About)
		}
		fmt.Fprint(w, readUsage)
		fmt.Fprint(w, streamUsage)
		for _, m := range bench.StreamModes {
			fmt.Fprintf(w, "  %-8s  %s\n", m.Name, m.About)
		}
		fmt.Fprint(w, "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "predictkit bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg.Warmup = *warmup
	if cfg.Warmup == 0 {
		cfg.Warmup = -1 // none; bench.Config reads 0 as its default
	}
	if cfg.Clients <= 0 || cfg.Duration <= 0 || cfg.Users < 0 || cfg.Markets < 0 || cfg.Timeout <= 0 || *warmup < 0 || cfg.Subscribers < 0 {
		fmt.Fprintln(stderr, "predictkit bench: -clients, -duration and -timeout must be positive; -users, -markets, -subscribers and -warmup not negative")
		return 2
	}

	rep, err := bench.Run(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "predictkit bench: %v\n", err)
		if errors.Is(err, bench.ErrSetup) || ctx.Err() != nil {
			return 1
		}
		return 2
	}
	if asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "predictkit bench: %v\n", err)
		return 1
	}
	if !rep.OK() {
		fmt.Fprintln(stderr, "predictkit bench: the server is not sound: see the audit, the partner replays and the stream's deliveries")
		return 1
	}
	return 0
}
