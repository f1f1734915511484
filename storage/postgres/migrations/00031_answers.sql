-- Answers added later (POST /api/v1/pools/{id}/answers): an exclusive
-- pool may mark one market "other" at creation, and an answer added later
-- takes part of its probability (see docs/answer-split.md).
--
-- * markets.other marks the pool's Other market; at most one per pool,
--   which the partial unique index keeps.
-- * markets.pool_markets is how many markets the market's exclusive pool
--   has, written on every market of the pool when an answer is added
--   (0 for a pool that never had one added: its markets never changed).
--   A trade locks the markets of its pool from a list the service keeps
--   in memory; a trade that finds pool_markets different from the number
--   of markets it locked knows that list is stale and reads it again.

-- +goose Up

ALTER TABLE markets ADD COLUMN other boolean NOT NULL DEFAULT false;
ALTER TABLE markets ADD COLUMN pool_markets integer NOT NULL DEFAULT 0 CHECK (pool_markets >= 0);
CREATE UNIQUE INDEX markets_pool_other_key ON markets (pool_id) WHERE other;

-- Partners with a webhook whose users hold positions in the pool are told
-- of the answer (market.answer_added, one per partner and new market).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_type_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_type_check
    CHECK (type IN ('bet.settled', 'market.resolved', 'market.answer_added'));

-- +goose Down

DELETE FROM webhook_deliveries WHERE type = 'market.answer_added';
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_type_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_type_check
    CHECK (type IN ('bet.settled', 'market.resolved'));
DROP INDEX markets_pool_other_key;
ALTER TABLE markets DROP COLUMN pool_markets;
ALTER TABLE markets DROP COLUMN other;
