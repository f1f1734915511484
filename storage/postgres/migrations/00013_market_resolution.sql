-- Market resolution by the operator, voided markets, and a settlement
-- written in few statements.
--
-- * markets.resolved_by: who resolved the market, 'creator' or 'operator'
--   (NULL while unresolved). Before this migration only creators could
--   resolve, so every resolved market was resolved by its creator.
-- * A voided market has winning_outcome 2, and its closed positions
--   won_side 2.
-- * positions.settle_pnl: the realization of the settlement that closed
--   the position (its payout or refund minus the basis it had left), so
--   that settling a market writes no pnl_events row per position: one row
--   and two foreign-key checks per position were about a third of the
--   database's CPU time settling 100,000 positions. NULL for positions
--   sold out, still open, or settled before this migration (whose
--   realization is in pnl_events). The PnL chart reads both.
-- * ledger_accounts fillfactor 70: an account's balance is not indexed,
--   so with room on its page an update of it is a HOT update, which
--   touches no index. A settlement updates the balance of every holder it
--   pays (1,000,000 positions: 500,000 accounts), and every trade those of
--   its trader, escrow and fee account. It applies to pages written from
--   now on; an account on a full page gets room when an update moves it.
--
-- The widened CHECK on positions is added NOT VALID: the rows there were
-- checked by the narrower one it replaces, and validating would read the
-- whole table while holding its lock.

-- +goose Up

ALTER TABLE markets ADD COLUMN resolved_by text CHECK (resolved_by IN ('creator', 'operator'));
UPDATE markets SET resolved_by = 'creator' WHERE resolved;
ALTER TABLE markets DROP CONSTRAINT markets_winning_outcome_check,
    ADD CONSTRAINT markets_winning_outcome_check CHECK (winning_outcome IN (0, 1, 2));
ALTER TABLE positions DROP CONSTRAINT positions_won_side_check,
    ADD CONSTRAINT positions_won_side_check CHECK (won_side IN (-1, 0, 1, 2)) NOT VALID;
ALTER TABLE positions ADD COLUMN settle_pnl bigint;
ALTER TABLE ledger_accounts SET (fillfactor = 70);

-- +goose Down

-- A settlement's realization goes back to pnl_events, where the older
-- code reads it; voided markets and positions have no outcome the older
-- schema can hold, so going down refuses while there are any.
INSERT INTO pnl_events (user_id, position_id, at, delta)
SELECT user_id, id, closed_at, settle_pnl FROM positions WHERE settle_pnl IS NOT NULL ORDER BY closed_at, id;
ALTER TABLE ledger_accounts RESET (fillfactor);
ALTER TABLE positions DROP COLUMN settle_pnl;
ALTER TABLE positions DROP CONSTRAINT positions_won_side_check,
    ADD CONSTRAINT positions_won_side_check CHECK (won_side IN (-1, 0, 1));
ALTER TABLE markets DROP CONSTRAINT markets_winning_outcome_check,
    ADD CONSTRAINT markets_winning_outcome_check CHECK (winning_outcome IN (0, 1));
ALTER TABLE markets DROP COLUMN resolved_by;
