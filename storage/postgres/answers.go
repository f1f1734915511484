package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// sqlPoolOpenPositions reads the open positions of the markets $1 (locked
// already: every write to a position holds its market's lock).
var sqlPoolOpenPositions = `SELECT ` + positionCols + ` FROM positions x
WHERE x.market_id = ANY($1) AND x.closed_at IS NULL ORDER BY x.id`

// sqlInsertAnswerMarket inserts the market of an answer added later,
// under the id the decision took.
const sqlInsertAnswerMarket = `INSERT INTO markets (id, pool_id, event_id, outcome_index, name, name_ru, yes_name, no_name,
	b, q_yes, q_no, q0_yes, q0_no, volume, paused, resolved, created_at, finish_at, other, pool_markets)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 0, $14, false, $15, $16, false, $17)`

// sqlSplitMarkets writes the pool's markets after a split: their q_no
// views, Other's q_yes and q0_yes, and the pool's number of markets.
const sqlSplitMarkets = `UPDATE markets m SET q_yes = u.q_yes, q_no = u.q_no, q0_yes = u.q0_yes, pool_markets = u.n
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::int[]) AS u(id, q_yes, q_no, q0_yes, n)
WHERE m.id = u.id AND m.id = ANY($1)`

// sqlMovePositions moves positions to another market and side (a NO on
// Other becomes a YES on another market).
const sqlMovePositions = `UPDATE positions x SET market_id = u.market_id, side = u.side
FROM unnest($1::bigint[], $2::bigint[], $3::smallint[]) AS u(id, market_id, side)
WHERE x.id = u.id AND x.id = ANY($1)`

// sqlInsertSplitPositions inserts positions under the ids $1.
var sqlInsertSplitPositions = `INSERT INTO positions (id, ` + nameList(newPositionColumns) + `)
SELECT * FROM unnest($1::bigint[], ` + unnest(2, newPositionColumns)[len("unnest("):]

// sqlInsertSplitNotifications inserts notifications under the ids $1.
var sqlInsertSplitNotifications = `INSERT INTO notifications (id, ` + nameList(notificationParams) + `)
SELECT * FROM unnest($1::bigint[], ` + unnest(2, notificationParams)[len("unnest("):]

// sqlSplitPrices records the pool's prices after a split, of no trade.
const sqlSplitPrices = `INSERT INTO price_points (market_id, trade_id, at, yes_probability, q_yes, q_no)
SELECT u.market_id, NULL, $5, u.p, u.q_yes, u.q_no
FROM unnest($1::bigint[], $2::float8[], $3::bigint[], $4::bigint[]) AS u(market_id, p, q_yes, q_no)`

// AddAnswer implements market.Store in one transaction: the pool's
// markets locked in ascending id order, as trades lock them, then its
// open positions, the escrow, the treasury and the new market's accounts.
// On a deadlock or serialization failure it runs again from the start.
func (s *Store) AddAnswer(ctx context.Context, poolID int64, decide func(*market.AnswerState) (*market.AnswerEffects, error)) (*market.AnswerEffects, error) {
	var out *market.AnswerEffects
	var accountIDs map[account.Ref]int64
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		ms, err := lockPoolMarkets(ctx, tx, poolID)
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
		st := &market.AnswerState{Markets: ms, Now: now()}
		rows, err := tx.Query(ctx, sqlPoolOpenPositions, ids)
		if err != nil {
			return err
		}
		if st.Positions, err = scanPositions(rows); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT e.name, nextval(pg_get_serial_sequence('markets', 'id')) FROM events e WHERE e.id = $1`,
			ms[0].EventID).Scan(&st.EventName, &st.MarketID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, sqlFollowers, ms[0].EventID).Scan(&st.Followers); err != nil {
			return err
		}
		escrow := account.EscrowAccount(ms[0].ID)
		a, err := lockAccounts(ctx, tx, []account.Ref{escrow, account.Treasury,
			account.EscrowAccount(st.MarketID), account.FeeAccount(st.MarketID)})
		if err != nil {
			return err
		}
		st.Escrow, st.Treasury = a.balance[escrow], a.balance[account.Treasury]
		eff, err := decide(st)
		if err != nil {
			return &decideError{err}
		}
		if err := a.check(eff.Postings); err != nil {
			return err
		}
		if err := writeAnswer(ctx, tx, st, eff); err != nil {
			return err
		}
		if len(eff.Postings) > 0 {
			if err := post(ctx, tx, a, eff.Postings, st.Now); err != nil {
				return err
			}
		}
		if err := s.appendChanges(ctx, tx, market.AnswerChanges(eff)); err != nil {
			return err
		}
		out, accountIDs = eff, a.id
		return nil
	})
	if err != nil {
		return nil, translate(err, nil)
	}
	s.accountIDs.remember(accountIDs, nil)
	return out, nil
}

// writeAnswer writes the rows of eff: the new market, the other markets,
// the positions, the price points and the notifications, whose ids it
// sets.
func writeAnswer(ctx context.Context, tx pgx.Tx, st *market.AnswerState, eff *market.AnswerEffects) error {
	nm := eff.Market
	if nm.ID != st.MarketID {
		return fmt.Errorf("postgres: the new market took id %d, not %d", nm.ID, st.MarketID)
	}
	loaded := map[int64]*market.Position{}
	for _, p := range st.Positions {
		loaded[p.ID] = p
	}
	var moveID, moveMarket []int64
	var moveSide []int16
	var order []int64
	changed := map[int64]*market.Position{}
	var fresh []*market.Position
	for _, p := range eff.Positions {
		if p.ID == 0 {
			fresh = append(fresh, p)
			continue
		}
		old := loaded[p.ID]
		if old == nil {
			return fmt.Errorf("postgres: the answer's decision changed position %d, which it did not load", p.ID)
		}
		if old.MarketID != p.MarketID || old.Side != p.Side {
			moveID, moveMarket, moveSide = append(moveID, p.ID), append(moveMarket, p.MarketID), append(moveSide, sideCode(p.Side))
		}
		order = append(order, p.ID)
		changed[p.ID] = p
	}
	n := len(eff.Markets)
	mid, qy, qn, q0, cnt := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int32, n)
	for i, m := range eff.Markets {
		mid[i], qy[i], qn[i], q0[i], cnt[i] = m.ID, m.QYes, m.QNo, m.Q0Yes, int32(m.PoolMarkets)
	}
	prices := eff.Split.Pool.Prices()
	all := append(append([]*market.Market{}, eff.Markets...), nm)
	pm, pp, pqy, pqn := []int64{}, []float64{}, []int64{}, []int64{}
	for i, m := range all {
		if i < len(prices) {
			pm, pp, pqy, pqn = append(pm, m.ID), append(pp, prices[i]), append(pqy, m.QYes), append(pqn, m.QNo)
		}
	}

	b := &pgx.Batch{}
	b.Queue(sqlInsertAnswerMarket, nm.ID, nm.PoolID, nm.EventID, int32(nm.OutcomeIndex), nm.Name, nm.NameRu, nm.YesName, nm.NoName,
		nm.B, nm.QYes, nm.QNo, nm.Q0Yes, nm.Q0No, nm.Paused, dbTime(nm.CreatedAt), dbTime(nm.FinishAt), int32(nm.PoolMarkets))
	b.Queue(sqlSplitMarkets, mid, qy, qn, q0, cnt)
	if len(moveID) > 0 {
		b.Queue(sqlMovePositions, moveID, moveMarket, moveSide)
	}
	if len(order) > 0 {
		b.Queue(sqlUpdatePositions, updatePositionArgs(order, changed)...)
	}
	b.Queue(sqlSplitPrices, pm, pp, pqy, pqn, dbTime(st.Now))
	b.Queue(`SELECT COALESCE(array_agg(nextval('positions_id_seq')), '{}') FROM generate_series(1, $1::int)`, int32(len(fresh)))
	b.Queue(`SELECT COALESCE(array_agg(nextval('notifications_id_seq')), '{}') FROM generate_series(1, $1::int)`, int32(len(eff.Notifications)))
	br := tx.SendBatch(ctx, b)
	for range b.Len() - 2 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
	}
	var posIDs, noteIDs []int64
	if err := br.QueryRow().Scan(&posIDs); err != nil {
		br.Close()
		return err
	}
	if err := br.QueryRow().Scan(&noteIDs); err != nil {
		br.Close()
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	if len(posIDs) != len(fresh) || len(noteIDs) != len(eff.Notifications) {
		return fmt.Errorf("postgres: took %d position and %d notification ids for %d and %d", len(posIDs), len(noteIDs), len(fresh), len(eff.Notifications))
	}
	b = &pgx.Batch{}
	if len(fresh) > 0 {
		b.Queue(sqlInsertSplitPositions, append([]any{posIDs}, newPositionArgs(fresh)...)...)
	}
	if len(eff.Notifications) > 0 {
		b.Queue(sqlInsertSplitNotifications, append([]any{noteIDs},
			notificationArrays(len(eff.Notifications), func(i int) *social.Notification { return &eff.Notifications[i] }, st.Now)...)...)
	}
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
	}
	for i, p := range fresh {
		p.ID = posIDs[i]
	}
	for i := range eff.Notifications {
		eff.Notifications[i].ID = noteIDs[i]
		eff.Notifications[i].CreatedAt = dbTime(eff.Notifications[i].CreatedAt)
	}
	return nil
}
