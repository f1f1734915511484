package storagetest

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
)

// testChangeLogReads is the second half of testChanges, run after its
// checks of what each change writes: how a reader pages through the log,
// how pruning keeps what consumers have not read, and how the feed and
// concurrent readers see entries as they commit.
func testChangeLogReads(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a reader pages through the log and resumes after the last entry it saw", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		u := e.user("pag", 50000, 0)
		from := e.last()
		for range 5 {
			if _, err := e.buy(u, ev.Pools[0].Markets[0], market.Yes, 100); err != nil {
				t.Fatal(err)
			}
		}
		all := e.since(from)
		if len(all) != 20 {
			t.Fatalf("%d entries for 5 trades, want 20", len(all))
		}
		b, err := e.stores.Changes.ChangeBounds(e.ctx)
		if err != nil || b.Last != all[19].Seq || b.Gap(from) {
			t.Fatalf("bounds %+v, %v; last entry %d", b, err, all[19].Seq)
		}
		page, err := e.stores.Changes.Changes(e.ctx, all[4].Seq, 3)
		if err != nil || len(page) != 3 || page[0].Seq != all[5].Seq || page[2].Seq != all[7].Seq {
			t.Fatalf("3 after %d: %v, %v", all[4].Seq, page, err)
		}
		for i := range page {
			if page[i].Type != all[5+i].Type || string(page[i].Data) != string(all[5+i].Data) || !page[i].At.Equal(all[5+i].At) {
				t.Errorf("entry %d reads differently the second time: %+v, then %+v", page[i].Seq, all[5+i], page[i])
			}
		}
		if es, err := e.stores.Changes.Changes(e.ctx, b.Last, 10); err != nil || len(es) != 0 {
			t.Fatalf("after the last: %v, %v", es, err)
		}
	})

	t.Run("pruning drops the entries made before a time, oldest first, and the bounds say so", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		u := e.user("pru", 50000, 0)
		trade := func() {
			if _, err := e.buy(u, ev.Pools[0].Markets[0], market.Yes, 100); err != nil {
				t.Fatal(err)
			}
		}
		trade()
		trade()
		old := e.last()
		// The entries before cut were made before it, those after at or
		// after it: the store's clock reads microseconds.
		time.Sleep(2 * time.Millisecond)
		cut := time.Now()
		time.Sleep(2 * time.Millisecond)
		trade()
		n, err := e.stores.Changes.PruneChanges(e.ctx, cut)
		if err != nil {
			t.Fatal(err)
		}
		if int64(n) != old {
			t.Fatalf("pruned %d entries, want the %d made before the cut", n, old)
		}
		b, err := e.stores.Changes.ChangeBounds(e.ctx)
		if err != nil || b.Pruned != old || b.Last != old+4 {
			t.Fatalf("bounds %+v, %v; want pruned %d, last %d", b, err, old, old+4)
		}
		if !b.Gap(old-1) || b.Gap(old) {
			t.Errorf("Gap(%d) = %v, Gap(%d) = %v", old-1, b.Gap(old-1), old, b.Gap(old))
		}
		es, err := e.stores.Changes.Changes(e.ctx, 0, 100)
		if err != nil || len(es) != 4 || es[0].Seq != old+1 {
			t.Fatalf("left %v, %v", es, err)
		}
		if n, err := e.stores.Changes.PruneChanges(e.ctx, cut); err != nil || n != 0 {
			t.Fatalf("pruning again: %d, %v", n, err)
		}
		err = e.stores.Changes.ChangeFeed().Follow(e.ctx, 1, func([]changelog.Entry) error { return nil })
		var pe *changelog.PrunedError
		if !errors.As(err, &pe) || pe.Pruned != old {
			t.Fatalf("following from 1: %v, want pruned through %d", err, old)
		}
		if n, err := e.stores.Changes.PruneChanges(e.ctx, time.Now().Add(time.Hour)); err != nil || n != 4 {
			t.Fatalf("pruning the rest: %d, %v", n, err)
		}
		trade()
		b, _ = e.stores.Changes.ChangeBounds(e.ctx)
		if b.Pruned != old+4 || b.Last != old+8 {
			t.Fatalf("bounds after pruning all and trading: %+v", b)
		}
	})

	t.Run("pruning keeps every entry a consumer has not read, and goes on once it reads them", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		u := e.user("cur", 50000, 0)
		if _, err := e.buy(u, ev.Pools[0].Markets[0], market.Yes, 100); err != nil {
			t.Fatal(err)
		}
		read := e.last()
		if _, err := e.buy(u, ev.Pools[0].Markets[0], market.Yes, 100); err != nil {
			t.Fatal(err)
		}
		if c, err := e.stores.Changes.ChangeCursor(e.ctx, "slow"); err != nil || c != 0 {
			t.Fatalf("a new consumer's cursor: %d, %v; want 0", c, err)
		}
		for _, set := range []int64{read, read - 1} {
			if err := e.stores.Changes.SetChangeCursor(e.ctx, "slow", set); err != nil {
				t.Fatal(err)
			}
		}
		if c, err := e.stores.Changes.ChangeCursor(e.ctx, "slow"); err != nil || c != read {
			t.Fatalf("cursor %d, %v after moving it to %d and back: want %d", c, err, read-1, read)
		}
		later := time.Now().Add(time.Hour)
		if _, err := e.stores.Changes.PruneChanges(e.ctx, later); err != nil {
			t.Fatal(err)
		}
		b, err := e.stores.Changes.ChangeBounds(e.ctx)
		if err != nil || b.Pruned > read {
			t.Fatalf("bounds %+v, %v: pruned past the consumer's cursor %d", b, err, read)
		}
		if es, err := e.stores.Changes.Changes(e.ctx, read, 100); err != nil || len(es) == 0 || es[0].Seq != read+1 {
			t.Fatalf("entries after the cursor: %v, %v", es, err)
		}
		if err := e.stores.Changes.DropChangeCursor(e.ctx, "slow"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.stores.Changes.PruneChanges(e.ctx, later); err != nil {
			t.Fatal(err)
		}
		if b, err := e.stores.Changes.ChangeBounds(e.ctx); err != nil || b.Pruned != b.Last {
			t.Fatalf("bounds %+v, %v once the consumer is gone: want everything pruned", b, err)
		}
	})

	t.Run("a follower of the feed gets a trade's entries as they commit", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 10000, 0.5)
		u := e.user("fol", 5000, 0)
		from := e.last()
		ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
		defer cancel()
		got := make(chan []changelog.Entry, 10)
		go func() {
			_ = e.stores.Changes.ChangeFeed().Follow(ctx, from, func(es []changelog.Entry) error {
				got <- es
				return nil
			})
		}()
		if _, err := e.buy(u, ev.Pools[0].Markets[0], market.Yes, 300); err != nil {
			t.Fatal(err)
		}
		var seen []changelog.Entry
		for len(seen) < 4 {
			select {
			case es := <-got:
				seen = append(seen, es...)
			case <-ctx.Done():
				t.Fatalf("the follower got %v", types(seen))
			}
		}
		if seen[0].Seq != from+1 || seen[0].Type != changelog.Trade || len(seen) != 4 {
			t.Fatalf("the follower got %v from %d", types(seen), seen[0].Seq)
		}
	})

	t.Run("concurrent trades on many markets: a reader never finds an entry below one it has passed", func(t *testing.T) {
		e := newEnv(t, newStores)
		const markets, each = 6, 15
		ev := e.event(e.creator(), 0.02, 20000, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5)
		users := make([]*account.User, markets)
		for i := range users {
			users[i] = e.user("c"+itoa(i), 100000, 0)
		}
		from := e.last()
		done := make(chan struct{})
		var wg sync.WaitGroup
		var traded atomic.Int64
		for i := range markets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				for range each {
					side := market.Side(rng.IntN(2))
					if _, err := e.buy(users[i], ev.Pools[0].Markets[i], side, 50+rng.Int64N(300)); err != nil {
						t.Error(err)
						return
					}
					traded.Add(1)
				}
			}()
		}
		go func() { wg.Wait(); close(done) }()
		// The reader polls all along, as a stream does, and checks that
		// every read starts right after where it stood.
		after := from
		var seen []int64
		read := func() {
			for {
				es, err := e.stores.Changes.Changes(e.ctx, after, 25)
				if err != nil {
					t.Fatal(err)
				}
				for _, en := range es {
					if en.Seq != after+1 {
						t.Fatalf("after reading through %d the reader found %d: an entry committed below one it had passed, or a hole", after, en.Seq)
					}
					after = en.Seq
					seen = append(seen, en.Seq)
				}
				if len(es) < 25 {
					return
				}
			}
		}
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			read()
		}
		read()
		if traded.Load() != markets*each {
			t.Fatalf("%d trades went through, want %d", traded.Load(), markets*each)
		}
		last := e.last()
		if int64(len(seen)) != last-from || len(seen) != 4*markets*each {
			t.Fatalf("the reader saw %d entries, the log holds %d after %d, %d trades make %d", len(seen), last-from, from, markets*each, 4*markets*each)
		}
		full := e.since(from)
		if len(full) != len(seen) {
			t.Fatalf("the log holds %d entries, the reader saw %d", len(full), len(seen))
		}
		// Each market's trades are in the order they were made.
		lastTrade := map[int64]int64{}
		for _, en := range full {
			if en.Type != changelog.Trade {
				continue
			}
			id, _ := fields(t, en)["trade_id"].(json.Number).Int64()
			if id <= lastTrade[en.MarketID] {
				t.Fatalf("market %d: trade %d logged after trade %d", en.MarketID, id, lastTrade[en.MarketID])
			}
			lastTrade[en.MarketID] = id
		}
	})
}
