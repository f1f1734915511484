package postgres

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// Sides are stored as 1 for YES and 0 for NO, the same code as a closed
// position's won_side, whatever numbers package lmsr gives them.
func sideCode(s market.Side) int16 {
	if s == market.Yes {
		return 1
	}
	return 0
}

func sideOf(code int16) market.Side {
	if code == 1 {
		return market.Yes
	}
	return market.No
}

const poolCols = `p.id, p.event_id, p.name, p.name_ru, p.rules, p.rules_ru, p.won_side, p.margin, p.live_at, p.finish_at, p.b, p.exclusive`

func scanPools(rows pgx.Rows) ([]*market.Pool, error) {
	var ps []*market.Pool
	for rows.Next() {
		p := &market.Pool{}
		if err := rows.Scan(&p.ID, &p.EventID, &p.Name, &p.NameRu, &p.Rules, &p.RulesRu, &p.WonSide,
			&p.Margin, &p.LiveAt, &p.FinishAt, &p.B, &p.Exclusive); err != nil {
			rows.Close()
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

const eventCols = `e.id, e.name, e.name_ru, e.creator_id, e.is_active, e.created_at,
	ARRAY(SELECT et.tag_slug FROM event_tags et WHERE et.event_id = e.id ORDER BY et.ordinal),
	e.status, e.proposal_ante, e.proposal_subsidies, e.decided_at, e.decision_reason, e.ante_refunded`

func scanEvents(rows pgx.Rows) ([]*market.Event, error) {
	var es []*market.Event
	for rows.Next() {
		e := &market.Event{}
		var (
			ante *int64
			p    market.Proposal
		)
		if err := rows.Scan(&e.ID, &e.Name, &e.NameRu, &e.CreatorID, &e.IsActive, &e.CreatedAt, &e.Tags,
			&e.Status, &ante, &p.Subsidies, &p.DecidedAt, &p.Reason, &p.Refunded); err != nil {
			rows.Close()
			return nil, err
		}
		if ante != nil { // a proposal (migration 00029)
			p.Ante = *ante
			e.Proposal = &p
		}
		es = append(es, e)
	}
	return es, rows.Err()
}

// CreateEvent stores e with its pools and markets, sets every ID and
// CreatedAt, and posts subsidies[i] from the treasury to the escrow of the
// i-th market, counting pool by pool, all in one transaction. Subsidies
// that would take the treasury past its bound are account.ErrBalanceLimit
// (account.Apply, on the locked balance), and nothing is written.
func (s *Store) CreateEvent(ctx context.Context, e *market.Event, subsidies []int64) error {
	return s.CreateEventLimited(ctx, e, subsidies, nil)
}

// CreateEventLimited is CreateEvent that, when check is not nil, first
// locks the creator's users row (serializing the creator's creations),
// reads the creator's load (creatorLoad) and calls check, in the same
// transaction.
func (s *Store) CreateEventLimited(ctx context.Context, e *market.Event, subsidies []int64, check func(market.CreatorLoad) error) error {
	var ms []*market.Market
	for _, p := range e.Pools {
		ms = append(ms, p.Markets...)
	}
	if len(subsidies) != len(ms) {
		return fmt.Errorf("postgres: create event: %d subsidies for %d markets", len(subsidies), len(ms))
	}
	for _, sub := range subsidies {
		if sub < 0 {
			return fmt.Errorf("postgres: create event: negative subsidy %d: %w", sub, account.ErrInvalidAmount)
		}
	}
	created := now()
	status := e.Status
	if status == "" {
		status = market.StatusApproved
	}

	var (
		poolIDs   []int64
		marketIDs map[[2]int64]int64 // (pool id, outcome index) → market id
		eventID   int64
		// accountIDs are the ids of the accounts the event made.
		accountIDs map[account.Ref]int64
	)
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := lockTags(ctx, tx, e.Tags); err != nil {
			return err
		}
		if check != nil {
			if err := checkCreator(ctx, tx, e.CreatorID, check); err != nil {
				return err
			}
		}
		var ante *int64
		var pending []int64
		if e.Proposal != nil {
			ante, pending = &e.Proposal.Ante, e.Proposal.Subsidies
		}
		if err := tx.QueryRow(ctx, `INSERT INTO events (name, name_ru, creator_id, is_active, created_at, status, proposal_ante, proposal_subsidies)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			e.Name, e.NameRu, e.CreatorID, e.IsActive, created, status, ante, pending).Scan(&eventID); err != nil {
			return err
		}
		if err := insertEventTags(ctx, tx, eventID, e.Tags); err != nil {
			return err
		}
		var err error
		if poolIDs, err = insertPools(ctx, tx, eventID, e.Pools); err != nil {
			return err
		}
		if marketIDs, err = insertMarkets(ctx, tx, eventID, e.Pools, poolIDs, created); err != nil {
			return err
		}
		if e.Proposal != nil {
			if _, err := tx.Exec(ctx, `UPDATE markets SET unapproved = true WHERE event_id = $1`, eventID); err != nil {
				return err
			}
		}

		// Every market's escrow and fee account are made now, so that its
		// first trades find them (and the store remembers their ids).
		var refs []account.Ref
		var postings []account.Posting
		i := 0
		for pi, p := range e.Pools {
			for _, m := range p.Markets {
				id := marketIDs[[2]int64{poolIDs[pi], int64(m.OutcomeIndex)}]
				escrow := account.EscrowAccount(id)
				refs = append(refs, escrow, account.FeeAccount(id))
				if sub := subsidies[i]; sub > 0 {
					postings = append(postings, account.Posting{From: account.Treasury, To: escrow, Amount: sub, Reason: "subsidy", At: created})
				}
				i++
			}
		}
		if len(postings) > 0 {
			refs = append(refs, account.Treasury)
		}
		userMoved := false
		if e.Proposal != nil && e.Proposal.Ante > 0 {
			// The ante, from the proposer's balance (never the bonus), with
			// the balance entry of the change log that Transfer writes.
			u := e.CreatorID
			refs = append(refs, account.UserAccount(u), account.BonusAccount(u), account.AnteAccount(eventID))
			postings = append(postings, account.Posting{From: account.UserAccount(u), To: account.AnteAccount(eventID), Amount: e.Proposal.Ante, Reason: market.ReasonAnte, At: created})
			userMoved = true
		}
		a, err := lockAccounts(ctx, tx, refs)
		if err != nil {
			return err
		}
		accountIDs = a.id
		if len(postings) == 0 {
			return nil
		}
		if err := a.check(postings); err != nil {
			return err
		}
		before := maps.Clone(a.balance)
		if err := post(ctx, tx, a, postings, now()); err != nil || !userMoved {
			return err
		}
		return s.appendChanges(ctx, tx, account.BalanceChanges(before, postings, "", created))
	})
	if err != nil {
		return translate(err, nil)
	}
	s.accountIDs.remember(accountIDs, nil)

	e.ID, e.CreatedAt, e.Status = eventID, created, status
	if e.Tags == nil {
		e.Tags = []string{}
	}
	for pi, p := range e.Pools {
		p.ID, p.EventID = poolIDs[pi], eventID
		p.LiveAt, p.FinishAt = dbTime(p.LiveAt), dbTime(p.FinishAt)
		for _, m := range p.Markets {
			m.ID = marketIDs[[2]int64{p.ID, int64(m.OutcomeIndex)}]
			m.PoolID, m.EventID, m.Margin, m.LiveAt, m.FinishAt, m.Exclusive = p.ID, eventID, p.Margin, p.LiveAt, p.FinishAt, p.Exclusive
			m.CreatedAt = created
			if m.ResolvedAt != nil {
				t := dbTime(*m.ResolvedAt)
				m.ResolvedAt = &t
			}
		}
	}
	return nil
}

// insertPools inserts pools in one statement and returns their ids in
// order, matched by ordinal rather than by the order RETURNING happens to
// produce.
func insertPools(ctx context.Context, tx pgx.Tx, eventID int64, pools []*market.Pool) ([]int64, error) {
	n := len(pools)
	ord := make([]int32, n)
	name, nameRu, rules, rulesRu := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	// Margins go as the shortest decimal that reads back as the same
	// float64, so that numeric keeps exactly what the creator typed.
	margin := make([]string, n)
	b := make([]int64, n)
	won := make([]*int32, n)
	live, finish := make([]time.Time, n), make([]time.Time, n)
	exclusive := make([]bool, n)
	for i, p := range pools {
		exclusive[i] = p.Exclusive
		ord[i] = int32(i)
		name[i], nameRu[i], rules[i], rulesRu[i] = p.Name, p.NameRu, p.Rules, p.RulesRu
		margin[i], b[i] = strconv.FormatFloat(p.Margin, 'g', -1, 64), p.B
		if p.WonSide != nil {
			w := int32(*p.WonSide)
			won[i] = &w
		}
		live[i], finish[i] = dbTime(p.LiveAt), dbTime(p.FinishAt)
	}
	rows, err := tx.Query(ctx, `INSERT INTO pools (event_id, ordinal, name, name_ru, rules, rules_ru, margin, b, won_side, live_at, finish_at, exclusive)
		SELECT $1, u.ordinal, u.name, u.name_ru, u.rules, u.rules_ru, u.margin::numeric, u.b, u.won_side, u.live_at, u.finish_at, u.exclusive
		FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::int[], $10::timestamptz[], $11::timestamptz[], $12::boolean[])
			AS u(ordinal, name, name_ru, rules, rules_ru, margin, b, won_side, live_at, finish_at, exclusive)
		ORDER BY u.ordinal
		RETURNING id, ordinal`,
		eventID, ord, name, nameRu, rules, rulesRu, margin, b, won, live, finish, exclusive)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	var id int64
	var o int32
	_, err = pgx.ForEachRow(rows, []any{&id, &o}, func() error {
		ids[o] = id
		return nil
	})
	return ids, err
}

// insertMarkets inserts the markets of every pool in one statement and
// returns their ids by (pool id, outcome index), which is unique.
func insertMarkets(ctx context.Context, tx pgx.Tx, eventID int64, pools []*market.Pool, poolIDs []int64, created time.Time) (map[[2]int64]int64, error) {
	var (
		poolID                            []int64
		outcome                           []int32
		name, nameRu, yesName, noName     []string
		b, qYes, qNo, q0Yes, q0No, volume []int64
		paused, resolved, other           []bool
		won                               []*int16
		createdAt, finishAt               []time.Time
		resolvedAt                        []*time.Time
	)
	for pi, p := range pools {
		for _, m := range p.Markets {
			poolID = append(poolID, poolIDs[pi])
			outcome = append(outcome, int32(m.OutcomeIndex))
			name, nameRu = append(name, m.Name), append(nameRu, m.NameRu)
			yesName, noName = append(yesName, m.YesName), append(noName, m.NoName)
			b, qYes, qNo = append(b, m.B), append(qYes, m.QYes), append(qNo, m.QNo)
			q0Yes, q0No, volume = append(q0Yes, m.Q0Yes), append(q0No, m.Q0No), append(volume, m.Volume)
			paused, resolved = append(paused, m.Paused), append(resolved, m.Resolved)
			other = append(other, m.Other)
			won = append(won, outcomeCode(m))
			createdAt, finishAt = append(createdAt, created), append(finishAt, dbTime(p.FinishAt))
			var r *time.Time
			if m.ResolvedAt != nil {
				t := dbTime(*m.ResolvedAt)
				r = &t
			}
			resolvedAt = append(resolvedAt, r)
		}
	}
	rows, err := tx.Query(ctx, `INSERT INTO markets (pool_id, event_id, outcome_index, name, name_ru, yes_name, no_name,
			b, q_yes, q_no, q0_yes, q0_no, volume, paused, resolved, winning_outcome, created_at, resolved_at, finish_at, other)
		SELECT u.pool_id, $1, u.outcome_index, u.name, u.name_ru, u.yes_name, u.no_name,
			u.b, u.q_yes, u.q_no, u.q0_yes, u.q0_no, u.volume, u.paused, u.resolved, u.winning_outcome, u.created_at, u.resolved_at, u.finish_at, u.other
		FROM unnest($2::bigint[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[],
			$14::boolean[], $15::boolean[], $16::smallint[], $17::timestamptz[], $18::timestamptz[], $19::timestamptz[], $20::boolean[])
			WITH ORDINALITY AS u(pool_id, outcome_index, name, name_ru, yes_name, no_name,
				b, q_yes, q_no, q0_yes, q0_no, volume, paused, resolved, winning_outcome, created_at, resolved_at, finish_at, other, ord)
		ORDER BY u.ord
		RETURNING id, pool_id, outcome_index`,
		eventID, poolID, outcome, name, nameRu, yesName, noName, b, qYes, qNo, q0Yes, q0No, volume,
		paused, resolved, won, createdAt, resolvedAt, finishAt, other)
	if err != nil {
		return nil, err
	}
	ids := map[[2]int64]int64{}
	var id, pid int64
	var o int32
	_, err = pgx.ForEachRow(rows, []any{&id, &pid, &o}, func() error {
		ids[[2]int64{pid, int64(o)}] = id
		return nil
	})
	return ids, err
}

// loadPools returns the pools of the events with ids, each with its
// markets, in event order then the order they were created.
func loadPools(ctx context.Context, q querier, where string, arg any) ([]*market.Pool, error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT `+poolCols+` FROM pools p WHERE `+where+` ORDER BY p.event_id, p.ordinal, p.id`, arg)
	b.Queue(`SELECT `+marketCols+marketFrom+`WHERE `+where+` ORDER BY p.event_id, p.ordinal, m.outcome_index, m.id`, arg)
	br := q.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	pools, err := scanPools(rows)
	if err != nil {
		return nil, err
	}
	if rows, err = br.Query(); err != nil {
		return nil, err
	}
	ms, err := scanMarkets(rows)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*market.Pool, len(pools))
	for _, p := range pools {
		byID[p.ID] = p
	}
	for _, m := range ms {
		if p := byID[m.PoolID]; p != nil {
			p.Markets = append(p.Markets, m)
		}
	}
	return pools, br.Close()
}

// querier is what both a pool and a transaction offer.
type querier interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

func attachPools(events []*market.Event, pools []*market.Pool) {
	byID := make(map[int64]*market.Event, len(events))
	for _, e := range events {
		byID[e.ID] = e
	}
	for _, p := range pools {
		if e := byID[p.EventID]; e != nil {
			e.Pools = append(e.Pools, p)
		}
	}
}

// Event returns event id with its pools and markets.
// market.ErrEventNotFound.
func (s *Store) Event(ctx context.Context, id int64) (*market.Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+eventCols+` FROM events e WHERE e.id = $1`, id)
	if err != nil {
		return nil, translate(err, nil)
	}
	es, err := scanEvents(rows)
	if err != nil {
		return nil, translate(err, nil)
	}
	if len(es) == 0 {
		return nil, market.ErrEventNotFound
	}
	pools, err := loadPools(ctx, s.pool, `p.event_id = $1`, id)
	if err != nil {
		return nil, translate(err, nil)
	}
	attachPools(es, pools)
	if err := s.attachAmendments(ctx, es); err != nil {
		return nil, translate(err, nil)
	}
	return es[0], nil
}

const sqlActiveEvents = `SELECT ` + eventCols + ` FROM events e WHERE e.is_active
	ORDER BY e.created_at DESC, e.id DESC LIMIT $1 OFFSET $2`

// ActiveEvents returns active events, newest first (ties by id,
// descending), each with its pools and markets.
func (s *Store) ActiveEvents(ctx context.Context, limit, offset int) ([]*market.Event, error) {
	return s.eventsPage(ctx, sqlActiveEvents, pageLimit(limit), max(offset, 0))
}

// eventsPage reads the events query selects (eventCols, with args), each
// with its pools, markets and amendments: the feed's page and the
// operator's queue.
func (s *Store) eventsPage(ctx context.Context, query string, args ...any) ([]*market.Event, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, translate(err, nil)
	}
	es, err := scanEvents(rows)
	if err != nil {
		return nil, translate(err, nil)
	}
	if len(es) == 0 {
		return []*market.Event{}, nil
	}
	ids := make([]int64, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	pools, err := loadPools(ctx, s.pool, `p.event_id = ANY($1)`, ids)
	if err != nil {
		return nil, translate(err, nil)
	}
	attachPools(es, pools)
	if err := s.attachAmendments(ctx, es); err != nil {
		return nil, translate(err, nil)
	}
	return es, nil
}

// pageLimit is a LIMIT argument: no limit (NULL) for a negative limit, as
// in the memory store.
func pageLimit(limit int) *int64 {
	if limit < 0 {
		return nil
	}
	l := int64(limit)
	return &l
}

// SetEventActive shows or hides event id. market.ErrEventNotFound.
func (s *Store) SetEventActive(ctx context.Context, id int64, active bool) error {
	tag, err := s.pool.Exec(ctx, `UPDATE events SET is_active = $2 WHERE id = $1`, id, active)
	if err != nil {
		return translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return market.ErrEventNotFound
	}
	return nil
}

// Pool returns pool id with its markets. market.ErrPoolNotFound.
func (s *Store) Pool(ctx context.Context, id int64) (*market.Pool, error) {
	pools, err := loadPools(ctx, s.pool, `p.id = $1`, id)
	if err != nil {
		return nil, translate(err, nil)
	}
	if len(pools) == 0 {
		return nil, market.ErrPoolNotFound
	}
	return pools[0], nil
}

// sqlLockPoolMarkets locks the markets of pool $1 in ascending id order,
// as trades and settlements lock markets, so that a move of the window
// queues behind them, and they behind it, rather than deadlock.
const sqlLockPoolMarkets = `SELECT ` + marketCols + marketFrom + `WHERE m.pool_id = $1 ORDER BY m.id FOR NO KEY UPDATE OF m`

// lockPoolMarkets locks and reads the markets of pool id in ascending id
// order (sqlLockPoolMarkets). A statement that waited for the locks of an
// answer being added (storage/postgres/answers.go) reads the markets it
// locked as the split left them, but not the market the split inserted:
// rows committed after the statement began are not in its snapshot. The
// locked markets then count more markets in their pool (PoolMarkets) than
// it found, and it reads again: a new statement sees the new market, and
// locking it after the others keeps the ascending order. No other split
// can come between, since a split locks the markets this one holds.
func lockPoolMarkets(ctx context.Context, tx pgx.Tx, id int64) ([]*market.Market, error) {
	for range 2 {
		rows, err := tx.Query(ctx, sqlLockPoolMarkets, id)
		if err != nil {
			return nil, err
		}
		ms, err := scanMarkets(rows)
		if err != nil || len(ms) == 0 || ms[0].PoolMarkets <= len(ms) {
			return ms, err
		}
	}
	return nil, fmt.Errorf("postgres: pool %d: its markets changed while they were locked", id)
}

// MoveFinish moves the end of pool id's trading window (see
// market.Store): it locks the pool's markets, decides, and writes the new
// finish_at to the pool and to each market's copy of it, in one
// transaction. market.ErrPoolNotFound, or move.Decide's refusal.
func (s *Store) MoveFinish(ctx context.Context, id int64, move market.FinishMove) (*market.Pool, error) {
	var out *market.Pool
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		ms, err := lockPoolMarkets(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(ms) == 0 { // every pool holds a market
			return &decideError{market.ErrPoolNotFound}
		}
		rows, err := tx.Query(ctx, `SELECT `+poolCols+` FROM pools p WHERE p.id = $1`, id)
		if err != nil {
			return err
		}
		ps, err := scanPools(rows)
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			return &decideError{market.ErrPoolNotFound}
		}
		p := ps[0]
		// In the pool's order, as Pool reads them.
		slices.SortFunc(ms, func(a, b *market.Market) int {
			return cmp.Or(cmp.Compare(a.OutcomeIndex, b.OutcomeIndex), cmp.Compare(a.ID, b.ID))
		})
		p.Markets = ms
		if err := move.Decide(p); err != nil {
			return &decideError{err}
		}
		at := dbTime(move.At)
		if _, err := tx.Exec(ctx, `UPDATE pools SET finish_at = $2 WHERE id = $1`, id, at); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE markets SET finish_at = $2 WHERE pool_id = $1`, id, at); err != nil {
			return err
		}
		p.FinishAt = at
		for _, m := range ms {
			m.FinishAt = at
		}
		out = p
		return nil
	})
	if err != nil {
		return nil, translate(err, nil)
	}
	return out, nil
}

// Market returns market id. market.ErrMarketNotFound.
func (s *Store) Market(ctx context.Context, id int64) (*market.Market, error) {
	m, err := scanMarket(s.pool.QueryRow(ctx, `SELECT `+marketCols+marketFrom+`WHERE m.id = $1`, id))
	return m, translate(err, market.ErrMarketNotFound)
}
