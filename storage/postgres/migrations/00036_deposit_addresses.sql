-- The address book (docs/deposit-addresses.md): every deposit address
-- ever given to a user, derived from the operator's extended public keys.
-- The users' current addresses are on the profile (users.ethereum_address,
-- bsc_address, polygon_address, tron_address); the book also keeps those
-- of keys since replaced, so that money sent to them is still credited.
--
-- The primary key (family, address) finds the owners of the addresses a
-- block's transfers went to (one = ANY look-up, an index scan per
-- address); deposit_addresses_user_idx lists a user's addresses. address
-- is in one canonical form (EIP-55 hex, TRON base58check), so that an
-- address is never in the book twice.

-- +goose Up

CREATE TABLE deposit_addresses (
    family      text        NOT NULL CHECK (family IN ('evm', 'tron')),
    address     text        NOT NULL CHECK (address <> ''),
    user_id     bigint      NOT NULL REFERENCES users (id),
    fingerprint text        NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (family, address)
);

CREATE INDEX deposit_addresses_user_idx ON deposit_addresses (user_id, family, fingerprint);

-- +goose Down

DROP TABLE deposit_addresses;
