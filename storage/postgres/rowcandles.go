package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
)

// sqlUpsertCandles merges a write's rolled-up candles (one row per market,
// interval and start: market.CandleBatch) into the candles table, as
// market.Candle.Merge does: the write holds the row locks of the markets,
// so what it merges was recorded after what the rows hold.
const sqlUpsertCandles = `INSERT INTO candles AS c (market_id, width_seconds, start, open, high, low, close, open_at, close_at, volume, trades)
SELECT * FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::float8[], $5::float8[], $6::float8[], $7::float8[],
	$8::timestamptz[], $9::timestamptz[], $10::bigint[], $11::bigint[])
ON CONFLICT (market_id, width_seconds, start) DO UPDATE SET
	open = CASE WHEN excluded.open_at < c.open_at THEN excluded.open ELSE c.open END,
	open_at = least(c.open_at, excluded.open_at),
	close = CASE WHEN excluded.close_at >= c.close_at THEN excluded.close ELSE c.close END,
	close_at = greatest(c.close_at, excluded.close_at),
	high = greatest(c.high, excluded.high),
	low = least(c.low, excluded.low),
	volume = c.volume + excluded.volume,
	trades = c.trades + excluded.trades`

// sqlCandles reads a market's rolled-up candles of one interval, newest
// first, walking the primary key backwards from $4.
const sqlCandles = `SELECT start, open, high, low, close, open_at, close_at, volume, trades FROM candles
	WHERE market_id = $1 AND width_seconds = $2 AND start >= $3 AND start < $4
	ORDER BY start DESC LIMIT $5`

// queueCandles adds to b the statement that rolls the price points of
// tes up into their candles: one statement per write, whatever its size.
// Like priceArgs, a point that names no market is trade i's, on market
// marketIDs[i], and one without a time is at at.
func queueCandles(b *pgx.Batch, tes []*market.TradeEffect, marketIDs []int64, at time.Time) {
	var cb market.CandleBatch
	when := func(p *market.PricePoint) time.Time {
		if p.At.IsZero() {
			return at
		}
		return dbTime(p.At)
	}
	for i, te := range tes {
		cb.Add(cmpOr(te.Price.MarketID, marketIDs[i]), when(&te.Price), te.Price.YesProbability, te.Trade.Amount, true)
		for j := range te.PoolPrices {
			p := &te.PoolPrices[j]
			cb.Add(p.MarketID, when(p), p.YesProbability, 0, false)
		}
	}
	rows := cb.Rows()
	if len(rows) == 0 {
		return
	}
	n := len(rows)
	mkt, volume, trades := make([]int64, n), make([]int64, n), make([]int64, n)
	width := make([]int32, n)
	start, openAt, closeAt := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	open, high, low, closing := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, r := range rows {
		mkt[i], width[i], start[i] = r.MarketID, int32(r.Width/time.Second), r.Start
		open[i], high[i], low[i], closing[i] = r.Open, r.High, r.Low, r.Close
		openAt[i], closeAt[i] = r.OpenAt, r.CloseAt
		volume[i], trades[i] = r.Volume, r.Trades
	}
	b.Queue(sqlUpsertCandles, mkt, width, start, open, high, low, closing, openAt, closeAt, volume, trades)
}

// Candles implements market.Store.
func (s *Store) Candles(ctx context.Context, marketID int64, width time.Duration, from, to time.Time, limit int) ([]market.Candle, error) {
	rows, err := s.reader(ctx).Query(ctx, sqlCandles, marketID, int32(width/time.Second), from, to, limit)
	if err != nil {
		return nil, translate(err, nil)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (market.Candle, error) {
		var c market.Candle
		err := row.Scan(&c.Start, &c.Open, &c.High, &c.Low, &c.Close, &c.OpenAt, &c.CloseAt, &c.Volume, &c.Trades)
		c.Start, c.OpenAt, c.CloseAt = c.Start.UTC(), c.OpenAt.UTC(), c.CloseAt.UTC()
		return c, err
	})
	if err != nil {
		return nil, translate(err, nil)
	}
	return out, nil
}
