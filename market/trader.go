package market

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Trader executes trade requests on a market. Refusals come back in
// Result.Err; the error is for a failure of the whole execution (the
// market does not exist, the store failed).
type Trader interface {
	Trade(ctx context.Context, marketID int64, r Request) (Result, error)
}

// Execer is the money-path method of a Store.
type Execer interface {
	Exec(ctx context.Context, lock Lock, decide func(*State) (*Effects, error)) (*Effects, error)
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

// execBatch runs reqs on one market in one Exec. A batch that loses an
// idempotency-key race to another market's commit (ErrDuplicateKey) runs
// again: the retry sees the key's trade and replays or refuses it.
func execBatch(ctx context.Context, s Execer, marketID int64, reqs []Request) ([]Result, error) {
	for attempt := 0; ; attempt++ {
		eff, err := s.Exec(ctx, LockFor(marketID, reqs), func(st *State) (*Effects, error) {
			return DecideTrades(st, reqs)
		})
		if errors.Is(err, ErrDuplicateKey) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return eff.Results, nil
	}
}

// Batcher is group commit for trades: concurrent requests on the same
// market are gathered and applied in arrival order under one lock and one
// transaction. Each request is still accepted or refused on its own, and
// each caller gets its answer only after the batch has committed.
//
// There is at most one batch in flight per market in this process; while
// it commits, new requests queue, and they form the next batch. So batches
// grow with the load by themselves, and an idle market pays no wait at
// all. MaxWait adds a linger to fill batches further. Several processes
// on one database stay correct: their batches serialize on the market row.
type Batcher struct {
	store Execer
	// MaxBatch bounds a batch; 1 or less disables batching (Direct).
	MaxBatch int
	// MaxWait is how long a batch that is not full waits for more
	// requests before it runs; 0 runs at once.
	MaxWait time.Duration
	// Observe, when set, is told the size and commit time of every batch.
	Observe func(size int, took time.Duration, err error)

	mu     sync.Mutex
	queues map[int64]*queue
}

type queue struct {
	pending []*call
}

type call struct {
	ctx  context.Context
	req  Request
	res  Result
	err  error
	done chan struct{}
}

// Defaults of the group commit.
const (
	DefaultMaxBatch = 64
	DefaultMaxWait  = 0
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
	q, running := b.queues[marketID]
	if !running {
		q = &queue{}
		b.queues[marketID] = q
	}
	q.pending = append(q.pending, c)
	b.mu.Unlock()
	if !running {
		go b.run(marketID, q)
	}
	<-c.done
	return c.res, c.err
}

// run commits the market's queue batch by batch until it is empty.
func (b *Batcher) run(marketID int64, q *queue) {
	for {
		if b.MaxWait > 0 {
			b.linger(q)
		}
		b.mu.Lock()
		n := min(len(q.pending), b.MaxBatch)
		if n == 0 {
			delete(b.queues, marketID)
			b.mu.Unlock()
			return
		}
		batch := q.pending[:n:n]
		q.pending = append([]*call(nil), q.pending[n:]...)
		b.mu.Unlock()
		b.commit(marketID, batch)
	}
}

// linger waits up to MaxWait for the queue to fill a batch.
func (b *Batcher) linger(q *queue) {
	deadline := time.Now().Add(b.MaxWait)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		full := len(q.pending) >= b.MaxBatch
		b.mu.Unlock()
		if full {
			return
		}
		time.Sleep(min(time.Until(deadline), 200*time.Microsecond))
	}
}

func (b *Batcher) commit(marketID int64, batch []*call) {
	reqs := make([]Request, len(batch))
	for i, c := range batch {
		reqs[i] = c.req
	}
	// The batch belongs to no single caller, so no caller's cancellation
	// may abort it halfway; values (request ids) come from the first.
	ctx := context.WithoutCancel(batch[0].ctx)
	start := time.Now()
	results, err := execBatch(ctx, b.store, marketID, reqs)
	if b.Observe != nil {
		b.Observe(len(batch), time.Since(start), err)
	}
	for i, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.res = results[i]
		}
		close(c.done)
	}
}
