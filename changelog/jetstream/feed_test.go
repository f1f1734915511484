package jetstream_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
	"github.com/predictkit/predictkit/storage/memory"
)

// relayed returns a log whose relay runs until t ends, and the stream's
// name.
func relayed(t *testing.T) (*changelog.Memory, *jetstream.Relay, string) {
	t.Helper()
	js := connect(t)
	stream, subject := names(t, js)
	log := changelog.NewMemory()
	r, err := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	run(t, r)
	return log, r, stream
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestFeed(t *testing.T) {
	t.Run("two instances' followers each get every entry once, in order, as they are written", func(t *testing.T) {
		log, _, stream := relayed(t)
		appendN(log, 10)
		var wg sync.WaitGroup
		results := make([][]int64, 2)
		errs := make([]error, 2)
		for i := range 2 {
			f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream, Batch: 7})
			wg.Go(func() { results[i], errs[i] = follow(timeout(t), f, 0, 250) })
		}
		for range 80 {
			appendN(log, 3)
		}
		wg.Wait()
		for i := range 2 {
			if errs[i] != nil || len(results[i]) != 250 {
				t.Fatalf("follower %d: %d entries, %v", i, len(results[i]), errs[i])
			}
		}
	})

	t.Run("a follower that starts in the middle gets what follows, with the entries' content", func(t *testing.T) {
		log, r, stream := relayed(t)
		appendN(log, 30)
		eventually(t, "the relay reaches entry 30", func() bool { return r.Last() == 30 })
		f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream})
		var got []changelog.Entry
		errEnough := errors.New("enough")
		go appendN(log, 10)
		err := f.Follow(timeout(t), 17, func(es []changelog.Entry) error {
			got = append(got, es...)
			if len(got) >= 23 {
				return errEnough
			}
			return nil
		})
		if !errors.Is(err, errEnough) {
			t.Fatalf("Follow = %v", err)
		}
		want, _ := log.Changes(context.Background(), 17, 23)
		for i, e := range got {
			w := want[i]
			if e.Seq != w.Seq || e.Type != w.Type || e.MarketID != w.MarketID || string(e.Data) != string(w.Data) || !e.At.Equal(w.At) {
				t.Fatalf("entry %d: %+v, want %+v", i, e, w)
			}
		}
	})

	t.Run("a follower at the stream's end waits for the next entry", func(t *testing.T) {
		log, r, stream := relayed(t)
		appendN(log, 5)
		eventually(t, "the relay reaches entry 5", func() bool { return r.Last() == 5 })
		f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream})
		go func() {
			time.Sleep(50 * time.Millisecond)
			appendN(log, 1)
		}()
		got, err := follow(timeout(t), f, 5, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("Follow after 5 = %v, %v", got, err)
		}
	})

	t.Run("a follower ahead of the stream (it read the database) waits for the relay to catch up", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		appendN(log, 10)
		r, _ := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
		stop := run(t, r)
		eventually(t, "the relay reaches entry 10", func() bool { return r.Last() == 10 })
		stop() // NATS is behind while the relay is down
		appendN(log, 10)
		f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream})
		done := make(chan error, 1)
		var got []int64
		go func() {
			var err error
			got, err = follow(timeout(t), f, 16, 6)
			done <- err
		}()
		r2, _ := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
		run(t, r2)
		appendN(log, 2)
		if err := <-done; err != nil || len(got) != 6 {
			t.Fatalf("Follow after 16 = %v, %v; want 17…22", got, err)
		}
	})

	t.Run("a follower started before the stream exists waits for it", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		var reported errs
		f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream, OnError: reported.add})
		done := make(chan error, 1)
		var got []int64
		go func() {
			var err error
			got, err = follow(timeout(t), f, 0, 4)
			done <- err
		}()
		eventually(t, "the follower reports the missing stream", func() bool { return strings.Contains(reported.String(), "stream not found") })
		appendN(log, 4)
		r, _ := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
		run(t, r)
		if err := <-done; err != nil || len(got) != 4 {
			t.Fatalf("Follow = %v, %v", got, err)
		}
	})

	t.Run("a follower behind a purged stream is told what it missed", func(t *testing.T) {
		log, r, stream := relayed(t)
		appendN(log, 12)
		eventually(t, "the relay reaches entry 12", func() bool { return r.Last() == 12 })
		js := connect(t)
		s, err := js.Stream(context.Background(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Purge(context.Background()); err != nil {
			t.Fatal(err)
		}
		f := jetstream.NewFeed(js, jetstream.FeedOptions{Stream: stream})
		delivered := 0
		err = f.Follow(timeout(t), 4, func(es []changelog.Entry) error { delivered += len(es); return nil })
		var pe *changelog.PrunedError
		if !errors.Is(err, changelog.ErrPruned) || !errors.As(err, &pe) || pe.After != 4 || pe.Pruned != 12 || delivered != 0 {
			t.Fatalf("Follow after 4 = %v (%d delivered), want entries 5…12 reported pruned", err, delivered)
		}
		// A follower that had seen everything carries on.
		appendN(log, 2)
		got, err := follow(timeout(t), f, 12, 2)
		if err != nil || len(got) != 2 {
			t.Fatalf("Follow after 12 = %v, %v", got, err)
		}
	})

	t.Run("a message missing in the middle ends the follow with a gap, after what came before it", func(t *testing.T) {
		log, r, stream := relayed(t)
		appendN(log, 20)
		eventually(t, "the relay reaches entry 20", func() bool { return r.Last() == 20 })
		js := connect(t)
		s, err := js.Stream(context.Background(), stream)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteMsg(context.Background(), 9); err != nil {
			t.Fatal(err)
		}
		f := jetstream.NewFeed(js, jetstream.FeedOptions{Stream: stream, Batch: 5})
		var got []int64
		err = f.Follow(timeout(t), 2, func(es []changelog.Entry) error {
			for _, e := range es {
				got = append(got, e.Seq)
			}
			return nil
		})
		var pe *changelog.PrunedError
		if !errors.As(err, &pe) || pe.After != 8 || pe.Pruned != 9 {
			t.Fatalf("Follow = %v, want entry 9 reported missing after 8", err)
		}
		if len(got) != 6 || got[0] != 3 || got[5] != 8 {
			t.Fatalf("delivered %v before the gap, want 3…8", got)
		}
	})

	t.Run("deliver's error is returned as it is", func(t *testing.T) {
		log, _, stream := relayed(t)
		appendN(log, 3)
		boom := errors.New("boom")
		f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream})
		if err := f.Follow(timeout(t), 0, func([]changelog.Entry) error { return boom }); err != boom {
			t.Fatalf("Follow = %v, want deliver's error", err)
		}
	})

	t.Run("a follower stops with its context", func(t *testing.T) {
		_, _, stream := relayed(t)
		f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := f.Follow(ctx, 0, func([]changelog.Entry) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Follow = %v, want the context's error", err)
		}
	})
}

func TestFeedOnStore(t *testing.T) {
	t.Run("followers on two instances see the trades written through the store", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		store := memory.New()
		tr := newTrader(t, store)
		r, _ := jetstream.NewRelay(js, store, jetstream.Options{Stream: stream, Subject: subject})
		run(t, r)
		from, _ := store.ChangeBounds(context.Background())
		const trades = 30
		var wg sync.WaitGroup
		got := make([][]changelog.Entry, 2)
		for i := range 2 {
			f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream})
			wg.Go(func() {
				_ = f.Follow(timeout(t), from.Last, func(es []changelog.Entry) error {
					got[i] = append(got[i], es...)
					for _, e := range es {
						if e.Type == changelog.Trade && countTrades(got[i]) == trades {
							return errors.New("enough")
						}
					}
					return nil
				})
			})
		}
		if err := tr.buy(trades); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		want, _ := store.Changes(context.Background(), from.Last, 10000)
		for i := range 2 {
			if len(got[i]) > len(want) {
				t.Fatalf("follower %d got %d entries, the log has %d", i, len(got[i]), len(want))
			}
			for j, e := range got[i] {
				if e.Seq != want[j].Seq || e.Type != want[j].Type || string(e.Data) != string(want[j].Data) {
					t.Fatalf("follower %d, entry %d: %d %s, want %d %s", i, j, e.Seq, e.Type, want[j].Seq, want[j].Type)
				}
			}
			if countTrades(got[i]) != trades {
				t.Fatalf("follower %d saw %d trades, want %d", i, countTrades(got[i]), trades)
			}
		}
	})
}

func countTrades(es []changelog.Entry) int {
	n := 0
	for _, e := range es {
		if e.Type == changelog.Trade {
			n++
		}
	}
	return n
}
