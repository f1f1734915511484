package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// A settlement streams the market's open positions through a cursor, in
// chunks, inside one transaction:
//
//  1. BEGIN, lock the market, create and lock its escrow, create the user
//     accounts of holders that have none, and open the cursor (one round
//     trip);
//  2. per chunk: fetch it, lock its holders' user accounts, decide, write
//     (three round trips);
//  3. lock the treasury, decide the finish, write it and COMMIT (two).
//
// The cursor returns the positions ordered by their holder's user account
// id, so the holders' accounts are locked in ascending id order across the
// whole settlement, as every money operation locks them; a holder's
// positions (at most two per market, one per side: positions_open_key)
// are never split across chunks. Its query sorts once; paging with a key
// would join and sort every open position again for each page.
//
// The escrow is locked first: only operations holding the market's lock
// touch it. The treasury is locked last, when every holder's account is
// locked already, so a settlement holds it only for its last round trips
// and never waits for anything while holding it.

const settleCursor = `settle_positions`

// sqlDeclareSettle opens the cursor over market $1's open positions, each
// with its holder's user account id (NULL only when the holder has none,
// which sqlEnsureHolderAccounts prevents). The market's lock keeps the set
// of open positions still while the cursor reads it.
var sqlDeclareSettle = `DECLARE ` + settleCursor + ` NO SCROLL CURSOR FOR
SELECT a.id, ` + positionCols + `
FROM positions x
LEFT JOIN ledger_accounts a ON a.kind = 'user' AND a.owner = x.user_id
WHERE x.market_id = $1 AND x.closed_at IS NULL
ORDER BY a.id, x.id`

// sqlEnsureHolderAccounts creates the user account of every holder of
// market $1's open positions that has none. A holder has paid, so this
// finds nothing unless a position was written around the money path.
const sqlEnsureHolderAccounts = `INSERT INTO ledger_accounts (kind, owner)
SELECT DISTINCT 'user', x.user_id FROM positions x
WHERE x.market_id = $1 AND x.closed_at IS NULL
	AND NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.kind = 'user' AND a.owner = x.user_id)
ORDER BY 2
ON CONFLICT (kind, owner) DO NOTHING`

// sqlLockAccountIDs locks ledger accounts $1 in ascending id order.
const sqlLockAccountIDs = `SELECT a.id, a.kind, a.owner, a.balance FROM ledger_accounts a
WHERE a.id = ANY($1)
ORDER BY a.id
FOR NO KEY UPDATE OF a`

// SettleChunkSize is how many open positions Settle holds in memory at a
// time.
const SettleChunkSize = 2000

// Settle resolves market marketID by st in one transaction, holding at
// most about SettleChunkSize open positions in memory at a time (see
// market.Store): market.ErrMarketNotFound, or the error of st.Begin
// (market.ErrResolved) with nothing written. On a deadlock or
// serialization failure it runs again from the start.
func (s *Store) Settle(ctx context.Context, marketID int64, st market.Settlement) error {
	return s.settleInChunks(ctx, marketID, SettleChunkSize, st)
}

// settleInChunks is Settle with chunks of chunkSize positions.
func (s *Store) settleInChunks(ctx context.Context, marketID int64, chunkSize int, st market.Settlement) error {
	err := retry(ctx, s.retries, func() error {
		return s.settle(ctx, marketID, max(chunkSize, 1), st)
	})
	return translate(err, nil)
}

// heldPosition is an open position with its holder's user account id.
type heldPosition struct {
	account int64
	pos     *market.Position
}

// settle is one attempt of Settle.
func (s *Store) settle(ctx context.Context, marketID int64, chunkSize int, st market.Settlement) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release(conn)

	escrow := account.EscrowAccount(marketID)
	m, acc, err := beginSettle(ctx, conn, marketID)
	if err != nil {
		return err
	}
	if m == nil {
		return errNoMarket
	}
	if err := st.Begin(m); err != nil {
		return &decideError{err}
	}
	escrowID, escrowBal := acc.id[escrow], acc.balance[escrow]
	at := now()

	// carry holds the positions of the last holder of a fetch, whose other
	// position may come with the next one.
	var carry []heldPosition
	for {
		want := max(chunkSize-len(carry), 1)
		fetched, err := fetchHeld(ctx, conn, want)
		if err != nil {
			return err
		}
		rows := append(carry, fetched...)
		carry = nil
		last := len(fetched) < want
		if !last {
			cut := len(rows)
			for cut > 0 && rows[cut-1].account == rows[len(rows)-1].account {
				cut--
			}
			if cut == 0 {
				// One holder fills the chunk: read on until the next one.
				carry = rows
				continue
			}
			carry = slices.Clone(rows[cut:])
			rows = rows[:cut]
		}
		if len(rows) > 0 {
			if escrowBal, err = settleChunk(ctx, conn, m, st, rows, escrow, escrowID, escrowBal, at); err != nil {
				return err
			}
		}
		if last {
			break
		}
	}
	return finishSettle(ctx, conn, m, st, escrow, escrowID, escrowBal, at)
}

// beginSettle sends BEGIN, locks the market (nil when it does not exist)
// and its escrow, makes sure every holder has a user account and opens the
// cursor, in one round trip.
func beginSettle(ctx context.Context, conn *pgxpool.Conn, marketID int64) (*market.Market, *accounts, error) {
	kinds, owners := refArrays([]account.Ref{account.EscrowAccount(marketID)})
	none := []int64{}
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	b.Queue(sqlLockMarkets, []int64{marketID})
	b.Queue(sqlEnsureAccounts, kinds, owners, none, []string{})
	b.Queue(sqlLockAccounts, kinds, owners, none, []string{})
	b.Queue(sqlEnsureHolderAccounts, marketID)
	b.Queue(sqlDeclareSettle, marketID)
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, nil, err
	}
	m, err := scanMarket(br.QueryRow())
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, err
	}
	if _, err := br.Exec(); err != nil {
		return nil, nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, nil, err
	}
	acc, err := scanAccounts(rows)
	if err != nil {
		return nil, nil, err
	}
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return nil, nil, err
		}
	}
	return m, acc, br.Close()
}

// fetchHeld reads the next n positions of the cursor.
func fetchHeld(ctx context.Context, conn *pgxpool.Conn, n int) ([]heldPosition, error) {
	// FETCH takes no parameters; the simple protocol spares preparing
	// a statement per count.
	rows, err := conn.Query(ctx, fmt.Sprintf(`FETCH FORWARD %d FROM %s`, n, settleCursor), pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	out := make([]heldPosition, 0, n)
	for rows.Next() {
		var acct *int64
		p := &market.Position{}
		dest, finish := positionDest(p)
		if err := rows.Scan(append([]any{&acct}, dest...)...); err != nil {
			rows.Close()
			return nil, err
		}
		finish()
		if acct == nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: holder %d of position %d has no user account", p.UserID, p.ID)
		}
		out = append(out, heldPosition{*acct, p})
	}
	return out, rows.Err()
}

// settleChunk locks the user accounts of the holders of rows (ascending,
// as rows are), decides the chunk and writes it; it returns the escrow's
// balance after it.
func settleChunk(ctx context.Context, conn *pgxpool.Conn, m *market.Market, st market.Settlement, rows []heldPosition,
	escrow account.Ref, escrowID, escrowBal int64, at time.Time) (int64, error) {
	ids := make([]int64, 0, len(rows))
	positions := make([]*market.Position, len(rows))
	for i, r := range rows {
		if len(ids) == 0 || ids[len(ids)-1] != r.account {
			ids = append(ids, r.account)
		}
		positions[i] = r.pos
	}
	lr, err := conn.Query(ctx, sqlLockAccountIDs, ids)
	if err != nil {
		return 0, err
	}
	acc, err := scanAccounts(lr)
	if err != nil {
		return 0, err
	}
	if len(acc.id) != len(ids) {
		return 0, fmt.Errorf("postgres: locked %d of the %d accounts of a settlement chunk", len(acc.id), len(ids))
	}
	acc.id[escrow], acc.balance[escrow] = escrowID, escrowBal

	state := &market.State{Market: m, Balances: maps.Clone(acc.balance), Positions: positions, Now: at}
	eff, err := st.Chunk(state)
	if err != nil {
		return 0, &decideError{err}
	}
	w, err := plan(&load{accounts: acc, positions: positions}, []part{{m, eff}}, at)
	if err != nil {
		return 0, err
	}
	if err := w.send(ctx, conn); err != nil {
		return 0, err
	}
	for _, p := range eff.Postings {
		if p.From == escrow {
			escrowBal -= p.Amount
		}
		if p.To == escrow {
			escrowBal += p.Amount
		}
	}
	return escrowBal, nil
}

// finishSettle locks the treasury, decides the end of the settlement and
// writes it with COMMIT.
func finishSettle(ctx context.Context, conn *pgxpool.Conn, m *market.Market, st market.Settlement,
	escrow account.Ref, escrowID, escrowBal int64, at time.Time) error {
	kinds, owners := refArrays([]account.Ref{account.Treasury})
	none := []int64{}
	b := &pgx.Batch{}
	b.Queue(sqlEnsureAccounts, kinds, owners, none, []string{})
	b.Queue(sqlLockAccounts, kinds, owners, none, []string{})
	br := conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return err
	}
	acc, err := scanAccounts(rows)
	if err != nil {
		br.Close()
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	acc.id[escrow], acc.balance[escrow] = escrowID, escrowBal

	eff, err := st.Finish(&market.State{Market: m, Balances: maps.Clone(acc.balance), Now: at})
	if err != nil {
		return &decideError{err}
	}
	w, err := plan(&load{accounts: acc}, []part{{m, eff}}, at)
	if err != nil {
		return err
	}
	w.batch.Queue(`COMMIT`)
	return commitFailed(w.send(ctx, conn))
}
