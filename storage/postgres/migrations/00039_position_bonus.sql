-- Bonus money stays bonus (docs/bonus.md): a position remembers how many
-- of its shares bonus money bought (bonus_shares), whose part of a sale's
-- proceeds returns to the bonus balance, and the bonus money still in it
-- (bonus_net: bonus buys' cost minus sales' proceeds returned to the
-- bonus balance), which a void refunds to the bonus balance first.
--
-- Positions from before kept only a flag, use_bonus, set once any buy
-- into them paid with bonus. Such a position is taken as bought with
-- bonus money whole: its bonus part cannot be known, and counting all of
-- it as bonus never turns bonus money into withdrawable money (at worst
-- some of its own money returns as bonus). Adding columns with a constant
-- default rewrites nothing; the UPDATE touches only flagged positions.

-- +goose Up

ALTER TABLE positions
    ADD COLUMN bonus_shares bigint NOT NULL DEFAULT 0,
    ADD COLUMN bonus_net bigint NOT NULL DEFAULT 0;
UPDATE positions SET bonus_shares = shares, bonus_net = spent - returned WHERE use_bonus;
ALTER TABLE positions
    ADD CONSTRAINT positions_bonus_shares_check CHECK (bonus_shares >= 0 AND bonus_shares <= shares);

-- +goose Down

ALTER TABLE positions DROP CONSTRAINT positions_bonus_shares_check;
ALTER TABLE positions DROP COLUMN bonus_net, DROP COLUMN bonus_shares;
