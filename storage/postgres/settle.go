package postgres

import (
	"cmp"
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
// chunks, inside one transaction, and writes each chunk with one statement
// per kind of row, each over the whole chunk:
//
//  1. BEGIN, lock the market, its escrow and its fee account, make sure
//     the treasury and every holder's user account exist, make the
//     temporary table of credits, open the cursor and fetch the first
//     chunk (one round trip);
//  2. per chunk, in one round trip: fetch the next chunk, then write this
//     one, which was decided before: close its positions (one UPDATE),
//     insert its postings and stage what they credit (one INSERT), and
//     its notifications (one INSERT). The next chunk is decided while the
//     server writes this one;
//  3. lock the credited accounts in ascending id order and add up their
//     credits (one UPDATE each), lock the treasury (one round trip);
//     decide the finish, write it and the balances of the escrow, the fee
//     account and the treasury, and COMMIT (one more).
//
// The decisions are the market package's (market.Settlement); this file
// only moves rows. The cursor returns the positions ordered by holder, so
// a holder's positions (at most two per market, one per side:
// positions_open_key) are never split across chunks; its query sorts
// once, where paging with a key would sort every open position again for
// each page.
//
// Locks. The market's lock keeps the set of open positions still while the
// cursor reads it. The escrow and the fee account are locked first: only
// operations holding the market's lock touch them. The holders' accounts
// are not locked while the positions stream: a posting's foreign key takes
// a KEY SHARE lock on the account it credits, which trades (FOR NO KEY
// UPDATE) neither wait for nor block. Their balances change at the end,
// after one statement locks them all in ascending id order, as every money
// operation locks accounts; so a holder trading on another market waits
// for the end of a settlement at most, never for its whole length. The
// treasury is locked last, when every other account is locked already, so
// a settlement holds it only for its last round trip and never waits for
// anything while holding it; a void's refunds that the treasury pays are
// posted while streaming (a KEY SHARE lock again) and its balance moves at
// the end.

const settleCursor = `settle_positions`

// sqlDeclareSettle opens the cursor over market $1's open positions,
// holder by holder. The market's lock keeps the set of open positions still
// while the cursor reads it. It reads what a settlement decides on and
// writes (settledDest): every other column stays as it is, and narrow
// rows sort and travel cheaper.
var sqlDeclareSettle = `DECLARE ` + settleCursor + ` NO SCROLL CURSOR FOR
SELECT x.id, x.user_id, x.side, x.shares, x.cost_basis, x.spent, x.returned
FROM positions x
WHERE x.market_id = $1 AND x.closed_at IS NULL
ORDER BY x.user_id, x.id`

// settledDest returns the scan destinations of sqlDeclareSettle's columns
// into p, an open position of market marketID, and a function that
// finishes p once the row is scanned.
func settledDest(p *market.Position, marketID int64) ([]any, func()) {
	var side int16
	return []any{&p.ID, &p.UserID, &side, &p.Shares, &p.CostBasis, &p.Spent, &p.Returned}, func() {
		p.Side, p.MarketID = sideOf(side), marketID
	}
}

// sqlEnsureHolderAccounts creates the user account of every holder of
// market $1's open positions that has none. A holder has paid, so this
// finds nothing unless a position was written around the money path.
const sqlEnsureHolderAccounts = `INSERT INTO ledger_accounts (kind, owner)
SELECT DISTINCT 'user', x.user_id FROM positions x
WHERE x.market_id = $1 AND x.closed_at IS NULL
	AND NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.kind = 'user' AND a.owner = x.user_id)
ORDER BY 2
ON CONFLICT (kind, owner) DO NOTHING`

// sqlTreasury reads the treasury's id without locking it.
const sqlTreasury = `SELECT id FROM ledger_accounts WHERE kind = 'platform_treasury' AND owner = 0`

// settle_credits holds what the settlement's postings credit, account by
// account, until the accounts are locked at the end. A temporary table
// writes no WAL, and it goes with the transaction.
const sqlCreateCredits = `CREATE TEMPORARY TABLE settle_credits (account bigint NOT NULL, amount bigint NOT NULL) ON COMMIT DROP`

// sqlSettlePostings inserts a chunk's postings, each from account $1[i]
// to the user account of holder $2[i], and stages what they credit. The
// holder's account is found through the unique (kind, owner) index, one
// at a time, as the lookups of a trade are.
const sqlSettlePostings = `WITH p AS (
	INSERT INTO postings (from_account, to_account, amount, reason, created_at)
	SELECT u.from_account, a.id, u.amount, u.reason, u.created_at
	FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::timestamptz[])
		WITH ORDINALITY AS u(from_account, holder, amount, reason, created_at, ord)
	CROSS JOIN LATERAL (SELECT a.id FROM ledger_accounts a WHERE a.kind = 'user' AND a.owner = u.holder OFFSET 0) a
	ORDER BY u.ord
	RETURNING to_account, amount
)
INSERT INTO settle_credits (account, amount) SELECT to_account, amount FROM p`

// sqlLockCredited locks every account the settlement credits, in
// ascending id order.
const sqlLockCredited = `SELECT count(*) FROM (
	SELECT a.id FROM ledger_accounts a
	WHERE a.id IN (SELECT c.account FROM settle_credits c)
	ORDER BY a.id
	FOR NO KEY UPDATE OF a) l`

// sqlAddCredits adds to each credited account what the settlement paid it.
const sqlAddCredits = `UPDATE ledger_accounts a SET balance = a.balance + c.amount
FROM (SELECT account, sum(amount)::bigint AS amount FROM settle_credits GROUP BY account) c
WHERE a.id = c.account`

// sqlSettlePositions closes a chunk's positions $1, by id: what they
// returned ($2) and their realization ($3) differ from one to the next;
// the rest a settlement sets alike on every position it closes (cost
// basis $4, updated_at and closed_at $5, won_side $6). Three arrays
// instead of one per mutable column made the statement about a quarter
// cheaper (database CPU time, 10,000 positions). The redundant
// x.id = ANY($1) keeps the planner on the primary key, as in
// sqlUpdatePositions.
const sqlSettlePositions = `UPDATE positions x SET returned = u.returned, settle_pnl = u.settle_pnl,
	cost_basis = $4, updated_at = $5, closed_at = $5, won_side = $6
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS u(id, returned, settle_pnl)
WHERE x.id = u.id AND x.id = ANY($1)`

// SettleChunkSize is how many open positions Settle holds in memory at a
// time.
const SettleChunkSize = 10_000

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

// settling is the state of one attempt of Settle between its round trips.
type settling struct {
	conn *pgxpool.Conn
	m    *market.Market
	st   market.Settlement
	at   time.Time
	// ids are the ledger ids of the escrow, the fee account and the
	// treasury; start the balances of the escrow and the fee account at
	// the start, left as the chunks decided so far leave them, and
	// treasury what those chunks take from the treasury.
	ids         map[account.Ref]int64
	start, left map[account.Ref]int64
	treasury    int64
	// changeChannel is the store's (see queueChanges).
	changeChannel string
}

// settle is one attempt of Settle.
func (s *Store) settle(ctx context.Context, marketID int64, chunkSize int, st market.Settlement) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release(conn)

	x := &settling{conn: conn, st: st, changeChannel: s.changeChannel}
	fetched, err := x.begin(ctx, marketID, chunkSize)
	if err != nil {
		return err
	}
	// carry holds the positions of the last holder of a fetch, whose other
	// position may come with the next one.
	var carry []*market.Position
	// next makes the chunk after the fetched positions came: every holder
	// but the last, unless no more will come (last).
	next := func(fetched []*market.Position) (rows []*market.Position, last bool) {
		last = len(fetched) < chunkSize
		rows = append(carry, fetched...)
		carry = nil
		if !last {
			cut := len(rows)
			for cut > 0 && rows[cut-1].UserID == rows[len(rows)-1].UserID {
				cut--
			}
			carry = slices.Clone(rows[cut:])
			rows = rows[:cut]
		}
		return rows, last
	}
	rows, last := next(fetched)
	w, err := x.prepare(rows)
	if err != nil {
		return err
	}
	// Each round trip fetches the chunk after the one it writes, and
	// the fetch comes first: the next chunk is decided while the server
	// is still writing this one.
	for {
		b := &pgx.Batch{}
		if !last {
			queueFetch(b, chunkSize)
		}
		b.QueuedQueries = append(b.QueuedQueries, w.batch.QueuedQueries...)
		if b.Len() == 0 {
			break
		}
		br := x.conn.SendBatch(ctx, b)
		var nextRows []*market.Position
		var nextLast bool
		var nextW *chunkWrites
		if !last {
			fetched, err := scanFetch(br, marketID, chunkSize)
			if err == nil {
				nextRows, nextLast = next(fetched)
				nextW, err = x.prepare(nextRows)
			}
			if err != nil {
				br.Close()
				return err
			}
		}
		if err := w.check(br); err != nil {
			br.Close()
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		if last {
			break
		}
		rows, last, w = nextRows, nextLast, nextW
	}
	return x.finish(ctx)
}

// begin sends BEGIN and locks the market, its escrow and its fee account,
// makes sure the treasury and every holder's account exist, opens the
// cursor and fetches the first n positions, in one round trip.
func (x *settling) begin(ctx context.Context, marketID int64, n int) ([]*market.Position, error) {
	escrow, fees := account.EscrowAccount(marketID), account.FeeAccount(marketID)
	ensureKinds, ensureOwners := refArrays([]account.Ref{escrow, fees, account.Treasury})
	lockKinds, lockOwners := refArrays([]account.Ref{escrow, fees})
	none := []int64{}
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	b.Queue(sqlLockMarkets, []int64{marketID})
	b.Queue(sqlEnsureAccounts, ensureKinds, ensureOwners, none, []string{})
	b.Queue(sqlLockAccounts, lockKinds, lockOwners, none, []string{})
	b.Queue(sqlTreasury)
	b.Queue(sqlEnsureHolderAccounts, marketID)
	b.Queue(sqlCreateCredits)
	b.Queue(sqlDeclareSettle, marketID)
	queueFetch(b, n)
	br := x.conn.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	m, err := scanMarket(br.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoMarket
	} else if err != nil {
		return nil, err
	}
	if err := x.st.Begin(m); err != nil {
		return nil, &decideError{err}
	}
	x.m = m
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	acc, err := scanAccounts(rows)
	if err != nil {
		return nil, err
	}
	if len(acc.id) != 2 {
		return nil, fmt.Errorf("postgres: locked %d of market %d's escrow and fee account", len(acc.id), marketID)
	}
	x.ids, x.start, x.left = acc.id, acc.balance, maps.Clone(acc.balance)
	var treasury int64
	if err := br.QueryRow().Scan(&treasury); err != nil {
		return nil, err
	}
	x.ids[account.Treasury] = treasury
	for range 3 {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	fetched, err := scanFetch(br, marketID, n)
	if err != nil {
		return nil, err
	}
	// The clock is read once the market is locked, so that a settlement's
	// time follows the trades before it.
	x.at = now()
	return fetched, br.Close()
}

// queueFetch queues the fetch of the cursor's next n positions. FETCH
// takes no parameters; n is the chunk size, so the statement is prepared
// once per connection.
func queueFetch(b *pgx.Batch, n int) {
	b.Queue(fmt.Sprintf(`FETCH FORWARD %d FROM %s`, n, settleCursor))
}

// scanFetch reads the positions of market marketID of a queued fetch.
func scanFetch(br pgx.BatchResults, marketID int64, n int) ([]*market.Position, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	out := make([]*market.Position, 0, n)
	for rows.Next() {
		p := &market.Position{}
		dest, finish := settledDest(p, marketID)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		finish()
		out = append(out, p)
	}
	return out, rows.Err()
}

// chunkWrites are the statements that write a decided chunk.
type chunkWrites struct {
	batch *pgx.Batch
	// postingsAt is the place of the postings' statement in batch, -1
	// for none, and postings their number.
	postingsAt, postings int
}

// prepare decides the chunk of rows (every position of each of their
// holders) and queues its writes; they draw on x.left, so chunks are
// prepared in order.
func (x *settling) prepare(rows []*market.Position) (*chunkWrites, error) {
	w := &chunkWrites{batch: &pgx.Batch{}, postingsAt: -1}
	if len(rows) == 0 {
		return w, nil
	}
	st := &market.State{Market: x.m, Positions: rows, Now: x.at, Balances: maps.Clone(x.left)}
	eff, err := x.st.Chunk(st)
	if err != nil {
		return nil, &decideError{err}
	}
	if err := x.queueChunk(w, rows, eff); err != nil {
		return nil, err
	}
	return w, nil
}

// check reads the answers to w's statements from br, which has answered
// every statement queued before them.
func (w *chunkWrites) check(br pgx.BatchResults) error {
	for i := range w.batch.Len() {
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		if i == w.postingsAt && tag.RowsAffected() != int64(w.postings) {
			return fmt.Errorf("postgres: wrote %d of a settlement chunk's %d postings", tag.RowsAffected(), w.postings)
		}
	}
	return nil
}

// queueChunk checks the Effects of a chunk against its positions and the
// accounts a settlement may pay from, and queues their writes in w: the
// positions, the postings, the notifications.
func (x *settling) queueChunk(w *chunkWrites, rows []*market.Position, eff *market.Effects) error {
	b := w.batch
	if len(eff.Trades) > 0 || eff.Market != nil || eff.PoolWonSide != nil || len(eff.DropSubAccounts) > 0 {
		return errors.New("postgres: a settlement chunk decided more than positions, postings and notifications")
	}
	holders := make(map[int64]bool, len(rows))
	loaded := make(map[int64]*market.Position, len(rows))
	for _, p := range rows {
		holders[p.UserID], loaded[p.ID] = true, p
	}
	realized := make(map[int64]int64, len(eff.PnL))
	for _, e := range eff.PnL {
		if e.Position == nil || loaded[e.Position.ID] == nil {
			return errors.New("postgres: a settlement realized a position of no chunk")
		}
		if _, dup := realized[e.Position.ID]; dup {
			return fmt.Errorf("postgres: a settlement realized position %d twice", e.Position.ID)
		}
		realized[e.Position.ID] = e.Delta
	}
	if len(eff.Positions) > 0 {
		args, err := settlePositionArgs(eff.Positions, loaded, realized)
		if err != nil {
			return err
		}
		b.Queue(sqlSettlePositions, args...)
	}

	n := len(eff.Postings)
	from, holder, amount := make([]int64, n), make([]int64, n), make([]int64, n)
	reason, times := make([]string, n), make([]time.Time, n)
	for i, p := range eff.Postings {
		id, ok := x.ids[p.From]
		if !ok {
			return fmt.Errorf("postgres: a settlement pays from %s", p.From)
		}
		if p.To.Kind != account.KindUser || !holders[p.To.Owner] || p.Amount <= 0 {
			return fmt.Errorf("postgres: a settlement pays %d to %s, no holder of its chunk", p.Amount, p.To)
		}
		if p.From == account.Treasury {
			x.treasury -= p.Amount
		} else {
			x.left[p.From] -= p.Amount
			if x.left[p.From] < 0 {
				return &decideError{fmt.Errorf("postgres: %s: %w", p.From, account.ErrInsufficientFunds)}
			}
		}
		from[i], holder[i], amount[i], reason[i], times[i] = id, p.To.Owner, p.Amount, p.Reason, cmpTime(p.At, x.at)
	}
	if n > 0 {
		w.postingsAt, w.postings = b.Len(), n
		b.Queue(sqlSettlePostings, from, holder, amount, reason, times)
	}
	if len(eff.Notifications) > 0 {
		args, err := notificationArgs(eff.Notifications, x.at)
		if err != nil {
			return err
		}
		b.Queue(sqlInsertNotifications, args...)
	}
	return nil
}

// settlePositionArgs returns the arguments of sqlSettlePositions for
// ps, the positions a chunk closes, each one of loaded with its
// realization. It refuses a position the chunk does not hold, one left
// open or unrealized, one changed in anything but what a settlement
// changes, and positions closed unlike one another.
func settlePositionArgs(ps []*market.Position, loaded map[int64]*market.Position, realized map[int64]int64) ([]any, error) {
	first := ps[0]
	if first.Open() {
		return nil, fmt.Errorf("postgres: a settlement left position %d open", first.ID)
	}
	ids, returned, pnl := make([]int64, len(ps)), make([]int64, len(ps)), make([]int64, len(ps))
	for i, p := range ps {
		was := loaded[p.ID]
		if was == nil {
			return nil, fmt.Errorf("postgres: a settlement changed position %d, which its chunk does not hold", p.ID)
		}
		r, ok := realized[p.ID]
		if !ok {
			return nil, fmt.Errorf("postgres: a settlement closed position %d without realizing it", p.ID)
		}
		// What a settlement changes: the rest must be as loaded, and the
		// closing alike for every position.
		c := *p
		c.Returned, c.CostBasis, c.UpdatedAt, c.ClosedAt, c.WonSide = was.Returned, was.CostBasis, was.UpdatedAt, was.ClosedAt, was.WonSide
		if c != *was || p.Open() || p.CostBasis != first.CostBasis || !p.UpdatedAt.Equal(first.UpdatedAt) ||
			!p.ClosedAt.Equal(*first.ClosedAt) || !p.UpdatedAt.Equal(*p.ClosedAt) || *p.WonSide != *first.WonSide {
			return nil, fmt.Errorf("postgres: a settlement changed position %d in more than how it closes", p.ID)
		}
		ids[i], returned[i], pnl[i] = p.ID, p.Returned, r
	}
	// In id order, which is about the order the rows lie in: the
	// positions of a chunk come holder by holder, from all over the
	// table, and updating them in the table's order visits each page
	// once, while it is still in the buffer cache.
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ids[a], ids[b]) })
	sorted := func(v []int64) []int64 {
		out := make([]int64, len(v))
		for i, j := range order {
			out[i] = v[j]
		}
		return out
	}
	return []any{sorted(ids), sorted(returned), sorted(pnl), first.CostBasis, dbTime(*first.ClosedAt), int16(*first.WonSide)}, nil
}

// cmpTime is t, or at if t is zero.
func cmpTime(t, at time.Time) time.Time {
	if t.IsZero() {
		return at
	}
	return dbTime(t)
}

// finish locks the credited accounts and adds their credits, locks the
// treasury, decides the end of the settlement and writes it with the
// balances of the escrow, the fee account and the treasury, and COMMIT.
func (x *settling) finish(ctx context.Context) error {
	kinds, owners := refArrays([]account.Ref{account.Treasury})
	none := []int64{}
	b := &pgx.Batch{}
	b.Queue(`ANALYZE settle_credits`)
	b.Queue(sqlLockCredited)
	b.Queue(sqlAddCredits)
	b.Queue(sqlLockAccounts, kinds, owners, none, []string{})
	br := x.conn.SendBatch(ctx, b)
	for range 3 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
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
	treasury, ok := acc.balance[account.Treasury]
	if !ok {
		return errors.New("postgres: the treasury is gone")
	}
	escrow, fees := account.EscrowAccount(x.m.ID), account.FeeAccount(x.m.ID)
	// What the chunks took from the treasury is not written yet; Finish
	// sees the treasury as they leave it.
	t, ok := account.Add(treasury, x.treasury)
	if !ok {
		return &decideError{fmt.Errorf("market %d: the refunds would take the treasury out of int64: %w", x.m.ID, account.ErrBalanceLimit)}
	}
	fin, err := x.st.Finish(&market.State{Market: x.m, Now: x.at,
		Balances: map[account.Ref]int64{escrow: x.left[escrow], account.Treasury: t}})
	if err != nil {
		return &decideError{err}
	}
	if len(fin.Positions) > 0 || len(fin.PnL) > 0 || len(fin.Notifications) > 0 || len(fin.Trades) > 0 || fin.Market == nil {
		return errors.New("postgres: a settlement's finish decided more than postings and the market")
	}
	// The net change of each of the three accounts the settlement moved
	// besides the holders': what the chunks took, and the finish.
	net := map[account.Ref]int64{account.Treasury: x.treasury}
	for _, r := range []account.Ref{escrow, fees} {
		net[r] = x.left[r] - x.start[r]
	}
	for _, p := range fin.Postings {
		if _, ok := x.ids[p.From]; !ok {
			return fmt.Errorf("postgres: a settlement's finish pays from %s", p.From)
		}
		if _, ok := x.ids[p.To]; !ok {
			return fmt.Errorf("postgres: a settlement's finish pays to %s", p.To)
		}
		net[p.From] -= p.Amount
		net[p.To] += p.Amount
	}
	a := &accounts{id: x.ids}
	var ids, deltas []int64
	for _, r := range []account.Ref{escrow, fees, account.Treasury} {
		if net[r] != 0 {
			ids, deltas = append(ids, x.ids[r]), append(deltas, net[r])
		}
	}
	w := &pgx.Batch{}
	if len(fin.Postings) > 0 {
		w.Queue(sqlInsertPostings, a.postingArrays(fin.Postings, func(int) int64 { return 0 }, x.at)...)
	}
	if len(ids) > 0 {
		w.Queue(sqlAddBalances, ids, deltas)
	}
	w.Queue(sqlUpdateMarkets, updateMarketArgs([]*market.Market{fin.Market})...)
	if fin.PoolWonSide != nil {
		w.Queue(sqlSetPoolWonSide, x.m.PoolID, int32(*fin.PoolWonSide))
	}
	queueChanges(w, x.changeChannel, resolvedChanges(fin))
	w.Queue(`COMMIT`)
	return commitFailed(sendAll(ctx, x.conn, w))
}

// sendAll sends b and reads every answer, saying which statement failed.
func sendAll(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch) error {
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	n := b.Len()
	for i := range n {
		if _, err := br.Exec(); err != nil {
			return &stmtError{at: i, last: n - 1, err: err}
		}
	}
	return br.Close()
}
