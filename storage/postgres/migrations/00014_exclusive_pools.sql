-- Exclusive pools: one n-outcome LMSR prices every market of the pool
-- (docs/exclusive-pools.md). A market's q_yes is then its outcome's
-- quantity and q_no the rounded quantity of its complement, which every
-- trade on the pool rewrites for all its markets. The flag never changes;
-- a market reads it from its pool.

-- +goose Up

ALTER TABLE pools ADD COLUMN exclusive boolean NOT NULL DEFAULT false;

-- +goose Down

ALTER TABLE pools DROP COLUMN exclusive;
