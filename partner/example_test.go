package partner_test

import (
	"context"
	"fmt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/memory"
)

// A partner bets for its user, retries the same request after a timeout,
// and reads the user's sub-account.
func Example() {
	ctx := context.Background()
	store := memory.New()
	accounts := account.NewService(store)
	markets := market.NewService(store, accounts)
	partners := partner.NewService(store, store, markets)

	creator, _, _ := accounts.Register(ctx, account.Registration{Email: "c@example.com", Password: "password123", Name: "C"})
	yes := true
	creator, _ = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: &yes})
	ev, _ := markets.CreateEvent(ctx, creator, market.NewEvent{Name: "Match", Pools: []market.NewPool{{
		Name: "Winner", Margin: 0, B: 10000, Markets: []market.NewMarket{{Name: "Home", Probability: 0.5}},
	}}})
	m := ev.Pools[0].Markets[0]

	p, _, _ := partners.CreatePartner(ctx, "Bookie")
	partners.FundFloat(ctx, p.ID, 5000)

	bet := partner.Bet{ExternalUserID: "alice", MarketID: m.ID, Side: market.Yes, AmountKopecks: 1000, ClientBetID: "order-1"}
	first, _ := partners.Bet(ctx, p, bet)
	retry, _ := partners.Bet(ctx, p, bet)
	fmt.Println(first.Direction, first.SharesDelta, "shares for", first.CostKopecks)
	fmt.Println("retry replayed:", retry.Replayed, "same trade:", retry.TradeID == first.TradeID)

	st, _ := partners.State(ctx, p, "alice")
	fmt.Println("exists:", st.Exists, "positions:", len(st.Positions), "shares:", st.Positions[0].Shares)
	float, _ := partners.Float(ctx, p.ID)
	fmt.Println("float:", float)
	// Output:
	// buy_yes 1909 shares for 1000
	// retry replayed: true same trade: true
	// exists: true positions: 1 shares: 1909
	// float: 4000
}
