-- Withdrawals: a user's request to send part of their balance to an
-- address on a chain. The amount sits in the withdrawal's
-- 'withdrawal_pending' ledger account (owner: the withdrawal's id) from
-- the request until the operator pays it (to the chain's 'withdrawals'
-- account, owner: the chain's number) or rejects it, or the user cancels
-- it (both back to the user). Only a pending withdrawal changes status,
-- once, under its row's lock, in the transaction of its posting.
--
-- withdrawals_user_id serves a user's list (newest first) and the daily
-- limit's sum (the user's withdrawals of the last 24 hours, among the
-- user's own); withdrawals_status_id the operator's lists by status (the
-- queue of pending ones oldest first).

-- +goose Up

CREATE TABLE withdrawals (
    id         bigserial   PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id),
    chain      text        NOT NULL,
    address    text        NOT NULL,
    amount     bigint      NOT NULL CHECK (amount > 0),
    status     text        NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'paid', 'rejected', 'cancelled')),
    tx_hash    text        NOT NULL DEFAULT '',
    reason     text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    decided_at timestamptz,
    CHECK ((status = 'pending') = (decided_at IS NULL)),
    CHECK ((status = 'paid') = (tx_hash <> ''))
);

CREATE INDEX withdrawals_user_id ON withdrawals (user_id, id);
CREATE INDEX withdrawals_status_id ON withdrawals (status, id);

-- +goose Down

DROP TABLE withdrawals;
