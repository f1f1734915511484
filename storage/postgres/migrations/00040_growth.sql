-- Growth: referrals, levels and the sign-up bonus (package growth).
--
-- A user's referral code is how another names them at sign-up: codes are
-- told apart case-insensitively, so they become unique that way (a
-- partner's sub-account has none: ''). Codes that happen to repeat in an
-- older database are given fresh ones, the first holder keeping theirs.
--
-- referrals holds who referred whom, one row per referred user, and
-- whether that user has qualified: qualified_at is set, once, by the
-- transaction that pays the referrer (reward: what it paid, 0 when the
-- reward setting was 0), so a reward is never paid twice whatever runs
-- it.
--
-- growth_volumes holds each user's lifetime trade volume (the sum of
-- their trades' cost). It is not a column of users: the users row is
-- what the authentication caches keep (a change to it is announced to
-- every server), and it must not be rewritten by every trade. A consumer
-- of the change log (cursor "growth" in change_consumers) adds the
-- trades after its cursor and moves it in the same transaction, raising
-- users.level when a threshold is passed.
--
-- The platform's promotional accounts may go below zero
-- (account.Kind.MayGoNegative): each is minus what it has spent.

-- +goose Up

UPDATE users u SET referral_code = upper(substr(md5(random()::text || u.id::text), 1, 8))
WHERE u.referral_code <> '' AND EXISTS (
    SELECT 1 FROM users o WHERE upper(o.referral_code) = upper(u.referral_code) AND o.id < u.id);

CREATE UNIQUE INDEX users_referral_code_key ON users (upper(referral_code)) WHERE referral_code <> '';

CREATE TABLE referrals (
    referee_id   bigint      PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    referrer_id  bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    qualified_at timestamptz,
    reward       bigint      NOT NULL DEFAULT 0 CHECK (reward >= 0),
    CHECK (referee_id <> referrer_id)
);

-- A referrer's page counts their referrals.
CREATE INDEX referrals_referrer_idx ON referrals (referrer_id);

CREATE TABLE growth_volumes (
    user_id bigint PRIMARY KEY,
    volume  bigint NOT NULL CHECK (volume >= 0)
);

ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_balance_check,
    ADD CONSTRAINT ledger_accounts_balance_check CHECK (balance >= 0 OR kind IN ('external', 'platform_treasury', 'deposits', 'referral_rewards', 'signup_bonuses'));

-- +goose Down

ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_balance_check,
    ADD CONSTRAINT ledger_accounts_balance_check CHECK (balance >= 0 OR kind IN ('external', 'platform_treasury', 'deposits'));
DELETE FROM change_consumers WHERE name = 'growth';
DROP TABLE growth_volumes;
DROP TABLE referrals;
DROP INDEX users_referral_code_key;
