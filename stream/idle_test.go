package stream_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/stream"
)

// countingLog is a changelog.Reader that counts the reads of entries.
type countingLog struct {
	*changelog.Memory
	reads atomic.Int64
}

func (l *countingLog) Changes(ctx context.Context, after int64, limit int) ([]changelog.Entry, error) {
	l.reads.Add(1)
	return l.Memory.Changes(ctx, after, limit)
}

func TestIdle(t *testing.T) {
	newIdleHub := func(t *testing.T) (*changelog.Memory, *countingLog, *stream.Hub) {
		log := changelog.NewMemory()
		feedLog := &countingLog{Memory: log}
		h := newHub(t, log, stream.Options{
			Idle: 20 * time.Millisecond,
			Feed: &changelog.Poller{Log: feedLog, Woken: log.Appended, Interval: time.Hour, Batch: 50},
		})
		return log, feedLog, h
	}

	t.Run("a hub that may pause reads nothing from the log until someone subscribes", func(t *testing.T) {
		log, feedLog, h := newIdleHub(t)
		if !h.Paused() {
			t.Fatal("a hub with no subscriber yet is not paused")
		}
		for range 5 {
			log.Append(trade(1, 1, 1))
		}
		time.Sleep(50 * time.Millisecond) // a hub that follows reads within microseconds
		if n := feedLog.reads.Load(); n != 0 {
			t.Fatalf("the paused hub read the log %d times", n)
		}
	})

	t.Run("the first subscriber resumes it at the log's end and gets what follows", func(t *testing.T) {
		log, _, h := newIdleHub(t)
		for range 5 {
			log.Append(trade(1, 1, 1))
		}
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1")})
		if h.Paused() {
			t.Fatal("the hub is still paused with a subscriber")
		}
		log.Append(trade(1, 1, 1))
		log.Append(trade(1, 1, 1))
		if got := ids(c.until(t, 7)); !slices.Equal(got, []int64{6, 7}) {
			t.Fatalf("got %v, want [6 7]", got)
		}
	})

	t.Run("a subscriber resuming a paused hub reads what it missed, then the live entries", func(t *testing.T) {
		log, _, h := newIdleHub(t)
		for range 5 {
			log.Append(trade(1, 1, 1))
		}
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true, After: 2})
		c.until(t, 5)
		log.Append(trade(1, 1, 1))
		if got := ids(c.until(t, 6)); !slices.Equal(got, []int64{3, 4, 5, 6}) {
			t.Fatalf("got %v, want [3 4 5 6]", got)
		}
	})

	t.Run("the hub pauses again once its last subscriber has been gone for Idle", func(t *testing.T) {
		log, feedLog, h := newIdleHub(t)
		s, err := h.Open(context.Background(), stream.Request{Topics: topics(t, "trades")})
		if err != nil {
			t.Fatal(err)
		}
		log.Append(trade(1, 1, 1))
		waitPosition(t, h, 1)
		s.Cancel()
		deadline := time.Now().Add(10 * time.Second)
		for !h.Paused() {
			if time.Now().After(deadline) {
				t.Fatal("the hub did not pause")
			}
			time.Sleep(time.Millisecond)
		}
		before := feedLog.reads.Load()
		log.Append(trade(1, 1, 1))
		time.Sleep(50 * time.Millisecond)
		if n := feedLog.reads.Load() - before; n != 0 {
			t.Fatalf("the paused hub read the log %d times", n)
		}
	})

	t.Run("a hub without Idle follows the log with no subscriber", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{})
		if h.Paused() {
			t.Fatal("paused without Idle")
		}
		log.Append(trade(1, 1, 1))
		waitPosition(t, h, 1)
	})
}
