package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// sqlInsertEffects writes everything an Effects creates in one statement,
// the change log's entries included. New rows that others refer to
// (positions, trades, notifications) take their ids from their sequences
// up front, numbered 1..n in id order, so that postings, price points, PnL
// events and entries name their trade, position or notification by that
// number and the ids come back in the order they were asked for.
//
// $1, $2 and $3 are the numbers of new positions, trades and
// notifications; the arrays of each table follow in turn, in the order
// plan appends them. It is the last statement of the writes' first round
// trip: the change log's entries name the ids it returns, so they follow
// in a second one, with COMMIT (writes.send).
var sqlInsertEffects = func() string {
	positionsAt := 4
	tradesAt := positionsAt + len(newPositionColumns)
	postingsAt := tradesAt + len(newTradeColumns)
	pricesAt := postingsAt + len(postingParams)
	pnlAt := pricesAt + len(priceParams)
	notesAt := pnlAt + len(pnlParams)
	return `WITH
p_ids AS MATERIALIZED (
	SELECT row_number() OVER (ORDER BY s.id) AS ord, s.id
	FROM (SELECT nextval('positions_id_seq') AS id FROM generate_series(1, $1::int)) s
),
t_ids AS MATERIALIZED (
	SELECT row_number() OVER (ORDER BY s.id) AS ord, s.id
	FROM (SELECT nextval('trades_id_seq') AS id FROM generate_series(1, $2::int)) s
),
n_ids AS MATERIALIZED (
	SELECT row_number() OVER (ORDER BY s.id) AS ord, s.id
	FROM (SELECT nextval('notifications_id_seq') AS id FROM generate_series(1, $3::int)) s
),
new_positions AS (
	` + insertPositions(positionsAt) + `
),
new_trades AS (
	` + insertTrades(tradesAt) + `
),
new_postings AS (
	INSERT INTO postings (from_account, to_account, amount, reason, trade_id, created_at)
	SELECT u.from_account, u.to_account, u.amount, u.reason, COALESCE(i.id, NULLIF(u.trade_id, 0)), u.created_at
	FROM ` + unnest(postingsAt, postingParams) + `
		WITH ORDINALITY AS u(` + nameList(postingParams) + `, ord)
	LEFT JOIN t_ids i ON i.ord = u.trade_ord
	ORDER BY u.ord
),
new_prices AS (
	INSERT INTO price_points (market_id, trade_id, at, yes_probability, q_yes, q_no)
	SELECT u.market_id, COALESCE(i.id, NULLIF(u.trade_id, 0)), u.at, u.yes_probability, u.q_yes, u.q_no
	FROM ` + unnest(pricesAt, priceParams) + `
		WITH ORDINALITY AS u(` + nameList(priceParams) + `, ord)
	LEFT JOIN t_ids i ON i.ord = u.trade_ord
	ORDER BY u.ord
),
new_pnl AS (
	INSERT INTO pnl_events (user_id, position_id, at, delta)
	SELECT u.user_id, COALESCE(NULLIF(u.position_id, 0), i.id), u.at, u.delta
	FROM ` + unnest(pnlAt, pnlParams) + `
		WITH ORDINALITY AS u(` + nameList(pnlParams) + `, ord)
	LEFT JOIN p_ids i ON i.ord = u.position_ord
	ORDER BY u.ord
),
new_notifications AS (
	INSERT INTO notifications (id, ` + nameList(notificationParams) + `)
	SELECT i.id, ` + valueList("u", notificationParams) + `
	FROM ` + unnest(notesAt, notificationParams) + `
		WITH ORDINALITY AS u(` + nameList(notificationParams) + `, ord)
	JOIN n_ids i ON i.ord = u.ord
	ORDER BY u.ord
)
SELECT
	COALESCE((SELECT array_agg(id ORDER BY ord) FROM p_ids), '{}'),
	COALESCE((SELECT array_agg(id ORDER BY ord) FROM t_ids), '{}'),
	COALESCE((SELECT array_agg(id ORDER BY ord) FROM n_ids), '{}')`
}()

// The arrays sqlInsertEffects takes for postings, price points and PnL
// events. A trade_ord or position_ord is the number of a new trade or
// position in this statement (0 for none); a trade_id or position_id
// names one that exists already (0 for none).
var (
	postingParams = []column{
		{name: "from_account", typ: "bigint"},
		{name: "to_account", typ: "bigint"},
		{name: "amount", typ: "bigint"},
		{name: "reason", typ: "text"},
		{name: "trade_ord", typ: "bigint"},
		{name: "trade_id", typ: "bigint"},
		{name: "created_at", typ: "timestamptz"},
	}
	priceParams = []column{
		{name: "market_id", typ: "bigint"},
		{name: "trade_ord", typ: "bigint"},
		{name: "trade_id", typ: "bigint"},
		{name: "at", typ: "timestamptz"},
		{name: "yes_probability", typ: "float8"},
		{name: "q_yes", typ: "bigint"},
		{name: "q_no", typ: "bigint"},
	}
	pnlParams = []column{
		{name: "user_id", typ: "bigint"},
		{name: "position_ord", typ: "bigint"},
		{name: "position_id", typ: "bigint"},
		{name: "at", typ: "timestamptz"},
		{name: "delta", typ: "bigint"},
	}
)

// A pool's won side is the first market of it to resolve YES; a later one
// (which the domain prevents) does not overwrite it.
const sqlSetPoolWonSide = `UPDATE pools SET won_side = COALESCE(won_side, $2) WHERE id = $1`

// sqlDeleteSubAccounts removes sub-accounts this transaction created that
// no trade used, with the empty ledger accounts made to lock them.
const sqlDeleteSubAccounts = `WITH gone AS (
	DELETE FROM ledger_accounts WHERE kind IN ('user', 'user_bonus') AND owner = ANY($1)
)
DELETE FROM users WHERE id = ANY($1)`

// writes is the Effects of an attempt turned into the statements that
// store them.
type writes struct {
	trades []*market.TradeEffect
	// dropped are the sub-accounts the writes delete again.
	dropped []int64
	newPos  []*market.Position
	// notes are the new notifications, which get their ids back.
	notes []*social.Notification
	batch *pgx.Batch
	// insertAt is the place of sqlInsertEffects in the batch, -1 if none.
	insertAt int
	// log is what the change log's entries are made of, nil when the
	// writes log nothing.
	log *tradeLog
	// channel is where the store announces new entries.
	channel string
}

// tradeLog is what a trade's change-log entries are built from
// (market.PrepareChanges, completed once the ids are known): the Effects,
// the balances the decision saw, and the trade's time.
type tradeLog struct {
	parts  []part
	before map[account.Ref]int64
	at     time.Time
}

// plan checks the parts' Effects against what the transaction locked and
// builds the batch that writes them all; the caller queues COMMIT after
// it. Everything that could refuse them is checked here, because once the
// batch is sent nothing stops the commit but an error of the database.
// With logged (a trade, not a settlement), send writes the change log's
// entries of the trades too (market.PrepareChanges) before it commits.
func (s *Store) plan(l *load, parts []part, at time.Time, logged bool) (*writes, error) {
	w := &writes{batch: &pgx.Batch{}, insertAt: -1, channel: s.changeChannel}
	a, loaded := l.accounts, l.positions

	// Positions: new ones by pointer (a trade, a PnL entry and Positions
	// share it), changed ones by id, which must be among those locked.
	isLoaded := make(map[int64]bool, len(loaded))
	for _, p := range loaded {
		isLoaded[p.ID] = true
	}
	newOrd := map[*market.Position]int64{}
	changed := map[int64]*market.Position{}
	var changedOrder []int64
	addPos := func(p *market.Position) error {
		if p == nil {
			return nil
		}
		if p.ID == 0 {
			if _, ok := newOrd[p]; !ok {
				w.newPos = append(w.newPos, p)
				newOrd[p] = int64(len(w.newPos))
			}
			return nil
		}
		if !isLoaded[p.ID] {
			return fmt.Errorf("postgres: decision changed position %d, which the operation did not lock", p.ID)
		}
		if _, ok := changed[p.ID]; !ok {
			changedOrder = append(changedOrder, p.ID)
		}
		changed[p.ID] = p
		return nil
	}
	// Postings, in the order the decisions made them: those of each
	// trade, then the rest, market after market. tradeMarket is the
	// market of each trade, for price points that do not name theirs.
	var postings []account.Posting
	var tradeOrd, tradeMarket []int64
	var pnl []market.PnLEntry
	var updated []*market.Market
	for _, pt := range parts {
		m, eff := pt.m, pt.eff
		for _, p := range eff.Positions {
			if err := addPos(p); err != nil {
				return nil, err
			}
		}
		for _, te := range eff.Trades {
			if err := addPos(te.Position); err != nil {
				return nil, err
			}
		}
		for _, e := range eff.PnL {
			if e.Position == nil {
				return nil, errors.New("postgres: PnL entry without a position")
			}
			if err := addPos(e.Position); err != nil {
				return nil, err
			}
		}
		for _, te := range eff.Trades {
			if te.Trade == nil {
				return nil, errors.New("postgres: trade effect without a trade")
			}
			w.trades = append(w.trades, te)
			tradeMarket = append(tradeMarket, m.ID)
			for _, p := range te.Postings {
				postings = append(postings, p)
				tradeOrd = append(tradeOrd, int64(len(w.trades)))
			}
		}
		for _, p := range eff.Postings {
			postings = append(postings, p)
			tradeOrd = append(tradeOrd, 0)
		}
		pnl = append(pnl, eff.PnL...)
		for i := range eff.Notifications {
			w.notes = append(w.notes, &eff.Notifications[i])
		}
		for _, pm := range eff.Pool {
			if pm.ID == m.ID {
				continue // eff.Market
			}
			if pm.PoolID != m.PoolID || l.markets[pm.ID] == nil {
				return nil, fmt.Errorf("postgres: decision on market %d changed market %d, which the operation did not lock with its pool", m.ID, pm.ID)
			}
			updated = append(updated, pm)
		}
		if nm := eff.Market; nm != nil {
			if nm.ID != m.ID {
				return nil, fmt.Errorf("postgres: decision on market %d changed market %d", m.ID, nm.ID)
			}
			updated = append(updated, nm)
		}
	}
	// Two markets of one exclusive pool in a batch each write the whole
	// pool: the later decision saw the earlier's, so its state is the one
	// to keep, and one UPDATE must name each row once.
	updated = lastOfEach(updated)
	if err := a.check(postings); err != nil {
		return nil, err
	}
	accIDs, deltas, err := a.deltas(postings)
	if err != nil {
		return nil, err
	}

	if logged {
		w.log = &tradeLog{parts: parts, before: l.accounts.balance, at: at}
	}

	if len(changedOrder) > 0 {
		w.batch.Queue(sqlUpdatePositions, updatePositionArgs(changedOrder, changed)...)
	}
	if len(accIDs) > 0 {
		w.batch.Queue(sqlAddBalances, accIDs, deltas)
	}
	if len(updated) > 0 {
		w.batch.Queue(sqlUpdateMarkets, updateMarketArgs(updated)...)
	}
	for _, pt := range parts {
		if pt.eff.PoolWonSide != nil {
			w.batch.Queue(sqlSetPoolWonSide, pt.m.PoolID, int32(*pt.eff.PoolWonSide))
		}
	}
	for _, pt := range parts {
		for _, id := range pt.eff.DropSubAccounts {
			if !l.created[id] {
				return nil, fmt.Errorf("postgres: decision dropped sub-account %d, which the transaction did not create", id)
			}
			w.dropped = append(w.dropped, id)
		}
	}
	if len(w.dropped) > 0 {
		w.batch.Queue(sqlDeleteSubAccounts, w.dropped)
	}
	// Before the effects' insert, which takes the change log's counter
	// last.
	queueCandles(w.batch, w.trades, tradeMarket, at)
	if len(w.newPos) > 0 || len(w.trades) > 0 || len(postings) > 0 || len(pnl) > 0 || len(w.notes) > 0 {
		args := []any{int32(len(w.newPos)), int32(len(w.trades)), int32(len(w.notes))}
		args = append(args, newPositionArgs(w.newPos)...)
		args = append(args, tradeArgs(w.trades)...)
		pa := a.postingArrays(postings, func(i int) int64 { return tradeOrd[i] }, at)
		// postingArrays gives (from, to, amount, reason, ref, times); here
		// ref is the trade's number, and a posting of no trade may still
		// name a trade by id.
		ids := make([]int64, len(postings))
		for i, p := range postings {
			if tradeOrd[i] == 0 {
				ids[i] = p.TradeID
			}
		}
		args = append(args, pa[0], pa[1], pa[2], pa[3], pa[4], ids, pa[5])
		args = append(args, priceArgs(w.trades, tradeMarket, at)...)
		args = append(args, pnlArgs(pnl, newOrd, at)...)
		args = append(args, notificationArrays(len(w.notes), func(i int) *social.Notification { return w.notes[i] }, at)...)
		w.insertAt = w.batch.Len()
		w.batch.Queue(sqlInsertEffects, args...)
	}
	return w, nil
}

// send writes the batch, then the change log's entries, which name the
// ids the batch returned, and COMMIT, in a second round trip (with
// nothing to log, COMMIT ends the batch). On success
// it sets the ids of new positions and trades, and the trade ids of their
// postings and price points, in the Effects. mayHaveCommitted says that
// an error came from the second round trip, with COMMIT.
func (w *writes) send(ctx context.Context, conn batchSender) (mayHaveCommitted bool, err error) {
	if w.log == nil {
		// Nothing to log: the writes and COMMIT go in one round trip.
		w.batch.Queue(`COMMIT`)
		return true, w.write(ctx, conn, nil)
	}
	// The entries are prepared while the database inserts the rows whose
	// ids they need, and completed once the ids are back: the markets
	// stay locked only for the completing.
	var prepared *market.PreparedChanges
	prepare := func() {
		effs := make([]*market.Effects, len(w.log.parts))
		for i, pt := range w.log.parts {
			effs[i] = pt.eff
		}
		prepared = market.PrepareChanges(effs, w.log.before, w.log.at)
	}
	if err = w.write(ctx, conn, prepare); err != nil {
		return false, err
	}
	b := &pgx.Batch{}
	var row *logRow
	// A batch whose every request was refused has no entries.
	if es := prepared.Entries(); len(es) > 0 {
		row = newLogRow(es, prepared.Data())
		// Delivered at COMMIT, to whoever listens (WatchChanges).
		b.Queue(sqlNotifyChanges, w.channel)
		b.Queue(sqlAppendChanges, row.args()...)
	}
	b.Queue(`COMMIT`)
	err = sendAll(ctx, conn, b)
	// The statement has been written: its arguments, the entries' data
	// among them, serve the next batch.
	if row != nil {
		row.release()
	}
	prepared.Release()
	return true, err
}

// write sends the batch and sets the ids it returns. meanwhile, when set,
// runs once the batch is sent, before its results are read.
func (w *writes) write(ctx context.Context, conn batchSender, meanwhile func()) error {
	br := conn.SendBatch(ctx, w.batch)
	defer br.Close()
	if meanwhile != nil {
		meanwhile()
	}
	n := w.batch.Len()
	var posIDs, tradeIDs, noteIDs []int64
	for i := range n {
		if i == w.insertAt {
			if err := br.QueryRow().Scan(&posIDs, &tradeIDs, &noteIDs); err != nil {
				return &stmtError{at: i, last: n - 1, err: err}
			}
			continue
		}
		if _, err := br.Exec(); err != nil {
			return &stmtError{at: i, last: n - 1, err: err}
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	if len(posIDs) != len(w.newPos) || len(tradeIDs) != len(w.trades) || len(noteIDs) != len(w.notes) {
		return fmt.Errorf("postgres: wrote %d positions, %d trades and %d notifications but got %d, %d and %d ids back",
			len(w.newPos), len(w.trades), len(w.notes), len(posIDs), len(tradeIDs), len(noteIDs))
	}
	for i, n := range w.notes {
		n.ID = noteIDs[i]
	}
	for i, p := range w.newPos {
		p.ID = posIDs[i]
	}
	for i, te := range w.trades {
		id := tradeIDs[i]
		te.Trade.ID = id
		te.Price.TradeID = id
		for j := range te.PoolPrices {
			te.PoolPrices[j].TradeID = id
		}
		for j := range te.Postings {
			te.Postings[j].TradeID = id
		}
	}
	return nil
}

// lastOfEach returns ms with only the last market of each id, in the
// order of those last ones.
func lastOfEach(ms []*market.Market) []*market.Market {
	if len(ms) < 2 {
		return ms
	}
	last := make(map[int64]int, len(ms))
	for i, m := range ms {
		last[m.ID] = i
	}
	if len(last) == len(ms) {
		return ms
	}
	out := make([]*market.Market, 0, len(last))
	for i, m := range ms {
		if last[m.ID] == i {
			out = append(out, m)
		}
	}
	return out
}

// batchSender is a connection or a transaction.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// priceArgs returns the arrays of priceParams for the price points of
// tes, trade i's on market marketIDs[i] unless the point names its
// market, each at time at unless it has its own; a trade on an exclusive
// pool adds those of the pool's other markets (PoolPrices), with the
// trade's number.
func priceArgs(tes []*market.TradeEffect, marketIDs []int64, at time.Time) []any {
	n := len(tes)
	for _, te := range tes {
		n += len(te.PoolPrices)
	}
	mkt, ord, id, qYes, qNo := make([]int64, 0, n), make([]int64, 0, n), make([]int64, n), make([]int64, 0, n), make([]int64, 0, n)
	times := make([]time.Time, 0, n)
	prob := make([]float64, 0, n)
	add := func(p *market.PricePoint, marketID, tradeOrd int64) {
		mkt, ord = append(mkt, cmpOr(p.MarketID, marketID)), append(ord, tradeOrd)
		qYes, qNo, prob = append(qYes, p.QYes), append(qNo, p.QNo), append(prob, p.YesProbability)
		t := at
		if !p.At.IsZero() {
			t = dbTime(p.At)
		}
		times = append(times, t)
	}
	for i, te := range tes {
		add(&te.Price, marketIDs[i], int64(i+1))
		for j := range te.PoolPrices {
			add(&te.PoolPrices[j], 0, int64(i+1))
		}
	}
	return []any{mkt, ord, id, times, prob, qYes, qNo}
}

// pnlArgs returns the arrays of pnlParams for es, a new position named by
// its number in newOrd, each entry at time at unless it has its own.
func pnlArgs(es []market.PnLEntry, newOrd map[*market.Position]int64, at time.Time) []any {
	n := len(es)
	user, ord, id, delta := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	times := make([]time.Time, n)
	for i, e := range es {
		user[i], id[i], delta[i] = e.Position.UserID, e.Position.ID, e.Delta
		if e.Position.ID == 0 {
			ord[i] = newOrd[e.Position]
		}
		times[i] = at
		if !e.At.IsZero() {
			times[i] = dbTime(e.At)
		}
	}
	return []any{user, ord, id, times, delta}
}

// cmpOr is v, or fallback if v is 0.
func cmpOr(v, fallback int64) int64 {
	if v == 0 {
		return fallback
	}
	return v
}
