-- Personal API keys, and the index of a user's own trade history.
--
-- A key is kept as the SHA-256 of its secret, like an access token, with
-- the scopes it was given. Every server caches the keys it looked up
-- (account.Service.CacheAuth), so a revoked key must reach every server at
-- once: deleting a key (or its user, which deletes it) announces its hash
-- on predictkit_auth exactly as a revoked access token is announced
-- ("<schema>:t:<hash, hex>"). Recording a key's use (last_used_at) is no
-- change of what it authenticates and is not announced.
--
-- GET /api/v1/users/me/trades walks a user's trades newest first by id,
-- a page at a time from a cursor id: (user_id, id) serves it with an
-- index range scan whose cost does not grow with the user's history. It
-- replaces trades_user_id_idx, whose every use it also serves. Building it
-- blocks writes to trades for as long as the build takes: on a large
-- table, apply this migration in a quiet moment.

-- +goose Up

CREATE TABLE api_keys (
    id           bigserial   PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    hash         bytea       NOT NULL UNIQUE,
    name         text        NOT NULL,
    scopes       text[]      NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'trade']),
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz
);

CREATE INDEX api_keys_user_id_idx ON api_keys (user_id, id);

-- +goose StatementBegin
CREATE FUNCTION notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('predictkit_auth', TG_TABLE_SCHEMA || ':t:' || encode(OLD.hash, 'hex'));
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER api_keys_auth_delete AFTER DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();
CREATE TRIGGER api_keys_auth_change AFTER UPDATE ON api_keys
    FOR EACH ROW WHEN (OLD.hash IS DISTINCT FROM NEW.hash OR OLD.user_id IS DISTINCT FROM NEW.user_id
        OR OLD.scopes IS DISTINCT FROM NEW.scopes)
    EXECUTE FUNCTION notify_api_key_change();

CREATE INDEX trades_user_id_id_idx ON trades (user_id, id);
DROP INDEX trades_user_id_idx;

-- +goose Down

CREATE INDEX trades_user_id_idx ON trades (user_id);
DROP INDEX trades_user_id_id_idx;
DROP TABLE api_keys;
DROP FUNCTION notify_api_key_change();
