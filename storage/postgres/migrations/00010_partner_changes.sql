-- Partner changes: every server keeps the partners it looked up by key in
-- memory (partner.Service.CacheKeys), so disabling a partner, or changing
-- its key, must reach every server at once. The auth-change triggers of
-- 00008 announce it on the same channel, predictkit_auth, with the payload
-- "<schema>:p:<partner id>".

-- +goose Up

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION notify_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'access_tokens' THEN
        PERFORM pg_notify('predictkit_auth', TG_TABLE_SCHEMA || ':t:' || encode(OLD.hash, 'hex'));
    ELSIF TG_TABLE_NAME = 'partners' THEN
        PERFORM pg_notify('predictkit_auth', TG_TABLE_SCHEMA || ':p:' || OLD.id);
    ELSE
        PERFORM pg_notify('predictkit_auth', TG_TABLE_SCHEMA || ':u:' || OLD.id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER partners_auth_change AFTER UPDATE ON partners
    FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION notify_auth_change();
CREATE TRIGGER partners_auth_delete AFTER DELETE ON partners
    FOR EACH ROW EXECUTE FUNCTION notify_auth_change();

-- +goose Down

DROP TRIGGER partners_auth_delete ON partners;
DROP TRIGGER partners_auth_change ON partners;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION notify_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
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
