-- The challenge window (docs/challenge-window.md): with
-- PREDICTKIT_RESOLUTION_CHALLENGE set, a creator's close records a
-- proposal here (and pauses the market, or every market of its exclusive
-- pool) instead of settling at once.
--
-- A proposal is keyed by the market the creator closed; an exclusive
-- pool has at most one (the partial unique index on pool_id). The
-- deadline is kept here so that it survives restarts: a worker of any
-- instance claims due proposals (claimed_until, FOR UPDATE SKIP LOCKED)
-- and settles them through the ordinary settlement, which refuses a
-- resolved market, so a claim that dies mid-way is simply taken again
-- after its lease and nothing is paid twice. done is set, with the
-- market's final outcome, in the transaction that returns or keeps the
-- dispute bonds.

-- +goose Up

CREATE TABLE resolution_proposals (
    market_id       bigint      PRIMARY KEY REFERENCES markets (id),
    pool_id         bigint      NOT NULL REFERENCES pools (id),
    event_id        bigint      NOT NULL REFERENCES events (id),
    exclusive       boolean     NOT NULL,
    outcome         text        NOT NULL CHECK (outcome IN ('YES', 'NO', 'VOID')),
    proposed_by     bigint      NOT NULL REFERENCES users (id),
    challenge_until timestamptz NOT NULL,
    disputed        boolean     NOT NULL DEFAULT false,
    claimed_until   timestamptz,
    done            boolean     NOT NULL DEFAULT false,
    final           text        CHECK (final IN ('YES', 'NO', 'VOID')),
    created_at      timestamptz NOT NULL
);

CREATE UNIQUE INDEX resolution_proposals_pool_key ON resolution_proposals (pool_id) WHERE exclusive;
-- The worker's scan: proposals not done, by deadline.
CREATE INDEX resolution_proposals_open_idx ON resolution_proposals (challenge_until) WHERE NOT done;
-- Every reference to a user has an index (a user's rows are found
-- without a scan).
CREATE INDEX resolution_proposals_proposed_by_idx ON resolution_proposals (proposed_by);

CREATE TABLE resolution_disputes (
    market_id  bigint      NOT NULL REFERENCES resolution_proposals (market_id),
    user_id    bigint      NOT NULL REFERENCES users (id),
    reason     text        NOT NULL,
    bond       bigint      NOT NULL CHECK (bond >= 0),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (market_id, user_id)
);

CREATE INDEX resolution_disputes_user_id_idx ON resolution_disputes (user_id);

-- +goose Down

DROP TABLE resolution_disputes;
DROP TABLE resolution_proposals;
