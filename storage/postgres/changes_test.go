package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

func TestChangeLog(t *testing.T) {
	t.Run("pruning works in batches and stops at the first transaction too young", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0.02, 10000, 0.5)
		u := e.user("pru", 100000) // one entry: the credit's balance
		for range 5 {
			// Four entries each: trade, price, notification, balance.
			if _, err := e.markets.Execute(e.ctx, ev.Pools[0].Markets[0].ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100}); err != nil {
				t.Fatal(err)
			}
		}
		b, err := e.store.ChangeBounds(e.ctx)
		if err != nil || b.Last != 21 {
			t.Fatalf("bounds %+v, %v; want 21 entries", b, err)
		}
		// The third trade's entries (10 to 13) made in the future (a
		// clock that jumped back) stop pruning there: what remains is a
		// suffix of the log.
		if _, err := e.store.DB().Exec(e.ctx, `UPDATE change_log SET at = now() + interval '1 day' WHERE first_seq = 10`); err != nil {
			t.Fatal(err)
		}
		n, err := postgres.PruneChangesIn(e.store, e.ctx, time.Now().Add(time.Minute), 1)
		if err != nil || n != 9 {
			t.Fatalf("pruned %d, %v; want the 9 entries before 10", n, err)
		}
		got, err := e.store.ChangeBounds(e.ctx)
		if err != nil || got.Pruned != 9 || got.Last != 21 {
			t.Fatalf("bounds %+v, %v", got, err)
		}
		for _, after := range []int64{0, 5, 9} {
			es, err := e.store.Changes(e.ctx, after, 2)
			if err != nil || len(es) != 2 || es[0].Seq != 10 || es[1].Seq != 11 {
				t.Fatalf("two entries after %d: %+v, %v; want 10 and 11", after, es, err)
			}
		}
	})

	t.Run("a reader may start and stop in the middle of a transaction's entries", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0.02, 10000, 0.5, 0.5)
		u := e.user("mid", 100000)
		reqs := [][]market.Request{
			{{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 300}, {UserID: u.ID, Side: market.No, Action: market.ActionBuy, Amount: 200}},
			{{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 400}},
		}
		ms := ev.Pools[0].Markets
		if _, err := e.store.ExecMarkets(e.ctx, []market.Lock{market.LockFor(ms[0].ID, reqs[0]), market.LockFor(ms[1].ID, reqs[1])},
			func(sts []*market.State) ([]*market.Effects, error) { return market.DecideMarkets(sts, reqs) }); err != nil {
			t.Fatal(err)
		}
		all, err := e.store.Changes(e.ctx, 0, 100)
		if err != nil || len(all) != 11 {
			t.Fatalf("entries %d, %v; want the credit's and the batch's 10", len(all), err)
		}
		for after := int64(0); after <= 11; after++ {
			for limit := 1; limit <= 12; limit++ {
				es, err := e.store.Changes(e.ctx, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				if want := min(int64(limit), 11-after); int64(len(es)) != want {
					t.Fatalf("%d after %d: got %d entries, want %d", limit, after, len(es), want)
				}
				for i, en := range es {
					if w := all[after+int64(i)]; en.Seq != after+int64(i)+1 || en.Type != w.Type || string(en.Data) != string(w.Data) || en.MarketID != w.MarketID || en.UserID != w.UserID || !en.At.Equal(w.At) {
						t.Fatalf("%d after %d: entry %d is %+v, want %+v", limit, after, i, en, w)
					}
				}
			}
		}
	})

	t.Run("a follower is woken by the commit's NOTIFY", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0.02, 10000, 0.5)
		u := e.user("fol", 100000)
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		live := make(chan error, 16)
		watched := make(chan error, 1)
		go func() { watched <- e.store.WatchChanges(ctx, func(err error) { live <- err }) }()
		if err := wait(t, live, "report that it listens"); err != nil {
			t.Fatalf("WatchChanges could not listen: %v", err)
		}
		b, err := e.store.ChangeBounds(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan []changelog.Entry, 16)
		followed := make(chan error, 1)
		// This feed polls only when woken: only the NOTIFY can deliver.
		go func() {
			followed <- postgres.WokenChangeFeed(e.store).Follow(ctx, b.Last, func(es []changelog.Entry) error {
				got <- es
				return nil
			})
		}()
		res, err := e.markets.Execute(e.ctx, ev.Pools[0].Markets[0].ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100})
		if err != nil {
			t.Fatal(err)
		}
		var seen []changelog.Entry
		for len(seen) < 4 {
			seen = append(seen, wait(t, got, "entries of the trade")...)
		}
		if seen[0].Type != changelog.Trade || seen[0].Seq != b.Last+1 || seen[0].MarketID != res.Trade.MarketID {
			t.Fatalf("followed %+v", seen[0])
		}
		cancel()
		if err := <-followed; !errors.Is(err, context.Canceled) {
			t.Errorf("Follow returned %v after its context ended", err)
		}
		if err := <-watched; err != nil {
			t.Errorf("WatchChanges returned %v after its context ended, want nil", err)
		}
	})

	t.Run("two stores on one schema, as two servers, write one log", func(t *testing.T) {
		schema := pgtest.Schema(t)
		open := func() *env {
			s, err := postgres.New(context.Background(), pgtest.URL(t), postgres.WithSchema(schema))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			if err := s.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			acc := account.NewService(s)
			acc.BcryptCost = bcrypt.MinCost
			return &env{t: t, ctx: context.Background(), store: s, accounts: acc}
		}
		a, b := open(), open()
		var users []int64
		for _, e := range []*env{a, b, a} {
			users = append(users, e.user("two", 100).ID)
		}
		es, err := b.store.Changes(b.ctx, 0, 10)
		if err != nil || len(es) != 3 {
			t.Fatalf("entries %+v, %v", es, err)
		}
		for i, en := range es {
			if en.Seq != int64(i+1) || en.Type != changelog.Balance || en.UserID != users[i] {
				t.Errorf("entry %d: %+v, want the balance of user %d", i, en, users[i])
			}
		}
	})
}
