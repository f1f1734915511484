-- Event proposals: with PREDICTKIT_PROPOSALS=on, a user who is not a
-- creator proposes an event, which waits for the operator's approval.
--
-- events.status is 'approved' for every event a creator made (and every
-- event before this migration), 'proposed' while a proposal waits, and
-- 'approved' or 'rejected' once the operator decides. A proposal keeps
-- its ante (proposal_ante, held in the event's 'proposal_ante' ledger
-- account) and the subsidies its approval posts from the treasury, one
-- per market in creation order (proposal_subsidies): no subsidy is
-- posted before approval, so a rejected proposal never touched the
-- treasury. decided_at, decision_reason and ante_refunded record the
-- decision.
--
-- markets.unapproved is set on the markets of a proposed or rejected
-- event: a trade's lock reads it with the market's row (like finish_at)
-- and refuses the trade. The operator's queue reads proposals oldest
-- first: the partial index serves it without indexing approved events.

-- +goose Up

ALTER TABLE events
    ADD COLUMN status             text        NOT NULL DEFAULT 'approved'
        CHECK (status IN ('approved', 'proposed', 'rejected')),
    ADD COLUMN proposal_ante      bigint      CHECK (proposal_ante >= 0),
    ADD COLUMN proposal_subsidies bigint[],
    ADD COLUMN decided_at         timestamptz,
    ADD COLUMN decision_reason    text        NOT NULL DEFAULT '',
    ADD COLUMN ante_refunded      boolean     NOT NULL DEFAULT false;

CREATE INDEX events_status_idx ON events (status, id) WHERE status <> 'approved';

ALTER TABLE markets ADD COLUMN unapproved boolean NOT NULL DEFAULT false;

-- +goose Down

ALTER TABLE markets DROP COLUMN unapproved;
DROP INDEX events_status_idx;
ALTER TABLE events
    DROP COLUMN ante_refunded,
    DROP COLUMN decision_reason,
    DROP COLUMN decided_at,
    DROP COLUMN proposal_subsidies,
    DROP COLUMN proposal_ante,
    DROP COLUMN status;
