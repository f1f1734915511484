-- Stream tickets: a browser's EventSource cannot send an Authorization
-- header, so it opens the me topic with a ticket bought with its Bearer
-- token a moment before. A ticket is kept as the SHA-256 of its secret,
-- lives a minute and opens one stream: using it deletes its row, so of
-- two servers that get the same ticket, one gets the user.

-- +goose Up

CREATE TABLE stream_tickets (
    hash       bytea       PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL
);

-- The expired tickets are deleted as new ones are made; a user's go
-- with the user.
CREATE INDEX stream_tickets_expires ON stream_tickets (expires_at);
CREATE INDEX stream_tickets_user ON stream_tickets (user_id);

-- +goose Down

DROP TABLE stream_tickets;
