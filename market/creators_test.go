package market_test

import (
	"errors"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// TestWhoMayResolve records what the platform allows today: an event's
// creator may trade on its markets and then resolve them, and keeps the
// right to resolve (and to show or hide) their events after the operator
// revoked the creator role: closing belongs to the event's creator, not
// to the role. No other user may close them; the operator resolves any
// market through Service.Resolve.
func TestWhoMayResolve(t *testing.T) {
	w := newCreatorWorld(t)
	if _, err := w.accounts.Credit(w.ctx, w.creator.ID, 100_000, false); err != nil {
		t.Fatal(err)
	}
	newEvent := func() (*market.Event, *market.Market) {
		ev, err := w.markets.CreateEvent(w.ctx, w.creator, market.NewEvent{Name: "E", Pools: []market.NewPool{{
			Name: "P", B: 10000, Markets: []market.NewMarket{{Name: "M", Probability: 0.5}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return ev, ev.Pools[0].Markets[0]
	}
	first, m1 := newEvent()
	second, m2 := newEvent()

	t.Run("a creator may trade on their own market and then resolve it", func(t *testing.T) {
		res, err := w.markets.Execute(w.ctx, m1.ID, market.Request{UserID: w.creator.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 10_000})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.markets.Close(w.ctx, w.creator.ID, first.ID, m1.PoolID, m1.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		b, _ := w.accounts.Balances(w.ctx, w.creator.ID)
		if want := 100_000 - res.Trade.Amount + res.Trade.Shares; b.Balance != want {
			t.Fatalf("balance %d, want %d: the creator's winning shares pay as anyone's", b.Balance, want)
		}
	})
	t.Run("a creator whose role was revoked may still resolve their events", func(t *testing.T) {
		revoked, err := w.accounts.SetRoles(w.ctx, w.creator.ID, account.RolesPatch{IsCreator: ptr(false)})
		if err != nil || revoked.IsCreator {
			t.Fatalf("revoke: %v", err)
		}
		if _, err := w.markets.CreateEvent(w.ctx, revoked, market.NewEvent{Name: "E"}); !errors.Is(err, market.ErrForbidden) {
			t.Fatalf("a revoked creator creates an event: %v", err)
		}
		if err := w.markets.SetActive(w.ctx, revoked.ID, second.ID, ptr(true)); err != nil {
			t.Fatalf("show: %v", err)
		}
		if err := w.markets.Close(w.ctx, revoked.ID, second.ID, m2.PoolID, m2.ID, "NO"); err != nil {
			t.Fatalf("resolve: %v", err)
		}
	})
	_, m3 := newEvent()
	t.Run("no other user may close them", func(t *testing.T) {
		ev3, _ := w.markets.Event(w.ctx, m3.EventID)
		for _, caller := range []int64{0, w.creator.ID + 1} {
			if err := w.markets.Close(w.ctx, caller, ev3.ID, m3.PoolID, m3.ID, "YES"); !errors.Is(err, market.ErrForbidden) {
				t.Fatalf("caller %d: %v", caller, err)
			}
		}
	})
	t.Run("the operator resolves them, and the market says so", func(t *testing.T) {
		if err := w.markets.Resolve(w.ctx, m3.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		if got, _ := w.markets.Market(w.ctx, m3.ID); got.ResolvedBy != market.ResolvedByOperator || !got.Voided {
			t.Fatalf("market %+v", got)
		}
	})
}
