-- Notifications: what happened to a user's money or conversations. A
-- notification keeps its type and data; its title and message are
-- rendered when read, in the reader's language.

-- +goose Up

CREATE TABLE notifications (
    id           bigserial PRIMARY KEY,
    user_id      bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type         text        NOT NULL,
    related_id   bigint      NOT NULL DEFAULT 0,
    related_type text        NOT NULL DEFAULT '',
    data         jsonb       NOT NULL DEFAULT '{}',
    read         boolean     NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL
);

-- Newest first per user, and the unread ones alone (the badge).
CREATE INDEX notifications_user_created ON notifications (user_id, created_at DESC, id DESC);
CREATE INDEX notifications_user_unread ON notifications (user_id, created_at DESC, id DESC) WHERE NOT read;

-- +goose Down

DROP TABLE notifications;
