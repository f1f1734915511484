// Command partner embeds predictkit's partner and market packages in a
// program of its own, on the in-memory store, with no HTTP server and no
// dependency injection: the shape of a bookmaker's back office that keeps
// the engine in process.
//
// It walks one partner user through bet → state → sell → state, repeats
// the bet to show that a retry executes nothing, and ends with the ledger
// audit.
//
//	go run ./examples/partner
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/memory"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "partner example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	store := memory.New()
	accounts := account.NewService(store)
	markets := market.NewService(store, accounts)
	partners := partner.NewService(store, store, markets)

	// The platform side: a creator opens a market.
	creator, _, err := accounts.Register(ctx, account.Registration{Email: "desk@example.com", Password: "a long password", Name: "Trading desk"})
	if err != nil {
		return err
	}
	yes := true
	if creator, err = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: &yes}); err != nil {
		return err
	}
	ev, err := markets.CreateEvent(ctx, creator, market.NewEvent{Name: "Cup final", Pools: []market.NewPool{{
		Name: "Winner", Margin: 0.02, B: 100_000,
		Markets: []market.NewMarket{{Name: "Home team wins", Probability: 0.55}},
	}}})
	if err != nil {
		return err
	}
	m := ev.Pools[0].Markets[0]

	// The partner: created by the operator, its float funded with 1,000 RUB.
	p, key, err := partners.CreatePartner(ctx, "Example Bookmaker")
	if err != nil {
		return err
	}
	if _, err := partners.FundFloat(ctx, p.ID, 100_000); err != nil {
		return err
	}
	// Every request authenticates with the key, as the HTTP API does.
	if p, err = partners.Authenticate(ctx, key); err != nil {
		return err
	}

	bet := partner.Bet{ExternalUserID: "customer-42", MarketID: m.ID, Side: market.Yes, AmountKopecks: 20_000, ClientBetID: "bet-0001"}
	rc, err := partners.Bet(ctx, p, bet)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "bet:   %s %d shares for %d kopecks (trade %d)\n", rc.Direction, rc.SharesDelta, rc.CostKopecks, rc.TradeID)

	// A retry after a timeout: same client_bet_id, same receipt, no trade.
	again, err := partners.Bet(ctx, p, bet)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "retry: replayed=%v, same trade %d\n", again.Replayed, again.TradeID)

	if err := printState(ctx, w, partners, p, "customer-42"); err != nil {
		return err
	}

	sr, err := partners.Sell(ctx, p, partner.Sell{ExternalUserID: "customer-42", MarketID: m.ID, Side: market.Yes, Shares: rc.SharesDelta / 2, ClientBetID: "sell-0001"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sell:  %s %d shares for %d kopecks, kept on the sub-account\n", sr.Direction, -sr.SharesDelta, sr.PayoutKopecks)
	if err := printState(ctx, w, partners, p, "customer-42"); err != nil {
		return err
	}

	float, _ := partners.Float(ctx, p.ID)
	fmt.Fprintf(w, "float: %d kopecks left\n", float)
	r, err := accounts.Audit(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "audit: ok=%v, %d postings sum to %d\n", r.OK, r.Postings, r.Sum)
	if !r.OK {
		return fmt.Errorf("ledger audit failed: %v", r.Problems)
	}
	return nil
}

func printState(ctx context.Context, w io.Writer, partners *partner.Service, p *partner.Partner, user string) error {
	st, err := partners.State(ctx, p, user)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "state: exists=%v balance=%d open=%d", st.Exists, st.BalanceKopecks, st.OpenPositionsKopecks)
	for _, pos := range st.Positions {
		fmt.Fprintf(w, " [market %d %s: %d shares at %d bps, worth %d]", pos.MarketID, pos.Side, pos.Shares, pos.AvgPriceBps, pos.ValueKopecks)
	}
	fmt.Fprintln(w)
	return nil
}
