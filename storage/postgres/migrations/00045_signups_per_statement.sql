-- +goose Up

-- Sign-ups were counted by a row-level trigger: one update of the day's
-- row per new user. A statement that inserts many users (an import, a
-- benchmark's seed of a million holders) updated that one row once per
-- user in one transaction, each update walking the row's growing chain
-- of versions: quadratic, minutes for a million. A statement-level
-- trigger counts each statement's new users per day at once: one update
-- per day a statement touches. A registration is one statement of one
-- user, as before.
DROP TRIGGER users_stats_signup ON users;
DROP FUNCTION stats_count_signup();

-- +goose StatementBegin
CREATE FUNCTION stats_count_signups() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stats_signups AS s (day, users)
    SELECT (created_at AT TIME ZONE 'UTC')::date, count(*) FROM new_users WHERE partner_id IS NULL GROUP BY 1
    ON CONFLICT (day) DO UPDATE SET users = s.users + EXCLUDED.users;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER users_stats_signups AFTER INSERT ON users
    REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION stats_count_signups();

-- +goose Down

DROP TRIGGER users_stats_signups ON users;
DROP FUNCTION stats_count_signups();

-- +goose StatementBegin
CREATE FUNCTION stats_count_signup() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stats_signups AS s (day, users) VALUES ((NEW.created_at AT TIME ZONE 'UTC')::date, 1)
    ON CONFLICT (day) DO UPDATE SET users = s.users + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER users_stats_signup AFTER INSERT ON users
    FOR EACH ROW WHEN (NEW.partner_id IS NULL) EXECUTE FUNCTION stats_count_signup();
