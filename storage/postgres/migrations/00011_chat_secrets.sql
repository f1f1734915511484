-- The support chat's hardening. A session's secret can be revoked (a
-- logout forgets the secrets of the user's sessions: NULL opens nothing;
-- UNIQUE allows any number of NULLs), and a call for an operator holds
-- the session's escalation while the operator is notified, so that
-- concurrent calls notify once (escalating_until: when the hold ends by
-- itself should its holder never finish).

-- +goose Up

ALTER TABLE chat_sessions ALTER COLUMN secret_hash DROP NOT NULL;
ALTER TABLE chat_sessions ADD COLUMN escalating_until timestamptz;

-- +goose Down

ALTER TABLE chat_sessions DROP COLUMN escalating_until;
-- A revoked secret becomes 9 bytes unique per session, which no SHA-256
-- (32 bytes) equals: it still opens nothing.
UPDATE chat_sessions SET secret_hash = '\x00'::bytea || int8send(id) WHERE secret_hash IS NULL;
ALTER TABLE chat_sessions ALTER COLUMN secret_hash SET NOT NULL;
