-- The support chat: sessions (reached by a secret kept only as a hash,
-- shown to operators by a separate public id) and their messages.

-- +goose Up

CREATE TABLE chat_sessions (
    id              bigserial PRIMARY KEY,
    public_id       text        NOT NULL,
    secret_hash     bytea       NOT NULL,
    -- NULL for an anonymous session.
    user_id         bigint REFERENCES users (id),
    language        text        NOT NULL DEFAULT 'en' CHECK (language IN ('en', 'ru')),
    escalated       boolean     NOT NULL DEFAULT false,
    escalated_at    timestamptz,
    closed_at       timestamptz,
    message_count   bigint      NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL,
    last_message_at timestamptz NOT NULL,
    CONSTRAINT chat_sessions_public_id_key UNIQUE (public_id),
    CONSTRAINT chat_sessions_secret_hash_key UNIQUE (secret_hash),
    CONSTRAINT chat_sessions_escalated_check CHECK (escalated = (escalated_at IS NOT NULL))
);

-- The operator's queue: open escalated sessions first, then by activity.
CREATE INDEX chat_sessions_queue_idx ON chat_sessions ((escalated AND closed_at IS NULL) DESC, last_message_at DESC, id DESC);
CREATE INDEX chat_sessions_user_id_idx ON chat_sessions (user_id) WHERE user_id IS NOT NULL;

CREATE TABLE chat_messages (
    id         bigserial PRIMARY KEY,
    session_id bigint      NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    sender     text        NOT NULL CHECK (sender IN ('user', 'support')),
    text       text        NOT NULL,
    created_at timestamptz NOT NULL
);

-- A session's history, in order.
CREATE INDEX chat_messages_session_idx ON chat_messages (session_id, id);

-- +goose Down

DROP TABLE chat_messages;
DROP TABLE chat_sessions;
