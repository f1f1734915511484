package market_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/memory"
)

// Embedding the engine without a server: a creator opens a market, a
// trader buys YES, the creator resolves it YES and the trader is paid a
// kopeck a share.
func Example() {
	ctx := context.Background()
	store := memory.New()
	accounts := account.NewService(store)
	markets := market.NewService(store, accounts)

	creator, _, _ := accounts.Register(ctx, account.Registration{Email: "c@example.com", Password: "password123", Name: "Creator"})
	creator, _ = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: ptr(true)})
	trader, _, _ := accounts.Register(ctx, account.Registration{Email: "t@example.com", Password: "password123", Name: "Trader"})
	accounts.Credit(ctx, trader.ID, 10000, false)

	ev, err := markets.CreateEvent(ctx, creator, market.NewEvent{Name: "Rain tomorrow?", Pools: []market.NewPool{{
		Name: "Weather", Margin: 0.02, B: 10000,
		Markets: []market.NewMarket{{Name: "Rain", Probability: 0.5}},
	}}})
	if err != nil {
		panic(err)
	}
	m := ev.Pools[0].Markets[0]
	fmt.Printf("opens at %.2f\n", m.YesProbability())

	res, err := markets.Execute(ctx, m.ID, market.Request{UserID: trader.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 5000})
	if err != nil {
		panic(err)
	}
	fmt.Printf("bought %d shares for %d kopecks (fee %d); price now %.2f\n", res.Trade.Shares, res.Trade.Amount, res.Trade.Fee, res.Market.YesProbability())

	if err := markets.Close(ctx, creator.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
		panic(err)
	}
	b, _ := accounts.Balances(ctx, trader.ID)
	fmt.Println("balance after payout:", b.Balance)
	r, _ := accounts.Audit(ctx)
	fmt.Println("ledger ok:", r.OK)
	// Output:
	// opens at 0.50
	// bought 8175 shares for 5000 kopecks (fee 99); price now 0.69
	// balance after payout: 13175
	// ledger ok: true
}

func ptr[T any](v T) *T { return &v }

// Group commit in a program of your own: trades from many goroutines, on
// one market or many, share transactions, and each is still decided on
// its own.
func ExampleBatcher() {
	ctx := context.Background()
	store := memory.New()
	accounts := account.NewService(store)
	markets := market.NewService(store, accounts)
	b := market.NewBatcher(store, market.DefaultMaxBatch, 0)
	markets.Trader = b

	creator, _, _ := accounts.Register(ctx, account.Registration{Email: "c@example.com", Password: "password123", Name: "Creator"})
	creator, _ = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: ptr(true)})
	ev, err := markets.CreateEvent(ctx, creator, market.NewEvent{Name: "Derby", Pools: []market.NewPool{{
		Name: "Winner", Margin: 0.02, B: 50000,
		Markets: []market.NewMarket{{Name: "Home", Probability: 0.5}, {Name: "Away", Probability: 0.3}},
	}}})
	if err != nil {
		panic(err)
	}
	var batched atomic.Int64
	b.Observe = func(size int, _ time.Duration, err error) { batched.Add(int64(size)) }

	// Four traders, each buying on both markets at once.
	var wg sync.WaitGroup
	var accepted atomic.Int64
	for i := range 4 {
		u, _, _ := accounts.Register(ctx, account.Registration{Email: fmt.Sprintf("t%d@example.com", i), Password: "password123", Name: "Trader"})
		accounts.Credit(ctx, u.ID, 1000, false)
		for _, m := range ev.Pools[0].Markets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := markets.Execute(ctx, m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 500})
				if err == nil && res.Err == nil {
					accepted.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	r, _ := accounts.Audit(ctx)
	fmt.Println("trades accepted:", accepted.Load(), "carried by batches:", batched.Load(), "ledger ok:", r.OK)
	// Output:
	// trades accepted: 8 carried by batches: 8 ledger ok: true
}
