-- The statistics (docs/statistics.md): aggregates per UTC day, applied
-- from the change log by a consumer (storage/postgres/stats.go, cursor
-- "stats" in change_consumers, moved in the transaction that applies),
-- so that a year of days is read from a few hundred rows, never from the
-- trades.
--
-- * stats_days: a day's figures. open_interest is the day's change of
--   it (buys' cost, less sells' payouts, less a market's running figure
--   on the day it resolves); the end-of-day figure is the sum of the
--   changes up to that day, summed when read.
-- * stats_day_traders: who traded on a day, so that a trader is counted
--   once per day; stats_traders: who ever traded.
-- * stats_markets: a market's running open interest, and whether it has
--   left with the market's resolution; stats_market_days: a market's
--   volume and trades per day (the top markets).
-- * stats_signups: registrations per day, counted by a trigger in the
--   transaction that inserts the user, not by the consumer: a
--   registration writes no change-log entry. Partner sub-accounts (a
--   partner_id) are no registrations. The days before this migration are
--   counted here from the users table.
-- * stats_state: one row, how many distinct traders stats_traders holds.

-- +goose Up

CREATE TABLE stats_days (
    day           date   PRIMARY KEY,
    volume        bigint NOT NULL DEFAULT 0,
    fees          bigint NOT NULL DEFAULT 0,
    trades        bigint NOT NULL DEFAULT 0,
    active_traders bigint NOT NULL DEFAULT 0,
    deposits      bigint NOT NULL DEFAULT 0,
    withdrawals   bigint NOT NULL DEFAULT 0,
    open_interest bigint NOT NULL DEFAULT 0
);

CREATE TABLE stats_day_traders (
    day     date   NOT NULL,
    user_id bigint NOT NULL,
    PRIMARY KEY (day, user_id)
);

CREATE TABLE stats_traders (
    user_id bigint PRIMARY KEY
);

CREATE TABLE stats_markets (
    market_id     bigint  PRIMARY KEY,
    open_interest bigint  NOT NULL DEFAULT 0,
    resolved      boolean NOT NULL DEFAULT false
);

CREATE TABLE stats_market_days (
    day       date   NOT NULL,
    market_id bigint NOT NULL,
    volume    bigint NOT NULL DEFAULT 0,
    trades    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (day, market_id)
);

CREATE TABLE stats_signups (
    day   date   PRIMARY KEY,
    users bigint NOT NULL CHECK (users >= 0)
);

CREATE TABLE stats_state (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    traders  bigint  NOT NULL DEFAULT 0
);
INSERT INTO stats_state DEFAULT VALUES;

-- +goose StatementBegin
CREATE FUNCTION stats_count_signup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stats_signups AS s (day, users) VALUES ((NEW.created_at AT TIME ZONE 'UTC')::date, 1)
    ON CONFLICT (day) DO UPDATE SET users = s.users + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER users_stats_signup AFTER INSERT ON users
    FOR EACH ROW WHEN (NEW.partner_id IS NULL) EXECUTE FUNCTION stats_count_signup();

INSERT INTO stats_signups (day, users)
SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM users WHERE partner_id IS NULL GROUP BY 1;

-- +goose Down

DROP TRIGGER users_stats_signup ON users;
DROP FUNCTION stats_count_signup();
DROP TABLE stats_state;
DROP TABLE stats_signups;
DROP TABLE stats_market_days;
DROP TABLE stats_markets;
DROP TABLE stats_traders;
DROP TABLE stats_day_traders;
DROP TABLE stats_days;
DELETE FROM change_consumers WHERE name = 'stats';
