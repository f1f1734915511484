-- A trade updates its open position in place (a heap-only update, HOT),
-- which migration 00025 meant to allow but 00007 prevented:
-- PostgreSQL updates a row in place only if no indexed column changes,
-- and positions_user_closed_idx included returned and spent, which every
-- trade changes, even though the index holds only closed positions. So
-- every trade wrote a new row version into all six indexes of
-- positions, and a hot market's positions bloated with dead versions.
--
-- * closed_pnl (returned - spent once the position is closed, NULL while
--   it is open) is what the profile's closed-position figures read; it
--   does not change while a position is open, so the closed index
--   includes it instead, and keeps its index-only scan.
-- * positions leave a tenth of each page free for the updated versions.
--
-- Adding the column rewrites positions, and rebuilding the index blocks
-- writes to it, for as long as each takes: on a large table, apply this
-- migration in a quiet moment.

-- +goose Up

ALTER TABLE positions ADD COLUMN closed_pnl bigint
    GENERATED ALWAYS AS (CASE WHEN closed_at IS NOT NULL THEN returned - spent END) STORED;
DROP INDEX positions_user_closed_idx;
CREATE INDEX positions_user_closed_idx ON positions (user_id, closed_at DESC, id DESC)
    INCLUDE (closed_pnl) WHERE closed_at IS NOT NULL;
ALTER TABLE positions SET (fillfactor = 90);

-- +goose Down

ALTER TABLE positions RESET (fillfactor);
DROP INDEX positions_user_closed_idx;
CREATE INDEX positions_user_closed_idx ON positions (user_id, closed_at DESC, id DESC)
    INCLUDE (returned, spent) WHERE closed_at IS NOT NULL;
ALTER TABLE positions DROP COLUMN closed_pnl;
