-- Reads of positions that settlements closed without writing them
-- (migration 00015) take them from their markets:
--
-- * positions_open_key includes the position's id, so that the closed
--   feed lists a user's positions on a market, and the settled ones in
--   all, from the index alone: the id never changes, so a trade still
--   updates its position in place (a heap-only update) when it can.
-- * markets_resolved_idx lists the resolved markets most recently
--   resolved first, the order of the closed feed: a page walks the newest
--   markets and the user's positions on each, and stops when it is full.

-- +goose Up

CREATE UNIQUE INDEX positions_open_id_key ON positions (user_id, market_id, side) INCLUDE (id) WHERE closed_at IS NULL;
DROP INDEX positions_open_key;
ALTER INDEX positions_open_id_key RENAME TO positions_open_key;

CREATE INDEX markets_resolved_idx ON markets (resolved_at DESC, id DESC) WHERE resolved;
CREATE INDEX markets_open_idx ON markets (id) WHERE NOT resolved;

-- +goose Down

DROP INDEX markets_open_idx;
DROP INDEX markets_resolved_idx;

CREATE UNIQUE INDEX positions_open_plain_key ON positions (user_id, market_id, side) WHERE closed_at IS NULL;
DROP INDEX positions_open_key;
ALTER INDEX positions_open_plain_key RENAME TO positions_open_key;
