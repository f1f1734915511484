-- The change log: every trade, price change, resolution, new comment,
-- notification and balance change, written in the transaction that makes
-- the change, each entry numbered in commit order (streams resume after
-- a number, webhooks deliver from it).
--
-- * change_log: the entries, by seq. No foreign keys: an entry is a
--   record of what was committed, read by seq alone, and pruned by age.
--   data is json, not jsonb, so that it reads back byte for byte as it
--   was written (jsonb would reorder the keys).
-- * change_log_head: one row, the last seq given out. A transaction that
--   writes entries takes the next numbers by updating it as its last
--   statement before COMMIT; the row lock orders those transactions'
--   commits, so seq follows commit order with no holes (a sequence's
--   numbers do not: a transaction that took a smaller one may commit
--   later, and a reader that went past the larger would miss it).
-- * change_log_pruned: one row, the largest seq pruned. A row of its own,
--   so that pruning never waits on or blocks a writer.

-- +goose Up

CREATE TABLE change_log (
    seq       bigint      PRIMARY KEY,
    event_id  bigint      NOT NULL DEFAULT 0,
    pool_id   bigint      NOT NULL DEFAULT 0,
    market_id bigint      NOT NULL DEFAULT 0,
    user_id   bigint      NOT NULL DEFAULT 0,
    at        timestamptz NOT NULL,
    type      text        NOT NULL,
    data      json        NOT NULL
);

CREATE TABLE change_log_head (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    last     bigint  NOT NULL CHECK (last >= 0)
);
INSERT INTO change_log_head (last) VALUES (0);

CREATE TABLE change_log_pruned (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    pruned   bigint  NOT NULL CHECK (pruned >= 0)
);
INSERT INTO change_log_pruned (pruned) VALUES (0);

-- +goose Down

DROP TABLE change_log_pruned;
DROP TABLE change_log_head;
DROP TABLE change_log;
