-- A signed-in user's support chat belongs to their account
-- (docs/support-chat.md): every device where they are signed in finds it
-- by user, the open session with the highest id first. This index keeps
-- that lookup (chat.Store.UserChatSession) from scanning every session.

-- +goose Up

CREATE INDEX chat_sessions_user_idx ON chat_sessions (user_id, (closed_at IS NULL), id) WHERE user_id IS NOT NULL;

-- +goose Down

DROP INDEX chat_sessions_user_idx;
