package postgres_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

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

// BenchmarkBatch measures one group-commit batch of 64 trades, each by
// its own user, on one market (the hot case) and on 64 markets in one
// ExecMarkets (the spread case), committed one after another. The two
// differ in rows written per batch: one market row and its two ledger
// accounts, or 64 of each.
func BenchmarkBatch(b *testing.B) {
	const size = 64
	for _, c := range []struct{ markets, parallel int }{{1, 1}, {size, 1}, {size, 2}} {
		markets := c.markets
		b.Run(fmt.Sprintf("%d trades on %d markets, %d at once", size, markets, c.parallel), func(b *testing.B) {
			e := newEnv(b)
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

// seedOpenPositions gives market m n open positions (n a multiple of 4)
// in bulk SQL: every four positions are a holder on both sides and two
// holders on one side each, 100 to 998 shares a position, each bought at
// half a kopeck a share. Every holder gets a user account, deposits what
// the positions cost from the outside world and pays it into the escrow
// (two postings), so the ledger balances; the accounts are made in an
// order unrelated to the users' (as sign-ups and first deposits are), so
// a settlement chunk's positions lie all over the table; the market's q
// and volume
// follow. The escrow then holds the subsidy plus what the positions cost,
// which covers either side: the audit holds before and after settlement.
func seedOpenPositions(tb testing.TB, e *env, m *market.Market, n int) {
	tb.Helper()
	if n%4 != 0 {
		tb.Fatalf("seed %d positions: want a multiple of 4", n)
	}
	tx, err := e.store.DB().Begin(e.ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	at := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := tx.Exec(e.ctx, `INSERT INTO ledger_accounts (kind, owner) VALUES ('external', 0) ON CONFLICT DO NOTHING`); err != nil {
		tb.Fatal(err)
	}
	var yes, no, paid int64
	err = tx.QueryRow(e.ctx, `WITH
seq AS (SELECT g AS j, 3 * (g / 4) + CASE WHEN g % 4 = 3 THEN 2 WHEN g % 4 = 2 THEN 1 ELSE 0 END AS k,
		CASE WHEN g % 4 IN (0, 2) THEN 1 ELSE 0 END AS side,
		2 * (50 + (g::bigint * 7919) % 450) AS shares
	FROM generate_series(0, $1::int - 1) g),
new_users AS (
	INSERT INTO users (name, created_at)
	SELECT 'holder ' || k, $2 FROM generate_series(0, 3 * ($1::int / 4) - 1) k ORDER BY k
	RETURNING id),
holders AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM new_users),
accs AS (
	INSERT INTO ledger_accounts (kind, owner) SELECT 'user', id FROM holders ORDER BY md5(id::text)
	RETURNING id, owner),
pos AS (
	INSERT INTO positions (user_id, market_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at)
	SELECT h.id, $3, s.side, s.shares, s.shares / 2, s.shares, s.shares / 2, 0, $2, $2
	FROM seq s JOIN holders h ON h.k = s.k ORDER BY s.j
	RETURNING user_id, side, shares, cost_basis),
per_user AS (SELECT user_id, sum(cost_basis)::bigint AS cost FROM pos GROUP BY user_id),
external AS (SELECT id FROM ledger_accounts WHERE kind = 'external' AND owner = 0),
escrow AS (SELECT id FROM ledger_accounts WHERE kind = 'market_escrow' AND owner = $3),
deposits AS (
	INSERT INTO postings (from_account, to_account, amount, reason, created_at)
	SELECT (SELECT id FROM external), a.id, p.cost, 'deposit', $2 FROM per_user p JOIN accs a ON a.owner = p.user_id),
buys AS (
	INSERT INTO postings (from_account, to_account, amount, reason, created_at)
	SELECT a.id, (SELECT id FROM escrow), p.cost, 'buy', $2 FROM per_user p JOIN accs a ON a.owner = p.user_id)
SELECT COALESCE(sum(shares) FILTER (WHERE side = 1), 0)::bigint, COALESCE(sum(shares) FILTER (WHERE side = 0), 0)::bigint,
	COALESCE(sum(cost_basis), 0)::bigint FROM pos`, n, at, m.ID).Scan(&yes, &no, &paid)
	if err != nil {
		tb.Fatalf("seed positions: %v", err)
	}
	if _, err := tx.Exec(e.ctx, `UPDATE markets SET q_yes = q_yes + $2, q_no = q_no + $3, volume = volume + $4 WHERE id = $1`, m.ID, yes, no, paid); err != nil {
		tb.Fatal(err)
	}
	if _, err := tx.Exec(e.ctx, `UPDATE ledger_accounts SET balance = balance + CASE kind WHEN 'external' THEN -$2::bigint ELSE $2::bigint END
		WHERE (kind = 'external' AND owner = 0) OR (kind = 'market_escrow' AND owner = $1)`, m.ID, paid); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(e.ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `ANALYZE users, ledger_accounts, positions, postings`); err != nil {
		tb.Fatal(err)
	}
}

// heapPeak samples the Go heap every few milliseconds until stop is
// called, which returns the largest growth over the heap at the start, in
// bytes.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
			peak.Store(ms.HeapAlloc - base)
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		sample()
		return peak.Load()
	}
}

// benchmarkSettle times market.Service.Close of a market holding n open
// positions, which the PostgreSQL store settles in chunks of
// market.SettleChunkSize inside one transaction. It reports positions
// settled per second and the peak growth of the Go heap while settling,
// which must not grow with n. Run it with -benchtime 1x: every iteration
// seeds a market first.
func benchmarkSettle(b *testing.B, n int) {
	e := newEnv(b)
	var heap uint64
	var settling time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ev, c := e.event(0, 100_000_000, 0.5)
		m := ev.Pools[0].Markets[0]
		seedOpenPositions(b, e, m, n)
		stop := heapPeak()
		start := time.Now()
		b.StartTimer()
		err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES")
		b.StopTimer()
		settling += time.Since(start)
		heap = max(heap, stop())
		if err != nil {
			b.Fatal(err)
		}
		var open int64
		if err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM positions WHERE market_id = $1 AND closed_at IS NULL`, m.ID).Scan(&open); err != nil || open != 0 {
			b.Fatalf("%d positions left open (%v)", open, err)
		}
	}
	e.audit()
	b.ReportMetric(float64(n*b.N)/settling.Seconds(), "positions/s")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
}

// BenchmarkSettle100kPositions: the target is under 10 s, in one
// transaction, with memory flat in the number of positions. Compare
// BenchmarkSettle10kPositions's heap-MB.
func BenchmarkSettle100kPositions(b *testing.B) { benchmarkSettle(b, 100_000) }

// BenchmarkSettle10kPositions is the same with a tenth of the positions.
func BenchmarkSettle10kPositions(b *testing.B) { benchmarkSettle(b, 10_000) }

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
