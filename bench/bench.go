// Package bench is a load generator for a running predictkit server, in
// the manner of pgbench or redis-benchmark: `predictkit bench`.
//
// Run prepares its own users, credits, markets and partner through the
// server's operator API, then runs a scenario for a duration and reports
// throughput, latency percentiles, errors by status and the ledger audit:
//
//   - hot: every client buys and sells on one market;
//   - spread: every request trades on a random market of 1,000;
//   - read: every public read route (the events feed, an event, a pool,
//     a market, the latest trades, the leaderboard, a market's candles)
//     and the caller's profile each alone, beside /healthz alone, then a
//     40/30/30 mix of the pool, the latest trades and the profile;
//   - partner: partner bets with fresh client_bet_ids, a share of them
//     repeated at once as duplicate retries whose answers must be
//     identical;
//   - stream: subscribers follow one market's live stream while trades
//     are made on it at a set rate; every trade must reach every
//     subscriber once and in order (see StreamModes for its modes).
//
// A run is closed-loop (Clients concurrent clients, each sending its next
// request when the previous one is answered) or open-loop (Rate requests
// per second at fixed intervals, from up to Clients concurrent clients).
// In an open loop a request's latency is measured from the time it was
// due, not from when a client was free to send it, so a server that falls
// behind shows its queueing delay in the percentiles instead of hiding it
// (coordinated omission).
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Config is one benchmark run. The zero value of a field means its
// default, except where noted.
type Config struct {
	// URL is the server's base URL; default http://127.0.0.1:8080.
	URL string
	// AdminToken is the server's operator token (PREDICTKIT_ADMIN_TOKEN);
	// required, for the setup and the audit.
	AdminToken string
	// Scenario is hot, spread, read, partner or stream; default hot.
	Scenario string
	// Clients is the number of concurrent clients; default 64.
	Clients int
	// Duration is the measured time, split between the phases of a
	// scenario that has several; default 10s.
	Duration time.Duration
	// Warmup runs the load unmeasured before each phase; default 1s. A
	// negative value means none.
	Warmup time.Duration
	// Rate, when positive, makes the run open-loop: Rate requests per
	// second over all clients, at fixed intervals. Zero is closed-loop,
	// except for stream, which always trades in an open loop (default
	// 100 trades a second).
	Rate float64
	// Users is the number of users (trading scenarios and read) or of
	// partner sub-accounts (partner); default Clients.
	Users int
	// Markets is the number of markets: traded on by spread (default
	// 1,000) and partner (default 1), in the one pool read reads (default
	// 4). hot always trades on one.
	Markets int
	// Seed seeds each client's random choices (client i uses Seed and i).
	Seed uint64
	// Timeout bounds each request; default 30s. A request that times out
	// is a transport error.
	Timeout time.Duration
	// StreamMode is the stream scenario's mode: deliver (default), idle
	// or sweep (see StreamModes).
	StreamMode string
	// Subscribers is the number of stream clients; default 1,000, or
	// 10,000 in the idle mode.
	Subscribers int
	// Drain bounds the wait, after the trading, for every subscriber to
	// have every trade; default 5s.
	Drain time.Duration
	// SweepRaise is what a sweep raises, "rate" (default) or
	// "subscribers", by SweepFactor (default 1.5) a step, for at most
	// SweepSteps steps (default 10) until the delivery latency's p99
	// passes SweepP99 (default 100ms).
	SweepRaise  string
	SweepFactor float64
	SweepSteps  int
	SweepP99    time.Duration
	// Transport, when set, sends the requests through net/http with this
	// transport instead of the built-in fasthttp client (keep-alive,
	// Clients connections to the server), which costs the load generator
	// about half the CPU time a request.
	Transport http.RoundTripper
}

// Scenarios are the names Config.Scenario accepts, with what each does.
var Scenarios = []struct{ Name, About string }{
	{"hot", "every client buys and sells on one market"},
	{"spread", "every request buys or sells on a random market of many"},
	{"read", "each public read route and auth/me alone against /healthz, then a 40/30/30 mix of pool, latest trades and auth/me"},
	{"partner", "partner bets with fresh client_bet_ids; some repeated at once as duplicate retries"},
	{"stream", "subscribers follow one market's live stream while trades are made on it at a set rate"},
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.URL == "" {
		c.URL = "http://127.0.0.1:8080"
	}
	c.URL = strings.TrimRight(c.URL, "/")
	if c.Scenario == "" {
		c.Scenario = "hot"
	}
	if c.Clients == 0 {
		c.Clients = 64
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	switch {
	case c.Warmup == 0:
		c.Warmup = time.Second
	case c.Warmup < 0:
		c.Warmup = 0
	}
	if c.Users == 0 {
		c.Users = c.Clients
	}
	switch {
	case c.Scenario == "hot", c.Scenario == "stream":
		c.Markets = 1
	case c.Markets != 0:
	case c.Scenario == "spread":
		c.Markets = 1000
	case c.Scenario == "read":
		c.Markets = readMarkets
	default:
		c.Markets = 1
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Scenario == "stream" {
		c = c.streamDefaults()
	}
	return c
}

// streamDefaults fills in the stream scenario's settings.
func (c Config) streamDefaults() Config {
	if c.StreamMode == "" {
		c.StreamMode = streamDeliver
	}
	if c.Rate == 0 {
		c.Rate = 100
	}
	if c.Subscribers == 0 {
		c.Subscribers = 1000
		if c.StreamMode == streamIdle {
			c.Subscribers = 10_000
		}
	}
	if c.Drain == 0 {
		c.Drain = 5 * time.Second
	}
	if c.SweepRaise == "" {
		c.SweepRaise = "rate"
	}
	if c.SweepFactor == 0 {
		c.SweepFactor = 1.5
	}
	if c.SweepSteps == 0 {
		c.SweepSteps = 10
	}
	if c.SweepP99 == 0 {
		c.SweepP99 = 100 * time.Millisecond
	}
	return c
}

// validate reports settings that cannot work; c has its defaults.
func (c Config) validate() error {
	var errs []error
	if _, ok := scenarios[c.Scenario]; !ok {
		errs = append(errs, fmt.Errorf("scenario %q: must be hot, spread, read, partner or stream", c.Scenario))
	}
	if c.Scenario == "stream" {
		errs = append(errs, c.validateStream()...)
	}
	if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
		errs = append(errs, fmt.Errorf("url %q: must start with http:// or https://", c.URL))
	}
	if c.AdminToken == "" {
		errs = append(errs, errors.New("admin token: required (set PREDICTKIT_ADMIN_TOKEN or -admin-token) to prepare users and markets"))
	}
	if c.Clients < 1 {
		errs = append(errs, fmt.Errorf("clients %d: must be at least 1", c.Clients))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration %v: must be positive", c.Duration))
	}
	if c.Rate < 0 {
		errs = append(errs, fmt.Errorf("rate %v: must be 0 (closed loop) or positive", c.Rate))
	}
	if c.Users < 1 {
		errs = append(errs, fmt.Errorf("users %d: must be at least 1", c.Users))
	}
	if c.Markets < 1 || c.Markets > maxMarkets {
		errs = append(errs, fmt.Errorf("markets %d: must be 1 to %d", c.Markets, maxMarkets))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %v: must be positive", c.Timeout))
	}
	return errors.Join(errs...)
}

// ErrSetup wraps every error of the preparation: the server is unreachable,
// the admin token is wrong, or the server refused to create (or, for the
// stream, to serve) what the scenario needs.
var ErrSetup = errors.New("bench: setup")

// Run prepares the scenario on the server at cfg.URL, runs it and audits
// the ledger. It writes progress lines to progress (which may be nil) and
// returns the report; an error means no measurement was made (invalid
// configuration, a failed setup, or ctx ended). A report whose audit
// failed is returned without error: see Report.OK.
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	sc := scenarios[cfg.Scenario]
	api := newAPI(cfg)
	defer api.close()

	rep := &Report{
		Scenario: cfg.Scenario,
		URL:      cfg.URL,
		Mode:     "closed",
		Clients:  cfg.Clients,
		Rate:     cfg.Rate,
		Users:    cfg.Users,
		Markets:  cfg.Markets,
		Duration: cfg.Duration,
		Warmup:   cfg.Warmup,
		Seed:     cfg.Seed,
	}
	if cfg.Rate > 0 {
		rep.Mode = "open"
	}
	if cfg.StreamMode == streamIdle {
		rep.Mode, rep.Rate = "idle", 0
	}

	began := time.Now()
	fx, err := prepare(ctx, api, cfg, sc, progress)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	rep.RunID = fx.runID
	rep.Setup = time.Since(began)
	fmt.Fprintf(progress, "bench: setup done in %v\n", rep.Setup.Round(time.Millisecond))

	if sc.run != nil {
		// Its errors are those of a setup: what the scenario needs (a
		// stream that answers, a probe trade) was refused.
		if err := sc.run(ctx, api, cfg, fx, rep, progress); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
	}
	var phases []phase
	if sc.phases != nil {
		phases = sc.phases(fx, cfg)
	}
	var total float64
	for _, ph := range phases {
		total += ph.share
	}
	var partner PartnerReport
	for _, ph := range phases {
		d := time.Duration(float64(cfg.Duration) * ph.share / total)
		fmt.Fprintf(progress, "bench: phase %s: %v warm-up, %v measured\n", ph.name, cfg.Warmup, d.Round(time.Millisecond))
		pr, counts := runPhase(ctx, api, cfg, ph, cfg.Warmup, d)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Phases = append(rep.Phases, pr)
		partner.add(counts)
	}
	if cfg.Scenario == "partner" {
		rep.Partner = &partner
	}
	relateToHealthz(rep.Phases)

	fmt.Fprintln(progress, "bench: auditing the ledger")
	audit, err := api.audit(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		audit.Error = err.Error()
	}
	rep.Audit = audit
	return rep, nil
}
