package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// sqlLockOpenPositions locks the open positions of markets $1. The
// markets' locks keep the set still; every writer of a market's positions
// holds the market's lock first, so these never wait.
var sqlLockOpenPositions = `SELECT ` + positionCols + ` FROM positions x
WHERE x.market_id = ANY($1) AND x.closed_at IS NULL
ORDER BY x.id
FOR NO KEY UPDATE`

// SettlePool resolves an exclusive pool as a whole (see market.Store), in
// one transaction: the pool's markets locked in ascending id order, then
// their open positions, then the pool's escrow, the markets' fee accounts,
// the treasury and the holders' accounts in ascending id order (as every money operation locks
// accounts); market.DecidePoolSettlement decides, and the Effects are
// written as a trade's are (plan). Unlike Settle it holds every open
// position of the pool in memory at once. On a deadlock or serialization
// failure it runs again from the start.
func (s *Store) SettlePool(ctx context.Context, poolID int64, ps market.PoolSettlement) error {
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sqlLockPoolMarkets, poolID)
		if err != nil {
			return err
		}
		ms, err := scanMarkets(rows)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return &decideError{market.ErrPoolNotFound}
		}
		ids := make([]int64, len(ms))
		for i, m := range ms {
			ids[i] = m.ID
		}
		if rows, err = tx.Query(ctx, sqlLockOpenPositions, ids); err != nil {
			return err
		}
		positions, err := scanPositions(rows)
		if err != nil {
			return err
		}
		refs := []account.Ref{account.EscrowAccount(ids[0]), account.Treasury}
		for _, id := range ids {
			refs = append(refs, account.FeeAccount(id)) // a void's refunds
		}
		for _, p := range positions {
			refs = append(refs, account.UserAccount(p.UserID))
		}
		a, err := lockAccounts(ctx, tx, refs)
		if err != nil {
			return err
		}
		// The clock is read once the markets are locked, as a trade's.
		at := now()
		l := &load{markets: map[int64]*market.Market{}, accounts: a, positions: positions, created: map[int64]bool{}}
		sts := make([]*market.State, len(ms))
		for i, m := range ms {
			l.markets[m.ID] = m
			st := &market.State{Market: m, Balances: a.balance, Now: at}
			for _, p := range positions {
				if p.MarketID == m.ID {
					st.Positions = append(st.Positions, p)
				}
			}
			sts[i] = st
		}
		effs, err := market.DecidePoolSettlement(sts, ps)
		if err != nil {
			return &decideError{err}
		}
		parts := make([]part, len(ms))
		for i, m := range ms {
			parts[i] = part{m, effs[i]}
		}
		w, err := s.plan(l, parts, at, false)
		if err != nil {
			return err
		}
		if err := w.send(ctx, tx); err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, resolvedChanges(effs...))
	})
	return translate(err, nil)
}
