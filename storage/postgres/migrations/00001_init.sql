-- The first schema of predictkit: users and tokens, the double-entry
-- ledger, and the market core (events, pools, markets, positions, trades,
-- price history, realized PnL). Later features add their tables in new
-- files; this one is never edited once released.

-- +goose Up

CREATE TABLE users (
    id                bigserial PRIMARY KEY,
    email             text        NOT NULL DEFAULT '',
    password_hash     text        NOT NULL DEFAULT '',
    name              text        NOT NULL,
    nickname          text,
    profile_hidden    boolean     NOT NULL DEFAULT false,
    referral_code     text        NOT NULL DEFAULT '',
    language          text        NOT NULL DEFAULT 'en',
    theme             text        NOT NULL DEFAULT 'light',
    level             integer     NOT NULL DEFAULT 1,
    avatar_url        text,
    telegram_verified boolean     NOT NULL DEFAULT false,
    is_creator        boolean     NOT NULL DEFAULT false,
    is_stats_viewer   boolean     NOT NULL DEFAULT false,
    tron_address      text        NOT NULL DEFAULT '',
    bsc_address       text        NOT NULL DEFAULT '',
    polygon_address   text        NOT NULL DEFAULT '',
    ethereum_address  text        NOT NULL DEFAULT '',
    -- Set on a partner's sub-account, which has no e-mail and no password.
    partner_id        bigint,
    external_id       text,
    created_at        timestamptz NOT NULL
);

-- Partner sub-accounts have no e-mail, so only non-empty ones are unique.
CREATE UNIQUE INDEX users_email_key ON users (lower(email)) WHERE email <> '';
-- Nicknames, like e-mails, are told apart case-insensitively.
CREATE UNIQUE INDEX users_nickname_key ON users (lower(nickname));
-- A partner's user is reached by the partner's own id for it.
CREATE UNIQUE INDEX users_partner_external_key ON users (partner_id, external_id) WHERE partner_id IS NOT NULL;

CREATE TABLE access_tokens (
    hash       bytea PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX access_tokens_user_id_idx ON access_tokens (user_id);

CREATE TABLE ledger_accounts (
    id      bigserial PRIMARY KEY,
    kind    text   NOT NULL,
    owner   bigint NOT NULL,
    balance bigint NOT NULL DEFAULT 0,
    CONSTRAINT ledger_accounts_kind_owner_key UNIQUE (kind, owner),
    -- Mirrors account.Kind.MayGoNegative: only the outside world and the
    -- treasury may be below zero. The last line of defence, should a
    -- decision ever get a balance wrong.
    CONSTRAINT ledger_accounts_balance_check CHECK (balance >= 0 OR kind IN ('external', 'platform_treasury'))
);

CREATE TABLE events (
    id         bigserial PRIMARY KEY,
    name       text        NOT NULL,
    name_ru    text        NOT NULL DEFAULT '',
    creator_id bigint      NOT NULL REFERENCES users (id),
    is_active  boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL
);

-- The public feed: active events, newest first.
CREATE INDEX events_active_created_idx ON events (created_at DESC, id DESC) WHERE is_active;
CREATE INDEX events_creator_id_idx ON events (creator_id);

CREATE TABLE pools (
    id        bigserial PRIMARY KEY,
    event_id  bigint      NOT NULL REFERENCES events (id),
    -- The pool's place in its event, so that an event lists its pools in
    -- the order they were created.
    ordinal   integer     NOT NULL,
    name      text        NOT NULL,
    name_ru   text        NOT NULL DEFAULT '',
    rules     text        NOT NULL DEFAULT '',
    rules_ru  text        NOT NULL DEFAULT '',
    margin    numeric     NOT NULL CHECK (margin >= 0),
    b         bigint      NOT NULL CHECK (b > 0),
    won_side  integer,
    live_at   timestamptz NOT NULL,
    finish_at timestamptz NOT NULL,
    CONSTRAINT pools_event_ordinal_key UNIQUE (event_id, ordinal)
);

CREATE TABLE markets (
    id              bigserial PRIMARY KEY,
    pool_id         bigint      NOT NULL REFERENCES pools (id),
    event_id        bigint      NOT NULL REFERENCES events (id),
    outcome_index   integer     NOT NULL,
    name            text        NOT NULL,
    name_ru         text        NOT NULL DEFAULT '',
    yes_name        text        NOT NULL DEFAULT '',
    no_name         text        NOT NULL DEFAULT '',
    b               bigint      NOT NULL CHECK (b > 0),
    q_yes           bigint      NOT NULL,
    q_no            bigint      NOT NULL,
    q0_yes          bigint      NOT NULL,
    q0_no           bigint      NOT NULL,
    volume          bigint      NOT NULL DEFAULT 0,
    paused          boolean     NOT NULL DEFAULT false,
    resolved        boolean     NOT NULL DEFAULT false,
    -- 1 = YES, 0 = NO, NULL while unresolved.
    winning_outcome smallint CHECK (winning_outcome IN (0, 1)),
    created_at      timestamptz NOT NULL,
    resolved_at     timestamptz,
    CONSTRAINT markets_pool_outcome_key UNIQUE (pool_id, outcome_index)
);

CREATE INDEX markets_event_id_idx ON markets (event_id);

-- One table for open and closed positions: a position is open while
-- closed_at is NULL, and a user holds at most one open position per market
-- and side.
CREATE TABLE positions (
    id         bigserial PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id),
    market_id  bigint      NOT NULL REFERENCES markets (id),
    -- 1 = YES, 0 = NO.
    side       smallint    NOT NULL CHECK (side IN (0, 1)),
    shares     bigint      NOT NULL CHECK (shares >= 0),
    cost_basis bigint      NOT NULL,
    bought     bigint      NOT NULL,
    spent      bigint      NOT NULL,
    returned   bigint      NOT NULL,
    use_bonus  boolean     NOT NULL DEFAULT false,
    partner_id bigint,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    closed_at  timestamptz,
    -- 1 = YES won, 0 = NO won, -1 = sold before resolution.
    won_side   smallint CHECK (won_side IN (-1, 0, 1)),
    CONSTRAINT positions_closed_won_side_check CHECK ((closed_at IS NULL) = (won_side IS NULL))
);

CREATE UNIQUE INDEX positions_open_key ON positions (user_id, market_id, side) WHERE closed_at IS NULL;
-- A user's open positions, newest first.
CREATE INDEX positions_user_open_idx ON positions (user_id, created_at DESC, id DESC) WHERE closed_at IS NULL;
-- A user's closed positions, most recently closed first.
CREATE INDEX positions_user_closed_idx ON positions (user_id, closed_at DESC, id DESC) WHERE closed_at IS NOT NULL;
-- Settlement loads every open position of a market.
CREATE INDEX positions_market_open_idx ON positions (market_id) WHERE closed_at IS NULL;

CREATE TABLE trades (
    id            bigserial PRIMARY KEY,
    market_id     bigint           NOT NULL REFERENCES markets (id),
    user_id       bigint           NOT NULL REFERENCES users (id),
    side          smallint         NOT NULL CHECK (side IN (0, 1)),
    action        text             NOT NULL CHECK (action IN ('buy', 'sell')),
    shares        bigint           NOT NULL,
    amount        bigint           NOT NULL,
    cost          bigint           NOT NULL,
    fee           bigint           NOT NULL,
    price_before  double precision NOT NULL,
    price_after   double precision NOT NULL,
    q_yes         bigint           NOT NULL,
    q_no          bigint           NOT NULL,
    use_bonus     boolean          NOT NULL DEFAULT false,
    -- A partner's trade carries the partner's idempotency key and a digest
    -- of the request, to tell a repeat from a reuse of the key.
    partner_id    bigint,
    client_bet_id text,
    request_hash  text             NOT NULL DEFAULT '',
    created_at    timestamptz      NOT NULL
);

-- (partner, client_bet_id) executes at most once, across every market.
CREATE UNIQUE INDEX trades_partner_client_bet_key ON trades (partner_id, client_bet_id)
    WHERE partner_id IS NOT NULL AND client_bet_id IS NOT NULL;

-- A market's trade log, oldest first.
CREATE INDEX trades_market_id_idx ON trades (market_id, id);
CREATE INDEX trades_user_id_idx ON trades (user_id);

CREATE TABLE postings (
    id           bigserial PRIMARY KEY,
    from_account bigint      NOT NULL REFERENCES ledger_accounts (id),
    to_account   bigint      NOT NULL REFERENCES ledger_accounts (id),
    amount       bigint      NOT NULL CHECK (amount > 0),
    reason       text        NOT NULL,
    trade_id     bigint      REFERENCES trades (id),
    created_at   timestamptz NOT NULL
);

CREATE INDEX postings_from_account_idx ON postings (from_account);
CREATE INDEX postings_to_account_idx ON postings (to_account);
CREATE INDEX postings_trade_id_idx ON postings (trade_id) WHERE trade_id IS NOT NULL;

CREATE TABLE price_points (
    id              bigserial PRIMARY KEY,
    market_id       bigint           NOT NULL REFERENCES markets (id),
    trade_id        bigint           REFERENCES trades (id),
    at              timestamptz      NOT NULL,
    yes_probability double precision NOT NULL,
    q_yes           bigint           NOT NULL,
    q_no            bigint           NOT NULL
);

-- A market's price history, read from the most recent point back.
CREATE INDEX price_points_market_id_idx ON price_points (market_id, id);

CREATE TABLE pnl_events (
    id          bigserial PRIMARY KEY,
    user_id     bigint      NOT NULL REFERENCES users (id),
    position_id bigint      NOT NULL REFERENCES positions (id),
    at          timestamptz NOT NULL,
    delta       bigint      NOT NULL
);

-- A user's PnL chart, oldest first.
CREATE INDEX pnl_events_user_idx ON pnl_events (user_id, at, id);

-- +goose Down

DROP TABLE pnl_events;
DROP TABLE price_points;
DROP TABLE postings;
DROP TABLE trades;
DROP TABLE positions;
DROP TABLE markets;
DROP TABLE pools;
DROP TABLE events;
DROP TABLE ledger_accounts;
DROP TABLE access_tokens;
DROP TABLE users;
