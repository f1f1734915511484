-- Telegram (docs/telegram.md): a user links a chat with the bot by
-- opening a deep link whose token the bot receives as "/start <token>".
-- A link token is kept only as its SHA-256 (telegram_link_tokens.hash),
-- taken once (deleted as it is used), and expires after 15 minutes; a
-- new one for the same user replaces the older ones. The linked chat is
-- the user's telegram_chat_id, with telegram_verified set and the
-- user's choice of notifications (telegram_notifications, which needs
-- a chat). A chat is linked to one account at a time.
--
-- telegram_updates holds the ids of the updates Telegram delivered, so
-- that one delivered again (Telegram retries when it did not see the
-- answer) does nothing twice; Telegram gives up after a day, and older
-- ids are pruned as new updates come.
--
-- The notification sender follows the change log with its cursor in
-- change_consumers (name 'telegram').

-- +goose Up

ALTER TABLE users
    ADD COLUMN telegram_chat_id bigint,
    ADD COLUMN telegram_notifications boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT users_telegram_notifications_check CHECK (NOT telegram_notifications OR telegram_chat_id IS NOT NULL);
CREATE UNIQUE INDEX users_telegram_chat_id_key ON users (telegram_chat_id) WHERE telegram_chat_id IS NOT NULL;

CREATE TABLE telegram_link_tokens (
    hash       bytea       PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX telegram_link_tokens_user_id_idx ON telegram_link_tokens (user_id);
CREATE INDEX telegram_link_tokens_expires_at_idx ON telegram_link_tokens (expires_at);

CREATE TABLE telegram_updates (
    update_id   bigint      PRIMARY KEY,
    received_at timestamptz NOT NULL
);
CREATE INDEX telegram_updates_received_at_idx ON telegram_updates (received_at);

-- +goose Down

DELETE FROM change_consumers WHERE name = 'telegram';
DROP TABLE telegram_updates;
DROP TABLE telegram_link_tokens;
DROP INDEX users_telegram_chat_id_key;
ALTER TABLE users
    DROP CONSTRAINT users_telegram_notifications_check,
    DROP COLUMN telegram_notifications,
    DROP COLUMN telegram_chat_id;
