-- Partner webhooks: where a partner's deliveries go, and the queue of
-- deliveries with how sending each went.
--
-- The signing secret is stored as is, not hashed: the server must read it
-- to sign every delivery (HMAC). Whoever reads this table can forge a
-- partner's deliveries, as whoever reads the server's configuration can
-- act as the operator.
--
-- Deliveries are queued by the webhook dispatcher, a consumer of the
-- change log (change_consumers, name 'webhooks'): it inserts what a
-- resolution calls for and moves its cursor in one transaction, so a
-- crash neither loses nor repeats one. Its cursor is made, at the log's
-- end, with the first webhook: until a partner has a webhook nothing is
-- owed, and pruning is not held back.

-- +goose Up

CREATE TABLE partner_webhooks (
    partner_id bigint      PRIMARY KEY REFERENCES partners (id),
    url        text        NOT NULL,
    secret     text        NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE TABLE webhook_deliveries (
    id               bigserial   PRIMARY KEY,
    partner_id       bigint      NOT NULL REFERENCES partners (id),
    type             text        NOT NULL CHECK (type IN ('bet.settled', 'market.resolved')),
    market_id        bigint      NOT NULL,
    event_id         bigint      NOT NULL,
    -- 0 NO, 1 YES, 2 void (markets.winning_outcome).
    won_side         smallint    NOT NULL,
    -- bet.settled only (0 and '' for market.resolved): the position, its
    -- holder's external id, side (1 YES, 0 NO), shares and payout.
    position_id      bigint      NOT NULL DEFAULT 0,
    external_user_id text        NOT NULL DEFAULT '',
    side             smallint    NOT NULL DEFAULT 0,
    shares           bigint      NOT NULL DEFAULT 0,
    payout_kopecks   bigint      NOT NULL DEFAULT 0,
    -- When the resolution happened.
    created_at       timestamptz NOT NULL,
    status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    -- A claim moves it to the end of its lease: a sender that dies
    -- mid-attempt leaves the delivery due again then.
    next_attempt_at  timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    last_attempt_at  timestamptz,
    last_status_code integer     NOT NULL DEFAULT 0,
    last_error       text        NOT NULL DEFAULT '',
    last_latency_us  bigint      NOT NULL DEFAULT 0,
    delivered_at     timestamptz,
    CONSTRAINT webhook_deliveries_once UNIQUE (partner_id, market_id, type, position_id)
);

-- The delivery log, newest first, and the due deliveries of a partner.
CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (partner_id, id);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (partner_id, next_attempt_at) WHERE status = 'pending';

-- +goose Down

DELETE FROM change_consumers WHERE name = 'webhooks';
DROP TABLE webhook_deliveries;
DROP TABLE partner_webhooks;
