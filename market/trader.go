package market

import (
	"context"
	"sync"
	"time"
)

// Trader executes trade requests on a market. Refusals come back in
// Result.Err; the error is for a failure of the whole execution (the
// market does not exist, the store failed).
type Trader interface {
	Trade(ctx context.Context, marketID int64, r Request) (Result, error)
}

// Execer is the money path of a Store.
type Execer interface {
	Exec(ctx context.Context, lock Lock, decide func(*State) (*Effects, error)) (*Effects, error)
	ExecMarkets(ctx context.Context, locks []Lock, decide func([]*State) ([]*Effects, error)) ([]*Effects, error)
}

// Direct executes every request in a transaction of its own: the usual
// design, and batch size 1 of the group commit.
type Direct struct{ Store Execer }

// Trade implements Trader.
func (d Direct) Trade(ctx context.Context, marketID int64, r Request) (Result, error) {
	rs, err := execBatch(ctx, d.Store, marketID, []Request{r})
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// execBatch runs reqs on one market in one Exec.
func execBatch(ctx context.Context, s Execer, marketID int64, reqs []Request) ([]Result, error) {
	var eff *Effects
	err := retryDuplicateKeys(func() (err error) {
		eff, err = s.Exec(ctx, LockFor(marketID, reqs), func(st *State) (*Effects, error) {
			return DecideTrades(st, reqs)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return eff.Results, nil
}

// execGroups runs the requests of several markets (distinct ids) in one
// ExecMarkets. missing[i] is set when market ids[i] does not exist.
func execGroups(ctx context.Context, s Execer, ids []int64, reqs [][]Request, decided func()) (results [][]Result, missing []bool, err error) {
	locks := make([]Lock, len(ids))
	for i, id := range ids {
		locks[i] = LockFor(id, reqs[i])
	}
	var effs []*Effects
	err = retryDuplicateKeys(func() (err error) {
		effs, err = s.ExecMarkets(ctx, locks, func(sts []*State) ([]*Effects, error) {
			effs, err := DecideMarkets(sts, reqs)
			if decided != nil {
				decided()
			}
			return effs, err
		})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	results, missing = make([][]Result, len(ids)), make([]bool, len(ids))
	for i, eff := range effs {
		if eff == nil {
			missing[i] = true
			continue
		}
		results[i] = eff.Results
	}
	return results, missing, nil
}

// Batcher is group commit for trades: concurrent requests are gathered
// and applied in one transaction, those of one market in arrival order
// under its lock. Each request is still accepted or refused on its own,
// and each caller gets its answer only after the batch has committed.
//
// A batch may span markets, so a thousand quiet markets share commits as
// one hot market does. A market is in at most one batch in flight in this
// process. One batch commits at a time, and up to MaxInFlight when enough
// requests wait to fill half a batch each; while they commit, new
// requests queue and form the next batches. So batches grow with the load
// by themselves, and an idle market pays no wait at all. MaxWait adds a
// linger to fill batches further.
//
// The requests of one batch were all waiting at once, so no caller can
// have seen another's answer: any order among them is one a sequential
// run could give. The batch takes them market by market, each market's in
// arrival order. Several processes on one database stay correct: their
// batches serialize on the market rows, which every batch locks in
// ascending id order.
type Batcher struct {
	store Execer
	// MaxBatch bounds a batch; 1 or less disables batching (Direct).
	MaxBatch int
	// MaxWait is how long a batch that is not full waits for more
	// requests before it runs; 0 runs at once.
	MaxWait time.Duration
	// MaxInFlight bounds the batches committing at once, on markets of
	// their own; 0 means DefaultMaxInFlight. A batch beyond the first
	// starts only when it would be at least half full.
	MaxInFlight int
	// Observe, when set, is told the size and commit time of every batch.
	Observe func(size int, took time.Duration, err error)

	mu sync.Mutex
	// queues holds every market with requests pending or committing.
	queues map[int64]*queue
	// ready lists, oldest first, the markets with requests pending and no
	// batch in flight.
	ready   []int64
	waiting int // requests pending in ready markets
	running int
}

type queue struct {
	pending []*call
	// busy is set while a batch of the market commits; queued while the
	// market is in ready.
	busy, queued bool
}

type call struct {
	ctx  context.Context
	req  Request
	res  Result
	err  error
	done chan struct{}
}

// group is one market's part of a batch.
type group struct {
	marketID int64
	calls    []*call
}

// Defaults of the group commit.
const (
	DefaultMaxBatch    = 64
	DefaultMaxWait     = 0
	DefaultMaxInFlight = 2
)

// NewBatcher returns a Batcher on store.
func NewBatcher(store Execer, maxBatch int, maxWait time.Duration) *Batcher {
	return &Batcher{store: store, MaxBatch: maxBatch, MaxWait: maxWait, queues: map[int64]*queue{}}
}

// Trade implements Trader. It waits for its batch to commit even if ctx
// ends first: once queued, a trade may execute, and its caller must learn
// the outcome rather than guess.
func (b *Batcher) Trade(ctx context.Context, marketID int64, r Request) (Result, error) {
	if b.MaxBatch <= 1 {
		return Direct{b.store}.Trade(ctx, marketID, r)
	}
	c := &call{ctx: ctx, req: r, done: make(chan struct{})}
	b.mu.Lock()
	q := b.queues[marketID]
	if q == nil {
		q = &queue{}
		b.queues[marketID] = q
	}
	q.pending = append(q.pending, c)
	if !q.busy {
		if !q.queued {
			q.queued = true
			b.ready = append(b.ready, marketID)
		}
		b.waiting++
	}
	// A runner that is committing takes the ready markets when it is
	// done; another starts beside it only for a batch worth its fixed
	// cost.
	start := b.running == 0 || b.running < b.maxInFlight() && b.waiting >= b.minShare()
	if start {
		b.running++
	}
	b.mu.Unlock()
	if start {
		go b.run(true)
	}
	<-c.done
	return c.res, c.err
}

// decided is told that a batch has locked its markets and decided, and
// goes on to write and commit: the next batch may lock and load meanwhile.
func (b *Batcher) decided() {
	b.mu.Lock()
	start := b.running < b.maxInFlight() && b.waiting > 0
	if start {
		b.running++
	}
	b.mu.Unlock()
	if start {
		go b.run(true)
	}
}

// minShare is the smallest batch that runs beside others: a batch has a
// fixed cost (two round trips, a commit), so on a busy machine two half
// batches side by side beat a stream of small ones.
func (b *Batcher) minShare() int { return max(1, b.MaxBatch/2) }

func (b *Batcher) maxInFlight() int {
	if b.MaxInFlight > 0 {
		return b.MaxInFlight
	}
	return DefaultMaxInFlight
}

// run commits batches until no market is ready.
func (b *Batcher) run(first bool) {
	for {
		if b.MaxWait > 0 {
			b.linger()
		}
		b.mu.Lock()
		var batch []group
		if first || b.running == 1 || b.waiting >= b.minShare() {
			batch = b.take()
		}
		first = false
		if len(batch) == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.commit(batch)
		b.mu.Lock()
		for _, g := range batch {
			q := b.queues[g.marketID]
			q.busy = false
			if len(q.pending) == 0 {
				delete(b.queues, g.marketID)
				continue
			}
			q.queued = true
			b.ready = append(b.ready, g.marketID)
			b.waiting += len(q.pending)
		}
		b.mu.Unlock()
	}
}

// take removes the next batch from the ready markets, oldest first, and
// marks its markets busy. Callers hold b.mu.
func (b *Batcher) take() []group {
	var batch []group
	n := 0
	for len(b.ready) > 0 && n < b.MaxBatch {
		id := b.ready[0]
		b.ready = b.ready[1:]
		q := b.queues[id]
		k := min(len(q.pending), b.MaxBatch-n)
		batch = append(batch, group{id, q.pending[:k:k]})
		q.pending = append([]*call(nil), q.pending[k:]...)
		q.busy, q.queued = true, false
		b.waiting -= k
		if len(q.pending) > 0 {
			b.waiting -= len(q.pending) // they wait for the market, not in ready
		}
		n += k
	}
	if len(b.ready) == 0 {
		b.ready = nil // lets the backing array go
	}
	return batch
}

// linger waits up to MaxWait for the ready markets to fill a batch.
func (b *Batcher) linger() {
	deadline := time.Now().Add(b.MaxWait)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		n := b.waiting
		b.mu.Unlock()
		if n >= b.MaxBatch || n == 0 {
			return // full, or nothing to wait with
		}
		time.Sleep(min(time.Until(deadline), 200*time.Microsecond))
	}
}

func (b *Batcher) commit(batch []group) {
	ids := make([]int64, len(batch))
	reqs := make([][]Request, len(batch))
	size := 0
	for i, g := range batch {
		ids[i] = g.marketID
		reqs[i] = make([]Request, len(g.calls))
		for j, c := range g.calls {
			reqs[i][j] = c.req
		}
		size += len(g.calls)
	}
	// The batch belongs to no single caller, so no caller's cancellation
	// may abort it halfway; values (request ids) come from the first.
	ctx := context.WithoutCancel(batch[0].calls[0].ctx)
	start := time.Now()
	var once sync.Once
	results, missing, err := execGroups(ctx, b.store, ids, reqs, func() { once.Do(b.decided) })
	if b.Observe != nil {
		b.Observe(size, time.Since(start), err)
	}
	for i, g := range batch {
		for j, c := range g.calls {
			switch {
			case err != nil:
				c.err = err
			case missing[i]:
				c.err = ErrMarketNotFound
			default:
				c.res = results[i][j]
			}
			close(c.done)
		}
	}
}
