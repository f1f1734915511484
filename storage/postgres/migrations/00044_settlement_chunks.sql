-- A large market settles in chunks of holders, a transaction each, so
-- that its settlement takes a bounded share of the database (see
-- docs/settlement.md). markets.settling says one is under way: the
-- market takes no trade and no second resolution. settlement_progress
-- is where it stands, so that a settlement interrupted between two
-- chunks goes on where it stopped: the outcome, who resolved and when,
-- the accounts that pay and the range of kopecks each one covers
-- (market.Split, decided once at the start), the last holder paid and
-- what was paid so far. positions_market_open_user_idx hands a chunk
-- its holders in ascending user id order.

-- +goose Up

ALTER TABLE markets ADD COLUMN settling boolean NOT NULL DEFAULT false;

CREATE TABLE settlement_progress (
	market_id bigint PRIMARY KEY REFERENCES markets (id),
	outcome smallint NOT NULL CHECK (outcome IN (0, 1, 2)),
	resolved_by text NOT NULL,
	settled_at timestamptz NOT NULL,
	payers bigint[] NOT NULL,
	lo bigint[] NOT NULL,
	hi bigint[] NOT NULL,
	after_holder bigint NOT NULL DEFAULT 0,
	paid bigint NOT NULL DEFAULT 0,
	total bigint NOT NULL,
	chunks integer NOT NULL DEFAULT 0
);

CREATE INDEX positions_market_open_user_idx ON positions (market_id, user_id) WHERE closed_at IS NULL;

-- +goose Down

DROP INDEX positions_market_open_user_idx;
DROP TABLE settlement_progress;
ALTER TABLE markets DROP COLUMN settling;
