-- Performance: the profile's closed-position figures (count and biggest
-- win, GET /api/v1/auth/me) read only the index. A user with 10,000
-- closed positions otherwise costs 10,000 heap visits per profile; with
-- returned and spent in the index it costs the index pages (index-only
-- scan, once autovacuum has marked the heap pages all-visible). The index
-- keeps its name and key, so the closed-positions page walks it as before.
-- Rebuilding it blocks writes to positions for as long as the build takes:
-- on a large table, apply this migration in a quiet moment.

-- +goose Up

DROP INDEX positions_user_closed_idx;
CREATE INDEX positions_user_closed_idx ON positions (user_id, closed_at DESC, id DESC)
    INCLUDE (returned, spent) WHERE closed_at IS NOT NULL;

-- +goose Down

DROP INDEX positions_user_closed_idx;
CREATE INDEX positions_user_closed_idx ON positions (user_id, closed_at DESC, id DESC) WHERE closed_at IS NOT NULL;
