package bench

import (
	"context"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A scenario prepares its fixture and describes its phases.
type scenario struct {
	// prepare creates what the clients need, beyond the users and
	// markets every scenario gets (see prepare in setup.go).
	prepare func(ctx context.Context, a *api, cfg Config, fx *fixture) error
	// phases lists the phases to run, in order.
	phases func(fx *fixture, cfg Config) []phase
	// run, when set, runs a scenario that is more than phases (stream):
	// it adds its phases and figures to rep.
	run func(ctx context.Context, a *api, cfg Config, fx *fixture, rep *Report, progress io.Writer) error
}

var scenarios = map[string]scenario{
	"hot":     {phases: tradePhases},
	"spread":  {phases: tradePhases},
	"read":    {prepare: prepareRead, phases: readPhases},
	"partner": {prepare: preparePartner, phases: partnerPhases},
	"stream":  {run: runStream},
}

// A phase is a load run for its share of the duration: every client calls
// its step function in a loop (closed) or when a request is due (open).
type phase struct {
	name string
	// share is the phase's part of the measured duration, relative to
	// the other phases' shares.
	share float64
	// endpoints names what the step functions request, indexed by the
	// endpoint numbers they pass to session.do.
	endpoints []string
	// client returns client i's step function, which sends one request
	// (and, for a duplicate retry, its repeat).
	client func(i int) step
}

// A step sends one scheduled request through s.
type step func(ctx context.Context, s *session)

// counts are a session's scenario-specific tallies.
type counts struct {
	trades               int64 // 200 answers of buys, sells and bets
	executed, replayed   int64 // partner bets run, partner repeats answered as replays
	mismatched, attempts int64 // repeats whose answer differed; repeats sent
}

func (c *counts) add(o counts) {
	c.trades += o.trades
	c.executed += o.executed
	c.replayed += o.replayed
	c.mismatched += o.mismatched
	c.attempts += o.attempts
}

// A session is one client's state during a phase. It is used by one
// goroutine only; the runner merges the sessions when the phase ends.
type session struct {
	api *api
	rng *rand.Rand
	// start is when the next request was due (open loop) or started
	// (closed loop); do consumes it, and a further request of the same
	// step is timed from its own start.
	start time.Time
	// record is whether the current step falls in the measured window.
	record bool

	hists   []*Histogram
	errs    []map[string]int64
	samples map[string]string
	counts  counts
}

func newSession(a *api, rng *rand.Rand, endpoints int) *session {
	s := &session{api: a, rng: rng, samples: map[string]string{}}
	for range endpoints {
		s.hists = append(s.hists, NewHistogram())
		s.errs = append(s.errs, map[string]int64{})
	}
	return s
}

// do sends r as endpoint ep and records its latency and, when it is not a
// 2xx answer, its error. It returns the status (0 for a transport error)
// and the body.
func (s *session) do(ctx context.Context, ep int, r request) (int, []byte, string) {
	start := s.start
	s.start = time.Time{}
	if start.IsZero() {
		start = time.Now()
	}
	status, body, replayed, err := s.api.send(ctx, r)
	lat := time.Since(start)
	if !s.record {
		return status, body, replayed
	}
	s.hists[ep].Record(lat)
	switch {
	case err != nil:
		s.fail(ep, "transport", err.Error())
	case status < 200 || status > 299:
		s.fail(ep, strconv.Itoa(status), string(body))
	}
	return status, body, replayed
}

// fail counts an error of kind (an HTTP status, "transport", or a
// scenario's own check) on endpoint ep, keeping the first detail of each
// kind as a sample.
func (s *session) fail(ep int, kind, detail string) {
	if !s.record {
		return
	}
	s.errs[ep][kind]++
	if _, ok := s.samples[kind]; !ok {
		if len(detail) > 200 {
			detail = detail[:200] + "…"
		}
		s.samples[kind] = detail
	}
}

// count adds to the session's tallies when the step is measured.
func (s *session) count(f func(c *counts)) {
	if s.record {
		f(&s.counts)
	}
}

// runPhase runs ph: warmup unmeasured, then d measured; the requests
// sent in the measured window are measured. In an open loop (cfg.Rate >
// 0) request k is due at k/Rate seconds from the start; a free client
// takes the earliest request not yet taken, waits until it is due and
// sends it, and its latency counts from when it was due, so a server that
// falls behind sees every later request's latency grow. The phase ends on
// time: the requests due before its end that no client was free to send
// are counted as unsent.
func runPhase(ctx context.Context, a *api, cfg Config, ph phase, warmup, d time.Duration) (PhaseReport, counts) {
	sessions := make([]*session, cfg.Clients)
	steps := make([]step, cfg.Clients)
	for i := range sessions {
		sessions[i] = newSession(a, rand.New(rand.NewPCG(cfg.Seed, uint64(i))), len(ph.endpoints))
		steps[i] = ph.client(i)
	}

	t0 := time.Now()
	measureFrom := t0.Add(warmup)
	end := measureFrom.Add(d)
	var interval time.Duration
	var next atomic.Int64 // the next request due, open loop
	if cfg.Rate > 0 {
		interval = max(time.Duration(float64(time.Second)/cfg.Rate), 1)
	}

	var sent atomic.Int64 // requests sent
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() {
			for ctx.Err() == nil {
				var due time.Time
				if interval > 0 {
					due = t0.Add(time.Duration(next.Add(1)-1) * interval)
					if !due.Before(end) {
						return
					}
					if wait := time.Until(due); wait > 0 {
						sleep(ctx, wait)
					}
				} else {
					due = time.Now()
				}
				// A request due after the end is not sent, nor one
				// due earlier that no client could send before it.
				now := time.Now()
				if !due.Before(end) || !now.Before(end) {
					return
				}
				s.start = due
				s.record = !now.Before(measureFrom)
				sent.Add(1)
				steps[i](ctx, s)
			}
		})
	}
	wg.Wait()

	var unsent int64
	if interval > 0 {
		due := int64((warmup + d + interval - 1) / interval) // k·interval < warmup+d
		unsent = max(due-sent.Load(), 0)
	}
	return merge(ph, sessions, d, unsent)
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// merge sums the sessions of a phase that measured d into its report.
func merge(ph phase, sessions []*session, d time.Duration, unsent int64) (PhaseReport, counts) {
	secs := d.Seconds()
	pr := PhaseReport{Name: ph.name, Measured: d, Unsent: unsent, Errors: map[string]int64{}, ErrorSamples: map[string]string{}}
	all := NewHistogram()
	var c counts
	for i, name := range ph.endpoints {
		h := NewHistogram()
		ep := EndpointReport{Name: name, Errors: map[string]int64{}}
		for _, s := range sessions {
			h.Merge(s.hists[i])
			for k, n := range s.errs[i] {
				ep.Errors[k] += n
				pr.Errors[k] += n
			}
		}
		all.Merge(h)
		ep.Requests = int64(h.Count())
		ep.Throughput = float64(ep.Requests) / secs
		ep.Latency = latencyOf(h)
		pr.Endpoints = append(pr.Endpoints, ep)
	}
	for _, s := range sessions {
		c.add(s.counts)
		for k, v := range s.samples {
			if _, ok := pr.ErrorSamples[k]; !ok {
				pr.ErrorSamples[k] = v
			}
		}
	}
	pr.Requests = int64(all.Count())
	pr.Throughput = float64(pr.Requests) / secs
	pr.Latency = latencyOf(all)
	pr.Trades = c.trades
	pr.TradesPerSecond = float64(c.trades) / secs
	for _, n := range pr.Errors {
		pr.ErrorCount += n
	}
	return pr, c
}

func latencyOf(h *Histogram) Latency {
	return Latency{
		Mean: h.Mean(),
		P50:  h.Quantile(0.50),
		P95:  h.Quantile(0.95),
		P99:  h.Quantile(0.99),
		P999: h.Quantile(0.999),
		Max:  h.Max(),
	}
}
