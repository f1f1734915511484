package storagetest

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

func testConcurrency(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("concurrent trades on one market never overdraw, lose or duplicate a trade", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.event(e.creator(), 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		const traders, each = 8, 25
		users := make([]*account.User, traders)
		for i := range users {
			users[i] = e.user("t"+itoa(i), 3000, 0)
		}
		var mu sync.Mutex
		var accepted []*market.Trade
		var wg sync.WaitGroup
		for i, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				held := map[market.Side]int64{}
				for range each {
					side := market.Side(rng.IntN(2))
					var res *market.Result
					var err error
					if held[side] > 0 && rng.IntN(3) == 0 {
						res, err = e.sell(u, m, side, 1+rng.Int64N(held[side]))
					} else {
						res, err = e.buy(u, m, side, 50+rng.Int64N(900))
					}
					switch {
					case err == nil:
						if res.Trade.Action == market.ActionBuy {
							held[side] += res.Trade.Shares
						} else {
							held[side] -= res.Trade.Shares
						}
						mu.Lock()
						accepted = append(accepted, res.Trade)
						mu.Unlock()
					case errors.Is(err, account.ErrInsufficientFunds), errors.Is(err, market.ErrTradeRefused):
					default:
						t.Errorf("trade failed: %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if len(accepted) == 0 {
			t.Fatal("no trade was accepted")
		}
		log, err := e.stores.Markets.Trades(e.ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != len(accepted) {
			t.Fatalf("trade log holds %d trades, %d were accepted", len(log), len(accepted))
		}
		seen := map[int64]bool{}
		for _, tr := range accepted {
			seen[tr.ID] = true
		}
		var dy, dn, cash int64
		for _, tr := range log {
			if !seen[tr.ID] {
				t.Fatalf("trade %d in the log was never accepted", tr.ID)
			}
			sign := int64(1)
			if tr.Action == market.ActionSell {
				sign = -1
			}
			if tr.Side == market.Yes {
				dy += sign * tr.Shares
			} else {
				dn += sign * tr.Shares
			}
			cash -= sign * tr.Amount
		}
		got := e.market(m.ID)
		if got.QYes != m.QYes+dy || got.QNo != m.QNo+dn {
			t.Fatalf("q = %d/%d, want %d/%d from the trade log", got.QYes, got.QNo, m.QYes+dy, m.QNo+dn)
		}
		var total int64
		for _, u := range users {
			b := e.balances(u)
			if b.Balance < 0 {
				t.Fatalf("user %d is overdrawn: %d", u.ID, b.Balance)
			}
			total += b.Balance
		}
		if total != traders*3000+cash {
			t.Fatalf("users hold %d, want %d", total, traders*3000+cash)
		}
		e.audit()
	})
	t.Run("concurrent closes pay exactly once", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("winner", 5000, 0)
		b, err := e.buy(u, m, market.Yes, 2000)
		if err != nil {
			t.Fatal(err)
		}
		const closers = 10
		errs := make([]error, closers)
		var wg sync.WaitGroup
		for i := range closers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES")
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, market.ErrResolved):
			default:
				t.Fatalf("close: %v", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d closes succeeded, want 1", ok)
		}
		if got := e.balances(u).Balance; got != 5000-b.Trade.Amount+b.Trade.Shares {
			t.Fatalf("balance = %d, want %d", got, 5000-b.Trade.Amount+b.Trade.Shares)
		}
		e.audit()
	})
}
