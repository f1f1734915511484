-- A settlement writes a posting and a balance per paid holder, and the
-- market; what it wrote per position and per holder before is now read
-- from the market it resolved:
--
-- * A position the settlement found open keeps its row as it was
--   (closed_at NULL). Its market's resolved, winning_outcome and
--   resolved_at close it when read: closed at resolved_at, won_side the
--   market's winning_outcome, paid a kopeck a share of the winning side or,
--   for a void (winning_outcome 2), its net cost floored at 0, realized at
--   resolved_at. Rewriting every position (a new row version and three
--   index entries each) was a third of settling a market.
-- * Each holder's market_resolved notification is read from its positions
--   too. Its id is the market's notify_base plus the holder's first
--   position id on the market minus notify_first (the market's first open
--   position id then), so it is fixed, unique and in the order the
--   markets were settled. notification_blocks hands out the ids, from
--   2^52 on, far above the notifications sequence and still exact in a
--   JavaScript number. Marking such a notification read writes it into
--   notifications under that id, read; from then on the row is the
--   notification.
-- * The open positions of a market are indexed with their ids, so that a
--   settlement finds the first and last of them without reading them.
--
-- Positions and notifications settled before this migration were written
-- out, and are read as they were. Going down writes out every derived
-- position and notification, as the older code wrote them.

-- +goose Up

ALTER TABLE markets ADD COLUMN notify_base bigint, ADD COLUMN notify_first bigint;

CREATE TABLE notification_blocks (next bigint NOT NULL);
INSERT INTO notification_blocks (next) VALUES (4503599627370496);

CREATE INDEX positions_market_open_id_idx ON positions (market_id, id) WHERE closed_at IS NULL;
DROP INDEX positions_market_open_idx;
ALTER INDEX positions_market_open_id_idx RENAME TO positions_market_open_idx;

-- +goose Down

INSERT INTO notifications (id, user_id, type, related_id, related_type, data, read, created_at)
SELECT d.id, d.user_id, 'market_resolved', m.event_id, 'event',
    jsonb_strip_nulls(jsonb_build_object('market_name', NULLIF(m.name, ''), 'amount', NULLIF(d.amount, 0),
        'won', CASE m.winning_outcome WHEN 1 THEN 'YES' WHEN 0 THEN 'NO' ELSE 'VOID' END)),
    false, m.resolved_at
FROM (
    SELECT x.user_id, x.market_id, m.notify_base + min(x.id) - m.notify_first AS id,
        sum(CASE WHEN m.winning_outcome = 2 THEN GREATEST(x.spent - x.returned, 0)
            WHEN x.side = m.winning_outcome THEN x.shares ELSE 0 END)::bigint AS amount
    FROM positions x JOIN markets m ON m.id = x.market_id
    WHERE x.closed_at IS NULL AND m.resolved AND m.notify_base IS NOT NULL
    GROUP BY x.user_id, x.market_id, m.notify_base, m.notify_first
) d JOIN markets m ON m.id = d.market_id
WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.id = d.id)
ORDER BY d.id;

UPDATE positions x SET
    returned = LEAST(x.returned::numeric + CASE WHEN m.winning_outcome = 2 THEN GREATEST(x.spent - x.returned, 0)
            WHEN x.side = m.winning_outcome THEN x.shares ELSE 0 END, 9223372036854775807)::bigint,
    settle_pnl = CASE WHEN m.winning_outcome = 2 THEN GREATEST(x.spent - x.returned, 0)
            WHEN x.side = m.winning_outcome THEN x.shares ELSE 0 END - x.cost_basis,
    cost_basis = 0, updated_at = m.resolved_at, closed_at = m.resolved_at, won_side = m.winning_outcome
FROM markets m
WHERE m.id = x.market_id AND x.closed_at IS NULL AND m.resolved;

CREATE INDEX positions_market_open_key_idx ON positions (market_id) WHERE closed_at IS NULL;
DROP INDEX positions_market_open_idx;
ALTER INDEX positions_market_open_key_idx RENAME TO positions_market_open_idx;
DROP TABLE notification_blocks;
ALTER TABLE markets DROP COLUMN notify_base, DROP COLUMN notify_first;
