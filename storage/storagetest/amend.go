package storagetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// testAmend: an event's creator edits it until its first trade (the
// replaced pools' escrows go back to the treasury and the new subsidies
// out, in one transaction, under the creator's limits), an edit and a
// concurrent first trade serialize, and amendments are kept with the
// event and told to its holders.
func testAmend(t *testing.T, newStores func(*testing.T) Stores) {
	newPools := func(b int64) *[]market.NewPool {
		return &[]market.NewPool{{Name: "Who wins", NameRu: "Кто победит", Rules: "New rules", Margin: 0.02, B: b, Exclusive: true,
			Markets: []market.NewMarket{{Name: "A", Probability: 0.5}, {Name: "B", Probability: 0.3}, {Name: "C", Probability: 0.2}}}}
	}
	eventSubsidy := func(e *env, ev *market.Event) int64 {
		var sum int64
		for _, p := range ev.Pools {
			for _, m := range p.Markets {
				sum += e.escrowBalance(m.ID)
			}
		}
		return sum
	}

	t.Run("an edit before the first trade replaces the names, tags and pools given, and moves the subsidies exactly", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		e.putTag("football", "Football", "")
		ev := e.event(c, 0.01, 10000, 0.5, 0.4)
		oldSub, treasury := eventSubsidy(e, ev), e.treasury()
		name, tags := "Renamed", []string{"football"}
		got, err := e.markets.EditEvent(e.ctx, c.ID, ev.ID, market.EventPatch{Name: &name, Tags: &tags, Pools: newPools(20000)})
		if err != nil {
			t.Fatal(err)
		}
		read, err := e.markets.Event(e.ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []*market.Event{got, read} {
			if x.Name != "Renamed" || x.NameRu != "Финал" || len(x.Tags) != 1 || x.Tags[0] != "football" || !x.IsActive ||
				len(x.Pools) != 1 || len(x.Pools[0].Markets) != 3 || x.Pools[0].Rules != "New rules" || !x.Pools[0].Exclusive || x.Pools[0].B != 20000 {
				t.Fatalf("event after the edit = %+v (pools %+v)", x, x.Pools)
			}
		}
		for _, p := range ev.Pools {
			for _, m := range p.Markets {
				if _, err := e.markets.Market(e.ctx, m.ID); !errors.Is(err, market.ErrMarketNotFound) {
					t.Fatalf("replaced market %d: err = %v, want market.ErrMarketNotFound", m.ID, err)
				}
				if b := e.escrowBalance(m.ID); b != 0 {
					t.Fatalf("replaced market %d's escrow holds %d", m.ID, b)
				}
			}
		}
		newSub := eventSubsidy(e, read)
		if newSub <= oldSub {
			t.Fatalf("new subsidy %d, old %d: a pool of b 20000 and 3 markets should need more", newSub, oldSub)
		}
		if tr := e.treasury(); tr != treasury+oldSub-newSub {
			t.Fatalf("treasury %d, want %d + %d - %d", tr, treasury, oldSub, newSub)
		}
		if load := e.creatorLoad(c); load.OpenEvents != 1 || load.SubsidyKopecks != newSub {
			t.Fatalf("creator load %+v, want one event holding %d", load, newSub)
		}
		// The new markets trade.
		u := e.user("ann", 10000, 0)
		if _, err := e.buy(u, read.Pools[0].Markets[1], market.Yes, 500); err != nil {
			t.Fatal(err)
		}
		e.audit()
	})

	t.Run("an edit of names alone keeps the markets", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5)
		ru := ""
		got, err := e.markets.EditEvent(e.ctx, c.ID, ev.ID, market.EventPatch{NameRu: &ru})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Final" || got.NameRu != "" || got.Pools[0].Markets[0].ID != ev.Pools[0].Markets[0].ID {
			t.Fatalf("event = %+v", got)
		}
		e.audit()
	})

	refusals := []struct {
		name  string
		setup func(e *env, c *account.User, ev *market.Event)
		patch func(e *env) market.EventPatch
		want  error
	}{
		{"after the first trade", func(e *env, _ *account.User, ev *market.Event) {
			if _, err := e.buy(e.user("bob", 1000, 0), ev.Pools[0].Markets[1], market.No, 300); err != nil {
				e.t.Fatal(err)
			}
		}, func(*env) market.EventPatch { return market.EventPatch{Pools: newPools(10000)} }, market.ErrEventTraded},
		{"after a trade sold back to nothing", func(e *env, _ *account.User, ev *market.Event) {
			u := e.user("cy", 1000, 0)
			r, err := e.buy(u, ev.Pools[0].Markets[0], market.Yes, 300)
			if err != nil {
				e.t.Fatal(err)
			}
			if _, err := e.sell(u, ev.Pools[0].Markets[0], market.Yes, r.Trade.Shares); err != nil {
				e.t.Fatal(err)
			}
		}, func(*env) market.EventPatch { n := "New"; return market.EventPatch{Name: &n} }, market.ErrEventTraded},
		{"with a resolved market", func(e *env, _ *account.User, ev *market.Event) {
			if err := e.markets.Resolve(e.ctx, ev.Pools[0].Markets[0].ID, "NO"); err != nil {
				e.t.Fatal(err)
			}
		}, func(*env) market.EventPatch { n := "New"; return market.EventPatch{Name: &n} }, market.ErrEventResolved},
		{"by another user", func(*env, *account.User, *market.Event) {}, nil, market.ErrForbidden},
		{"naming an unknown tag", func(*env, *account.User, *market.Event) {}, func(*env) market.EventPatch {
			n, tags := "New", []string{"nosuchtag"}
			return market.EventPatch{Name: &n, Tags: &tags, Pools: newPools(10000)}
		}, input.ErrInvalid},
		{"past the creator's subsidy limit", func(e *env, _ *account.User, ev *market.Event) {
			e.markets.Creators = market.CreatorRules{MaxSubsidyKopecks: eventSubsidy(e, ev) + 1000}
		}, func(*env) market.EventPatch { return market.EventPatch{Pools: newPools(1_000_000)} }, market.ErrCreatorLimit},
	}
	for _, r := range refusals {
		t.Run("an edit "+r.name+" is refused and changes nothing", func(t *testing.T) {
			e := newEnv(t, newStores)
			c := e.creator()
			ev := e.event(c, 0, 10000, 0.5, 0.5)
			r.setup(e, c, ev)
			before, err := e.markets.Event(e.ctx, ev.ID)
			if err != nil {
				t.Fatal(err)
			}
			treasury := e.treasury()
			caller := c.ID
			patch := market.EventPatch{Pools: newPools(10000)}
			if r.patch != nil {
				patch = r.patch(e)
			} else {
				caller = e.user("mallory", 0, 0).ID
			}
			_, err = e.markets.EditEvent(e.ctx, caller, ev.ID, patch)
			if !errors.Is(err, r.want) {
				t.Fatalf("err = %v, want %v", err, r.want)
			}
			after, err := e.markets.Event(e.ctx, ev.ID)
			if err != nil {
				t.Fatal(err)
			}
			if after.Name != before.Name || len(after.Pools) != len(before.Pools) || after.Pools[0].Markets[0].ID != before.Pools[0].Markets[0].ID || len(after.Tags) != 0 {
				t.Fatalf("refused edit changed the event: %+v", after)
			}
			if tr := e.treasury(); tr != treasury {
				t.Fatalf("refused edit moved the treasury from %d to %d", treasury, tr)
			}
			e.audit()
		})
	}

	t.Run("an edit of an event at the creator's limit of open events passes: the event is counted once", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5)
		e.markets.Creators = market.CreatorRules{MaxOpenEvents: 1}
		if _, err := e.markets.EditEvent(e.ctx, c.ID, ev.ID, market.EventPatch{Pools: newPools(10000)}); err != nil {
			t.Fatal(err)
		}
		e.audit()
	})

	t.Run("an unknown event is market.ErrEventNotFound", func(t *testing.T) {
		e := newEnv(t, newStores)
		n := "x"
		if _, err := e.markets.EditEvent(e.ctx, 1, 1<<40, market.EventPatch{Name: &n}); !errors.Is(err, market.ErrEventNotFound) {
			t.Fatalf("edit: %v", err)
		}
		if _, err := e.markets.AddAmendment(e.ctx, 1, 1<<40, "x", ""); !errors.Is(err, market.ErrEventNotFound) {
			t.Fatalf("amend: %v", err)
		}
	})

	t.Run("of an edit and a concurrent first trade exactly one wins, and money stays exact", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		for round := range 6 {
			ev := e.event(c, 0, 10000, 0.5, 0.5)
			u := e.user("racer", 1000, 0)
			var wg sync.WaitGroup
			var tradeErr, editErr error
			name := "Edited " + itoa(round)
			wg.Go(func() { _, tradeErr = e.buy(u, ev.Pools[0].Markets[1], market.Yes, 400) })
			wg.Go(func() {
				_, editErr = e.markets.EditEvent(e.ctx, c.ID, ev.ID, market.EventPatch{Name: &name, Pools: newPools(10000)})
			})
			wg.Wait()
			read, err := e.markets.Event(e.ctx, ev.ID)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tradeErr == nil && errors.Is(editErr, market.ErrEventTraded):
				if read.Name != "Final" || e.balances(u).Balance >= 1000 {
					t.Fatalf("round %d: the trade won but the event is %q and the trader has %+v", round, read.Name, e.balances(u))
				}
			case editErr == nil && errors.Is(tradeErr, market.ErrMarketNotFound):
				if read.Name != name || e.balances(u).Balance != 1000 || len(read.Pools[0].Markets) != 3 {
					t.Fatalf("round %d: the edit won but the event is %q and the trader has %+v", round, read.Name, e.balances(u))
				}
			default:
				t.Fatalf("round %d: trade %v, edit %v: want exactly one to win", round, tradeErr, editErr)
			}
			e.audit()
		}
	})

	t.Run("amendments are read with the event, oldest first, and each tells every holder of an open position once", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5, 0.5)
		a0, b0 := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		both, one, sold, none := e.user("both", 5000, 0), e.user("one", 5000, 0), e.user("sold", 5000, 0), e.user("none", 5000, 0)
		for _, tr := range []struct {
			u *account.User
			m *market.Market
			s market.Side
		}{{both, a0, market.Yes}, {both, b0, market.No}, {one, b0, market.Yes}, {sold, a0, market.No}} {
			if _, err := e.buy(tr.u, tr.m, tr.s, 500); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.sell(sold, a0, market.No, e.position(sold, a0.ID)); err != nil {
			t.Fatal(err)
		}
		first, err := e.markets.AddAmendment(e.ctx, c.ID, ev.ID, "  Extra time counts.\nPenalties do not. ", "Дополнительное время засчитывается.")
		if err != nil {
			t.Fatal(err)
		}
		second, err := e.markets.AddAmendment(e.ctx, c.ID, ev.ID, "Second note", "")
		if err != nil {
			t.Fatal(err)
		}
		if first.ID == 0 || first.Text != "Extra time counts.\nPenalties do not." || second.ID <= first.ID {
			t.Fatalf("amendments %+v, %+v", first, second)
		}
		read, err := e.markets.Event(e.ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		list, err := e.markets.Events(e.ctx, 10, 0)
		if err != nil || len(list) != 1 {
			t.Fatalf("events: %v, %v", list, err)
		}
		for _, x := range []*market.Event{read, list[0]} {
			as := x.Amendments
			if len(as) != 2 || as[0].Text != first.Text || as[0].TextRu != "Дополнительное время засчитывается." || as[1].Text != "Second note" ||
				as[1].TextRu != "" || !within(as[0].CreatedAt, first.CreatedAt) || as[0].EventID != ev.ID {
				t.Fatalf("amendments read: %+v", as)
			}
		}
		ns, ok := e.stores.Markets.(social.NotificationStore)
		if !ok {
			return
		}
		for _, tc := range []struct {
			u    *account.User
			want int
		}{{both, 2}, {one, 2}, {sold, 0}, {none, 0}, {c, 0}} {
			all, err := ns.Notifications(e.ctx, tc.u.ID, false, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []*social.Notification
			for _, n := range all {
				if n.Type == social.TypeEventAmended {
					got = append(got, n)
				}
			}
			if len(got) != tc.want {
				t.Fatalf("%s has %d event_amended notifications, want %d", tc.u.Name, len(got), tc.want)
			}
			if tc.want > 0 {
				n := got[len(got)-1] // newest first: the first amendment
				if n.RelatedID != ev.ID || n.Data.EventName != "Final" || n.Data.EventNameRu != "Финал" || n.Data.Excerpt != first.Text ||
					n.Data.ExcerptRu != first.TextRu {
					t.Fatalf("notification %+v", n)
				}
			}
		}
	})

	t.Run("an event without amendments reads an empty list", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0, 10000, 0.5)
		read, err := e.markets.Event(e.ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if read.Amendments == nil || len(read.Amendments) != 0 {
			t.Fatalf("amendments = %#v, want an empty list", read.Amendments)
		}
	})
}

// position is the shares user u holds open on market id.
func (e *env) position(u *account.User, marketID int64) int64 {
	e.t.Helper()
	ps, err := e.markets.OpenPositions(e.ctx, u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	var n int64
	for _, p := range ps {
		if p.MarketID == marketID {
			n += p.Shares
		}
	}
	return n
}
