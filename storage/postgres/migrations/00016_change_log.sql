-- The change log: every trade, price change, resolution, new comment,
-- notification and balance change, written in the transaction that makes
-- the change, each entry numbered in commit order (streams resume after
-- a number, webhooks deliver from it).
--
-- * change_log: one row per transaction, holding its entries first_seq to
--   first_seq + n - 1, column by column: their types, places (event,
--   pool, market, user) and times as arrays, their data (one JSON object
--   each, as written, never parsed here) one after another in data, lens
--   their lengths in bytes. A hot market's transaction writes a few
--   hundred entries (four per trade of its batch): one row instead of
--   hundreds keeps the log's cost on the money path small. data is kept
--   out of line uncompressed (STORAGE EXTERNAL): compressing it would
--   cost the committing transaction more than it saves. No foreign keys:
--   an entry is a record of what was committed, read by seq alone, and
--   pruned by age (at is its latest entry's time).
-- * change_log_head: one row, the last seq given out. A transaction that
--   writes entries takes the next numbers by updating it in its last
--   statement before COMMIT; the row lock orders those transactions'
--   commits, so seq follows commit order with no holes (a sequence's
--   numbers do not: a transaction that took a smaller one may commit
--   later, and a reader that went past the larger would miss it).
-- * change_log_pruned: one row, the largest seq pruned. A row of its own,
--   so that pruning never waits on or blocks a writer.

-- +goose Up

CREATE TABLE change_log (
    first_seq  bigint        PRIMARY KEY CHECK (first_seq > 0),
    n          integer       NOT NULL CHECK (n > 0),
    at         timestamptz   NOT NULL,
    types      text[]        NOT NULL,
    event_ids  bigint[]      NOT NULL,
    pool_ids   bigint[]      NOT NULL,
    market_ids bigint[]      NOT NULL,
    user_ids   bigint[]      NOT NULL,
    ats        timestamptz[] NOT NULL,
    lens       integer[]     NOT NULL,
    data       text          NOT NULL
);
ALTER TABLE change_log ALTER COLUMN data SET STORAGE EXTERNAL;

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
