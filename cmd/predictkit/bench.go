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

// benchCmd runs `predictkit bench`. It exits 0 when the run found the
// server sound, 1 when the setup failed, the audit found problems or a
// duplicate retry was answered differently, 2 for bad flags.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg bench.Config
	var asJSON bool
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080", "base URL of the server")
	fs.StringVar(&cfg.AdminToken, "admin-token", os.Getenv("PREDICTKIT_ADMIN_TOKEN"), "the server's operator token (env PREDICTKIT_ADMIN_TOKEN)")
	fs.StringVar(&cfg.Scenario, "scenario", "hot", "hot, spread, read or partner")
	fs.IntVar(&cfg.Clients, "clients", 64, "concurrent clients (connections)")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured time, split between the phases of read")
	warmup := fs.Duration("warmup", time.Second, "unmeasured load before each phase; 0 for none")
	fs.Float64Var(&cfg.Rate, "rate", 0, "requests per second over all clients (open loop, latency from when each was due); 0 = closed loop")
	fs.IntVar(&cfg.Users, "users", 0, "users, or partner sub-accounts (default: one per client)")
	fs.IntVar(&cfg.Markets, "markets", 0, "markets: spread 1000, partner 1, read 4 in one pool by default; hot always 1")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the clients' random choices")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "limit of each request")
	fs.BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, benchUsage)
		for _, s := range bench.Scenarios {
			fmt.Fprintf(w, "  %-8s  %s\n", s.Name, s.About)
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
	if cfg.Clients <= 0 || cfg.Duration <= 0 || cfg.Users < 0 || cfg.Markets < 0 || cfg.Timeout <= 0 || *warmup < 0 {
		fmt.Fprintln(stderr, "predictkit bench: -clients, -duration and -timeout must be positive; -users, -markets and -warmup not negative")
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
		fmt.Fprintln(stderr, "predictkit bench: the server is not sound: see the audit and the partner replays")
		return 1
	}
	return 0
}
