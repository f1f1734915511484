-- Following events (docs/people-and-following.md): PUT
-- /api/v1/events/{id}/follow. A follower is told of each market's
-- resolution, of answers added later and of amendments, as holders are.
--
-- The primary key (user_id, event_id) makes a follow idempotent; the
-- list of a user's followed events (newest follow first) reads
-- follows_user_created_idx, and the statements that tell an event's
-- followers (a settlement, an answer, an amendment) read
-- follows_event_idx, an index range scan per event.

-- +goose Up

CREATE TABLE follows (
    user_id    bigint      NOT NULL REFERENCES users (id),
    event_id   bigint      NOT NULL REFERENCES events (id),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, event_id)
);

CREATE INDEX follows_event_idx ON follows (event_id, user_id);
CREATE INDEX follows_user_created_idx ON follows (user_id, created_at DESC, event_id DESC);

-- +goose Down

DROP TABLE follows;
