package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

func TestCutPlaceholder(t *testing.T) {
	ph := strconv.FormatInt(postgres.Placeholder+3, 10)
	cases := []struct {
		name, data, key, head, tail string
		ord                         int64
	}{
		{"the id first", `{"trade_id":` + ph + `,"x":1}`, `"trade_id":`, `{"trade_id":`, `,"x":1}`, 3},
		{"the id last", `{"x":1,"trade_id":` + ph + `}`, `"trade_id":`, `{"x":1,"trade_id":`, `}`, 3},
		{"a real id is not a placeholder", `{"trade_id":12}`, `"trade_id":`, `{"trade_id":12}`, ``, 0},
		{"a key that ends like it is another key", `{"user_id":5,"id":` + ph + `}`, `"id":`, `{"user_id":5,"id":`, `}`, 3},
		{"the key inside a string does not count", `{"m":"\"id\":` + ph + `","id":` + ph + `}`, `"id":`, `{"m":"\"id\":` + ph + `","id":`, `}`, 3},
		{"no key leaves the data whole", `{"x":1}`, `"id":`, `{"x":1}`, ``, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head, tail, ord := postgres.CutPlaceholder([]byte(c.data), c.key)
			if head != c.head || tail != c.tail || ord != c.ord {
				t.Fatalf("CutPlaceholder(%s) = %q, %q, %d; want %q, %q, %d", c.data, head, tail, ord, c.head, c.tail, c.ord)
			}
		})
	}
}

func TestChangeLog(t *testing.T) {
	t.Run("pruning works in batches and stops at the first entry too young", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0.02, 10000, 0.5)
		u := e.user("pru", 100000)
		for range 5 {
			if _, err := e.markets.Execute(e.ctx, ev.Pools[0].Markets[0].ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100}); err != nil {
				t.Fatal(err)
			}
		}
		b, err := e.store.ChangeBounds(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		// An entry made in the future (a clock that jumped back) stops
		// pruning there: what remains is a suffix of the log.
		if _, err := e.store.DB().Exec(e.ctx, `UPDATE change_log SET at = now() + interval '1 day' WHERE seq = $1`, b.Last-6); err != nil {
			t.Fatal(err)
		}
		n, err := postgres.PruneChangesIn(e.store, e.ctx, time.Now().Add(time.Minute), 4)
		if err != nil || int64(n) != b.Last-7 {
			t.Fatalf("pruned %d, %v; want the %d entries before %d", n, err, b.Last-7, b.Last-6)
		}
		got, err := e.store.ChangeBounds(e.ctx)
		if err != nil || got.Pruned != b.Last-7 || got.Last != b.Last {
			t.Fatalf("bounds %+v, %v", got, err)
		}
		es, err := e.store.Changes(e.ctx, 0, 1)
		if err != nil || len(es) != 1 || es[0].Seq != b.Last-6 {
			t.Fatalf("first entry left: %v, %v", es, err)
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
