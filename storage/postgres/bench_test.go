package postgres_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// BenchmarkExec measures single-trade Execs from parallel traders, on one
// market (every trade queues for one row lock) and spread over several.
func BenchmarkExec(b *testing.B) {
	for _, c := range []struct{ markets, parallelism int }{{1, 0}, {1, 4}, {8, 4}} {
		markets, parallelism := c.markets, c.parallelism
		b.Run(fmt.Sprintf("%d markets, %d traders per CPU", markets, parallelism), func(b *testing.B) {
			e := newEnv(b)
			probs := make([]float64, markets)
			for i := range probs {
				probs[i] = 0.5
			}
			ev, _ := e.event(0.02, 1_000_000_000, probs...)
			ms := ev.Pools[0].Markets
			users := make([]*account.User, max(parallelism, 1)*runtime.GOMAXPROCS(0))
			for i := range users {
				users[i] = e.user("bench", 1_000_000_000_000)
			}
			var next atomic.Int64
			b.ResetTimer()
			if parallelism == 0 {
				for range b.N {
					if _, err := e.markets.Execute(e.ctx, ms[0].ID, market.Request{UserID: users[0].ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
				return
			}
			b.SetParallelism(parallelism)
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1) - 1)
				u, m := users[i], ms[i%len(ms)]
				side := market.Side(i % 2)
				for pb.Next() {
					if _, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: side, Action: market.ActionBuy, Amount: 1000}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
		})
	}
}
