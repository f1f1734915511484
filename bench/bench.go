// Package bench is a load generator for a running predictkit server, in
// the manner of pgbench or redis-benchmark: `predictkit bench`.
//
// Run prepares its own users, credits, markets and partner through the
// server's operator API, then runs a scenario for a duration and reports
// throughput, latency percentiles, errors by status and the ledger audit:
//
//   - hot: every client buys and sells on one market;
//   - spread: every request trades on a random market of 1,000;
//   - read: the pool, the latest trades and the caller's profile, each
//     alone and in a 40/30/30 mix, beside /healthz alone;
//   - partner: partner bets with fresh client_bet_ids, a share of them
//     repeated at once as duplicate retries whose answers must be
//     identical.
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
	// Scenario is hot, spread, read or partner; default hot.
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
	// second over all clients, at fixed intervals. Zero is closed-loop.
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
	{"read", "/healthz, pool, latest trades and auth/me alone, then a 40/30/30 mix of the three"},
	{"partner", "partner bets with fresh client_bet_ids; some repeated at once as duplicate retries"},
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
	case c.Scenario == "hot":
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
	return c
}

// validate reports settings that cannot work; c has its defaults.
func (c Config) validate() error {
	var errs []error
	if _, ok := scenarios[c.Scenario]; !ok {
		errs = append(errs, fmt.Errorf("scenario %q: must be hot, spread, read or partner", c.Scenario))
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
// the admin token is wrong, or the server refused to create what the
// scenario needs.
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

	phases := sc.phases(fx, cfg)
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
