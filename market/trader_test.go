package market

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/lmsr"
)

// fakeExecer is a store of markets for the Batcher's scheduling: it
// decides on real States, applies nothing, and records which markets each
// call held and how many calls overlapped.
type fakeExecer struct {
	t       *testing.T
	markets map[int64]bool
	hold    time.Duration

	mu       sync.Mutex
	busy     map[int64]bool
	inFlight int
	most     int
	calls    int
}

func (f *fakeExecer) Exec(ctx context.Context, lock Lock, decide func(*State) (*Effects, error)) (*Effects, error) {
	effs, err := f.ExecMarkets(ctx, []Lock{lock}, func(sts []*State) ([]*Effects, error) {
		eff, err := decide(sts[0])
		return []*Effects{eff}, err
	})
	if err != nil {
		return nil, err
	}
	if effs[0] == nil {
		return nil, ErrMarketNotFound
	}
	return effs[0], nil
}

func (f *fakeExecer) ExecMarkets(_ context.Context, locks []Lock, decide func([]*State) ([]*Effects, error)) ([]*Effects, error) {
	f.mu.Lock()
	f.calls++
	f.inFlight++
	f.most = max(f.most, f.inFlight)
	for _, l := range locks {
		if f.busy[l.MarketID] {
			f.t.Errorf("market %d is in two batches at once", l.MarketID)
		}
		f.busy[l.MarketID] = true
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		for _, l := range locks {
			delete(f.busy, l.MarketID)
		}
		f.mu.Unlock()
	}()

	balances := map[account.Ref]int64{}
	sts := make([]*State, len(locks))
	for i, l := range locks {
		sts[i] = &State{Balances: balances, Now: time.Unix(0, 0)}
		if !f.markets[l.MarketID] {
			continue
		}
		qy, qn, _ := lmsr.InitialQ(10000, 0.5)
		sts[i].Market = &Market{ID: l.MarketID, B: 10000, QYes: qy, QNo: qn, Q0Yes: qy, Q0No: qn, FinishAt: time.Unix(1, 0)}
		for _, r := range l.Accounts {
			balances[r] = 1_000_000
		}
	}
	time.Sleep(f.hold) // the commit: others queue meanwhile
	return decide(sts)
}

func TestBatcherSchedulesMarketsIntoBatches(t *testing.T) {
	for _, c := range []struct {
		name             string
		markets, traders int
		maxBatch         int
		inFlight         int
		wait             time.Duration
	}{
		{"one hot market runs one batch at a time", 1, 24, 8, 4, 0},
		{"many markets share batches, never a market twice at once", 40, 24, 8, 3, 0},
		{"a linger still answers every request", 5, 12, 16, 2, time.Millisecond},
		{"batches of one on many markets", 10, 8, 2, 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeExecer{t: t, markets: map[int64]bool{}, busy: map[int64]bool{}, hold: 200 * time.Microsecond}
			for i := range c.markets {
				f.markets[int64(i+1)] = true
			}
			b := NewBatcher(f, c.maxBatch, c.wait)
			b.MaxInFlight = c.inFlight
			var mu sync.Mutex
			sizes := map[int]int{}
			b.Observe = func(size int, _ time.Duration, err error) {
				if err != nil {
					t.Error(err)
				}
				if size > c.maxBatch {
					t.Errorf("a batch of %d, more than %d", size, c.maxBatch)
				}
				mu.Lock()
				sizes[size]++
				mu.Unlock()
			}
			const each = 30
			var wg sync.WaitGroup
			for i := range c.traders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(i), 1))
					for range each {
						m := int64(rng.IntN(c.markets) + 1)
						missing := rng.IntN(10) == 0
						if missing {
							m = 1000 + m
						}
						res, err := b.Trade(context.Background(), m, Request{UserID: int64(i + 1), Side: Yes, Action: ActionBuy, Amount: 100})
						switch {
						case missing && err != ErrMarketNotFound:
							t.Errorf("market %d does not exist, got %v", m, err)
						case !missing && (err != nil || res.Err != nil || res.Trade == nil || res.Trade.MarketID != m):
							t.Errorf("market %d: %+v, %v", m, res, err)
						}
					}
				}()
			}
			wg.Wait()
			if f.most > c.inFlight {
				t.Errorf("%d batches at once, at most %d allowed", f.most, c.inFlight)
			}
			// The last runner exits once it finds nothing to do.
			for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
				b.mu.Lock()
				if b.running == 0 || time.Now().After(deadline) {
					break
				}
				b.mu.Unlock()
			}
			defer b.mu.Unlock()
			if len(b.queues) != 0 || len(b.ready) != 0 || b.waiting != 0 || b.running != 0 {
				t.Errorf("left behind: %d queues, %d ready, %d waiting, %d running", len(b.queues), len(b.ready), b.waiting, b.running)
			}
			total := 0
			for size, n := range sizes {
				total += size * n
			}
			if total != c.traders*each {
				t.Errorf("batches carried %d requests, want %d (%v)", total, c.traders*each, fmt.Sprint(sizes))
			}
		})
	}
}
