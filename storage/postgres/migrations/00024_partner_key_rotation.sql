-- Partner key rotation: a partner's previous key keeps working until
-- old_key_until (the grace period of the rotation), so that the partner
-- can deploy its new key without a gap. One previous key at most: a
-- rotation replaces it. The partners' update trigger (00010) announces
-- the change, so every server forgets the keys it cached.

-- +goose Up

ALTER TABLE partners
    ADD COLUMN old_key_hash  bytea,
    ADD COLUMN old_key_until timestamptz,
    ADD CONSTRAINT partners_old_key_check CHECK ((old_key_hash IS NULL) = (old_key_until IS NULL));

CREATE UNIQUE INDEX partners_old_key_hash_key ON partners (old_key_hash) WHERE old_key_hash IS NOT NULL;

-- +goose Down

DROP INDEX partners_old_key_hash_key;
ALTER TABLE partners
    DROP CONSTRAINT partners_old_key_check,
    DROP COLUMN old_key_until,
    DROP COLUMN old_key_hash;
