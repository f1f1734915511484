-- The P2P board: users' advertisements to buy or sell platform balance for
-- fiat money, and each user's P2P record (completed orders, ratings) that
-- the board shows and sorts by. Amounts are kopecks; exchange_rate is
-- kopecks of balance per unit of fiat_currency; payment_duration minutes.

-- +goose Up

CREATE TABLE p2p_user_stats (
    user_id          bigint PRIMARY KEY REFERENCES users (id),
    completed_orders bigint NOT NULL DEFAULT 0 CHECK (completed_orders >= 0),
    -- Ratings are 1 to 5 stars, at most one per completed order.
    rating_sum       bigint NOT NULL DEFAULT 0,
    rating_count     bigint NOT NULL DEFAULT 0,
    CONSTRAINT p2p_user_stats_rating_check CHECK (rating_count >= 0 AND rating_count <= completed_orders
        AND rating_sum BETWEEN rating_count AND 5 * rating_count)
);

CREATE TABLE p2p_ads (
    id                  bigserial PRIMARY KEY,
    user_id             bigint      NOT NULL REFERENCES users (id),
    type                text        NOT NULL CHECK (type IN ('buy', 'sell')),
    fiat_currency       text        NOT NULL CHECK (fiat_currency ~ '^[A-Z]{3}$'),
    exchange_rate       bigint      NOT NULL CHECK (exchange_rate > 0),
    min_amount          bigint      NOT NULL CHECK (min_amount > 0),
    max_amount          bigint      NOT NULL,
    remaining_amount    bigint      NOT NULL CHECK (remaining_amount >= 0),
    payment_methods     text[]      NOT NULL,
    -- The methods in lower case, as the payment_method filter compares
    -- them (computed by the application, so that both stores agree).
    payment_method_keys text[]      NOT NULL,
    payment_duration    bigint      NOT NULL CHECK (payment_duration > 0),
    instructions        text        NOT NULL DEFAULT '',
    is_active           boolean     NOT NULL,
    moderation_status   text        NOT NULL CHECK (moderation_status IN ('pending', 'approved', 'rejected')),
    is_platform_ad      boolean     NOT NULL DEFAULT false,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    CONSTRAINT p2p_ads_amounts_check CHECK (max_amount >= min_amount)
);

-- Only approved ads are ever listed, so every list index is partial.
-- The default order: newest first, per activity state.
CREATE INDEX p2p_ads_newest_idx ON p2p_ads (is_active, created_at DESC, id DESC)
    WHERE moderation_status = 'approved';
-- best_price within a type (sell: rate ascending, buy: descending; a
-- backward scan serves the other direction), also narrowed by currency.
CREATE INDEX p2p_ads_price_idx ON p2p_ads (is_active, type, exchange_rate, id)
    WHERE moderation_status = 'approved';
CREATE INDEX p2p_ads_currency_idx ON p2p_ads (is_active, fiat_currency, type, exchange_rate, id)
    WHERE moderation_status = 'approved';
-- The author_nickname filter and the owner's ads.
CREATE INDEX p2p_ads_user_idx ON p2p_ads (user_id, created_at DESC, id DESC);
-- The payment_method filter (payment_method_keys @> ARRAY[key]).
CREATE INDEX p2p_ads_payment_methods_idx ON p2p_ads USING gin (payment_method_keys);

-- +goose Down

DROP TABLE p2p_ads;
DROP TABLE p2p_user_stats;
