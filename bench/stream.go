package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
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

// answer is a trade's answer as the trading client recorded it.
type answer struct {
	at       time.Time // when the answer was read
	measured bool      // sent in the measured window
}

// answerBook records the trades answered during a run, for the
// subscribers to look their answer times up.
type answerBook struct {
	shards [answerShards]struct {
		sync.RWMutex
		m map[int64]answer
	}
	mu      sync.Mutex
	ids     []int64
	unknown atomic.Int64
}

func newAnswerBook() *answerBook {
	b := &answerBook{}
	for i := range b.shards {
		b.shards[i].m = map[int64]answer{}
	}
	return b
}

func (b *answerBook) add(id int64, a answer) {
	sh := &b.shards[uint64(id)%answerShards]
	sh.Lock()
	sh.m[id] = a
	sh.Unlock()
	b.mu.Lock()
	b.ids = append(b.ids, id)
	b.mu.Unlock()
}

func (b *answerBook) get(id int64) (answer, bool) {
	sh := &b.shards[uint64(id)%answerShards]
	sh.RLock()
	a, ok := sh.m[id]
	sh.RUnlock()
	return a, ok
}

func (b *answerBook) answered() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int64(nil), b.ids...)
}

// observe is the trading clients' hook: it records each answered trade
// the moment its answer is read.
func (b *answerBook) observe(s *session, status int, body []byte) {
	at := time.Now()
	switch {
	case status == 0:
		b.unknown.Add(1)
		return
	case status != http.StatusOK:
		return
	}
	id, ok := jsonInt(body, `"trade_id"`)
	if !ok {
		var v struct {
			TradeID int64 `json:"trade_id"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.TradeID == 0 {
			s.fail(epBuy, "bad_answer", "no trade_id in "+string(body))
			return
		}
		id = v.TradeID
	}
	b.add(id, answer{at: at, measured: s.record})
}

// streamRun is the subscribers' handler during a run: it checks each
// message into the subscriber's tally and records the latencies.
type streamRun struct {
	market int64
	book   *answerBook
	// epoch anchors the measured window, whose bounds are offsets from it
	// (set once the subscribers already run, hence atomic).
	epoch     time.Time
	winFrom   atomic.Int64
	winTo     atomic.Int64
	shards    [latencyShards]latencyShard
	noLatency bool // idle: nothing to time
	badData   atomic.Int64
	badSample atomic.Pointer[string]
}

type latencyShard struct {
	sync.Mutex
	fromAnswer, fromCreated *Histogram
}

func newStreamRun(market int64, book *answerBook) *streamRun {
	r := &streamRun{market: market, book: book, epoch: time.Now()}
	r.winFrom.Store(math.MaxInt64)
	for i := range r.shards {
		r.shards[i].fromAnswer, r.shards[i].fromCreated = NewHistogram(), NewHistogram()
	}
	return r
}

func (r *streamRun) event(s *subscriber, ev sseEvent, at time.Time) {
	id, err := strconv.ParseInt(ev.ID, 10, 64)
	ok := err == nil && ev.HasID && id > 0
	if ev.Type != "trade" {
		s.t.message(id, ok, ev.Type)
		return
	}
	d, good := parseTradeData(ev.Data)
	if !good {
		s.t.message(id, ok, "trade")
		r.badData.Add(1)
		sample := fmt.Sprintf("a trade message without trade_id or market_id: %.200s", ev.Data)
		r.badSample.CompareAndSwap(nil, &sample)
		return
	}
	if d.market != r.market {
		s.t.message(id, ok, "trade")
		s.t.foreign++
		s.t.problem("trade %d of market %d on the stream of market %d", d.trade, d.market, r.market)
		return
	}
	if off := int64(at.Sub(r.epoch)); off >= r.winFrom.Load() && off < r.winTo.Load() {
		s.inWindow++
	}
	if !s.t.trade(id, ok, d.trade) {
		return
	}
	s.distinct.Add(1)
	if r.noLatency {
		return
	}
	a, found := r.book.get(d.trade)
	if !found {
		s.pending = append(s.pending, delivery{trade: d.trade, at: at, createdAt: parseTime(d.createdAt)})
		return
	}
	if a.measured {
		r.record(s.index, a, at, parseTime(d.createdAt))
	}
}

func parseTime(b []byte) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, string(b))
	return t
}

// settle times the deliveries of s that came before their answer was
// recorded, now that every answer is: at 0 from the answer when they came
// before it (as they usually did), or from the answer if the trading
// client was slow to record it.
func (r *streamRun) settle(s *subscriber) {
	for _, d := range s.pending {
		if a, ok := r.book.get(d.trade); ok && a.measured {
			r.record(s.index, a, d.at, d.createdAt)
		}
	}
	s.pending = nil
}

// latencies merges the shards' histograms.
func (r *streamRun) latencies() (fromAnswer, fromCreated *Histogram) {
	fromAnswer, fromCreated = NewHistogram(), NewHistogram()
	for i := range r.shards {
		fromAnswer.Merge(r.shards[i].fromAnswer)
		fromCreated.Merge(r.shards[i].fromCreated)
	}
	return fromAnswer, fromCreated
}

// record adds one delivery's latencies: from the answer (0 when the
// message came first) and from created_at, when it parsed.
func (r *streamRun) record(sub int, a answer, at, createdAt time.Time) {
	sh := &r.shards[sub%latencyShards]
	sh.Lock()
	sh.fromAnswer.Record(max(at.Sub(a.at), 0))
	if !createdAt.IsZero() {
		sh.fromCreated.Record(at.Sub(createdAt))
	}
	sh.Unlock()
}

// handlerFunc adapts a function to a handler.
type handlerFunc func(s *subscriber, ev sseEvent, at time.Time)

func (f handlerFunc) event(s *subscriber, ev sseEvent, at time.Time) { f(s, ev, at) }

// streamPosition finds the stream's present position on the market: a
// pilot subscriber connects live, a probe trade is made, and the id of
// the probe's message is the position. Every subscriber of the run then
// resumes from it, so each must receive every entry after it: there is
// no moment between connecting and following at which a trade could slip
// past unnoticed.
func streamPosition(ctx context.Context, a *api, cfg Config, fx *fixture, target *streamTarget) (position int64, probes int, err error) {
	type seen struct{ id, trade int64 }
	got := make(chan seen, 64)
	pilot := &subscriber{}
	h := handlerFunc(func(_ *subscriber, ev sseEvent, _ time.Time) {
		if ev.Type != "trade" {
			return
		}
		id, err := strconv.ParseInt(ev.ID, 10, 64)
		d, ok := parseTradeData(ev.Data)
		if err == nil && ok {
			select {
			case got <- seen{id, d.trade}:
			default:
			}
		}
	})
	ready := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { pilot.run(ctx, target, cfg.Timeout, h, func(err error) { ready <- err }) })
	defer wg.Wait()
	defer pilot.stop()
	if err := <-ready; err != nil {
		return 0, 0, fmt.Errorf("GET %s: %w", target.path, err)
	}
	u := fx.users[0]
	for try := range probeTries {
		var out struct {
			TradeID int64 `json:"trade_id"`
		}
		side := []string{"YES", "NO"}[try%2]
		if err := a.call(ctx, http.MethodPost, "/api/v1/markets/"+itoa(fx.markets[0])+"/buy", u.auth,
			map[string]any{"side": side, "amount_kopecks": 100}, &out, http.StatusOK); err != nil {
			return 0, try, err
		}
		timer := time.NewTimer(probeWait)
	wait:
		for {
			select {
			case s := <-got:
				if s.trade == out.TradeID {
					timer.Stop()
					if s.id <= 0 {
						return 0, try + 1, fmt.Errorf("the probe trade %d came with id %d: not a positive integer", s.trade, s.id)
					}
					return s.id, try + 1, nil
				}
			case <-timer.C:
				break wait
			case <-ctx.Done():
				timer.Stop()
				return 0, try + 1, ctx.Err()
			}
		}
	}
	return 0, probeTries, fmt.Errorf("GET %s delivered none of %d probe trades within %v each", target.path, probeTries, probeWait)
}

// subscribers is a set of running subscribers.
type subscribers struct {
	subs []*subscriber
	wg   sync.WaitGroup
	// connected counts the first connections answered 200; errs the
	// others by kind, with a sample.
	connected int
	errs      map[string]int64
	sample    string
	connect   *Histogram
	opening   time.Duration
}

// open starts n subscribers resuming after from (0: live), connectParallel
// connecting at a time, and returns once each has its first answer.
func open(ctx context.Context, target *streamTarget, n int, from int64, timeout time.Duration, h handler) *subscribers {
	ss := &subscribers{errs: map[string]int64{}, connect: NewHistogram()}
	began := time.Now()
	sem := make(chan struct{}, connectParallel)
	var mu sync.Mutex
	var ready sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		s := &subscriber{index: i, from: from}
		ss.subs = append(ss.subs, s)
		ready.Add(1)
		start := time.Now()
		ss.wg.Go(func() {
			s.run(ctx, target, timeout, h, func(err error) {
				mu.Lock()
				if err == nil {
					ss.connected++
					ss.connect.Record(time.Since(start))
				} else {
					ss.errs[kindOf(err)]++
					if ss.sample == "" {
						ss.sample = err.Error()
					}
				}
				mu.Unlock()
				<-sem
				ready.Done()
			})
		})
	}
	ready.Wait()
	ss.opening = time.Since(began)
	return ss
}

// close stops every subscriber and waits for their goroutines.
func (ss *subscribers) close() {
	for _, s := range ss.subs {
		s.stop()
	}
	ss.wg.Wait()
}

// deliver runs one check: subs subscribers resume from the market's
// present position, the trading clients trade at rate for the warm-up
// and the duration, the subscribers drain, and their tallies are checked
// against the trades answered.
func deliver(ctx context.Context, a *api, cfg Config, fx *fixture, target *streamTarget, subs int, rate float64, progress io.Writer) (PhaseReport, *DeliveryReport, error) {
	from, probes, err := streamPosition(ctx, a, cfg, fx, target)
	if err != nil {
		return PhaseReport{}, nil, err
	}
	book := newAnswerBook()
	run := newStreamRun(fx.markets[0], book)
	fmt.Fprintf(progress, "bench: opening %s to %s after id %d\n", plural(subs, "subscriber"), target.path, from)
	ss := open(ctx, target, subs, from, cfg.Timeout, run)
	defer ss.close()
	if err := ctx.Err(); err != nil {
		return PhaseReport{}, nil, err
	}
	dr := &DeliveryReport{Subscribers: subs, Rate: rate, Connected: ss.connected, ResumedFrom: from, ProbeTrades: probes,
		ConnectLatency: latencyOf(ss.connect), ConnectSample: ss.sample}
	if len(ss.errs) > 0 {
		dr.ConnectErrors = ss.errs
	}
	fmt.Fprintf(progress, "bench: %d of %d subscribers connected in %v; trading at %g/s\n", ss.connected, subs, ss.opening.Round(time.Millisecond), rate)

	ph := phase{
		name: "trade", share: 1,
		endpoints: []string{"POST /api/v1/markets/{id}/buy", "POST /api/v1/markets/{id}/sell"},
		client: func(i int) step {
			t := &trader{users: usersOf(fx.users, i, cfg.Clients), markets: fx.markets[:1], index: map[holding]int{}, observe: book.observe}
			return t.step
		},
	}
	pcfg := cfg
	pcfg.Rate = rate
	cpu0, _, cpuErr := a.scrapeMemory(ctx)
	start := time.Now()
	run.winTo.Store(int64(start.Add(cfg.Warmup + cfg.Duration).Sub(run.epoch)))
	run.winFrom.Store(int64(start.Add(cfg.Warmup).Sub(run.epoch)))
	pr, _ := runPhase(ctx, a, pcfg, ph, cfg.Warmup, cfg.Duration)
	if err := ctx.Err(); err != nil {
		return PhaseReport{}, nil, err
	}

	// Drain: wait until every subscriber has as many trades as were
	// answered, or the limit.
	answered := book.answered()
	drainFrom := time.Now()
	for {
		done := true
		for _, s := range ss.subs {
			if s.connected && s.distinct.Load() < int64(len(answered)) {
				done = false
				break
			}
		}
		dr.Drain = time.Since(drainFrom)
		if done {
			break
		}
		if dr.Drain >= cfg.Drain {
			dr.DrainTimedOut = true
			break
		}
		sleep(ctx, 5*time.Millisecond)
		if ctx.Err() != nil {
			return PhaseReport{}, nil, ctx.Err()
		}
	}
	if cpu1, _, err := a.scrapeMemory(ctx); err == nil && cpuErr == nil {
		dr.ServerCPU = cpu1.CPU - cpu0.CPU
	}
	ss.close()

	// The deliveries that came before their answer was recorded: timed
	// now, at 0 when they came before the answer. Only the subscribers
	// that connected owe deliveries; the others are connect errors.
	var tallies []*tally
	for _, s := range ss.subs {
		if !s.connected {
			continue
		}
		run.settle(s)
		dr.Comments += s.comments
		dr.Reconnects += s.reconnects
		dr.Deliveries += s.inWindow
		for k, n := range s.failures {
			if dr.ReconnectErrors == nil {
				dr.ReconnectErrors = map[string]int64{}
			}
			dr.ReconnectErrors[k] += n
		}
		tallies = append(tallies, &s.t)
	}
	tt := totals(tallies, answered)
	dr.Trades = int64(len(answered))
	dr.UnknownTrades = book.unknown.Load()
	dr.Expected, dr.Delivered, dr.Gaps = tt.expected, tt.delivered, tt.gaps
	dr.SubscribersWithGaps = tt.subscribersWithGaps
	dr.Duplicates, dr.OutOfOrder, dr.MissingIDs = tt.duplicates, tt.outOfOrder, tt.noID
	dr.Unexpected, dr.Foreign, dr.Resets = tt.unexpected, tt.foreign, tt.resets
	dr.Messages, dr.TradeMessages = tt.messages, tt.tradeMsgs
	dr.Problems = tt.problems
	if n := run.badData.Load(); n > 0 {
		dr.MissingIDs += n
		dr.Problems = append(dr.Problems, *run.badSample.Load())
	}
	fromAnswer, fromCreated := run.latencies()
	dr.Latency, dr.LatencyFromCreatedAt = latencyOf(fromAnswer), latencyOf(fromCreated)
	dr.Timed = int64(fromAnswer.Count())
	if dr.Messages > 0 {
		dr.ServerCPUPerMessage = dr.ServerCPU / float64(dr.Messages)
	}
	dr.DeliveriesPerSecond = float64(dr.Deliveries) / cfg.Duration.Seconds()
	return pr, dr, nil
}
