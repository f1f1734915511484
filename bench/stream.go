package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"
)

// The stream scenario: Subscribers clients follow GET /api/v1/stream on
// one market while the trading clients buy and sell on it at Rate trades
// a second (an open loop). Every trade answered 200 must reach every
// subscriber exactly once, in order; the run reports what did not, and
// how long the trades took to arrive.
//
// Its modes (Config.StreamMode):
//   - deliver: the check above, once;
//   - idle: Subscribers connections held open with no trades, and the
//     server's memory per connection read from its /metrics;
//   - sweep: the check repeated, raising the rate (or the subscribers)
//     by SweepFactor until the delivery latency's p99 passes SweepP99,
//     and the highest deliveries per second that kept it.
//
// Latency is counted from the moment the trade's HTTP answer reached the
// trading client (the trade had committed before its answer was sent) to
// the moment its message reached a subscriber; a message that arrived
// before the answer counts 0. It is also given from the trade's
// created_at, the server's clock when it executed the trade, which is
// only meaningful when the bench and the server share a clock.

// The stream modes.
const (
	streamDeliver = "deliver"
	streamIdle    = "idle"
	streamSweep   = "sweep"
)

// StreamModes are the names Config.StreamMode accepts, with what each does.
var StreamModes = []struct{ Name, About string }{
	{streamDeliver, "subscribers follow one market while trades are made on it; every trade must reach every subscriber once, in order"},
	{streamIdle, "subscribers hold idle connections; the server's memory per connection, from its /metrics"},
	{streamSweep, "deliver repeatedly, raising the rate (or subscribers) until p99 passes the limit"},
}

const (
	// connectParallel bounds the connections being opened at once.
	connectParallel = 64
	// latencyShards spreads the subscribers' latency histograms over
	// locks, so that a thousand subscribers do not queue on one.
	latencyShards = 16
	// answerShards spreads the book of answered trades likewise.
	answerShards = 64
	// probeTries and probeWait bound the search for the stream's position
	// before a run.
	probeTries = 5
	probeWait  = 2 * time.Second
	// maxUnsentShare is the share of trades due but never sent above
	// which a sweep stops: the trading side, not the stream, is then the
	// limit.
	maxUnsentShare = 0.01
)

// StreamReport is the stream scenario's outcome.
type StreamReport struct {
	Mode     string `json:"mode"` // deliver, idle or sweep
	MarketID int64  `json:"market_id"`
	Topics   string `json:"topics"`
	// LatencyFrom says what the latencies are measured from.
	LatencyFrom string `json:"latency_from"`
	// Delivery is the deliver mode's check.
	Delivery *DeliveryReport `json:"delivery,omitempty"`
	// Sweep is the sweep mode's steps.
	Sweep *SweepReport `json:"sweep,omitempty"`
	// Idle is the idle mode's measurement.
	Idle *IdleReport `json:"idle,omitempty"`
}

// latencyFrom is StreamReport.LatencyFrom.
const latencyFrom = "latency: from the trade's HTTP answer reaching the trading client (the trade committed before it) to its message reaching a subscriber, 0 when the message came first; created_at latency: from the trade's created_at (server clock) to the message"

// DeliveryReport is one run of subscribers against trades.
type DeliveryReport struct {
	Subscribers int     `json:"subscribers"`
	Rate        float64 `json:"rate"` // trades per second asked for
	// Connected counts the subscribers whose first connection was
	// answered 200; ConnectErrors the others, by status or "transport".
	Connected      int              `json:"connected"`
	ConnectErrors  map[string]int64 `json:"connect_errors,omitempty"`
	ConnectSample  string           `json:"connect_error_sample,omitempty"`
	ConnectLatency Latency          `json:"connect_latency"` // to the answer's header
	// ResumedFrom is the Last-Event-ID every subscriber sent first: the
	// id of a probe trade's message, so that every later entry is theirs.
	ResumedFrom int64 `json:"resumed_from"`
	// ProbeTrades counts the trades made to find that id (usually 1):
	// made before the run, they are not the subscribers' to receive.
	ProbeTrades int `json:"probe_trades"`
	// Trades counts the trades answered 200 during the run (warm-up
	// included); each must reach every connected subscriber.
	// UnknownTrades counts the trade requests that got no answer: they
	// may or may not have been made.
	Trades        int64 `json:"trades"`
	UnknownTrades int64 `json:"unknown_trades"`
	// Expected is Trades × Connected; Delivered the distinct trades of
	// the run delivered over all subscribers; Gaps the difference.
	Expected            int64 `json:"expected"`
	Delivered           int64 `json:"delivered"`
	Gaps                int64 `json:"gaps"`
	SubscribersWithGaps int   `json:"subscribers_with_gaps"`
	// Duplicates counts trade messages of a trade already delivered to
	// the subscriber; OutOfOrder messages whose id (or trade id) is not
	// above the previous one's; MissingIDs messages without a numeric
	// id; Unexpected trades delivered that no answer announced (possible
	// only with unknown trades); Foreign trades of another market.
	Duplicates int64 `json:"duplicates"`
	OutOfOrder int64 `json:"out_of_order"`
	MissingIDs int64 `json:"missing_ids"`
	Unexpected int64 `json:"unexpected"`
	Foreign    int64 `json:"foreign"`
	// Reconnects counts connections that dropped and were resumed with
	// Last-Event-ID; ReconnectErrors the failed attempts; Resets the
	// reset events received.
	Reconnects      int64            `json:"reconnects"`
	ReconnectErrors map[string]int64 `json:"reconnect_errors,omitempty"`
	Resets          int64            `json:"resets"`
	// Messages counts every event received; TradeMessages the trades
	// among them; Comments the comment lines (the stream's opening line
	// and its pings).
	Messages      int64 `json:"messages"`
	TradeMessages int64 `json:"trade_messages"`
	Comments      int64 `json:"comments"`
	// Deliveries counts trade messages received in the measured window;
	// DeliveriesPerSecond is Deliveries over its length.
	Deliveries          int64   `json:"deliveries"`
	DeliveriesPerSecond float64 `json:"deliveries_per_s"`
	// Latency (from the answer) and LatencyFromCreatedAt cover the first
	// delivery of each trade sent in the measured window, to each
	// subscriber.
	// Timed counts the deliveries timed.
	Latency              Latency `json:"latency"`
	LatencyFromCreatedAt Latency `json:"latency_from_created_at"`
	Timed                int64   `json:"timed"`
	// ServerCPU is the server's CPU time (process_cpu_seconds_total)
	// from the trading's start to the drain's end, 0 when its /metrics
	// could not be read; ServerCPUPerMessage is that time over Messages:
	// what a delivered message cost the server, its share of the trades
	// included.
	ServerCPU           float64 `json:"server_cpu_s,omitempty"`
	ServerCPUPerMessage float64 `json:"server_cpu_s_per_message,omitempty"`
	// Drain is the time from the trading's end until every subscriber
	// had every trade; DrainTimedOut says the limit came first.
	Drain         time.Duration `json:"drain_ns"`
	DrainTimedOut bool          `json:"drain_timed_out,omitempty"`
	// Problems are the first details of what went wrong.
	Problems []string `json:"problems,omitempty"`
}

// Sound reports whether every trade reached every subscriber once, in
// order, on every connection asked for.
func (d *DeliveryReport) Sound() bool {
	return d.Connected == d.Subscribers && d.Gaps == 0 && d.Duplicates == 0 && d.OutOfOrder == 0 &&
		d.MissingIDs == 0 && d.Resets == 0 && d.Foreign == 0 && (d.Unexpected == 0 || d.UnknownTrades > 0)
}

// SweepReport is the sweep mode's steps and the best of them.
type SweepReport struct {
	// Raise is "rate" or "subscribers"; Factor multiplies it each step.
	Raise  string        `json:"raise"`
	Factor float64       `json:"factor"`
	P99    time.Duration `json:"p99_limit_ns"`
	Steps  []SweepStep   `json:"steps"`
	// Best is the index in Steps of the step with the most deliveries a
	// second among those within the limit, -1 if none was.
	Best int `json:"best"`
	// Stopped says why the sweep ended.
	Stopped string `json:"stopped"`
}

// SweepStep is one step of a sweep.
type SweepStep struct {
	Rate            float64 `json:"rate"`
	Subscribers     int     `json:"subscribers"`
	TradesPerSecond float64 `json:"trades_per_s"`
	Unsent          int64   `json:"unsent"`
	// Within says the step kept p99 within the limit with no gap.
	Within   bool           `json:"within"`
	Delivery DeliveryReport `json:"delivery"`
}

// IdleReport is the idle mode's measurement of the server's memory per
// open stream connection.
type IdleReport struct {
	Connections   int              `json:"connections"` // asked for
	Connected     int              `json:"connected"`
	ConnectErrors map[string]int64 `json:"connect_errors,omitempty"`
	ConnectSample string           `json:"connect_error_sample,omitempty"`
	// ConnectLatency is the time to each connection's answer header;
	// Opening the time to open them all.
	ConnectLatency Latency       `json:"connect_latency"`
	Opening        time.Duration `json:"opening_ns"`
	Held           time.Duration `json:"held_ns"`
	// Before and After are the server's metrics with no connection of
	// the bench's open and with every one open, each read after the
	// bench made the server collect its garbage (see ServerMemory).
	Before ServerMemory `json:"before"`
	After  ServerMemory `json:"after"`
	// The growth per connection connected: Go heap in use, goroutine
	// stacks, their sum, goroutines, and the process's resident memory.
	HeapPerConnection       float64 `json:"heap_bytes_per_connection"`
	StackPerConnection      float64 `json:"stack_bytes_per_connection"`
	GoMemoryPerConnection   float64 `json:"go_bytes_per_connection"`
	GoroutinesPerConnection float64 `json:"goroutines_per_connection"`
	RSSPerConnection        float64 `json:"rss_bytes_per_connection"`
	// BenchPerConnection is what a connection cost the bench itself (Go
	// heap and stacks after a collection).
	BenchPerConnection float64 `json:"bench_bytes_per_connection"`
	// Messages and Comments count what the idle connections received.
	Messages int64 `json:"messages"`
	Comments int64 `json:"comments"`
}

// validateStream checks the stream settings; c has its defaults.
func (c Config) validateStream() []error {
	var errs []error
	switch c.StreamMode {
	case streamDeliver, streamIdle, streamSweep:
	default:
		errs = append(errs, fmt.Errorf("stream mode %q: must be deliver, idle or sweep", c.StreamMode))
	}
	if c.Subscribers < 1 {
		errs = append(errs, fmt.Errorf("subscribers %d: must be at least 1", c.Subscribers))
	}
	if c.Drain <= 0 {
		errs = append(errs, fmt.Errorf("drain %v: must be positive", c.Drain))
	}
	if c.StreamMode == streamSweep {
		if c.SweepRaise != "rate" && c.SweepRaise != "subscribers" {
			errs = append(errs, fmt.Errorf("sweep %q: must be rate or subscribers", c.SweepRaise))
		}
		if !(c.SweepFactor > 1) || math.IsInf(c.SweepFactor, 0) {
			errs = append(errs, fmt.Errorf("sweep factor %v: must be above 1", c.SweepFactor))
		}
		if c.SweepP99 <= 0 {
			errs = append(errs, fmt.Errorf("sweep p99 %v: must be positive", c.SweepP99))
		}
		if c.SweepSteps < 1 {
			errs = append(errs, fmt.Errorf("sweep steps %d: must be at least 1", c.SweepSteps))
		}
	}
	// Each subscriber is a file descriptor of the bench's, beside the
	// trading clients' connections and a few of its own.
	if limit := fdLimit(); limit > 0 && c.Subscribers+c.Clients+64 > limit {
		errs = append(errs, fmt.Errorf("subscribers %d: with %d clients the bench needs %d file descriptors and may open %d (ulimit -n)",
			c.Subscribers, c.Clients, c.Subscribers+c.Clients+64, limit))
	}
	return errs
}

// runStream runs the stream scenario's mode after the setup.
func runStream(ctx context.Context, a *api, cfg Config, fx *fixture, rep *Report, progress io.Writer) error {
	topics := "market:" + itoa(fx.markets[0])
	target, err := newStreamTarget(cfg.URL, topics)
	if err != nil {
		return err
	}
	sr := &StreamReport{Mode: cfg.StreamMode, MarketID: fx.markets[0], Topics: topics, LatencyFrom: latencyFrom}
	rep.Stream = sr
	switch cfg.StreamMode {
	case streamIdle:
		sr.LatencyFrom = ""
		sr.Idle, err = runIdle(ctx, a, cfg, fx, target, progress)
		return err
	case streamDeliver:
		pr, dr, err := deliver(ctx, a, cfg, fx, target, cfg.Subscribers, cfg.Rate, progress)
		if err != nil {
			return err
		}
		rep.Phases = append(rep.Phases, pr)
		sr.Delivery = dr
		return nil
	}
	sw := &SweepReport{Raise: cfg.SweepRaise, Factor: cfg.SweepFactor, P99: cfg.SweepP99, Best: -1}
	sr.Sweep = sw
	rate, subs := cfg.Rate, cfg.Subscribers
	limit := fdLimit()
	for step := range cfg.SweepSteps {
		fmt.Fprintf(progress, "bench: sweep step %d: %g trades/s, %d subscribers\n", step+1, rate, subs)
		pr, dr, err := deliver(ctx, a, cfg, fx, target, subs, rate, progress)
		if err != nil {
			return err
		}
		pr.Name = fmt.Sprintf("%g/s × %d", rate, subs)
		rep.Phases = append(rep.Phases, pr)
		due := float64(pr.Requests + pr.Unsent)
		st := SweepStep{Rate: rate, Subscribers: subs, TradesPerSecond: pr.TradesPerSecond, Unsent: pr.Unsent, Delivery: *dr}
		st.Within = dr.Sound() && dr.Latency.P99 <= cfg.SweepP99
		sw.Steps = append(sw.Steps, st)
		if st.Within && (sw.Best < 0 || dr.DeliveriesPerSecond > sw.Steps[sw.Best].Delivery.DeliveriesPerSecond) {
			sw.Best = len(sw.Steps) - 1
		}
		switch {
		case !dr.Sound():
			sw.Stopped = "the stream lost, repeated or reordered trades, or subscribers could not connect"
		case dr.Latency.P99 > cfg.SweepP99:
			sw.Stopped = fmt.Sprintf("p99 %s ms passed the limit of %s ms", ms(dr.Latency.P99), ms(cfg.SweepP99))
		case due > 0 && float64(pr.Unsent) > maxUnsentShare*due:
			sw.Stopped = fmt.Sprintf("the trading clients could not keep up with %g trades/s (%d unsent): the trades, not the stream, are the limit", rate, pr.Unsent)
		case step == cfg.SweepSteps-1:
			sw.Stopped = fmt.Sprintf("the last of %d steps stayed within the limit", cfg.SweepSteps)
		}
		if sw.Stopped != "" {
			break
		}
		if cfg.SweepRaise == "rate" {
			rate = math.Round(rate*cfg.SweepFactor*10) / 10
		} else {
			next := int(math.Ceil(float64(subs) * cfg.SweepFactor))
			if limit > 0 && next+cfg.Clients+64 > limit {
				sw.Stopped = fmt.Sprintf("%d subscribers would pass the bench's file descriptor limit of %d", next, limit)
				break
			}
			subs = next
		}
	}
	return nil
}
