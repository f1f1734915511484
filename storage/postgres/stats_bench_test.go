package postgres_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/stats"
	"github.com/predictkit/predictkit/storage/postgres"
)

// seedStatsYear gives the store a year of history before end, with
// set-based SQL rather than the money path: users registering through
// the year (counted by the migration's trigger), n trades among them on
// markets, and a credited deposit and a paid withdrawal a few times a day.
func seedStatsYear(tb testing.TB, e *env, markets []int64, users, n int, end time.Time) {
	tb.Helper()
	start := time.Now()
	db := e.store.DB()
	ids := "ARRAY[" + joinInts(markets) + "]::bigint[]"
	year := `$1::timestamptz - make_interval(secs => (g::float8 / %d) * 365 * 86400)`
	steps := []struct{ what, sql string }{
		{"users", `INSERT INTO users (name, created_at) SELECT 'trader ' || g, ` + fmt.Sprintf(year, users) + ` FROM generate_series(1, ` + fmt.Sprint(users) + `) g`},
		// Traders drawn with a skew (a few trade a lot), times spread
		// evenly over the year, every third trade a sale.
		{"trades", `INSERT INTO trades (market_id, user_id, side, action, shares, amount, cost, fee, price_before, price_after, q_yes, q_no, created_at)
			SELECT (` + ids + `)[1 + u.g % ` + fmt.Sprint(len(markets)) + `], u.id, u.id % 2, CASE WHEN u.g % 3 = 0 THEN 'sell' ELSE 'buy' END,
				100 + u.g % 50, 1000 + u.g % 5000, 980 + u.g % 4900, 20 + u.g % 100, 0.5, 0.5, 0, 0,
				` + fmt.Sprintf(year, n) + `
			FROM (SELECT g, lo + floor(power(((g * 7919) % 10007) / 10007.0, 2) * ` + fmt.Sprint(users) + `)::bigint AS id
				FROM generate_series(1::bigint, ` + fmt.Sprint(n) + `) g,
				(SELECT min(id) AS lo FROM users WHERE name LIKE 'trader %') b) u`},
		{"deposits", `INSERT INTO deposits (user_id, chain, tx_hash, log_index, block_number, block_hash, address, units, decimals,
				amount_kopecks, confirmations_required, status, created_at, credited_at)
			SELECT lo + g % 1000, 'bsc', 'seed' || g, 0, g, 'h' || g, 'a', 1000000, 6, 10000 + g % 90000, 1, 'credited',
				` + fmt.Sprintf(year, 2000) + `, ` + fmt.Sprintf(year, 2000) + `
			FROM generate_series(1, 2000) g, (SELECT min(id) AS lo FROM users WHERE name LIKE 'trader %') b`},
		{"withdrawals", `INSERT INTO withdrawals (user_id, chain, address, amount, status, tx_hash, created_at, decided_at)
			SELECT lo + g % 1000, 'ethereum', 'a', 5000 + g % 50000, 'paid', 'tx' || g, ` + fmt.Sprintf(year, 1000) + `, ` + fmt.Sprintf(year, 1000) + `
			FROM generate_series(1, 1000) g, (SELECT min(id) AS lo FROM users WHERE name LIKE 'trader %') b`},
		{"analyze", `ANALYZE users, trades, deposits, withdrawals`},
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
	tb.Logf("seeded %d users and %d trades over a year in %s", users, n, time.Since(start).Round(time.Millisecond))
}

func joinInts(xs []int64) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(x)
	}
	return s
}

// BenchmarkStatsYear1MTrades reads the statistics of a store with a year
// of history (1,000,000 trades by 50,000 traders on 20 markets, credited
// deposits and paid withdrawals; the aggregates filled by the backfill),
// and measures the consumer applying real trades' entries on top of
// them (entries/s).
func BenchmarkStatsYear1MTrades(b *testing.B) {
	const traders, n = 50_000, 1_000_000
	e := newEnv(b)
	var ms []*market.Market
	var ids []int64
	for range 5 {
		ev, _ := e.event(0.02, 1_000_000, 0.5, 0.5, 0.5, 0.5)
		for _, m := range ev.Pools[0].Markets {
			ms = append(ms, m)
			ids = append(ids, m.ID)
		}
	}
	end := time.Now().UTC().Truncate(time.Microsecond)
	seedStatsYear(b, e, ids, traders, n, end)

	start := time.Now()
	if _, err := e.store.ApplyStats(e.ctx, 1000); err != nil { // the first apply backfills
		b.Fatal(err)
	}
	var days, marketDays int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT (SELECT count(*) FROM stats_days), (SELECT count(*) FROM stats_market_days)`).Scan(&days, &marketDays); err != nil {
		b.Fatal(err)
	}
	b.Logf("backfill: %d days, %d market days in %s", days, marketDays, time.Since(start).Round(time.Millisecond))
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE stats_days, stats_signups, stats_market_days, stats_state`); err != nil {
		b.Fatal(err)
	}

	svc := stats.NewService(e.store)
	to := end.Format(stats.DateLayout)
	from := end.AddDate(0, 0, -364).Format(stats.DateLayout)
	b.Run("daily over 365 days", func(b *testing.B) {
		for b.Loop() {
			ds, err := svc.Daily(e.ctx, from, to)
			if err != nil || len(ds) != 365 || ds[364].Trades == 0 {
				b.Fatalf("%d days, %v", len(ds), err)
			}
		}
	})
	// What the aggregates save: the days' trade figures summed from the
	// trades themselves, once.
	scan := time.Now()
	var rows int
	err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM (
		SELECT (created_at AT TIME ZONE 'UTC')::date, sum(cost), sum(fee), count(*), count(DISTINCT user_id)
		FROM trades WHERE created_at >= $1::date GROUP BY 1) d`, from).Scan(&rows)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("the days' trade figures summed from the trades instead: %d days in %s", rows, time.Since(scan).Round(time.Millisecond))

	b.Run("overview", func(b *testing.B) {
		for b.Loop() {
			o, err := svc.Overview(e.ctx)
			if err != nil || o.Totals.Trades != n || len(o.TopMarkets) == 0 {
				b.Fatalf("%+v, %v", o.Totals, err)
			}
		}
	})

	b.Run("apply the entries of real trades", func(b *testing.B) {
		// 2,000 trades through the money path, by 200 traders on four
		// markets at once (group commit): about 8,000 entries.
		var us []*account.User
		for i := range 200 {
			us = append(us, e.user(fmt.Sprint("live", i), 10_000_000))
		}
		from, err := e.store.StatsCursor(e.ctx)
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for i, u := range us {
			wg.Go(func() {
				for j := range 10 {
					m := ms[(i+j)%4]
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
			if _, err := e.store.DB().Exec(e.ctx, `UPDATE change_consumers SET after = $1 WHERE name = $2`, from, postgres.StatsConsumer); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			applied := 0
			for {
				k, err := e.store.ApplyStats(e.ctx, 1000)
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
