-- The leaderboard's buckets: each user's realized PnL, volume (LMSR cost
-- of buys plus refund of sales, fees not included) and number of trades,
-- per UTC day and in all. They are not written by the trade's
-- transaction: a consumer of the change log (cursor "leaderboard" in
-- change_consumers) applies the entries after its cursor and moves it in
-- the same transaction. The first time it runs it fills the buckets from
-- the trades, PnL events and settled positions already there, in one
-- transaction that sets its cursor to the log's head.

-- +goose Up

CREATE TABLE leaderboard_days (
    user_id bigint NOT NULL,
    day     date   NOT NULL,
    pnl     bigint NOT NULL,
    volume  bigint NOT NULL,
    trades  bigint NOT NULL,
    PRIMARY KEY (user_id, day)
);

-- A period's board sums the buckets of its days, read in day order with
-- their figures in the index.
CREATE INDEX leaderboard_days_day_idx ON leaderboard_days (day) INCLUDE (user_id, pnl, volume, trades);

CREATE TABLE leaderboard_totals (
    user_id bigint PRIMARY KEY,
    pnl     bigint NOT NULL,
    volume  bigint NOT NULL,
    trades  bigint NOT NULL
);

-- The all-time boards walk these from the top.
CREATE INDEX leaderboard_totals_pnl_idx ON leaderboard_totals (pnl DESC, user_id);
CREATE INDEX leaderboard_totals_volume_idx ON leaderboard_totals (volume DESC, user_id);

-- +goose Down

DELETE FROM change_consumers WHERE name = 'leaderboard';
DROP TABLE leaderboard_totals;
DROP TABLE leaderboard_days;
