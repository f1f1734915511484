-- Price candles (GET /api/v1/markets/{id}/candles). A market with a
-- million trades cannot group its price points on every request, so each
-- write of trades also merges its price points into a rolled-up candle
-- per market, interval and start, in the same transaction (one upsert per
-- write): width_seconds 60, 300, 3600 and 86400, the API's intervals, so
-- that a request reads at most the 1500 candles it answers. Intervals
-- start on multiples of their width since the Unix epoch, in UTC.
--
-- open and close are the prices of the earliest and latest point by time
-- (open_at, close_at), ties going by the order the points were recorded
-- (price_points.id). volume (kopecks, what buyers paid and sellers
-- received) and trades count the trades on the market itself; a point
-- that a trade on another market of an exclusive pool moved counts only
-- toward the prices.
--
-- The Up backfills the candles of the points recorded before it, in one
-- statement: on a large price_points table it takes a while (about a
-- minute per million points), and trades wait for it.

-- +goose Up

CREATE TABLE candles (
    market_id     bigint           NOT NULL REFERENCES markets (id),
    width_seconds integer          NOT NULL CHECK (width_seconds > 0),
    start         timestamptz      NOT NULL,
    open          double precision NOT NULL,
    high          double precision NOT NULL,
    low           double precision NOT NULL,
    close         double precision NOT NULL,
    open_at       timestamptz      NOT NULL,
    close_at      timestamptz      NOT NULL,
    volume        bigint           NOT NULL,
    trades        bigint           NOT NULL,
    PRIMARY KEY (market_id, width_seconds, start)
) WITH (fillfactor = 90);

INSERT INTO candles (market_id, width_seconds, start, open, high, low, close, open_at, close_at, volume, trades)
SELECT p.market_id, w.width, date_bin(make_interval(secs => w.width), p.at, TIMESTAMPTZ 'epoch'),
    (array_agg(p.yes_probability ORDER BY p.at, p.id))[1],
    max(p.yes_probability),
    min(p.yes_probability),
    (array_agg(p.yes_probability ORDER BY p.at DESC, p.id DESC))[1],
    min(p.at),
    max(p.at),
    COALESCE(sum(t.amount), 0),
    count(t.id)
FROM price_points p
CROSS JOIN (VALUES (60), (300), (3600), (86400)) AS w(width)
LEFT JOIN trades t ON t.id = p.trade_id AND t.market_id = p.market_id
GROUP BY 1, 2, 3;

-- +goose Down

DROP TABLE candles;
