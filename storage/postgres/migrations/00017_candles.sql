-- Price candles (GET /api/v1/markets/{id}/candles). A market with a
-- million trades cannot group its price points on every request, so each
-- write of trades also merges its price points into a rolled-up candle
-- per market and interval, in the same transaction: span_seconds 60 (the
-- API's finest interval, from which 5m is built) and 3600 (from which 1h
-- and 1d are built, 24 rows a day instead of 1440). Intervals start on
-- multiples of their width since the Unix epoch, in UTC.
--
-- open and close are the prices of the earliest and latest point by time
-- (open_at, close_at), ties going by the order the points were recorded
-- (price_points.id), so that merging minutes into hours or days gives the
-- candle grouping the points would. volume (kopecks, what buyers paid and
-- sellers received) and trades count the trades on the market itself; a
-- point that a trade on another market of an exclusive pool moved counts
-- only toward the prices.
--
-- The Up backfills the candles of the points recorded before it, in one
-- statement: on a large price_points table it takes a while, and trades
-- wait for it.

-- +goose Up

CREATE TABLE candles (
    market_id    bigint           NOT NULL REFERENCES markets (id),
    span_seconds integer          NOT NULL CHECK (span_seconds > 0),
    start        timestamptz      NOT NULL,
    open         double precision NOT NULL,
    high         double precision NOT NULL,
    low          double precision NOT NULL,
    close        double precision NOT NULL,
    open_at      timestamptz      NOT NULL,
    close_at     timestamptz      NOT NULL,
    volume       bigint           NOT NULL,
    trades       bigint           NOT NULL,
    PRIMARY KEY (market_id, span_seconds, start)
) WITH (fillfactor = 90);

INSERT INTO candles (market_id, span_seconds, start, open, high, low, close, open_at, close_at, volume, trades)
SELECT p.market_id, s.span, date_bin(make_interval(secs => s.span), p.at, TIMESTAMPTZ 'epoch'),
    (array_agg(p.yes_probability ORDER BY p.at, p.id))[1],
    max(p.yes_probability),
    min(p.yes_probability),
    (array_agg(p.yes_probability ORDER BY p.at DESC, p.id DESC))[1],
    min(p.at),
    max(p.at),
    COALESCE(sum(t.amount), 0),
    count(t.id)
FROM price_points p
CROSS JOIN (VALUES (60), (3600)) AS s(span)
LEFT JOIN trades t ON t.id = p.trade_id AND t.market_id = p.market_id
GROUP BY 1, 2, 3;

-- +goose Down

DROP TABLE candles;
