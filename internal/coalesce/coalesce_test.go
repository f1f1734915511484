package coalesce

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestFresh(t *testing.T) {
	t.Run("a caller that arrives while a read runs gets the next read, not the running one", func(t *testing.T) {
		var value atomic.Int64 // what a read would see now
		var reads atomic.Int32
		release := make(chan struct{})
		f := &Fresh[int64]{Read: func(context.Context) (int64, error) {
			reads.Add(1)
			v := value.Load()
			<-release
			return v, nil
		}}
		var wg sync.WaitGroup
		var first, second, third int64
		value.Store(10)
		wg.Go(func() { first, _ = f.Get(context.Background()) })
		for reads.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		value.Store(20) // committed after the first read began
		wg.Go(func() { second, _ = f.Get(context.Background()) })
		wg.Go(func() { third, _ = f.Get(context.Background()) })
		for waiting := 0; waiting < 2; time.Sleep(time.Millisecond) { // both wait behind the running read
			f.mu.Lock()
			if f.next != nil {
				waiting = f.next.callers
			}
			f.mu.Unlock()
		}
		close(release)
		wg.Wait()
		if first != 10 || second != 20 || third != 20 {
			t.Errorf("values %d, %d and %d, want 10, 20 and 20: a caller got a value read before it arrived", first, second, third)
		}
		if n := reads.Load(); n != 2 {
			t.Errorf("%d reads, want 2: the two callers that arrived during the first share the second", n)
		}
	})
	t.Run("a caller whose context ends stops waiting, and the read still serves the others", func(t *testing.T) {
		release := make(chan struct{})
		f := &Fresh[int]{Read: func(context.Context) (int, error) { <-release; return 7, nil }}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := f.Get(ctx); err != context.Canceled {
			t.Fatalf("Get with an ended context: %v, want context.Canceled", err)
		}
		done := make(chan int)
		go func() { v, _ := f.Get(context.Background()); done <- v }()
		close(release)
		if v := <-done; v != 7 {
			t.Fatalf("got %d, want 7", v)
		}
	})
}

func ExampleFresh() {
	var last atomic.Int64
	last.Store(42)
	f := &Fresh[int64]{Read: func(context.Context) (int64, error) { return last.Load(), nil }}
	v, err := f.Get(context.Background())
	fmt.Println(v, err)
	// Output: 42 <nil>
}
