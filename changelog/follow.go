package changelog

import (
	"context"
	"sync"
	"time"
)

// Reader reads a committed log.
type Reader interface {
	// Changes returns at most limit entries with a Seq larger than after,
	// in ascending order.
	Changes(ctx context.Context, after int64, limit int) ([]Entry, error)
	// ChangeBounds returns the part of the log the store still holds.
	ChangeBounds(ctx context.Context) (Bounds, error)
}

// A Feed follows a log as it grows.
type Feed interface {
	// Follow calls deliver with every entry after seq after, in commit
	// order, in batches, as they commit, until ctx is done (it then
	// returns ctx.Err()) or deliver or the log fails (it returns that
	// error). It never skips an entry: where entries after after were
	// pruned, it returns an error wrapping ErrPruned.
	Follow(ctx context.Context, after int64, deliver func([]Entry) error) error
}

// Signal wakes everyone waiting for the next change. The zero Signal is
// ready to use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// Wait returns a channel that is closed at the next Notify.
func (s *Signal) Wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Notify wakes every waiter.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// Poller is the Feed of a log that can be read and that announces new
// entries: it reads what follows the last entry delivered each time it is
// woken, and every Interval besides, in case a wake-up was lost (a
// LISTEN connection that dropped and came back).
type Poller struct {
	Log Reader
	// Woken returns a channel that is closed when new entries may have
	// been committed (Memory.Appended, Signal.Wait).
	Woken func() <-chan struct{}
	// Interval between reads when nothing wakes the poller; 0 means 1 s.
	Interval time.Duration
	// Batch is the most entries read at a time; 0 means 1000.
	Batch int
}

// Follow implements Feed.
func (p *Poller) Follow(ctx context.Context, after int64, deliver func([]Entry) error) error {
	interval := p.Interval
	if interval <= 0 {
		interval = time.Second
	}
	batch := p.Batch
	if batch <= 0 {
		batch = 1000
	}
	b, err := p.Log.ChangeBounds(ctx)
	if err != nil {
		return err
	}
	if b.Gap(after) {
		return &PrunedError{After: after, Pruned: b.Pruned}
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		// Take the wake-up channel before reading, so that an entry
		// committed between the read and the wait still wakes us.
		woken := p.Woken()
		for {
			es, err := p.Log.Changes(ctx, after, batch)
			if err != nil {
				return err
			}
			if len(es) == 0 {
				break
			}
			if es[0].Seq != after+1 {
				// Sequence numbers have no holes unless entries were
				// pruned under a slow reader.
				if b, err := p.Log.ChangeBounds(ctx); err == nil && b.Gap(after) {
					return &PrunedError{After: after, Pruned: b.Pruned}
				}
			}
			if err := deliver(es); err != nil {
				return err
			}
			after = es[len(es)-1].Seq
			if len(es) < batch {
				break
			}
		}
		t.Reset(interval)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-woken:
		case <-t.C:
		}
	}
}
