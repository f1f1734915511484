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

-- Summing a period's totals (once a day) reads the buckets of its days.
-- No figure is in the index, so that adding to a bucket is a HOT update.
CREATE INDEX leaderboard_days_day_idx ON leaderboard_days (day);

CREATE TABLE leaderboard_totals (
    user_id bigint PRIMARY KEY,
    pnl     bigint NOT NULL,
    volume  bigint NOT NULL,
    trades  bigint NOT NULL
);

-- The all-time boards walk these from the top.
CREATE INDEX leaderboard_totals_pnl_idx ON leaderboard_totals (pnl DESC, user_id);
CREATE INDEX leaderboard_totals_volume_idx ON leaderboard_totals (volume DESC, user_id);

-- A period's totals, per trader: the buckets of the last 7 or 30 days
-- up to as_of (leaderboard_state) summed, so that "the top 100 of the
-- week" walks an index instead of summing the buckets of every trader
-- of the week. The consumer adds what it applies of those days, and when
-- the UTC day changes it sums them again from the buckets.
CREATE TABLE leaderboard_periods (
    days    smallint NOT NULL CHECK (days IN (7, 30)),
    user_id bigint   NOT NULL,
    pnl     bigint   NOT NULL,
    volume  bigint   NOT NULL,
    trades  bigint   NOT NULL,
    PRIMARY KEY (days, user_id)
);

CREATE INDEX leaderboard_periods_pnl_idx ON leaderboard_periods (days, pnl DESC, user_id);
CREATE INDEX leaderboard_periods_volume_idx ON leaderboard_periods (days, volume DESC, user_id);

-- as_of is the last day of the periods' totals; NULL before they were
-- first summed.
CREATE TABLE leaderboard_state (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    as_of    date
);

INSERT INTO leaderboard_state (as_of) VALUES (NULL);

-- +goose Down

DELETE FROM change_consumers WHERE name = 'leaderboard';
DROP TABLE leaderboard_state;
DROP TABLE leaderboard_periods;
DROP TABLE leaderboard_totals;
DROP TABLE leaderboard_days;
