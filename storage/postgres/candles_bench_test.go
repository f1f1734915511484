package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// seedHotMarket gives market m n trades (and their price points) by user
// u, one every period up to end, with set-based SQL rather than n trades
// through the money path, and rolls their points up into candles as the
// candles migration does for points recorded before it.
func seedHotMarket(tb testing.TB, e *env, marketID, userID int64, n int, period time.Duration, end time.Time) {
	tb.Helper()
	start := time.Now()
	_, err := e.store.DB().Exec(e.ctx, `WITH t AS (
	INSERT INTO trades (market_id, user_id, side, action, shares, amount, cost, fee, price_before, price_after, q_yes, q_no, created_at)
	SELECT $1, $2, g % 2, 'buy', 100 + g % 50, 1000 + g % 500, 980 + g % 490, 20 + g % 10,
		0.5 + 0.4 * sin((g - 1) / 997.0), 0.5 + 0.4 * sin(g / 997.0), g, 0,
		$3::timestamptz - make_interval(secs => ($4 - g) * $5::float8)
	FROM generate_series(1, $4::int) g
	ORDER BY g
	RETURNING id, market_id, created_at, price_after, q_yes, q_no
)
INSERT INTO price_points (market_id, trade_id, at, yes_probability, q_yes, q_no)
SELECT market_id, id, created_at, price_after, q_yes, q_no FROM t ORDER BY id`,
		marketID, userID, end, n, period.Seconds())
	if err != nil {
		tb.Fatalf("seed trades: %v", err)
	}
	_, err = e.store.DB().Exec(e.ctx, `INSERT INTO candles (market_id, width_seconds, start, open, high, low, close, open_at, close_at, volume, trades)
SELECT p.market_id, w.width, date_bin(make_interval(secs => w.width), p.at, TIMESTAMPTZ 'epoch'),
	(array_agg(p.yes_probability ORDER BY p.at, p.id))[1], max(p.yes_probability), min(p.yes_probability),
	(array_agg(p.yes_probability ORDER BY p.at DESC, p.id DESC))[1], min(p.at), max(p.at),
	COALESCE(sum(t.amount), 0), count(t.id)
FROM price_points p
CROSS JOIN (VALUES (60), (300), (3600), (86400)) AS w(width)
LEFT JOIN trades t ON t.id = p.trade_id AND t.market_id = p.market_id
WHERE p.market_id = $1
GROUP BY 1, 2, 3`, marketID)
	if err != nil {
		tb.Fatalf("roll up candles: %v", err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE trades, price_points, candles`); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("seeded %d trades in %s", n, time.Since(start).Round(time.Millisecond))
}

// BenchmarkCandles1MTrades reads the candles of a market with 1,000,000
// trades over a year (one every 31.5 s): each of the API's default
// windows, and, for comparison, the 1d candles grouped from the price
// points on every request, which is what the rolled-up candles save.
func BenchmarkCandles1MTrades(b *testing.B) {
	const n = 1_000_000
	e := newEnv(b)
	ev, _ := e.event(0.02, 1_000_000, 0.5)
	m := ev.Pools[0].Markets[0]
	u := e.user("whale", 0)
	end := time.Now().UTC().Truncate(time.Microsecond)
	seedHotMarket(b, e, m.ID, u.ID, n, 365*24*time.Hour/n, end)
	// The windows end where the trades do, however long seeding took.
	e.markets.Now = func() time.Time { return end }

	for _, c := range []struct {
		name     string
		interval string
		// min is the fewest candles the window must hold.
		min int
	}{
		{"1d candles over all time", "1d", 365},
		{"1h candles over the last 30 days", "1h", 30 * 24},
		{"5m candles over the last 7 days", "5m", market.MaxCandles},
		{"1m candles over the last 24 hours", "1m", 24 * 60},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := market.CandleQuery{Interval: c.interval}
			cs, err := e.markets.Candles(e.ctx, m.ID, q)
			if err != nil {
				b.Fatal(err)
			}
			if len(cs) < c.min {
				b.Fatalf("%d candles, want at least %d", len(cs), c.min)
			}
			for b.Loop() {
				if _, err := e.markets.Candles(e.ctx, m.ID, q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(cs)), "candles")
		})
	}
	b.Run("1d candles over all time grouped from the price points (no rollup)", func(b *testing.B) {
		const q = `SELECT date_bin('1 day', at, TIMESTAMPTZ 'epoch') AS t,
			(array_agg(yes_probability ORDER BY at, id))[1], max(yes_probability), min(yes_probability),
			(array_agg(yes_probability ORDER BY at DESC, id DESC))[1]
			FROM price_points WHERE market_id = $1 GROUP BY 1 ORDER BY 1`
		for b.Loop() {
			rows, err := e.store.DB().Query(e.ctx, q, m.ID)
			if err != nil {
				b.Fatal(err)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCandleRollupWrite measures what rolling the candles up adds to
// a hot market's writes: a group-commit batch of 64 trades on one market
// (as BenchmarkBatch), the candle upsert such a batch adds, alone in a
// transaction that is rolled back (what it costs the server, without a
// commit), and, to subtract, the same transaction with nothing in it.
func BenchmarkCandleRollupWrite(b *testing.B) {
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
	batch := func() []*market.Effects {
		effs, err := e.store.ExecMarkets(e.ctx, locks, func(sts []*market.State) ([]*market.Effects, error) {
			return market.DecideMarkets(sts, [][]market.Request{reqs})
		})
		if err != nil {
			b.Fatal(err)
		}
		return effs
	}
	tes := batch()[0].Trades
	ids := make([]int64, len(tes))
	for i := range ids {
		ids[i] = m.ID
	}
	conn, err := e.store.DB().Acquire(e.ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Release()
	rolledBack := func(queue func(*pgx.Batch)) {
		bt := &pgx.Batch{}
		bt.Queue(`BEGIN`)
		queue(bt)
		bt.Queue(`ROLLBACK`)
		if err := conn.SendBatch(e.ctx, bt).Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("a batch of 64 trades on one market", func(b *testing.B) {
		for b.Loop() {
			batch()
		}
		b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "trades/s")
	})
	b.Run("its candle upsert in a rolled-back transaction", func(b *testing.B) {
		for b.Loop() {
			rolledBack(func(bt *pgx.Batch) { postgres.QueueCandles(bt, tes, ids, time.Now()) })
		}
	})
	b.Run("an empty rolled-back transaction", func(b *testing.B) {
		for b.Loop() {
			rolledBack(func(bt *pgx.Batch) { bt.Queue(`SELECT 1`) })
		}
	})
}
