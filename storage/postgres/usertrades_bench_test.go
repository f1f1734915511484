package postgres_test

import (
	"fmt"
	"testing"
	"time"
)

// seedUserTrades gives user userID n trades on market marketID, with as
// many by user otherID interleaved, with set-based SQL rather than 2n
// trades through the money path.
func seedUserTrades(tb testing.TB, e *env, marketID, userID, otherID int64, n int) {
	tb.Helper()
	start := time.Now()
	_, err := e.store.DB().Exec(e.ctx, `INSERT INTO trades (market_id, user_id, side, action, shares, amount, cost, fee,
		price_before, price_after, q_yes, q_no, created_at)
	SELECT $1, CASE WHEN g % 2 = 0 THEN $2::bigint ELSE $3::bigint END, g % 2, 'buy', 100, 1000, 980, 20, 0.5, 0.5, g, 0,
		now() - make_interval(secs => 2 * $4::int - g)
	FROM generate_series(1, 2 * $4::int) g ORDER BY g`, marketID, userID, otherID, n)
	if err != nil {
		tb.Fatalf("seed trades: %v", err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE trades`); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("seeded %d trades in %s", 2*n, time.Since(start).Round(time.Millisecond))
}

// BenchmarkUserTrades reads a page of 50 of a user's own trades (GET
// /api/v1/users/me/trades) at the newest end of the history and deep in
// it (the page before the 100 oldest), for users with 1,000 and with
// 300,000 trades, another user's trades interleaved with theirs. The
// page walks trades_user_id_id_idx from the cursor, so its time stays
// the same whatever the depth and length of the history.
func BenchmarkUserTrades(b *testing.B) {
	for _, n := range []int{1_000, 300_000} {
		b.Run(fmt.Sprintf("history of %d trades", n), func(b *testing.B) {
			e := newEnv(b)
			ev, _ := e.event(0.02, 1_000_000, 0.5)
			m := ev.Pools[0].Markets[0]
			u, other := e.user("bot", 0), e.user("other", 0)
			seedUserTrades(b, e, m.ID, u.ID, other.ID, n)
			all, err := e.store.UserTrades(e.ctx, u.ID, 0, n)
			if err != nil || len(all) != n {
				b.Fatalf("%d trades, %v; want %d", len(all), err, n)
			}
			for _, c := range []struct {
				name   string
				before int64
			}{
				{"first page", 0},
				{"deepest pages", all[n-100].ID},
			} {
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						ts, err := e.store.UserTrades(e.ctx, u.ID, c.before, 51)
						if err != nil || len(ts) != 51 {
							b.Fatalf("%d trades, %v", len(ts), err)
						}
					}
				})
			}
		})
	}
}
