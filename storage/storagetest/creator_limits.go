package storagetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// testCreatorLimits: a store reads a creator's open events and subsidy
// under the lock of CreateEventLimited, a refused creation writes
// nothing, and concurrent creations by one creator never pass the
// limits together.
func testCreatorLimits(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("the load counts events with an unresolved market, hidden ones too, and their subsidies", func(t *testing.T) {
		e := newEnv(t, newStores)
		c, other := e.creator(), e.creator()
		two := e.event(c, 0, 10000, 0.5, 0.3) // two markets
		one := e.event(c, 0, 20000, 0.5)
		hidden, err := e.markets.CreateEvent(e.ctx, c, market.NewEvent{Name: "Hidden", Pools: []market.NewPool{{Name: "P", B: 5000,
			Markets: []market.NewMarket{{Name: "M", Probability: 0.4}}}}})
		if err != nil {
			t.Fatal(err)
		}
		e.event(other, 0, 10000, 0.5)
		subsidy := func(evs ...*market.Event) int64 {
			var sum int64
			for _, ev := range evs {
				for _, p := range ev.Pools {
					for _, m := range p.Markets {
						sum += e.escrowBalance(m.ID)
					}
				}
			}
			return sum
		}
		want := market.CreatorLoad{OpenEvents: 3, SubsidyKopecks: subsidy(two, one, hidden)}
		oneSubsidy := subsidy(one) // before its settlement empties its escrow
		if got := e.creatorLoad(c); got != want {
			t.Fatalf("load = %+v, want %+v", got, want)
		}
		// Half of an event resolved leaves it open; all of it closes it.
		if err := e.markets.Resolve(e.ctx, two.Pools[0].Markets[0].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if err := e.markets.Resolve(e.ctx, one.Pools[0].Markets[0].ID, "NO"); err != nil {
			t.Fatal(err)
		}
		want = market.CreatorLoad{OpenEvents: 2, SubsidyKopecks: want.SubsidyKopecks - oneSubsidy}
		if got := e.creatorLoad(c); got != want {
			t.Fatalf("after resolving one event and half of another: load = %+v, want %+v", got, want)
		}
		if got := e.creatorLoad(e.creator()); got != (market.CreatorLoad{}) {
			t.Fatalf("a new creator's load = %+v, want nothing", got)
		}
	})

	t.Run("a refused creation writes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		treasury, markets := e.accountBalance(account.Treasury), len(e.escrows())
		refused := errors.New("refused")
		err := e.stores.Markets.CreateEventLimited(e.ctx, rawEvent(c.ID), []int64{100}, func(market.CreatorLoad) error { return refused })
		if !errors.Is(err, refused) {
			t.Fatalf("err = %v, want the check's", err)
		}
		if tr, n := e.accountBalance(account.Treasury), len(e.escrows()); tr != treasury || n != markets {
			t.Fatalf("the refused event moved the treasury from %d to %d and the markets from %d to %d", treasury, tr, markets, n)
		}
		if got := e.creatorLoad(c); got != (market.CreatorLoad{}) {
			t.Fatalf("load = %+v after a refused creation", got)
		}
		e.audit()
	})

	newEvent := market.NewEvent{Name: "Race", Pools: []market.NewPool{{Name: "P", B: 10000,
		Markets: []market.NewMarket{{Name: "M", Probability: 0.5}}}}}
	for _, c := range []struct {
		name  string
		rules func(subsidy int64) market.CreatorRules
	}{
		{"open events", func(int64) market.CreatorRules { return market.CreatorRules{MaxOpenEvents: 3} }},
		{"subsidy", func(s int64) market.CreatorRules { return market.CreatorRules{MaxSubsidyKopecks: 3*s + s/2} }},
	} {
		t.Run("of concurrent creations at the limit of "+c.name+", exactly the allowed number succeed", func(t *testing.T) {
			e := newEnv(t, newStores)
			cr := e.creator()
			first, err := e.markets.CreateEvent(e.ctx, cr, newEvent)
			if err != nil {
				t.Fatal(err)
			}
			sub := e.escrowBalance(first.Pools[0].Markets[0].ID)
			e.markets.Creators = c.rules(sub)
			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() { _, errs[i] = e.markets.CreateEvent(e.ctx, cr, newEvent) })
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case !errors.Is(err, market.ErrCreatorLimit):
					t.Fatalf("refused with %v, want market.ErrCreatorLimit", err)
				}
			}
			if ok != 2 {
				t.Fatalf("%d of %d concurrent creations succeeded with one event open and room for 3, want 2", ok, n)
			}
			if got := e.creatorLoad(cr); got.OpenEvents != 3 || got.SubsidyKopecks != 3*sub {
				t.Fatalf("load = %+v, want 3 events and %d kopecks", got, 3*sub)
			}
			e.audit()
		})
	}
}

// creatorLoad is creator u's load as the store reads it.
func (e *env) creatorLoad(u *account.User) market.CreatorLoad {
	e.t.Helper()
	var load market.CreatorLoad
	// The check refuses, so nothing is written.
	stop := errors.New("stop")
	err := e.stores.Markets.CreateEventLimited(e.ctx, rawEvent(u.ID), []int64{0}, func(l market.CreatorLoad) error {
		load = l
		return stop
	})
	if !errors.Is(err, stop) {
		e.t.Fatalf("reading the load: %v", err)
	}
	return load
}
