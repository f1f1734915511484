package market_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/memory"
)

// BenchmarkExecute measures a trade through the one door on the memory
// store, alone and from many goroutines through a Batcher: the cost of
// the money path without a database or HTTP.
func BenchmarkExecute(b *testing.B) {
	ctx := context.Background()
	setup := func(b *testing.B, traders int) (*memory.Store, *market.Service, *market.Market, []*account.User) {
		b.Helper()
		store := memory.New()
		accounts := account.NewService(store)
		accounts.BcryptCost = bcrypt.MinCost
		markets := market.NewService(store, accounts)
		creator, _, err := accounts.Register(ctx, account.Registration{Email: "c@example.com", Password: "password123", Name: "C"})
		if err != nil {
			b.Fatal(err)
		}
		yes := true
		creator, _ = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: &yes})
		ev, err := markets.CreateEvent(ctx, creator, market.NewEvent{Name: "E", Pools: []market.NewPool{{
			Name: "P", Margin: 0.02, B: 100_000_000, Markets: []market.NewMarket{{Name: "M", Probability: 0.5}}}}})
		if err != nil {
			b.Fatal(err)
		}
		users := make([]*account.User, traders)
		for i := range users {
			u, _, err := accounts.Register(ctx, account.Registration{Email: fmt.Sprintf("t%d@example.com", i), Password: "password123", Name: "T"})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := accounts.Credit(ctx, u.ID, account.MaxCredit, false); err != nil {
				b.Fatal(err)
			}
			users[i] = u
		}
		return store, markets, ev.Pools[0].Markets[0], users
	}
	// trade buys, then sells what it bought, by turns.
	trade := func(b *testing.B, markets *market.Service, m *market.Market, u *account.User, held *int64) {
		r := market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000}
		if *held > 0 {
			r = market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionSell, Shares: *held}
		}
		res, err := markets.Execute(ctx, m.ID, r)
		if err != nil {
			b.Error(err)
			return
		}
		if r.Action == market.ActionBuy {
			*held = res.Trade.Shares
		} else {
			*held = 0
		}
	}
	b.Run("one trader, direct", func(b *testing.B) {
		_, markets, m, users := setup(b, 1)
		var held int64
		b.ResetTimer()
		for range b.N {
			trade(b, markets, m, users[0], &held)
		}
	})
	b.Run("64 traders, batched", func(b *testing.B) {
		store, markets, m, users := setup(b, 64)
		markets.Trader = market.NewBatcher(store, market.DefaultMaxBatch, 0)
		var next atomic.Int64
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			u := users[int(next.Add(1)-1)%len(users)]
			var held int64
			for pb.Next() {
				trade(b, markets, m, u, &held)
			}
		})
	})
}
