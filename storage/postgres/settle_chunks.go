package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// A market with more open positions than the store's chunk settles in
// several transactions, so that a million holders do not hold the
// database's disks and CPUs for the length of one transaction while
// every other market trades around it (docs/settlement.md):
//
//  1. start: lock the market, check it (Settlement.Begin), lock its
//     escrow and fee account and the treasury, sum what its holders are
//     owed, decide once which accounts pay which kopecks (Sources,
//     market.Split from 0), check the treasury's bound, and write the
//     decision to settlement_progress and markets.settling; COMMIT. The
//     market now takes no trade and no second resolution (ErrClosed,
//     ErrResolved) and its answer says settling.
//  2. chunk: lock the market and its progress, take the next holders in
//     ascending user id order whose open positions number the chunk (the
//     last holder's all), and pay them as the one-transaction settlement
//     pays its holders (settle_pay, sqlPaySplit after the kopecks paid
//     before them, one UPDATE of their balances), move the paying
//     accounts' balances by what they paid, and advance the progress
//     past the last holder; COMMIT. Then sleep (Store.share).
//  3. finish, in the chunk that finds no holder left: Settlement.Finish
//     as the one-transaction settlement runs it (settling.finish: the
//     leftover, the market resolved, its notifications' ids, its
//     followers told, market_resolved logged), the progress deleted and
//     settling cleared; COMMIT.
//
// Each chunk pays its holders and advances the progress in one
// transaction, so a holder is paid once whatever stops the settlement in
// between; ResumeSettlements, which the server runs at start, goes on
// from the progress. Two runs of one settlement (a resumption beside the
// original, two instances) queue on the market's lock and each chunk
// reads the progress the last one left. The positions stay open in their
// rows until the finish resolves the market, which closes them all at
// once (settledCols): a holder paid by an early chunk sees its money
// before its position closes.

// sqlCountOpen counts the open positions of market $1, up to $2.
const sqlCountOpen = `SELECT count(*) FROM (SELECT 1 FROM positions WHERE market_id = $1 AND closed_at IS NULL LIMIT $2) x`

// sqlOwed is what the holders of market $1 are owed in all when it
// settles with outcome code $2 (Settlement.Payout summed).
var sqlOwed = `SELECT COALESCE(sum(` + payoutSQL("x", "$2::smallint") + `), 0)::bigint
FROM positions x WHERE x.market_id = $1 AND x.closed_at IS NULL`

const (
	sqlStartProgress = `INSERT INTO settlement_progress (market_id, outcome, resolved_by, settled_at, payers, lo, hi, total)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	sqlMarkSettling = `UPDATE markets SET settling = true WHERE id = $1`
	sqlReadProgress = `SELECT outcome, resolved_by, settled_at, payers, lo, hi, after_holder, paid, total, chunks
FROM settlement_progress WHERE market_id = $1 FOR UPDATE`
	// sqlChunkEnd is the last holder of the chunk of market $1 after
	// holder $2: that of the $3-th open position in user id order
	// (positions_market_open_user_idx); NULL when none is left.
	sqlChunkEnd = `SELECT max(user_id) FROM (SELECT user_id FROM positions
WHERE market_id = $1 AND closed_at IS NULL AND user_id > $2 ORDER BY user_id LIMIT $3) c`
	sqlChunkStaged = `SELECT count(*), COALESCE(sum(amount), 0)::bigint, count(*) FILTER (WHERE account IS NULL) FROM settle_pay`
	sqlAdvance     = `UPDATE settlement_progress SET after_holder = $2, paid = paid + $3, chunks = chunks + 1 WHERE market_id = $1`
	sqlOpenEnds    = `SELECT min(id), max(id) FROM positions WHERE market_id = $1 AND closed_at IS NULL`
	sqlEndProgress = `DELETE FROM settlement_progress WHERE market_id = $1`
	sqlEndSettling = `UPDATE markets SET settling = false WHERE id = $1`
	sqlSettlings   = `SELECT market_id FROM settlement_progress ORDER BY market_id`
)

// errNotChunked says the market's settlement does not go in chunks.
var errNotChunked = errors.New("postgres: the market settles in one transaction")

// chunked says whether market marketID settled by st goes in chunks: the
// store chunks, st pays from the market's own escrow (an exclusive
// pool's markets settle together, in one transaction) and the market has
// more open positions than a chunk.
func (s *Store) chunked(ctx context.Context, marketID int64, st market.Settlement) (bool, error) {
	if s.chunk <= 0 || st.Escrow != (account.Ref{}) || st.Keep {
		return false, nil
	}
	var n int
	if err := s.pool.QueryRow(ctx, sqlCountOpen, marketID, s.chunk+1).Scan(&n); err != nil {
		return false, translate(err, nil)
	}
	return n > s.chunk, nil
}

// settleInChunks starts the chunked settlement of market marketID by st,
// then runs it to its end: see the top of this file. An error after the
// start leaves the market settling, for ResumeSettlements.
func (s *Store) settleInChunks(ctx context.Context, marketID int64, st market.Settlement) error {
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error { return startChunks(ctx, tx, marketID, st) })
	if errors.Is(err, errNotChunked) {
		return s.settleOnce(ctx, marketID, st)
	}
	if err := translate(err, nil); err != nil {
		return err
	}
	// The holders are owed their money now: a caller that goes away
	// does not stop the settlement half way.
	return s.runChunks(context.WithoutCancel(ctx), marketID)
}

// startChunks is step 1 in transaction tx; errNotChunked if the market's
// own escrow does not pay it (an exclusive pool's market).
func startChunks(ctx context.Context, tx pgx.Tx, marketID int64, st market.Settlement) error {
	m, err := scanMarket(tx.QueryRow(ctx, sqlLockMarkets, []int64{marketID}))
	if errors.Is(err, pgx.ErrNoRows) {
		return errNoMarket
	} else if err != nil {
		return err
	}
	if err := st.Begin(m); err != nil {
		return &decideError{err}
	}
	if m.Exclusive {
		return errNotChunked
	}
	escrow := st.Sources(m, nil)[0].From
	pay := []account.Ref{escrow, account.FeeAccount(m.ID)}
	ensureKinds, ensureOwners := refArrays(append(slices.Clone(pay), account.Treasury))
	lockKinds, lockOwners := refArrays(pay)
	tKinds, tOwners := refArrays([]account.Ref{account.Treasury})
	none := []int64{}
	b := &pgx.Batch{}
	b.Queue(sqlEnsureAccounts, ensureKinds, ensureOwners, none, []string{})
	b.Queue(sqlLockAccounts, lockKinds, lockOwners, none, []string{})
	b.Queue(sqlSettleMemory)
	b.Queue(sqlOwed, m.ID, outcomeOf(st))
	b.Queue(sqlLockAccounts, tKinds, tOwners, none, []string{})
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return err
	}
	acc, err := queryAccounts(br)
	if err != nil {
		return err
	}
	if len(acc.id) != len(pay) {
		return fmt.Errorf("postgres: locked %d of a settlement's %d paying accounts", len(acc.id), len(pay))
	}
	if _, err := br.Exec(); err != nil {
		return err
	}
	var total int64
	if err := br.QueryRow().Scan(&total); err != nil {
		return err
	}
	tr, err := queryAccounts(br)
	if err != nil {
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	treasury, ok := tr.balance[account.Treasury]
	if !ok {
		return errors.New("postgres: the treasury is gone")
	}
	at := now()
	sources := st.Sources(m, acc.balance)
	parts, err := market.Split(0, total, sources)
	if err != nil {
		return &decideError{fmt.Errorf("market %d: %w", m.ID, err)}
	}
	ids := maps.Clone(acc.id)
	ids[account.Treasury] = tr.id[account.Treasury]
	payers, lo, hi := make([]int64, len(sources)), make([]int64, len(sources)), make([]int64, len(sources))
	var end int64
	for j, src := range sources {
		id, ok := ids[src.From]
		if !ok {
			return fmt.Errorf("postgres: a settlement pays from %s, which it did not lock", src.From)
		}
		payers[j], lo[j] = id, end
		if e, ok := account.Add(end, src.Cap); ok && src.Cap >= 0 {
			end = e
		} else {
			end = 1<<63 - 1
		}
		hi[j] = end
		if src.From == account.Treasury {
			// Finish's bound, checked before the first kopeck moves: a
			// chunk cannot take back what the chunks before it paid.
			if t, ok := account.Add(treasury, -parts[j]); !ok || t < -account.MaxExposure {
				return &decideError{fmt.Errorf("market %d: the refunds would take the treasury past its bound: %w", m.ID, account.ErrBalanceLimit)}
			}
		}
	}
	b = &pgx.Batch{}
	b.Queue(sqlStartProgress, m.ID, outcomeOf(st), string(resolverOf(st)), at, payers, lo, hi, total)
	b.Queue(sqlMarkSettling, m.ID)
	return sendAll(ctx, tx, b)
}

// resolverOf is who st says resolves the market.
func resolverOf(st market.Settlement) market.Resolver {
	if st.By == "" {
		return market.ResolvedByCreator
	}
	return st.By
}

// queryAccounts reads the next answer of br as sqlLockAccounts'.
func queryAccounts(br pgx.BatchResults) (*accounts, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return scanAccounts(rows)
}

// runChunks pays the chunks of market marketID's settlement until it is
// finished, sleeping between them as Store.share says.
func (s *Store) runChunks(ctx context.Context, marketID int64) error {
	for {
		began := time.Now()
		var done bool
		var chunks int
		err := s.settleTx(ctx, func(tx pgx.Tx, checked bool) error {
			var err error
			done, chunks, err = s.chunk1(ctx, tx, marketID, checked)
			return err
		})
		if err != nil || done {
			return err
		}
		if s.interrupt != nil {
			if err := s.interrupt(chunks); err != nil {
				return err
			}
		}
		if s.share < 1 {
			pause := time.Duration(float64(time.Since(began)) * (1 - s.share) / s.share)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pause):
			}
		}
	}
}

// progress is a settlement_progress row.
type progress struct {
	outcome     int16
	by          string
	at          time.Time
	payers      []int64
	lo, hi      []int64
	after       int64
	paid, total int64
	chunks      int
}

// plan is the Settlement the progress was started with.
func (p *progress) plan() market.Settlement {
	st := market.Settlement{By: market.Resolver(p.by)}
	if p.outcome == outcomeVoid {
		st.Void = true
	} else {
		st.Won = sideOf(p.outcome)
	}
	return st
}

// chunk1 is step 2 (or 3) in transaction tx: it pays the next chunk of
// market marketID's holders, or finishes the settlement (done) when none
// is left, or finds nothing to do (done: another run finished it). chunks
// is how many chunks have been paid.
func (s *Store) chunk1(ctx context.Context, tx pgx.Tx, marketID int64, checked bool) (done bool, chunks int, err error) {
	m, err := scanMarket(tx.QueryRow(ctx, sqlLockMarkets, []int64{marketID}))
	if err != nil {
		return false, 0, err
	}
	var p progress
	err = tx.QueryRow(ctx, sqlReadProgress, marketID).Scan(&p.outcome, &p.by, &p.at, &p.payers, &p.lo, &p.hi, &p.after, &p.paid, &p.total, &p.chunks)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, 0, nil
	} else if err != nil {
		return false, 0, err
	}
	st := p.plan()
	escrow := st.Sources(m, nil)[0].From
	pay := []account.Ref{escrow, account.FeeAccount(m.ID)}
	kinds, owners := refArrays(pay)
	var last *int64
	b := &pgx.Batch{}
	b.Queue(sqlLockAccounts, kinds, owners, []int64{}, []string{})
	b.Queue(sqlChunkEnd, m.ID, p.after, s.chunk)
	b.Queue(sqlSettleMemory)
	b.Queue(sqlCreatePay)
	b.Queue(sqlTreasury)
	br := tx.SendBatch(ctx, b)
	acc, err := queryAccounts(br)
	if err == nil {
		err = br.QueryRow().Scan(&last)
	}
	for range 2 {
		if err == nil {
			_, err = br.Exec()
		}
	}
	var treasury int64
	if err == nil {
		err = br.QueryRow().Scan(&treasury)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, 0, err
	}
	if len(acc.id) != len(pay) {
		return false, 0, fmt.Errorf("postgres: locked %d of a settlement's %d paying accounts", len(acc.id), len(pay))
	}
	if last == nil {
		return true, p.chunks, finishChunks(ctx, tx, s.changeChannel, m, &p, acc)
	}
	if err := payChunk(ctx, tx, checked, m, &p, *last, treasury); err != nil {
		return false, 0, err
	}
	return false, p.chunks + 1, nil
}

// payChunk pays the holders of market m after p.after up to holder last,
// moves the paying accounts' balances and advances p's row.
func payChunk(ctx context.Context, tx pgx.Tx, checked bool, m *market.Market, p *progress, last, treasuryID int64) error {
	b := &pgx.Batch{}
	b.Queue(stageChunkSQL(p.outcome == outcomeVoid), m.ID, p.outcome, p.after, last)
	b.Queue(`ANALYZE settle_pay`)
	b.Queue(sqlChunkStaged)
	br := tx.SendBatch(ctx, b)
	var holders, total, missing int64
	_, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&holders, &total, &missing)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if missing > 0 {
		b = &pgx.Batch{}
		b.Queue(sqlCreateHolderAccounts)
		b.Queue(sqlStageHolderAccounts)
		if err := sendAll(ctx, tx, b); err != nil {
			return err
		}
	}
	// What each paying account pays of this chunk: the part of its range
	// in [paid, paid+total), which sqlPaySplit splits among the holders.
	end, ok := account.Add(p.paid, total)
	if !ok || end > p.total {
		return fmt.Errorf("postgres: market %d's settlement would pay %d more than the %d it started with", m.ID, total, p.total)
	}
	var ids, deltas []int64
	paysTreasury := false
	for j, id := range p.payers {
		part := max(0, min(end, p.hi[j])-max(p.paid, p.lo[j]))
		if part > 0 {
			ids, deltas = append(ids, id), append(deltas, -part)
			paysTreasury = paysTreasury || id == treasuryID
		}
	}
	b = &pgx.Batch{}
	n := 0
	if holders > 0 {
		if checked {
			b.Queue(sqlPostingChecksOff)
		}
		b.Queue(sqlPaySplit, m.ID, p.payers, p.lo, p.hi, p.plan().Reason(), p.at, p.paid)
		if checked {
			b.Queue(sqlPostingChecksOn)
		}
		b.Queue(sqlCreditPlans)
		n = b.Len()
		b.Queue(sqlCredited)
		b.Queue(sqlCredit)
	}
	if paysTreasury {
		// Locked last, as every settlement locks it.
		kinds, owners := refArrays([]account.Ref{account.Treasury})
		b.Queue(sqlLockAccounts, kinds, owners, []int64{}, []string{})
	}
	if len(ids) > 0 {
		b.Queue(sqlAddBalances, ids, deltas)
	}
	b.Queue(sqlAdvance, m.ID, last, total)
	br = tx.SendBatch(ctx, b)
	defer br.Close()
	for i := range b.Len() {
		if holders > 0 && i == n {
			var credited int64
			if err := br.QueryRow().Scan(&credited); err != nil {
				return err
			}
			tag, err := br.Exec()
			if err == nil && tag.RowsAffected() != credited {
				err = fmt.Errorf("postgres: credited %d of a settlement's %d accounts", tag.RowsAffected(), credited)
			}
			if err != nil {
				return err
			}
			continue
		}
		if holders > 0 && i == n+1 {
			continue
		}
		if _, err := br.Exec(); err != nil {
			return &stmtError{at: i, last: b.Len() - 1, err: err}
		}
	}
	return br.Close()
}

// finishChunks is step 3 in transaction tx: Settlement.Finish on market
// m, whose holders p has paid, with its escrow and fee account locked
// (acc).
func finishChunks(ctx context.Context, tx pgx.Tx, channel string, m *market.Market, p *progress, acc *accounts) error {
	if p.paid != p.total {
		return fmt.Errorf("postgres: market %d's settlement paid %d of %d", m.ID, p.paid, p.total)
	}
	kinds, owners := refArrays([]account.Ref{account.Treasury})
	b := &pgx.Batch{}
	b.Queue(sqlOpenEnds, m.ID)
	b.Queue(sqlEndProgress, m.ID)
	b.Queue(sqlEndSettling, m.ID)
	b.Queue(sqlLockAccounts, kinds, owners, []int64{}, []string{})
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	var first, last *int64
	if err := br.QueryRow().Scan(&first, &last); err != nil {
		return err
	}
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	tr, err := queryAccounts(br)
	if err != nil {
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	treasury, ok := tr.balance[account.Treasury]
	if !ok {
		return errors.New("postgres: the treasury is gone")
	}
	m.Settling = false
	ids := maps.Clone(acc.id)
	ids[account.Treasury] = tr.id[account.Treasury]
	x := &settling{tx: tx, markets: []*market.Market{m}, plans: []market.Settlement{p.plan()}, at: p.at,
		ids: ids, start: acc.balance, left: maps.Clone(acc.balance), changeChannel: channel,
		staged: []staged{{first: first, last: last}}}
	fin, err := x.finish(treasury)
	if err != nil {
		return err
	}
	return sendAll(ctx, tx, fin)
}

// ResumeSettlements runs to their end the chunked settlements that were
// started and not finished (the process that ran them stopped), one after
// another. The server runs it at start; running it beside a settlement
// still under way elsewhere is safe (see the top of this file).
func (s *Store) ResumeSettlements(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, sqlSettlings)
	if err != nil {
		return translate(err, nil)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return translate(err, nil)
	}
	for _, id := range ids {
		if err := s.runChunks(ctx, id); err != nil {
			return fmt.Errorf("postgres: resume the settlement of market %d: %w", id, err)
		}
	}
	return nil
}

// SettleInChunks sets the size of a settlement's chunks (see
// WithSettlementChunks), with no sleep between them, and, when interrupt
// is not nil, calls it after each chunk with the number of chunks paid:
// an error stops the settlement there, as a crash would, and is returned.
// It is for tests (storage/storagetest) and must be called before the
// store is used.
func (s *Store) SettleInChunks(size int, interrupt func(chunk int) error) {
	s.chunk, s.share, s.interrupt = size, 1, interrupt
}
