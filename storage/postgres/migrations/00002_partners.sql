-- Partners: businesses that trade for their own users through platform
-- sub-accounts (users.partner_id, users.external_id) and prepaid floats
-- (ledger accounts of kind partner_float).

-- +goose Up

CREATE TABLE partners (
    id         bigserial PRIMARY KEY,
    name       text        NOT NULL,
    disabled   boolean     NOT NULL DEFAULT false,
    -- Keys are shown once and kept only as hashes.
    key_hash   bytea       NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT partners_key_hash_key UNIQUE (key_hash)
);

ALTER TABLE users ADD CONSTRAINT users_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES partners (id);

-- +goose Down

ALTER TABLE users DROP CONSTRAINT users_partner_id_fkey;
DROP TABLE partners;
