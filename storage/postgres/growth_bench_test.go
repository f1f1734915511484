package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/market"
)

// BenchmarkGrowth1MTrades times the growth consumer's first run on a
// store with 1,000,000 trades by 50,000 traders (the backfill: volumes
// and levels from the trades), then its applying of real trades' entries
// (entries/s), each turn applying the same 2,000 trades again.
func BenchmarkGrowth1MTrades(b *testing.B) {
	const traders, n, days = 50_000, 1_000_000, 60
	e := newEnv(b)
	ev, _ := e.event(0.02, 1_000_000, 0.5, 0.5, 0.5, 0.5)
	ms := ev.Pools[0].Markets
	seedBoardHistory(b, e, ms[0].ID, traders, n, days, time.Now().UTC().Truncate(time.Microsecond))
	rules := growth.DefaultRules()

	start := time.Now()
	if _, err := e.store.ApplyGrowth(e.ctx, rules, 1000); err != nil { // the first apply backfills
		b.Fatal(err)
	}
	var volumes, raised int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT (SELECT count(*) FROM growth_volumes), (SELECT count(*) FROM users WHERE level > 1)`).Scan(&volumes, &raised); err != nil {
		b.Fatal(err)
	}
	b.Logf("backfill: %d volumes, %d levels raised, in %s", volumes, raised, time.Since(start).Round(time.Millisecond))

	b.Run("apply the entries of real trades", func(b *testing.B) {
		// Each turn adds the same trades again, so that the volumes grow
		// turn after turn: one level only, lest they rise into level-ups
		// whose entries the next turn would apply too.
		rules := growth.Rules{Levels: []int64{0}, QualifyKopecks: rules.QualifyKopecks, RewardKopecks: rules.RewardKopecks}
		var us []*account.User
		for i := range 200 {
			us = append(us, e.user(fmt.Sprint("live", i), 10_000_000))
		}
		for { // the users' credits
			if k, err := e.store.ApplyGrowth(e.ctx, rules, 1000); err != nil || k == 0 {
				break
			}
		}
		from, err := e.store.GrowthCursor(e.ctx)
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for i, u := range us {
			wg.Go(func() {
				for j := range 10 {
					side := market.Yes
					if j%2 == 1 {
						side = market.No
					}
					if _, err := e.markets.Execute(e.ctx, ms[(i+j)%len(ms)].ID, market.Request{UserID: u.ID, Side: side, Action: market.ActionBuy, Amount: 5_000}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		bounds, err := e.store.ChangeBounds(e.ctx)
		if err != nil {
			b.Fatal(err)
		}
		entries := bounds.Last - from
		b.ResetTimer()
		for b.Loop() {
			b.StopTimer()
			if _, err := e.store.DB().Exec(e.ctx, `UPDATE change_consumers SET after = $1 WHERE name = $2`, from, growth.Consumer); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			applied := 0
			for {
				k, err := e.store.ApplyGrowth(e.ctx, rules, 1000)
				if err != nil {
					b.Fatal(err)
				}
				if k == 0 {
					break
				}
				applied += k
			}
			if int64(applied) != entries {
				b.Fatalf("applied %d entries, the trades wrote %d", applied, entries)
			}
		}
		b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}
