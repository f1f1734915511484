package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
)

// marketCols is the SELECT list of markets m joined to their pools p
// (marketFrom), for marketDest. finish_at is the market's own copy of its
// pool's (see migration 00012), which a trade's lock reads as it stands
// once the lock is granted.
const marketCols = `m.id, m.pool_id, m.event_id, m.name, m.name_ru, m.yes_name, m.no_name, m.outcome_index,
	m.b, m.q_yes, m.q_no, m.q0_yes, m.q0_no, m.volume, p.margin, m.paused, m.resolved,
	m.winning_outcome, m.created_at, m.resolved_at, p.live_at, m.finish_at, COALESCE(m.resolved_by, ''), p.exclusive, m.unapproved,
	m.other, m.pool_markets, m.settling`

// marketFrom joins a market to its pool, whose margin, live_at and
// exclusive the market carries; none ever changes.
const marketFrom = ` FROM markets m JOIN pools p ON p.id = m.pool_id `

// marketDest returns the scan destinations of marketCols into m, and a
// function that finishes m once the row is scanned.
func marketDest(m *market.Market) ([]any, func()) {
	var won *int16
	dest := []any{&m.ID, &m.PoolID, &m.EventID, &m.Name, &m.NameRu, &m.YesName, &m.NoName, &m.OutcomeIndex,
		&m.B, &m.QYes, &m.QNo, &m.Q0Yes, &m.Q0No, &m.Volume, &m.Margin, &m.Paused, &m.Resolved,
		&won, &m.CreatedAt, &m.ResolvedAt, &m.LiveAt, &m.FinishAt, &m.ResolvedBy, &m.Exclusive, &m.Unapproved,
		&m.Other, &m.PoolMarkets, &m.Settling}
	return dest, func() {
		switch {
		case won == nil:
		case *won == outcomeVoid:
			m.Voided = true
		default:
			s := sideOf(*won)
			m.WinningOutcome = &s
		}
	}
}

// outcomeVoid is the winning_outcome of a voided market, beside 1 (YES)
// and 0 (NO); closed positions of it have the same won_side.
const outcomeVoid = market.WonSideVoid

// outcomeCode is m's winning_outcome as the database keeps it: nil while
// unresolved.
func outcomeCode(m *market.Market) *int16 {
	var c int16
	switch {
	case m.Voided:
		c = outcomeVoid
	case m.WinningOutcome != nil:
		c = sideCode(*m.WinningOutcome)
	default:
		return nil
	}
	return &c
}

// scanMarket scans the one market of row.
func scanMarket(row pgx.Row) (*market.Market, error) {
	m := &market.Market{}
	dest, finish := marketDest(m)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	finish()
	return m, nil
}

func scanMarkets(rows pgx.Rows) ([]*market.Market, error) {
	var ms []*market.Market
	for rows.Next() {
		m := &market.Market{}
		dest, finish := marketDest(m)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		finish()
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

// sqlUpdateMarkets writes what trades and settlements change of markets,
// by id, from the arrays of updateMarketArgs. The redundant m.id = ANY($1)
// keeps the planner on the primary key, as in sqlUpdatePositions.
const sqlUpdateMarkets = `UPDATE markets m SET q_yes = u.q_yes, q_no = u.q_no, volume = u.volume,
	paused = u.paused, resolved = u.resolved, winning_outcome = u.winning_outcome, resolved_at = u.resolved_at,
	resolved_by = NULLIF(u.resolved_by, '')
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::boolean[], $6::boolean[],
	$7::smallint[], $8::timestamptz[], $9::text[]) AS u(id, q_yes, q_no, volume, paused, resolved, winning_outcome, resolved_at, resolved_by)
WHERE m.id = u.id AND m.id = ANY($1)`

// updateMarketArgs returns the arrays of sqlUpdateMarkets for ms.
func updateMarketArgs(ms []*market.Market) []any {
	n := len(ms)
	id, qYes, qNo, volume := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	paused, resolved := make([]bool, n), make([]bool, n)
	won := make([]*int16, n)
	at := make([]*time.Time, n)
	by := make([]string, n)
	for i, m := range ms {
		id[i], qYes[i], qNo[i], volume[i], paused[i], resolved[i] = m.ID, m.QYes, m.QNo, m.Volume, m.Paused, m.Resolved
		won[i], at[i], by[i] = outcomeCode(m), timePtr(m.ResolvedAt), string(m.ResolvedBy)
	}
	return []any{id, qYes, qNo, volume, paused, resolved, won, at, by}
}
