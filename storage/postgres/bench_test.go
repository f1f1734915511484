package postgres_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
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

// BenchmarkBatch measures one group-commit batch of 64 trades, each by
// its own user, on one market (the hot case) and on 64 markets in one
// ExecMarkets (the spread case), committed one after another. The two
// differ in rows written per batch: one market row and its two ledger
// accounts, or 64 of each.
func BenchmarkBatch(b *testing.B) {
	const size = 64
	for _, c := range []struct {
		markets, parallel int
		unlogged          bool
	}{{1, 1, false}, {1, 1, true}, {size, 1, false}, {size, 2, false}} {
		markets := c.markets
		name := fmt.Sprintf("%d trades on %d markets, %d at once", size, markets, c.parallel)
		if c.unlogged {
			// What the change log costs a hot market: compare with the
			// case before, in the same run.
			name += ", without the change log"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b)
			postgres.SetUnloggedTrades(e.store, c.unlogged)
			// A pool holds at most 32 markets here: events of up to 32.
			var ms []*market.Market
			for len(ms) < markets {
				probs := make([]float64, min(markets-len(ms), 32))
				for i := range probs {
					probs[i] = 0.5
				}
				ev, _ := e.event(0.02, 1_000_000_000, probs...)
				ms = append(ms, ev.Pools[0].Markets...)
			}
			ids := make([]int64, markets)
			reqs := make([][]market.Request, markets)
			for i := range size {
				u := e.user("bench", 1_000_000_000_000)
				k := i % markets
				ids[k] = ms[k].ID
				reqs[k] = append(reqs[k], market.Request{UserID: u.ID, Side: market.Side(i % 2), Action: market.ActionBuy, Amount: 1000})
			}
			locks := make([]market.Lock, markets)
			for i := range locks {
				locks[i] = market.LockFor(ids[i], reqs[i])
			}
			b.ResetTimer()
			if c.parallel > 1 {
				// Each worker its own half of the markets and users.
				var next atomic.Int64
				b.SetParallelism(1)
				b.RunParallel(func(pb *testing.PB) {
					w := int(next.Add(1)-1) % c.parallel
					n := markets / c.parallel
					ls, rs := locks[w*n:(w+1)*n], reqs[w*n:(w+1)*n]
					for pb.Next() {
						if _, err := e.store.ExecMarkets(e.ctx, ls, func(sts []*market.State) ([]*market.Effects, error) {
							return market.DecideMarkets(sts, rs)
						}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N*size/c.parallel)/b.Elapsed().Seconds(), "trades/s")
				return
			}
			for range b.N {
				effs, err := e.store.ExecMarkets(e.ctx, locks, func(sts []*market.State) ([]*market.Effects, error) {
					return market.DecideMarkets(sts, reqs)
				})
				if err != nil {
					b.Fatal(err)
				}
				for _, eff := range effs {
					for _, r := range eff.Results {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
					}
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "trades/s")
		})
	}
}

// seedClosedPositions gives user u n closed positions spread over the
// markets ms, closed one a minute apart, sold (won_side -1), lost or won
// with PnLs from -1000 to +500; others more users get as many each.
func seedClosedPositions(tb testing.TB, e *env, u *account.User, ms []*market.Market, n, others int) {
	tb.Helper()
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	_, err := e.store.DB().Exec(e.ctx, `WITH
others AS (INSERT INTO users (name, created_at) SELECT 'other ' || k, $4 FROM generate_series(1, $5::int) k RETURNING id),
holders AS (SELECT $1::bigint AS id UNION ALL SELECT id FROM others)
INSERT INTO positions (user_id, market_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at, closed_at, won_side)
SELECT h.id, ($2::bigint[])[1 + g % cardinality($2::bigint[])], g % 2, 0, 0, 1000, 600 + g % 400,
	CASE g % 3 WHEN 0 THEN 0 ELSE (g * 7919) % 1100 END,
	$4 - make_interval(mins => g + 10), $4 - make_interval(mins => g), $4 - make_interval(mins => g), g % 3 - 1
FROM holders h CROSS JOIN generate_series(1, $3::int) g
ORDER BY g, h.id`, u.ID, ids, n, at, others)
	if err != nil {
		tb.Fatalf("seed closed positions: %v", err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE positions`); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkProfile10kClosed times the reads GET /api/v1/auth/me makes for
// a user with 10,000 closed positions (and a few open ones) among 100,000
// closed positions of ten users: the target is the whole profile in
// under 10 ms. See also server's BenchmarkProfileHandler10kClosed.
func BenchmarkProfile10kClosed(b *testing.B) {
	e := newEnv(b)
	probs := make([]float64, market.MaxMarketsPerPool)
	for i := range probs {
		probs[i] = 0.5
	}
	ev, _ := e.event(0.02, 100_000, probs...)
	ms := ev.Pools[0].Markets
	u := e.user("profile", 1_000_000)
	for _, m := range ms[:5] {
		if _, err := e.buy(u, m, market.Yes, 1000); err != nil {
			b.Fatal(err)
		}
	}
	seedClosedPositions(b, e, u, ms, 10_000, 9)
	if page, err := e.markets.ClosedPositions(e.ctx, u.ID, market.ClosedInProfile, 0); err != nil || len(page.Positions) != market.ClosedInProfile || !page.HasMore {
		b.Fatalf("closed page: %v", err)
	}
	if st, err := e.markets.Stats(e.ctx, u.ID); err != nil || st.TotalPredictions != 10_000 {
		b.Fatalf("stats %+v, %v", st, err)
	}
	reads := []struct {
		name string
		read func() error
	}{
		{"balances", func() error { _, err := e.accounts.Balances(e.ctx, u.ID); return err }},
		{"open positions", func() error { _, err := e.markets.OpenPositions(e.ctx, u.ID); return err }},
		{"closed positions, first page", func() error {
			_, err := e.markets.ClosedPositions(e.ctx, u.ID, market.ClosedInProfile, 0)
			return err
		}},
		{"stats", func() error { _, err := e.markets.Stats(e.ctx, u.ID); return err }},
	}
	for _, r := range reads {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				if err := r.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("all of the profile", func(b *testing.B) {
		for b.Loop() {
			for _, r := range reads {
				if err := r.read(); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// seedSettledPositions gives user u n positions that settlements closed
// without writing them (see settle.go): open in their rows, on n/2
// markets of ms's pool (both sides of each), resolved one a minute apart,
// YES, NO or void; others more users hold the same each. It returns the
// markets it made.
func seedSettledPositions(tb testing.TB, e *env, u *account.User, m *market.Market, n, others int) {
	tb.Helper()
	at := time.Now().UTC().Truncate(time.Microsecond)
	_, err := e.store.DB().Exec(e.ctx, `WITH
mk AS (INSERT INTO markets (pool_id, event_id, outcome_index, name, b, q_yes, q_no, q0_yes, q0_no, created_at, finish_at,
		resolved, winning_outcome, resolved_at, resolved_by, notify_base, notify_first)
	SELECT $2, $3, 1000 + g, 'settled ' || g, 1000, 0, 0, 0, 0, $4::timestamptz, $4::timestamptz + interval '1 day', true, g % 3,
		$4::timestamptz - make_interval(mins => g), 'creator',
		4503599627370496 + 100000000 * g::bigint, 1
	FROM generate_series(1, $5::int / 2) g
	RETURNING id),
others AS (INSERT INTO users (name, created_at) SELECT 'other ' || k, $4::timestamptz FROM generate_series(1, $6::int) k RETURNING id),
holders AS (SELECT $1::bigint AS id UNION ALL SELECT id FROM others)
INSERT INTO positions (user_id, market_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at)
SELECT h.id, mk.id, s.side, 1000, 500, 1000, 600, 100, $4::timestamptz - interval '1 day', $4::timestamptz - interval '1 day'
FROM holders h CROSS JOIN mk CROSS JOIN (VALUES (0::smallint), (1::smallint)) s(side)
ORDER BY mk.id, h.id, s.side`, u.ID, m.PoolID, m.EventID, at, n, others)
	if err != nil {
		tb.Fatalf("seed settled positions: %v", err)
	}
	// The notification ids count from each market's first position.
	if _, err := e.store.DB().Exec(e.ctx, `UPDATE markets m SET notify_first = f.first
		FROM (SELECT market_id, min(id) AS first FROM positions GROUP BY market_id) f WHERE f.market_id = m.id AND m.notify_base IS NOT NULL`); err != nil {
		tb.Fatal(err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE positions, markets`); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkProfile10kSettled is BenchmarkProfile10kClosed for a user
// whose 10,000 closed positions were closed by settlements (5,000 markets,
// resolved a minute apart), which reads derive from their markets, among
// 100,000 such positions of ten users; and the user's notifications, one
// per settled market.
func BenchmarkProfile10kSettled(b *testing.B) {
	e := newEnv(b)
	ev, _ := e.event(0.02, 100_000, 0.5, 0.5, 0.5, 0.5, 0.5)
	ms := ev.Pools[0].Markets
	u := e.user("profile", 1_000_000)
	for _, m := range ms {
		if _, err := e.buy(u, m, market.Yes, 1000); err != nil {
			b.Fatal(err)
		}
	}
	seedSettledPositions(b, e, u, ms[0], 10_000, 9)
	if page, err := e.markets.ClosedPositions(e.ctx, u.ID, market.ClosedInProfile, 0); err != nil || len(page.Positions) != market.ClosedInProfile || !page.HasMore {
		b.Fatalf("closed page: %v", err)
	}
	if st, err := e.markets.Stats(e.ctx, u.ID); err != nil || st.TotalPredictions != 10_000 {
		b.Fatalf("stats %+v, %v", st, err)
	}
	if open, err := e.markets.OpenPositions(e.ctx, u.ID); err != nil || len(open) != len(ms) {
		b.Fatalf("open positions %d, %v", len(open), err)
	}
	if ns, err := e.store.Notifications(e.ctx, u.ID, true, 100, 0); err != nil || len(ns) != 100 || ns[0].Type != "trade_executed" || ns[len(ns)-1].Type != "market_resolved" {
		b.Fatalf("unread notifications %d, %v", len(ns), err)
	}
	reads := []struct {
		name string
		read func() error
	}{
		{"open positions", func() error { _, err := e.markets.OpenPositions(e.ctx, u.ID); return err }},
		{"closed positions, first page", func() error {
			_, err := e.markets.ClosedPositions(e.ctx, u.ID, market.ClosedInProfile, 0)
			return err
		}},
		{"stats", func() error { _, err := e.markets.Stats(e.ctx, u.ID); return err }},
		{"unread notifications", func() error { _, err := e.store.Notifications(e.ctx, u.ID, true, 100, 0); return err }},
	}
	for _, r := range reads {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				if err := r.read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChangeLogCost measures what the change log costs a hot
// market's batch: each iteration writes one batch of 64 buys on one
// market with its change-log entries and one without, alternately, and
// reports the rate of each and their ratio. Alternating in one run makes
// the ratio hold on a busy machine, where two runs apart would differ by
// more than the log costs.
func BenchmarkChangeLogCost(b *testing.B) {
	const size = 64
	e := newEnv(b)
	ev, _ := e.event(0.02, 1_000_000_000, 0.5)
	m := ev.Pools[0].Markets[0]
	reqs := make([]market.Request, size)
	for i := range reqs {
		u := e.user("bench", 1_000_000_000_000)
		reqs[i] = market.Request{UserID: u.ID, Side: market.Side(i % 2), Action: market.ActionBuy, Amount: 1000}
	}
	locks := []market.Lock{market.LockFor(m.ID, reqs)}
	batch := func() {
		if _, err := e.store.ExecMarkets(e.ctx, locks, func(sts []*market.State) ([]*market.Effects, error) {
			return market.DecideMarkets(sts, [][]market.Request{reqs})
		}); err != nil {
			b.Fatal(err)
		}
	}
	var logged, unlogged time.Duration
	b.ResetTimer()
	for i := range b.N {
		// Which goes first alternates too.
		for j := range 2 {
			off := (i+j)%2 == 1
			postgres.SetUnloggedTrades(e.store, off)
			start := time.Now()
			batch()
			if off {
				unlogged += time.Since(start)
			} else {
				logged += time.Since(start)
			}
		}
	}
	postgres.SetUnloggedTrades(e.store, false)
	b.ReportMetric(float64(b.N*size)/logged.Seconds(), "logged-trades/s")
	b.ReportMetric(float64(b.N*size)/unlogged.Seconds(), "unlogged-trades/s")
	b.ReportMetric(unlogged.Seconds()/logged.Seconds(), "ratio")
}
