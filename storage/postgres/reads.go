package postgres

import (
	"context"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// A settlement does not write the positions it closes (see settle.go): a
// position still open in its row whose market resolved was closed by that
// resolution, and every read of positions reads it so (settledCols), as
// market.Settlement.Chunk closes a position in the memory store.
const settledSQL = `(x.closed_at IS NULL AND m.resolved)`

// settledAs are the columns a settlement changes, as it leaves them:
// closed when the market resolved, with its outcome, paid payoutSQL
// (Returned stops at MaxInt64, as market.addStat does), no basis left.
var settledAs = map[string]string{
	"cost_basis": `0`,
	"returned":   `CASE WHEN x.returned > 9223372036854775807 - ` + payoutSQL("x", "m.winning_outcome") + ` THEN 9223372036854775807 ELSE x.returned + ` + payoutSQL("x", "m.winning_outcome") + ` END`,
	"updated_at": `m.resolved_at`,
	"closed_at":  `m.resolved_at`,
	"won_side":   `m.winning_outcome`,
}

// settledCols is positionCols for positions x of markets m, each read as
// its market's settlement left it.
var settledCols = join(positionColumns, func(c column) string {
	plain := selectList("x", []column{c})
	if e, ok := settledAs[c.name]; ok {
		return `CASE WHEN ` + settledSQL + ` THEN ` + e + ` ELSE ` + plain + ` END`
	}
	return plain
})

var positionDetailSQL = `SELECT ` + settledCols + `, e.id, e.name, p.id, p.name, ` + marketCols + `
FROM positions x
JOIN markets m ON m.id = x.market_id
JOIN pools p ON p.id = m.pool_id
JOIN events e ON e.id = m.event_id
WHERE x.user_id = $1 `

// settledWalk is how many of the most recently resolved markets the
// closed feed walks for a page of positions their settlements closed
// before it reads all of the user's positions instead.
const settledWalk = 1000

// settledPageCTEs find the first $2 + $3 of user $1's positions closed by
// their markets' settlements, most recently resolved first (ties by id,
// descending), as settled: id and resolved_at.
//
// Such a position is open in its row, so no index holds it in that order:
// resolved_at is its market's. The page walks the markets most recently
// resolved first (markets_resolved_idx), each with the user's positions on
// it (positions_open_key, which includes the id: no heap row is read),
// and stops once the page is full: a user who bet on many markets pays
// for the page, not for the 10,000 positions behind it. Only the
// settledWalk most recent markets are walked so: walk holds the user's
// positions on every market resolved after the first market left out
// (cut; none when fewer markets resolved), so a full page from it is
// exact. A user with fewer positions there (the markets it bet on are
// older, or few) reads every one of its positions open in their rows
// instead (all), through the same index, and joins their markets.
var settledPageCTEs = `cut AS (
	SELECT m.resolved_at FROM markets m WHERE m.resolved
	ORDER BY m.resolved_at DESC, m.id DESC OFFSET ` + strconv.Itoa(settledWalk) + ` LIMIT 1),
walk AS (
	SELECT x.id, m.resolved_at FROM markets m
	JOIN positions x ON x.user_id = $1 AND x.market_id = m.id AND x.closed_at IS NULL
	WHERE m.resolved AND ((SELECT resolved_at FROM cut) IS NULL OR m.resolved_at IS NULL OR m.resolved_at > (SELECT resolved_at FROM cut))
	ORDER BY m.resolved_at DESC, x.id DESC LIMIT $2::bigint + $3::bigint),
walked AS (
	SELECT NOT EXISTS (SELECT 1 FROM cut) OR (SELECT count(*) FROM walk) = $2::bigint + $3::bigint AS enough),
settled AS (
	SELECT id, resolved_at FROM walk WHERE (SELECT enough FROM walked)
	UNION ALL
	(SELECT x.id, m.resolved_at
	FROM (SELECT x.id, x.market_id FROM positions x WHERE x.user_id = $1 AND x.closed_at IS NULL OFFSET 0) x
	JOIN markets m ON m.id = x.market_id
	WHERE NOT (SELECT enough FROM walked) AND m.resolved
	ORDER BY m.resolved_at DESC, x.id DESC LIMIT $2::bigint + $3::bigint))`

// The feeds, each walking an index in the order it returns rows (see the
// migrations), so that a page costs what it holds, not what the table does.
// The positions a settlement closed are still in the open index: the open
// feed skips them, and the closed feeds take them from there, each branch
// no longer than the page.
var (
	sqlOpenPositions = positionDetailSQL + `AND x.closed_at IS NULL AND NOT m.resolved
		ORDER BY x.created_at DESC, x.id DESC`
	sqlClosedPositions = `WITH ` + settledPageCTEs + `
		SELECT ` + settledCols + `, e.id, e.name, p.id, p.name, ` + marketCols + `
		FROM (
			(SELECT x.id, x.closed_at AS closed FROM positions x
			WHERE x.user_id = $1 AND x.closed_at IS NOT NULL
			ORDER BY x.closed_at DESC, x.id DESC LIMIT $2::bigint + $3::bigint)
			UNION ALL
			SELECT id, resolved_at FROM settled
		) c
		JOIN positions x ON x.id = c.id
		JOIN markets m ON m.id = x.market_id
		JOIN pools p ON p.id = m.pool_id
		JOIN events e ON e.id = m.event_id
		ORDER BY c.closed DESC, c.id DESC LIMIT $2 OFFSET $3`
	sqlClosedStats = `SELECT count(*), COALESCE(max(pnl) FILTER (WHERE pnl > 0), 0) FROM (
			SELECT closed_pnl AS pnl FROM positions WHERE user_id = $1 AND closed_at IS NOT NULL
			UNION ALL
			SELECT ` + settledAs["returned"] + ` - x.spent FROM positions x JOIN markets m ON m.id = x.market_id
			WHERE x.user_id = $1 AND ` + settledSQL + `
		) c`
	// sqlPnLEvents reads a user's realizations: sales (and settlements
	// before migration 00013) from pnl_events, settlements before
	// migration 00015 from the positions they closed (settle_pnl), and
	// later ones from the positions their markets closed, each realizing
	// its payout less the basis it had. Ties (one settlement of a pool)
	// go market by market, as the memory store records them.
	sqlPnLEvents = `SELECT user_id, position_id, at, delta FROM (
			SELECT user_id, position_id, at, delta, 0 AS src, 0::bigint AS market, id FROM pnl_events WHERE user_id = $1
			UNION ALL
			SELECT user_id, id, closed_at, settle_pnl, 1, market_id, id FROM positions
			WHERE user_id = $1 AND closed_at IS NOT NULL AND settle_pnl IS NOT NULL
			UNION ALL
			SELECT x.user_id, x.id, m.resolved_at, ` + payoutSQL("x", "m.winning_outcome") + ` - x.cost_basis, 1, x.market_id, x.id
			FROM positions x JOIN markets m ON m.id = x.market_id
			WHERE x.user_id = $1 AND ` + settledSQL + `
		) e ORDER BY at, src, market, id`
	// sqlLatestTrades walks the primary key from the newest end and stops
	// at $1 trades that pass the is_active filter. Newest is the order
	// trades were written in, as in the memory store.
	sqlLatestTrades = `SELECT ` + tradeCols + `, u.name, u.profile_hidden, u.avatar_url, e.name, m.name
		FROM trades t
		JOIN markets m ON m.id = t.market_id
		JOIN events e ON e.id = m.event_id
		JOIN users u ON u.id = t.user_id
		WHERE e.is_active
		ORDER BY t.id DESC
		LIMIT $1`
	sqlPriceHistory = `SELECT market_id, at, yes_probability, q_yes, q_no, trade_id FROM (
			SELECT id, market_id, at, yes_probability, q_yes, q_no, COALESCE(trade_id, 0) AS trade_id
			FROM price_points WHERE market_id = $1 ORDER BY id DESC LIMIT $2
		) recent ORDER BY id`
	sqlTrades = `SELECT ` + tradeCols + ` FROM trades t WHERE t.market_id = $1 ORDER BY t.id`
	// sqlUserTrades walks trades_user_id_id_idx backwards from $2: a
	// page costs its rows, however long the user's history.
	sqlUserTrades = `SELECT ` + tradeCols + ` FROM trades t WHERE t.user_id = $1 AND t.id < $2 ORDER BY t.id DESC LIMIT $3`
	// sqlTradesAfter walks trades_market_id_idx forward from $2: a page
	// costs its rows, however many trades the market has.
	sqlTradesAfter = `SELECT ` + tradeCols + ` FROM trades t WHERE t.market_id = $1 AND t.id > $2 ORDER BY t.id LIMIT $3`
)

func scanPositionDetails(rows pgx.Rows) ([]*market.PositionDetail, error) {
	out := []*market.PositionDetail{}
	for rows.Next() {
		d := &market.PositionDetail{Market: &market.Market{}}
		pdest, pfinish := positionDest(&d.Position)
		mdest, mfinish := marketDest(d.Market)
		dest := append(pdest, &d.EventID, &d.EventName, &d.PoolID, &d.PoolName)
		if err := rows.Scan(append(dest, mdest...)...); err != nil {
			rows.Close()
			return nil, err
		}
		pfinish()
		mfinish()
		d.MarketName = d.Market.Name
		out = append(out, d)
	}
	return out, rows.Err()
}

// OpenPositions returns user id's open positions, newest first (ties by
// id, descending).
func (s *Store) OpenPositions(ctx context.Context, userID int64) ([]*market.PositionDetail, error) {
	rows, err := s.reader(ctx).Query(ctx, sqlOpenPositions, userID)
	if err != nil {
		return nil, translate(err, nil)
	}
	ps, err := scanPositionDetails(rows)
	return ps, translate(err, nil)
}

// ClosedPositions returns a page of user id's closed positions, most
// recently closed first (ties by id, descending). A negative limit means
// all.
func (s *Store) ClosedPositions(ctx context.Context, userID int64, limit, offset int) ([]*market.PositionDetail, error) {
	rows, err := s.reader(ctx).Query(ctx, sqlClosedPositions, userID, pageLimit(limit), max(offset, 0))
	if err != nil {
		return nil, translate(err, nil)
	}
	ps, err := scanPositionDetails(rows)
	return ps, translate(err, nil)
}

// ClosedStats returns how many closed positions user id has and the
// largest positive PnL among them (0 if none).
func (s *Store) ClosedStats(ctx context.Context, userID int64) (count int64, biggestWin int64, err error) {
	err = s.reader(ctx).QueryRow(ctx, sqlClosedStats, userID).Scan(&count, &biggestWin)
	return count, biggestWin, translate(err, nil)
}

// PnLEvents returns user id's realizations, oldest first (ties by id).
func (s *Store) PnLEvents(ctx context.Context, userID int64) ([]market.PnLEvent, error) {
	rows, err := s.reader(ctx).Query(ctx, sqlPnLEvents, userID)
	if err != nil {
		return nil, translate(err, nil)
	}
	var out []market.PnLEvent
	var e market.PnLEvent
	_, err = pgx.ForEachRow(rows, []any{&e.UserID, &e.PositionID, &e.At, &e.Delta}, func() error {
		out = append(out, e)
		return nil
	})
	return out, translate(err, nil)
}

// LatestTrades returns the most recent trades on markets of active events,
// newest (highest id) first, with what the public may see of each trader.
func (s *Store) LatestTrades(ctx context.Context, limit int) ([]*market.FeedTrade, error) {
	rows, err := s.reader(ctx).Query(ctx, sqlLatestTrades, pageLimit(limit))
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []*market.FeedTrade{}
	for rows.Next() {
		f := &market.FeedTrade{}
		var trader account.User
		dest, finish := tradeDest(&f.Trade)
		dest = append(dest, &trader.Name, &trader.ProfileHidden, &trader.AvatarURL, &f.EventName, &f.MarketName)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, translate(err, nil)
		}
		finish()
		f.TraderName = trader.DisplayName()
		if !trader.ProfileHidden {
			f.TraderAvatar = trader.AvatarURL
		}
		out = append(out, f)
	}
	return out, translate(rows.Err(), nil)
}

// PriceHistory returns market id's price points, oldest first: the limit
// most recent ones (all of them for limit <= 0).
func (s *Store) PriceHistory(ctx context.Context, marketID int64, limit int) ([]market.PricePoint, error) {
	rows, err := s.reader(ctx).Query(ctx, sqlPriceHistory, marketID, pageLimit(limit))
	if err != nil {
		return nil, translate(err, nil)
	}
	var out []market.PricePoint
	var p market.PricePoint
	_, err = pgx.ForEachRow(rows, []any{&p.MarketID, &p.At, &p.YesProbability, &p.QYes, &p.QNo, &p.TradeID}, func() error {
		out = append(out, p)
		return nil
	})
	return out, translate(err, nil)
}

// Trades returns market id's trade log, oldest first.
func (s *Store) Trades(ctx context.Context, marketID int64) ([]*market.Trade, error) {
	return collectTrades(s.pool.Query(ctx, sqlTrades, marketID))
}

// TradesAfter returns market id's trades with an id above after, oldest
// first, at most limit. It reads the primary: a resolved market's file
// is cached, so it must not miss the last trades a lagging replica has
// not applied yet.
func (s *Store) TradesAfter(ctx context.Context, marketID, after int64, limit int) ([]*market.Trade, error) {
	return collectTrades(s.pool.Query(ctx, sqlTradesAfter, marketID, after, pageLimit(limit)))
}

// collectTrades reads the rows of a trades query (its columns those
// tradeDest scans) into trades.
func collectTrades(rows pgx.Rows, err error) ([]*market.Trade, error) {
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []*market.Trade{}
	for rows.Next() {
		t := &market.Trade{}
		dest, finish := tradeDest(t)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, translate(err, nil)
		}
		finish()
		out = append(out, t)
	}
	return out, translate(rows.Err(), nil)
}

// UserTrades returns user userID's trades, newest first, those with an id
// below before when it is positive, at most limit.
func (s *Store) UserTrades(ctx context.Context, userID, before int64, limit int) ([]*market.Trade, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	rows, err := s.reader(ctx).Query(ctx, sqlUserTrades, userID, before, pageLimit(limit))
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []*market.Trade{}
	for rows.Next() {
		t := &market.Trade{}
		dest, finish := tradeDest(t)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, translate(err, nil)
		}
		finish()
		out = append(out, t)
	}
	return out, translate(rows.Err(), nil)
}

// Escrows returns every market, by id, with its escrow balance (0 for a
// market whose escrow has no postings), read in one snapshot.
func (s *Store) Escrows(ctx context.Context) ([]market.EscrowState, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+marketCols+`, COALESCE(a.balance, 0)`+marketFrom+`
		LEFT JOIN ledger_accounts a ON a.kind = 'market_escrow' AND a.owner = m.id
		ORDER BY m.id`)
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []market.EscrowState{}
	for rows.Next() {
		var e market.EscrowState
		dest, finish := marketDest(&e.Market)
		if err := rows.Scan(append(dest, &e.Balance)...); err != nil {
			rows.Close()
			return nil, translate(err, nil)
		}
		finish()
		out = append(out, e)
	}
	return out, translate(rows.Err(), nil)
}
