-- Token deposits (docs/deposits.md): each chain's watcher records the
-- token transfers to users' addresses as pending deposits, keyed by
-- (chain, transaction, log index) so that a log read twice is one
-- deposit, and credits each once, when it has its confirmations, from
-- the chain's 'deposits' ledger account. deposit_cursors is how far each
-- chain has been read; deposit_blocks the hashes of the recent blocks
-- read, by which a reorganisation is noticed.

-- +goose Up

CREATE TABLE deposits (
    id                     bigserial PRIMARY KEY,
    user_id                bigint      NOT NULL REFERENCES users (id),
    chain                  text        NOT NULL,
    tx_hash                text        NOT NULL,
    log_index              bigint      NOT NULL CHECK (log_index >= 0),
    block_number           bigint      NOT NULL CHECK (block_number >= 0),
    block_hash             text        NOT NULL,
    address                text        NOT NULL,
    -- The amount in the token's smallest units: a uint256.
    units                  numeric(78, 0) NOT NULL CHECK (units >= 0),
    decimals               integer     NOT NULL CHECK (decimals >= 0),
    amount_kopecks         bigint      NOT NULL CHECK (amount_kopecks >= 0),
    confirmations_required integer     NOT NULL CHECK (confirmations_required >= 1),
    status                 text        NOT NULL CHECK (status IN ('pending', 'credited')),
    created_at             timestamptz NOT NULL,
    credited_at            timestamptz,
    CONSTRAINT deposits_chain_tx_log_key UNIQUE (chain, tx_hash, log_index),
    CONSTRAINT deposits_credited_check CHECK ((status = 'credited') = (credited_at IS NOT NULL))
);

-- A user's deposits, newest first; a chain's pending ones, oldest first.
CREATE INDEX deposits_user_idx ON deposits (user_id, id DESC);
CREATE INDEX deposits_pending_idx ON deposits (chain, block_number, id) WHERE status = 'pending';

CREATE TABLE deposit_cursors (
    chain      text PRIMARY KEY,
    next_block bigint NOT NULL CHECK (next_block >= 0),
    head       bigint NOT NULL CHECK (head >= 0)
);

CREATE TABLE deposit_blocks (
    chain  text   NOT NULL,
    number bigint NOT NULL,
    hash   text   NOT NULL,
    PRIMARY KEY (chain, number)
);

-- A chain's deposits account is the outside world of that chain: minus
-- what its deposits brought in (account.Kind.MayGoNegative).
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_balance_check,
    ADD CONSTRAINT ledger_accounts_balance_check CHECK (balance >= 0 OR kind IN ('external', 'platform_treasury', 'deposits'));

-- +goose Down

ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_balance_check,
    ADD CONSTRAINT ledger_accounts_balance_check CHECK (balance >= 0 OR kind IN ('external', 'platform_treasury'));
DROP TABLE deposit_blocks;
DROP TABLE deposit_cursors;
DROP TABLE deposits;
