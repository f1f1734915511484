-- Comments on events, one level of replies, and like/dislike reactions.
-- A comment's likes_count and dislikes_count are kept equal to its rows in
-- comment_reactions: every change of a comment's reactions locks the
-- comment's row first and adjusts the counts in the same transaction.

-- +goose Up

CREATE TABLE comments (
    id             bigserial PRIMARY KEY,
    event_id       bigint      NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    -- NULL for a top-level comment; replies are one level deep.
    parent_id      bigint      REFERENCES comments (id) ON DELETE CASCADE,
    user_id        bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    content        text        NOT NULL,
    likes_count    bigint      NOT NULL DEFAULT 0,
    dislikes_count bigint      NOT NULL DEFAULT 0,
    replies_count  bigint      NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL,
    CONSTRAINT comments_content_check CHECK (content <> '' AND char_length(content) <= 2000),
    CONSTRAINT comments_counts_check CHECK (likes_count >= 0 AND dislikes_count >= 0 AND replies_count >= 0)
);

-- An event's top-level comments, newest first.
CREATE INDEX comments_event_top_idx ON comments (event_id, created_at DESC, id DESC) WHERE parent_id IS NULL;
-- A comment's replies, oldest first.
CREATE INDEX comments_parent_idx ON comments (parent_id, created_at, id) WHERE parent_id IS NOT NULL;
-- A user's comments (and the cascade when a user goes).
CREATE INDEX comments_user_id_idx ON comments (user_id);

CREATE TABLE comment_reactions (
    comment_id bigint      NOT NULL REFERENCES comments (id) ON DELETE CASCADE,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    reaction   text        NOT NULL CHECK (reaction IN ('like', 'dislike')),
    created_at timestamptz NOT NULL,
    -- One reaction per user per comment; also how a reader's own
    -- reactions on a page of comments are found.
    PRIMARY KEY (comment_id, user_id)
);

CREATE INDEX comment_reactions_user_id_idx ON comment_reactions (user_id);

-- +goose Down

DROP TABLE comment_reactions;
DROP TABLE comments;
