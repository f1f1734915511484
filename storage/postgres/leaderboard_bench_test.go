package postgres_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/leaderboard"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// seedBoardHistory gives the store users traders and n trades among them
// over the days before end, every third a sale with its realization,
// with set-based SQL rather than n trades through the money path.
func seedBoardHistory(tb testing.TB, e *env, marketID int64, users, n, days int, end time.Time) {
	tb.Helper()
	start := time.Now()
	db := e.store.DB()
	steps := []struct{ what, sql string }{
		{"users", `INSERT INTO users (name, created_at) SELECT 'trader ' || g, $1::timestamptz FROM generate_series(1, ` + fmt.Sprint(users) + `) g`},
		{"positions", `INSERT INTO positions (user_id, market_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at)
			SELECT id, ` + fmt.Sprint(marketID) + `, id % 2, 1000, 1000, 1000, 1000, 0, $1, $1 FROM users WHERE name LIKE 'trader %'`},
		// Users are drawn with a skew (a few trade a lot), times spread
		// evenly over the days.
		{"trades", `INSERT INTO trades (market_id, user_id, side, action, shares, amount, cost, fee, price_before, price_after, q_yes, q_no, created_at)
			SELECT ` + fmt.Sprint(marketID) + `, u.id, u.id % 2, CASE WHEN u.g % 3 = 0 THEN 'sell' ELSE 'buy' END,
				100 + u.g % 50, 1000 + u.g % 5000, 980 + u.g % 4900, 20 + u.g % 100, 0.5, 0.5, 0, 0,
				$1::timestamptz - make_interval(secs => (u.g::float8 / ` + fmt.Sprint(n) + `) * ` + fmt.Sprint(days) + ` * 86400)
			FROM (SELECT g, lo + floor(power(((g * 7919) % 10007) / 10007.0, 2) * ` + fmt.Sprint(users) + `)::bigint AS id
				FROM generate_series(1::bigint, ` + fmt.Sprint(n) + `) g,
				(SELECT min(id) AS lo FROM users WHERE name LIKE 'trader %') b) u`},
		{"pnl events", `INSERT INTO pnl_events (user_id, position_id, at, delta)
			SELECT t.user_id, x.id, t.created_at, (t.id % 2001) - 1000
			FROM trades t JOIN positions x ON x.user_id = t.user_id AND x.market_id = t.market_id
			WHERE t.action = 'sell'`},
		{"analyze", `ANALYZE users, positions, trades, pnl_events`},
	}
	for _, s := range steps {
		var args []any
		if strings.Contains(s.sql, "$1") {
			args = []any{end}
		}
		if _, err := db.Exec(e.ctx, s.sql, args...); err != nil {
			tb.Fatalf("seed %s: %v", s.what, err)
		}
	}
	tb.Logf("seeded %d traders and %d trades in %s", users, n, time.Since(start).Round(time.Millisecond))
}

// BenchmarkLeaderboard1MTrades reads every board of a store with
// 1,000,000 trades by 50,000 traders over 60 days (the buckets filled by
// the backfill), and measures the consumer applying real trades' entries
// on top of them (entries/s).
func BenchmarkLeaderboard1MTrades(b *testing.B) {
	const traders, n, days = 50_000, 1_000_000, 60
	e := newEnv(b)
	ev, _ := e.event(0.02, 1_000_000, 0.5, 0.5, 0.5, 0.5)
	ms := ev.Pools[0].Markets
	end := time.Now().UTC().Truncate(time.Microsecond)
	seedBoardHistory(b, e, ms[0].ID, traders, n, days, end)

	start := time.Now()
	if _, err := e.store.ApplyLeaderboard(e.ctx, 1000); err != nil { // the first apply backfills
		b.Fatal(err)
	}
	var buckets int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM leaderboard_days`).Scan(&buckets); err != nil {
		b.Fatal(err)
	}
	b.Logf("backfill: %d day buckets in %s", buckets, time.Since(start).Round(time.Millisecond))
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE leaderboard_days, leaderboard_totals`); err != nil {
		b.Fatal(err)
	}

	svc := leaderboard.NewService(e.store)
	for _, p := range []leaderboard.Period{leaderboard.AllTime, leaderboard.Month, leaderboard.Week} {
		for _, by := range []leaderboard.By{leaderboard.ByPnL, leaderboard.ByVolume} {
			b.Run(fmt.Sprintf("top 100 of %s by %s", p, by), func(b *testing.B) {
				q := leaderboard.Query{Period: p, By: by, Limit: leaderboard.MaxLimit}
				for b.Loop() {
					es, err := svc.Top(e.ctx, q)
					if err != nil || len(es) != leaderboard.MaxLimit {
						b.Fatalf("%d entries, %v", len(es), err)
					}
				}
			})
		}
	}

	b.Run("apply the entries of real trades", func(b *testing.B) {
		// 2,000 trades through the money path, by 200 traders on four
		// markets at once (group commit): about 8,000 entries.
		var us []*account.User
		for i := range 200 {
			us = append(us, e.user(fmt.Sprint("live", i), 10_000_000))
		}
		from, err := e.store.LeaderboardCursor(e.ctx)
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for i, u := range us {
			wg.Go(func() {
				for j := range 10 {
					m := ms[(i+j)%len(ms)]
					side := market.Yes
					if j%2 == 1 {
						side = market.No
					}
					if _, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: side, Action: market.ActionBuy, Amount: 5_000}); err != nil {
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
			// Back to where the trades start: each turn applies them all
			// again (the figures grow, the work is the same).
			b.StopTimer()
			if _, err := e.store.DB().Exec(e.ctx, `UPDATE change_consumers SET after = $1 WHERE name = $2`, from, postgres.LeaderboardConsumer); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			applied := 0
			for {
				k, err := e.store.ApplyLeaderboard(e.ctx, 1000)
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
