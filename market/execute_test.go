package market_test

import (
	"context"
	"errors"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/memory"
)

// countingTrader counts the requests that reach the money path.
type countingTrader struct {
	market.Trader
	calls int
}

func (c *countingTrader) Trade(ctx context.Context, marketID int64, r market.Request) (market.Result, error) {
	c.calls++
	return c.Trader.Trade(ctx, marketID, r)
}

func TestExecuteIsTheOneDoorOfPartnerTrades(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	accounts := account.NewService(store)
	markets := market.NewService(store, accounts)
	trader := &countingTrader{Trader: markets.Trader}
	markets.Trader = trader

	creator, _, _ := accounts.Register(ctx, account.Registration{Email: "c@example.com", Password: "password123", Name: "C"})
	creator, _ = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: ptr(true)})
	ev, err := markets.CreateEvent(ctx, creator, market.NewEvent{Name: "E", Pools: []market.NewPool{{
		Name: "P", B: 10000, Markets: []market.NewMarket{{Name: "M", Probability: 0.5}}}}})
	if err != nil {
		t.Fatal(err)
	}
	m := ev.Pools[0].Markets[0]
	p := &partner.Partner{Name: "Bookmaker"}
	if err := store.CreatePartner(ctx, p, []byte("hash")); err != nil {
		t.Fatal(err)
	}
	if err := store.Transfer(ctx, []account.Posting{{From: account.External, To: account.FloatAccount(p.ID), Amount: 100_000, Reason: "float"}}); err != nil {
		t.Fatal(err)
	}
	order := func(action market.Action, bet, digest, ext string) market.Request {
		r := market.Request{Side: market.Yes, Action: action, Amount: 1000, Shares: 10, Partner: &market.PartnerOrder{
			Key: market.Key{PartnerID: p.ID, ClientBetID: bet}, Digest: digest, ExternalID: ext, TopUp: action == market.ActionBuy}}
		if action == market.ActionBuy {
			r.Shares = 0
		} else {
			r.Amount = 0
		}
		return r
	}

	first, err := markets.Execute(ctx, m.ID, order(market.ActionBuy, "bet-1", "d1", "alice"))
	if err != nil || first.Replayed || trader.calls != 1 {
		t.Fatalf("first bet: %+v, %v (%d calls)", first, err, trader.calls)
	}
	t.Run("a repeat is answered from its trade without reaching the money path", func(t *testing.T) {
		again, err := markets.Execute(ctx, m.ID, order(market.ActionBuy, "bet-1", "d1", "alice"))
		if err != nil || !again.Replayed || again.Trade.ID != first.Trade.ID || trader.calls != 1 {
			t.Fatalf("repeat: %+v, %v (%d calls)", again, err, trader.calls)
		}
	})
	t.Run("a repeat with other parameters is a conflict", func(t *testing.T) {
		_, err := markets.Execute(ctx, m.ID, order(market.ActionBuy, "bet-1", "d2", "alice"))
		if !errors.Is(err, market.ErrIdempotencyConflict) || trader.calls != 1 {
			t.Fatalf("conflict: %v (%d calls)", err, trader.calls)
		}
	})
	t.Run("a sale for a user with no sub-account is refused before the money path and makes none", func(t *testing.T) {
		_, err := markets.Execute(ctx, m.ID, order(market.ActionSell, "sell-1", "d3", "nobody"))
		if !errors.Is(err, market.ErrNoPosition) || trader.calls != 1 {
			t.Fatalf("sale: %v (%d calls)", err, trader.calls)
		}
		if id, err := store.SubAccountID(ctx, market.SubAccount{PartnerID: p.ID, ExternalID: "nobody"}); id != 0 || err != nil {
			t.Fatalf("a sub-account was made: %d, %v", id, err)
		}
	})
	t.Run("a used key is a conflict before a missing sub-account is looked at", func(t *testing.T) {
		_, err := markets.Execute(ctx, m.ID, order(market.ActionSell, "bet-1", "d5", "nobody"))
		if !errors.Is(err, market.ErrIdempotencyConflict) {
			t.Fatalf("sale under a used key: %v", err)
		}
	})
	t.Run("a refused first bet leaves no sub-account", func(t *testing.T) {
		r := order(market.ActionBuy, "bet-2", "d4", "bob")
		r.MaxCost = 1
		if _, err := markets.Execute(ctx, m.ID, r); !errors.Is(err, market.ErrPriceMoved) {
			t.Fatalf("bet: %v", err)
		}
		if id, _ := store.SubAccountID(ctx, market.SubAccount{PartnerID: p.ID, ExternalID: "bob"}); id != 0 {
			t.Fatalf("the refused bet left sub-account %d", id)
		}
	})
}
