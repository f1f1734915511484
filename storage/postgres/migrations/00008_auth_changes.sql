-- Auth changes: every server keeps recent token look-ups in memory
-- (account.Service.CacheAuth), so a revoked token or a changed user must
-- reach every server at once, whichever of them (or whoever, by SQL) made
-- the change. These triggers announce each committed change on the
-- channel predictkit_auth (NOTIFY is delivered at commit, and not at all
-- on rollback); the payload names the schema, so that servers on other
-- schemas of the same database ignore it: "<schema>:t:<token hash, hex>"
-- or "<schema>:u:<user id>".

-- +goose Up

-- +goose StatementBegin
CREATE FUNCTION notify_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'access_tokens' THEN
        PERFORM pg_notify('predictkit_auth', TG_TABLE_SCHEMA || ':t:' || encode(OLD.hash, 'hex'));
    ELSE
        PERFORM pg_notify('predictkit_auth', TG_TABLE_SCHEMA || ':u:' || OLD.id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- A deleted user's tokens go with it (ON DELETE CASCADE), which the token
-- trigger announces.
CREATE TRIGGER access_tokens_auth_change AFTER UPDATE OR DELETE ON access_tokens
    FOR EACH ROW EXECUTE FUNCTION notify_auth_change();
CREATE TRIGGER users_auth_change AFTER UPDATE ON users
    FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION notify_auth_change();

-- +goose Down

DROP TRIGGER users_auth_change ON users;
DROP TRIGGER access_tokens_auth_change ON access_tokens;
DROP FUNCTION notify_auth_change();
