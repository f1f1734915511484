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
