package storagetest

import (
	"slices"
	"testing"

	"github.com/predictkit/predictkit/market"
)

// testTradesAfter: a market's trade log read in keyset pages (what the
// trades export streams) holds every trade of the market once, oldest
// first, as the whole log has them, and no trade of another market.
func testTradesAfter(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("pages after a trade id hold the market's log in order", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 100_000, 0.5, 0.3)
		m1, m2 := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		ann, bob := e.user("ann", 1_000_000, 0), e.user("bob", 1_000_000, 0)
		for i := range 5 {
			if _, err := e.buy(ann, m1, market.Yes, int64(1000+i*100)); err != nil {
				t.Fatal(err)
			}
			if _, err := e.buy(bob, m2, market.No, 700); err != nil {
				t.Fatal(err)
			}
			if _, err := e.buy(bob, m1, market.No, 500); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.sell(ann, m1, market.Yes, 100); err != nil {
			t.Fatal(err)
		}
		want, err := e.stores.Markets.Trades(e.ctx, m1.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 11 {
			t.Fatalf("the log holds %d trades, want 11", len(want))
		}
		for _, size := range []int{1, 3, 4, 11, 100} {
			var got []*market.Trade
			after := int64(0)
			for pages := 0; ; pages++ {
				p, err := e.stores.Markets.TradesAfter(e.ctx, m1.ID, after, size)
				if err != nil {
					t.Fatal(err)
				}
				if len(p) > size {
					t.Fatalf("a page of %d trades, limit %d", len(p), size)
				}
				got = append(got, p...)
				if len(p) < size {
					break
				}
				after = p[len(p)-1].ID
				if pages > len(want) {
					t.Fatalf("pages of %d never end", size)
				}
			}
			if !slices.EqualFunc(got, want, func(a, b *market.Trade) bool {
				return a.ID == b.ID && a.MarketID == m1.ID && a.UserID == b.UserID && a.Side == b.Side && a.Action == b.Action &&
					a.Shares == b.Shares && a.Amount == b.Amount && a.Cost == b.Cost && a.Fee == b.Fee &&
					a.PriceBefore == b.PriceBefore && a.PriceAfter == b.PriceAfter && a.CreatedAt.Equal(b.CreatedAt)
			}) {
				t.Fatalf("pages of %d: %d trades, not the log's %d in order", size, len(got), len(want))
			}
		}
	})

	t.Run("a page after the last trade is empty, and so is an unknown market's", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 100_000, 0.5)
		m := ev.Pools[0].Markets[0]
		ann := e.user("ann", 1_000_000, 0)
		r, err := e.buy(ann, m, market.Yes, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name          string
			market, after int64
		}{
			{"after the last trade", m.ID, r.Trade.ID},
			{"after an id past every trade", m.ID, r.Trade.ID + 1000},
			{"of a market that does not exist", m.ID + 1000, 0},
		} {
			p, err := e.stores.Markets.TradesAfter(e.ctx, c.market, c.after, 10)
			if err != nil || p == nil || len(p) != 0 {
				t.Errorf("%s: %v, %v; want an empty page", c.name, p, err)
			}
		}
	})
}
