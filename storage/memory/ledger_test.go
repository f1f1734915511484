package memory_test

import (
	"context"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/memory"
)

func TestLedger(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	accounts := account.NewService(store)
	markets := market.NewService(store, accounts)
	creator, _, err := accounts.Register(ctx, account.Registration{Email: "c@example.com", Password: "password123", Name: "Creator"})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if creator, err = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: &yes}); err != nil {
		t.Fatal(err)
	}
	trader, _, _ := accounts.Register(ctx, account.Registration{Email: "t@example.com", Password: "password123", Name: "Trader"})
	if _, err := accounts.Credit(ctx, trader.ID, 100_000_000, false); err != nil {
		t.Fatal(err)
	}
	ev, err := markets.CreateEvent(ctx, creator, market.NewEvent{Name: "Rain tomorrow?", Pools: []market.NewPool{{
		Name: "Weather", Margin: 0.02, B: 1_000_000, Markets: []market.NewMarket{{Name: "Rain", Probability: 0.5}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	m := ev.Pools[0].Markets[0]

	// Enough trades to fill more than one of the ledger's blocks.
	var trades []*market.Trade
	for i := range 2500 {
		side := market.Yes
		if i%2 == 1 {
			side = market.No
		}
		res, err := markets.Execute(ctx, m.ID, market.Request{UserID: trader.ID, Side: side, Action: market.ActionBuy, Amount: 1000})
		if err != nil {
			t.Fatal(err)
		}
		trades = append(trades, res.Trade)
	}
	ps := store.Postings()

	t.Run("every trade's postings carry its id, amounts and time", func(t *testing.T) {
		byTrade := map[int64][]account.Posting{}
		for _, p := range ps {
			if p.TradeID != 0 {
				byTrade[p.TradeID] = append(byTrade[p.TradeID], p)
			}
		}
		for _, tr := range trades {
			got := byTrade[tr.ID]
			var charged int64
			for _, p := range got {
				if p.From != account.UserAccount(trader.ID) || !p.At.Equal(tr.CreatedAt) || p.At.Location().String() != "UTC" {
					t.Fatalf("trade %d: posting %+v", tr.ID, p)
				}
				charged += p.Amount
			}
			if len(got) == 0 || charged != tr.Amount {
				t.Fatalf("trade %d charged %d: postings %+v", tr.ID, tr.Amount, got)
			}
		}
	})
	t.Run("the postings come back in order with their reasons", func(t *testing.T) {
		if len(ps) < 5000 {
			t.Fatalf("%d postings, want more than a block", len(ps))
		}
		if ps[0].Reason != "deposit" || ps[0].To != account.UserAccount(trader.ID) || ps[0].Amount != 100_000_000 {
			t.Fatalf("first posting %+v, want the deposit", ps[0])
		}
		for i := 1; i < len(ps); i++ {
			if ps[i].At.Before(ps[i-1].At) || ps[i].TradeID != 0 && ps[i].TradeID < ps[i-1].TradeID {
				t.Fatalf("posting %d (%+v) comes before %d (%+v)", i, ps[i], i-1, ps[i-1])
			}
		}
	})
	t.Run("the audit sums the postings to the balances", func(t *testing.T) {
		r, err := accounts.Audit(ctx)
		if err != nil || !r.OK {
			t.Fatalf("audit: %+v, %v", r, err)
		}
		if r.Postings != int64(len(ps)) {
			t.Fatalf("audit counted %d postings, the ledger holds %d", r.Postings, len(ps))
		}
	})
}
