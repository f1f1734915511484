// Package coalesce shares one read of a changing value among the callers
// that ask for it at once, without giving any caller a value read before
// it asked.
package coalesce

import (
	"context"
	"sync"
	"time"
)

// Fresh reads a value (a log's last sequence number, a WAL position) for
// many callers with at most one read running at a time. A read that
// starts after a caller arrived sees everything committed before it
// arrived; so the callers that arrive while a read runs wait for the next
// one, which starts when the running one ends, and share it. Under load,
// one read serves every caller that arrived during the one before it.
type Fresh[T any] struct {
	// Read reads the value; it is given at most Timeout (2 s when 0),
	// whoever waits for it.
	Read    func(context.Context) (T, error)
	Timeout time.Duration

	mu      sync.Mutex
	running bool
	next    *fetch[T]
}

type fetch[T any] struct {
	done chan struct{}
	v    T
	err  error
	// callers is how many Gets wait for this read (tests watch it).
	callers int
}

// Get returns the value of a read that started after Get was called, or
// ctx's error if ctx ends first.
func (f *Fresh[T]) Get(ctx context.Context) (T, error) {
	f.mu.Lock()
	x := f.next
	if x == nil {
		x = &fetch[T]{done: make(chan struct{})}
		f.next = x
	}
	x.callers++
	if !f.running {
		f.running, f.next = true, nil
		go f.loop(x)
	}
	f.mu.Unlock()
	select {
	case <-x.done:
		return x.v, x.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// loop runs the reads one after another while callers wait for them.
func (f *Fresh[T]) loop(x *fetch[T]) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	for x != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		x.v, x.err = f.Read(ctx)
		cancel()
		close(x.done)
		f.mu.Lock()
		x, f.next = f.next, nil
		if x == nil {
			f.running = false
		}
		f.mu.Unlock()
	}
}
