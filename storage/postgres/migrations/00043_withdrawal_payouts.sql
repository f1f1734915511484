-- One token transfer pays one withdrawal: a payout's transaction hash is
-- recorded once per chain, so that an operator who pastes the same hash
-- twice is refused (409 tx_hash_used) instead of marking an unpaid
-- withdrawal paid. Should a database already hold such a pair, this
-- migration fails and names it; the operator decides which one was
-- really paid before going on.

-- +goose Up

CREATE UNIQUE INDEX withdrawals_chain_tx_hash ON withdrawals (chain, tx_hash) WHERE tx_hash <> '';

-- +goose Down

DROP INDEX withdrawals_chain_tx_hash;
