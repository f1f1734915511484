package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/stream"
)

func TestResume(t *testing.T) {
	t.Run("a resuming subscriber gets exactly the entries after its last id, then the live ones", func(t *testing.T) {
		log := changelog.NewMemory()
		for range 1234 {
			log.Append(trade(1, 1, 1))
		}
		h := newHub(t, log, stream.Options{Page: 100})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true, After: 1000})
		log.Append(trade(1, 1, 1))
		got := ids(c.until(t, 1235))
		if len(got) != 235 || got[0] != 1001 || !contiguous(got) {
			t.Fatalf("got %d messages from %v, want 1001…1235", len(got), got[:min(3, len(got))])
		}
	})

	t.Run("without a last id, a subscriber gets what commits after it opens, however far behind the fan-out is", func(t *testing.T) {
		log := changelog.NewMemory()
		held := &heldFeed{Feed: &changelog.Poller{Log: log, Woken: log.Appended, Interval: time.Hour}, release: make(chan struct{})}
		h := newHub(t, log, stream.Options{Feed: held})
		log.Append(trade(1, 1, 1), trade(1, 1, 1))
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1")})
		log.Append(trade(1, 1, 1))
		close(held.release)
		if got := ids(c.until(t, 3)); !slices.Equal(got, []int64{3}) {
			t.Fatalf("got %v, want [3]", got)
		}
	})

	t.Run("a last id of 0 reads the whole log", func(t *testing.T) {
		log := changelog.NewMemory()
		log.Append(trade(1, 1, 1), trade(1, 1, 2), trade(1, 1, 1))
		h := newHub(t, log, stream.Options{})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true})
		log.Append(trade(1, 1, 1))
		if got := ids(c.until(t, 4)); !slices.Equal(got, []int64{1, 3, 4}) {
			t.Fatalf("got %v, want [1 3 4]", got)
		}
	})

	t.Run("a last id after the log's last is refused", func(t *testing.T) {
		log := changelog.NewMemory()
		log.Append(trade(1, 1, 1))
		h := newHub(t, log, stream.Options{})
		_, err := h.Open(context.Background(), stream.Request{Topics: topics(t, "trades"), Resume: true, After: 2})
		var fe *stream.FutureError
		if !errors.As(err, &fe) || fe.Last != 1 {
			t.Fatalf("Open after 2 = %v, want a FutureError naming 1", err)
		}
	})

	// The catch-up race: the fan-out moves on while the subscriber reads
	// its backlog, and the log can be ahead of the fan-out when the
	// subscriber switches to it.
	t.Run("entries handed out while the backlog is read are read from the log", func(t *testing.T) {
		log := changelog.NewMemory()
		for range 10 {
			log.Append(trade(1, 1, 1))
		}
		r := &hookedLog{Memory: log}
		var h *stream.Hub
		r.afterRead = func(n int) {
			if n == 1 {
				// Between the first page and the switch, five more
				// entries commit and the fan-out hands them out.
				for range 5 {
					log.Append(trade(1, 1, 1))
				}
				for deadline := time.Now().Add(10 * time.Second); h.Position() < 15 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
			}
		}
		h = newHub(t, log, stream.Options{Log: r, Page: 5})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true, After: 3})
		log.Append(trade(1, 1, 1))
		got := ids(c.until(t, 16))
		if !slices.Equal(got, seqRange(4, 16)) {
			t.Fatalf("got %v, want 4…16", got)
		}
	})

	t.Run("entries the subscriber read ahead of the fan-out are not sent twice", func(t *testing.T) {
		log := changelog.NewMemory()
		for range 10 {
			log.Append(trade(1, 1, 1))
		}
		// The hub's feed is held: it hands out nothing until released,
		// while the subscriber reads the log past it.
		held := &heldFeed{Feed: &changelog.Poller{Log: log, Woken: log.Appended, Interval: time.Hour}, release: make(chan struct{})}
		h := newHub(t, log, stream.Options{Feed: held})
		for range 5 {
			log.Append(trade(1, 1, 1))
		}
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true, After: 2})
		c.until(t, 15)
		close(held.release)
		log.Append(trade(1, 1, 1))
		got := ids(c.until(t, 16))
		if !slices.Equal(got, seqRange(3, 16)) {
			t.Fatalf("got %v, want 3…16 once each", got)
		}
	})

	t.Run("many subscribers resuming while entries commit each get every entry once, in order", func(t *testing.T) {
		const total = 3000
		log := changelog.NewMemory()
		// A buffer for every entry: a subscriber that a busy machine
		// leaves behind is the slow-subscriber test's case, not this one's.
		h := newHub(t, log, stream.Options{Page: 7, Buffer: total})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range total {
				log.Append(trade(1, 1, 1))
				if i%50 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
		var cs []*client
		var afters []int64
		for i := range 40 {
			b, _ := log.ChangeBounds(context.Background())
			after := b.Last - int64(i*13%200)
			if after < 0 {
				after = 0
			}
			afters = append(afters, after)
			cs = append(cs, subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true, After: after}))
			time.Sleep(time.Duration(i%3) * time.Millisecond)
		}
		wg.Wait()
		for i, c := range cs {
			got := ids(c.until(t, total))
			if !slices.Equal(got, seqRange(afters[i]+1, total)) {
				t.Fatalf("subscriber %d (after %d) got %d messages, first %v: not %d…%d once each", i, afters[i], len(got), got[:min(5, len(got))], afters[i]+1, total)
			}
		}
	})
}

func TestReset(t *testing.T) {
	t.Run("a subscriber behind the pruned entries gets a reset, then the live entries", func(t *testing.T) {
		log := changelog.NewMemory()
		old := time.Now().Add(-time.Hour)
		for range 5 {
			log.Append(changelog.Entry{Type: changelog.Trade, MarketID: 1, At: old, Data: json.RawMessage(`{}`)})
		}
		log.Append(trade(1, 1, 1)) // 6
		if _, err := log.Prune(context.Background(), time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		h := newHub(t, log, stream.Options{})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true, After: 2})
		log.Append(trade(1, 1, 1)) // 7
		ms := c.until(t, 7)
		if len(ms) != 2 || ms[0].event != "reset" || ms[0].id != 6 || ms[1].id != 7 {
			t.Fatalf("got %v, want a reset at 6, then 7", ms)
		}
		var d stream.ResetData
		if err := json.Unmarshal([]byte(ms[0].data), &d); err != nil || d.OldestID != 6 || d.LastEventID != 6 || d.Reason != "pruned" || d.Action == "" {
			t.Fatalf("reset data %s: %+v, %v", ms[0].data, d, err)
		}
		// Right at the pruned edge, nothing was missed: no reset.
		c = subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true, After: 5})
		if got := c.until(t, 7); got[0].event != "trade" || got[0].id != 6 {
			t.Fatalf("after 5: %v, want 6 and 7", got)
		}
	})

	t.Run("a hub whose feed lost entries drops its subscribers, which resume", func(t *testing.T) {
		log := changelog.NewMemory()
		feed := &prunedOnce{Feed: &changelog.Poller{Log: log, Woken: log.Appended, Interval: time.Hour}, fail: make(chan struct{})}
		h := newHub(t, log, stream.Options{Feed: feed, Retry: time.Millisecond})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "trades")})
		waitLen(t, h, 1)
		close(feed.fail)
		if err := c.ended(t); !errors.Is(err, stream.ErrDropped) {
			t.Fatalf("Serve = %v, want ErrDropped", err)
		}
		c = subscribe(t, h, stream.Request{Topics: topics(t, "trades")})
		log.Append(trade(1, 1, 1))
		c.until(t, 1)
	})
}

func contiguous(s []int64) bool {
	for i := 1; i < len(s); i++ {
		if s[i] != s[i-1]+1 {
			return false
		}
	}
	return true
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// hookedLog is a log whose reads call afterRead with their count.
type hookedLog struct {
	*changelog.Memory
	mu        sync.Mutex
	n         int
	afterRead func(n int)
}

func (l *hookedLog) Changes(ctx context.Context, after int64, limit int) ([]changelog.Entry, error) {
	es, err := l.Memory.Changes(ctx, after, limit)
	l.mu.Lock()
	l.n++
	n := l.n
	l.mu.Unlock()
	if l.afterRead != nil {
		l.afterRead(n)
	}
	return es, err
}

// heldFeed hands out nothing until release is closed.
type heldFeed struct {
	changelog.Feed
	release chan struct{}
}

func (f *heldFeed) Follow(ctx context.Context, after int64, deliver func([]changelog.Entry) error) error {
	select {
	case <-f.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return f.Feed.Follow(ctx, after, deliver)
}

// prunedOnce fails with ErrPruned once fail is closed, then follows.
type prunedOnce struct {
	changelog.Feed
	fail chan struct{}
	once sync.Once
}

func (f *prunedOnce) Follow(ctx context.Context, after int64, deliver func([]changelog.Entry) error) error {
	failed := false
	f.once.Do(func() {
		select {
		case <-f.fail:
		case <-ctx.Done():
		}
		failed = true
	})
	if failed {
		return &changelog.PrunedError{After: after, Pruned: after}
	}
	return f.Feed.Follow(ctx, after, deliver)
}
