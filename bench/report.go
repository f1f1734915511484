package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a run. Durations encode in JSON as integer
// nanoseconds (the fields ending in _ns).
type Report struct {
	Scenario string        `json:"scenario"`
	URL      string        `json:"url"`
	RunID    string        `json:"run_id"`
	Mode     string        `json:"mode"` // "closed" or "open" (loop), "idle" (stream idle)
	Clients  int           `json:"clients"`
	Rate     float64       `json:"rate,omitempty"` // requests per second, open loop
	Users    int           `json:"users"`
	Markets  int           `json:"markets"`
	Seed     uint64        `json:"seed"`
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	Setup    time.Duration `json:"setup_ns"` // time to prepare users and markets
	// Phases are the scenario's phases in the order they ran: one for
	// hot, spread and partner; healthz, events, event, pool, market,
	// latest-trades, leaderboard, candles, auth-me and mix for read.
	Phases []PhaseReport `json:"phases"`
	// Partner counts the partner scenario's bets and repeats.
	Partner *PartnerReport `json:"partner,omitempty"`
	// Stream is the stream scenario's check and measurements.
	Stream *StreamReport `json:"stream,omitempty"`
	// Audit is the ledger audit after the run.
	Audit Audit `json:"audit"`
}

// PhaseReport is one phase's figures over its measured window.
type PhaseReport struct {
	Name     string        `json:"name"`
	Measured time.Duration `json:"measured_ns"`
	// Requests counts every measured request, answered or not;
	// Throughput is Requests per second of the measured window.
	Requests   int64   `json:"requests"`
	Throughput float64 `json:"requests_per_s"`
	// Trades counts 200 answers of buys, sells and bets (not replays).
	Trades          int64   `json:"trades"`
	TradesPerSecond float64 `json:"trades_per_s"`
	Latency         Latency `json:"latency"`
	// Errors counts the requests answered other than 2xx by status
	// ("409"), the transport errors ("transport"), and the scenario's
	// failed checks ("replay_mismatch", "bad_answer"); ErrorSamples holds
	// the first detail or body of each kind.
	Errors       map[string]int64  `json:"errors"`
	ErrorCount   int64             `json:"error_count"`
	ErrorSamples map[string]string `json:"error_samples,omitempty"`
	// Unsent counts the requests of an open loop that fell due before
	// the phase's end but were never sent, every client being busy: the
	// server (or the clients) could not keep up with the rate.
	Unsent int64 `json:"unsent,omitempty"`
	// PercentOfHealthz is Throughput as a percentage of the healthz
	// phase's (read scenario).
	PercentOfHealthz float64          `json:"percent_of_healthz,omitempty"`
	Endpoints        []EndpointReport `json:"endpoints"`
}

// EndpointReport is one endpoint's figures within a phase.
type EndpointReport struct {
	Name       string           `json:"name"`
	Requests   int64            `json:"requests"`
	Throughput float64          `json:"requests_per_s"`
	Latency    Latency          `json:"latency"`
	Errors     map[string]int64 `json:"errors"`
}

// Latency summarizes a latency histogram. Percentiles are within 0.4%
// of a recorded value; Max is exact.
type Latency struct {
	Mean time.Duration `json:"mean_ns"`
	P50  time.Duration `json:"p50_ns"`
	P95  time.Duration `json:"p95_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
}

// PartnerReport counts the partner scenario's measured bets.
type PartnerReport struct {
	// Executed counts bets answered 200 on their first sending.
	Executed int64 `json:"executed"`
	// Repeats counts the duplicate retries sent; Replayed those answered
	// with the original body and Idempotent-Replayed: true; Mismatched
	// those answered otherwise (an error status, another body, or no
	// header). Transport errors are neither.
	Repeats    int64 `json:"repeats"`
	Replayed   int64 `json:"replayed"`
	Mismatched int64 `json:"mismatched"`
}

func (p *PartnerReport) add(c counts) {
	p.Executed += c.executed
	p.Repeats += c.attempts
	p.Replayed += c.replayed
	p.Mismatched += c.mismatched
}

// OK reports whether the run found the server sound: the audit passed,
// no duplicate retry was answered differently from its original, and
// every stream subscriber connected and got every trade once, in order.
func (r *Report) OK() bool {
	return r.Audit.OK && (r.Partner == nil || r.Partner.Mismatched == 0) && r.Stream.sound()
}

// sound reports whether the stream's checks found no fault (true when
// there is no stream).
func (s *StreamReport) sound() bool {
	switch {
	case s == nil:
		return true
	case s.Delivery != nil:
		return s.Delivery.Sound()
	case s.Sweep != nil:
		for _, st := range s.Sweep.Steps {
			if !st.Delivery.Sound() {
				return false
			}
		}
	case s.Idle != nil:
		return s.Idle.Connected == s.Idle.Connections
	}
	return true
}

// Errors returns the number of errors over every phase.
func (r *Report) Errors() int64 {
	var n int64
	for _, p := range r.Phases {
		n += p.ErrorCount
	}
	return n
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a reader: the settings, a table of
// every phase and endpoint, the errors, and the audit.
func (r *Report) WriteText(w io.Writer) error {
	about := ""
	for _, s := range Scenarios {
		if s.Name == r.Scenario {
			about = " (" + s.About + ")"
		}
	}
	load := fmt.Sprintf("closed loop, %d clients", r.Clients)
	switch {
	case r.Mode == "idle":
		load = "none: idle connections"
	case r.Mode == "open" && r.Stream != nil && r.Stream.Sweep != nil:
		load = fmt.Sprintf("open loop from %g trades/s, from up to %d clients; a trade's latency counts from when it was due", r.Rate, r.Clients)
	case r.Mode == "open":
		load = fmt.Sprintf("open loop, %g requests/s from up to %d clients; latency counts from when a request was due", r.Rate, r.Clients)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "scenario: %s%s\n", r.Scenario, about)
	fmt.Fprintf(&b, "server: %s\n", r.URL)
	fmt.Fprintf(&b, "run: %s (seed %d)\n", r.RunID, r.Seed)
	fmt.Fprintf(&b, "load: %s\n", load)
	switch {
	case r.Scenario == "partner":
		fmt.Fprintf(&b, "partner sub-accounts: %d, markets: %d\n", r.Users, r.Markets)
	case r.Stream != nil:
		fmt.Fprintf(&b, "users: %d, markets: %d, stream mode: %s, topics: %s\n", r.Users, r.Markets, r.Stream.Mode, r.Stream.Topics)
	default:
		fmt.Fprintf(&b, "users: %d, markets: %d\n", r.Users, r.Markets)
	}
	switch {
	case r.Mode == "idle":
		fmt.Fprintf(&b, "duration: the connections held at least %v\n", r.Duration)
	case r.Stream != nil && r.Stream.Sweep != nil:
		fmt.Fprintf(&b, "duration: %v measured a step, after %v of warm-up\n", r.Duration, r.Warmup)
	default:
		fmt.Fprintf(&b, "duration: %v measured, after %v of warm-up per phase\n", r.Duration, r.Warmup)
	}
	fmt.Fprintf(&b, "setup: %v\n\n", r.Setup.Round(time.Millisecond))
	if len(r.Phases) == 0 {
		return r.writeTail(w, &b)
	}

	relative := slices.ContainsFunc(r.Phases, func(p PhaseReport) bool { return p.PercentOfHealthz > 0 })
	// Names align left (padded here), figures right (by tabwriter).
	width := len("phase / endpoint")
	for _, p := range r.Phases {
		width = max(width, len(p.Name))
		for _, e := range p.Endpoints {
			width = max(width, 2+len(e.Name))
		}
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := fmt.Sprintf("%-*s\trequests\treq/s\t", width, "phase / endpoint")
	if relative {
		head += "of healthz\t"
	}
	fmt.Fprintln(tw, head+"mean ms\tp50 ms\tp95 ms\tp99 ms\tp99.9 ms\tmax ms\terrors\t")
	row := func(name string, n int64, tput, pct float64, l Latency, errs int64) {
		line := fmt.Sprintf("%-*s\t%d\t%.1f\t", width, name, n, tput)
		if relative {
			if pct > 0 {
				line += fmt.Sprintf("%.0f%%\t", pct)
			} else {
				line += "\t"
			}
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", line, ms(l.Mean), ms(l.P50), ms(l.P95), ms(l.P99), ms(l.P999), ms(l.Max), errs)
	}
	for _, p := range r.Phases {
		row(p.Name, p.Requests, p.Throughput, p.PercentOfHealthz, p.Latency, p.ErrorCount)
		if len(p.Endpoints) > 1 {
			for _, e := range p.Endpoints {
				row("  "+e.Name, e.Requests, e.Throughput, 0, e.Latency, sum(e.Errors))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	return r.writeTail(w, &b)
}

// writeTail writes what follows the table (or stands for it): trades,
// the scenario's own figures, errors, the audit.
func (r *Report) writeTail(w io.Writer, b *strings.Builder) error {
	for _, p := range r.Phases {
		if p.Trades > 0 {
			fmt.Fprintf(b, "trades (%s): %d, %.1f trades/s\n", p.Name, p.Trades, p.TradesPerSecond)
		}
		if p.Unsent > 0 {
			fmt.Fprintf(b, "unsent (%s): %d requests fell due but were never sent, every client being busy: the rate was not reached\n", p.Name, p.Unsent)
		}
	}
	if r.Partner != nil {
		fmt.Fprintf(b, "partner: %d bets executed; %d duplicate retries sent, %d replayed identically, %d mismatched\n",
			r.Partner.Executed, r.Partner.Repeats, r.Partner.Replayed, r.Partner.Mismatched)
	}
	if r.Stream != nil {
		if err := r.Stream.writeText(b); err != nil {
			return err
		}
	}
	if r.Errors() == 0 {
		b.WriteString("errors: none\n")
	} else {
		for _, p := range r.Phases {
			for _, k := range slices.Sorted(maps.Keys(p.Errors)) {
				fmt.Fprintf(b, "errors (%s): %s × %d, first: %s\n", p.Name, k, p.Errors[k], p.ErrorSamples[k])
			}
		}
	}
	switch {
	case r.Audit.Error != "":
		fmt.Fprintf(b, "audit: FAILED to run: %s\n", r.Audit.Error)
	case r.Audit.OK:
		fmt.Fprintf(b, "audit: ok (sum %d, %d accounts, %d postings)\n", r.Audit.Sum, r.Audit.Accounts, r.Audit.Postings)
	default:
		fmt.Fprintf(b, "audit: NOT OK (sum %d, %d accounts, %d postings)\n", r.Audit.Sum, r.Audit.Accounts, r.Audit.Postings)
		for _, p := range append(slices.Clone(r.Audit.Problems), r.Audit.EscrowProblems...) {
			fmt.Fprintf(b, "  problem: %s\n", p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ms formats d in milliseconds with three significant decimals at most.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
