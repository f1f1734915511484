-- Password reset tokens: a user who forgot the password asks for one by
-- e-mail (or an operator issues one), and sets a new password with it.
-- A token is kept as the SHA-256 of its secret, as access tokens are, so
-- the table holds nothing usable; it lives an hour and works once: using
-- it deletes its row, so of two concurrent uses one finds it. A changed
-- or reset password deletes every reset token of the user.

-- +goose Up

CREATE TABLE password_reset_tokens (
    hash       bytea       PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);

-- The expired tokens are deleted as new ones are made; a user's go when
-- the password changes, and with the user.
CREATE INDEX password_reset_tokens_expires ON password_reset_tokens (expires_at);
CREATE INDEX password_reset_tokens_user ON password_reset_tokens (user_id);

-- +goose Down

DROP TABLE password_reset_tokens;
