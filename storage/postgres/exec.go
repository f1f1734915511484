package postgres

// One attempt of the money path (Exec, ExecMarkets) is one transaction
// and, when it succeeds, two round trips:
//
//   - round trip 1: BEGIN, every lock and every load (load.go);
//   - decide, in this process, with the markets' row locks held;
//   - round trip 2: every write and COMMIT (plan.go).
//
// A market's row lock is held for the second round trip and the time
// decide takes, which is what bounds the trades per second of one market.
// rowpositions.go, rowtrades.go and rowmarkets.go keep each row type's
// columns, scanner and argument builders; columns.go makes the SQL
// column lists from the column tables.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/predictkit/predictkit/market"
)

// Exec is the money path: in one transaction it locks market lock.MarketID
// (market.ErrMarketNotFound if there is none), creates and locks the
// ledger accounts lock names plus the market's escrow and fee account in
// ascending id order, loads the open positions lock asks for, calls
// decide and writes the Effects it returns. An error of decide is returned
// as it is, with nothing written. On a deadlock or serialization failure
// the whole transaction runs again, decide included.
func (s *Store) Exec(ctx context.Context, lock market.Lock, decide func(*market.State) (*market.Effects, error)) (*market.Effects, error) {
	var eff *market.Effects
	err := retry(ctx, s.retries, func() error {
		effs, err := s.exec(ctx, []market.Lock{lock}, func(sts []*market.State) ([]*market.Effects, error) {
			eff, err := decide(sts[0])
			return []*market.Effects{eff}, err
		})
		if err == nil {
			eff = effs[0]
		}
		return err
	})
	var mm *missingMarkets
	if errors.As(err, &mm) {
		return nil, market.ErrMarketNotFound
	}
	if err != nil {
		return nil, translate(err, nil)
	}
	return eff, nil
}

// ExecMarkets is Exec over several markets in one transaction (see
// market.Store). A market that does not exist is left out and the
// transaction runs again without it, so that no ledger account is made
// for it; markets are never deleted, so this happens at most once.
func (s *Store) ExecMarkets(ctx context.Context, locks []market.Lock, decide func([]*market.State) ([]*market.Effects, error)) ([]*market.Effects, error) {
	seen := make(map[int64]bool, len(locks))
	for _, l := range locks {
		if seen[l.MarketID] {
			return nil, errors.New("postgres: ExecMarkets takes distinct markets")
		}
		seen[l.MarketID] = true
	}
	missing := map[int64]bool{}
	for {
		var live []market.Lock
		for _, l := range locks {
			if !missing[l.MarketID] {
				live = append(live, l)
			}
		}
		if len(live) == 0 {
			return make([]*market.Effects, len(locks)), nil
		}
		var effs []*market.Effects
		err := retry(ctx, s.retries, func() error {
			var err error
			effs, err = s.exec(ctx, live, func(sts []*market.State) ([]*market.Effects, error) {
				return decideAll(locks, missing, sts, decide)
			})
			return err
		})
		var mm *missingMarkets
		if errors.As(err, &mm) {
			for _, id := range mm.ids {
				missing[id] = true
			}
			continue
		}
		if err != nil {
			return nil, translate(err, nil)
		}
		// effs are those of the live markets; put back the gaps.
		out := make([]*market.Effects, len(locks))
		k := 0
		for i, l := range locks {
			if !missing[l.MarketID] {
				out[i] = effs[k]
				k++
			}
		}
		return out, nil
	}
}

// decideAll calls decide with a State for every lock, those of missing
// markets without a Market, and returns the Effects of the others.
func decideAll(locks []market.Lock, missing map[int64]bool, live []*market.State,
	decide func([]*market.State) ([]*market.Effects, error)) ([]*market.Effects, error) {
	if len(missing) == 0 {
		return decide(live)
	}
	all := make([]*market.State, len(locks))
	k := 0
	for i, l := range locks {
		if missing[l.MarketID] {
			shared := live[0]
			all[i] = &market.State{Balances: shared.Balances, Existing: shared.Existing, SubAccounts: shared.SubAccounts,
				NewSubAccounts: shared.NewSubAccounts, Now: shared.Now}
			continue
		}
		all[i] = live[k]
		k++
	}
	effs, err := decide(all)
	if err != nil {
		return nil, err
	}
	if len(effs) != len(all) {
		return nil, fmt.Errorf("postgres: decide returned %d effects for %d states", len(effs), len(all))
	}
	out := make([]*market.Effects, 0, len(live))
	for i, l := range locks {
		if missing[l.MarketID] {
			if effs[i] != nil {
				return nil, fmt.Errorf("postgres: effects for market %d, which does not exist", l.MarketID)
			}
			continue
		}
		out = append(out, effs[i])
	}
	return out, nil
}

var errNoMarket = &decideError{market.ErrMarketNotFound}

// missingMarkets is how an attempt says that markets of its locks do not
// exist; it travels as a decideError, so nothing retries or translates it.
type missingMarkets struct{ ids []int64 }

func (e *missingMarkets) Error() string {
	return fmt.Sprintf("postgres: markets %v do not exist", e.ids)
}

// exec is one attempt of Exec or ExecMarkets.
func (s *Store) exec(ctx context.Context, locks []market.Lock, decide func([]*market.State) ([]*market.Effects, error)) ([]*market.Effects, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release(conn)

	l := newLoad(locks, &s.accountIDs)
	if err := l.run(ctx, conn); err != nil {
		return nil, err
	}
	if len(l.markets) < len(l.marketIDs) {
		var gone []int64
		for _, id := range l.marketIDs {
			if l.markets[id] == nil {
				gone = append(gone, id)
			}
		}
		return nil, &decideError{&missingMarkets{gone}}
	}

	// The clock is read once the markets are locked, so that the times of
	// a market's trades follow the order they happened in.
	at := now()
	balances := maps.Clone(l.accounts.balance)
	sts := make([]*market.State, len(locks))
	for i, lk := range locks {
		st := &market.State{Market: l.markets[lk.MarketID], Balances: balances, Existing: l.existing,
			SubAccounts: l.subs, NewSubAccounts: l.created, Now: at}
		if lk.Pool != nil {
			st.Pool = make([]*market.Market, len(lk.Pool))
			for j, id := range lk.Pool {
				// A copy each: States of one pool's markets must not
				// share what a decision might change.
				c := *l.markets[id]
				st.Pool[j] = &c
			}
		}
		for _, p := range l.positions {
			if p.MarketID == lk.MarketID {
				st.Positions = append(st.Positions, p)
			}
		}
		sts[i] = st
	}
	effs, err := decide(sts)
	if err != nil {
		return nil, &decideError{err}
	}
	if len(effs) != len(sts) {
		return nil, fmt.Errorf("postgres: decide returned %d effects for %d states", len(effs), len(sts))
	}
	parts := make([]part, 0, len(sts))
	for i, eff := range effs {
		if eff != nil {
			parts = append(parts, part{sts[i].Market, eff})
		}
	}
	if len(parts) == 0 {
		return effs, nil
	}
	w, err := s.plan(l, parts, at, !s.unloggedTrades)
	if err != nil {
		return nil, err
	}
	if mayHaveCommitted, err := w.send(ctx, conn); err != nil {
		if mayHaveCommitted {
			return nil, commitFailed(err)
		}
		return nil, err
	}
	s.accountIDs.remember(l.accounts.id, w.dropped)
	return effs, nil
}

// release rolls back whatever transaction an attempt left open and
// returns the connection. If the rollback fails, the pool discards the
// connection rather than hand out one inside a transaction.
func release(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() != 'I' && !conn.Conn().IsClosed() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = conn.Exec(ctx, "ROLLBACK")
		cancel()
	}
	conn.Release()
}

// part is one market's Effects of an attempt.
type part struct {
	m   *market.Market
	eff *market.Effects
}
