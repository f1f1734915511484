package postgres

// The leaderboard (migration 00022). Its buckets are not written by the
// trade's transaction, whose throughput is what the money path is
// measured by: a consumer of the change log applies the entries after
// its cursor ("leaderboard" in change_consumers) and moves the cursor in
// the same transaction, so a crash neither loses nor repeats anything.
//
// A trade entry names its trade, whose row gives the trader, the day and
// the volume. A sale's realization is its PnL event, written by the same
// transaction at the same time: the consumer finds the sales' events by
// trader, time and the transaction that wrote them (xmin), and always
// applies a transaction's entries together, so that the events of a
// trader's several sales in one group commit are counted once. A
// market_resolved entry names its market, whose positions the settlement
// left open (settle.go): each realizes its payout less its basis, summed
// per holder in one statement.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/leaderboard"
)

var (
	_ leaderboard.Store   = (*Store)(nil)
	_ leaderboard.Applier = (*Store)(nil)
)

// LeaderboardConsumer is the name of the leaderboard's cursor in
// change_consumers.
const LeaderboardConsumer = "leaderboard"

// errBoardGap: entries after the board's cursor were pruned, which the
// cursor should have prevented (someone moved or dropped it by hand).
var errBoardGap = errors.New("postgres: leaderboard: change-log entries after its cursor are gone; delete its cursor (change_consumers) to rebuild the board")

// leaderboardBeforeCommit, when set (tests), runs just before the
// consumer's transaction commits; an error rolls it back, as a crash
// would.
var leaderboardBeforeCommit func() error

// maxBigint is the largest bigint, where volumes stop.
const maxBigint = "9223372036854775807"

// dayOf is the UTC day of a timestamptz expression.
func dayOf(ts string) string { return `(` + ts + ` AT TIME ZONE 'UTC')::date` }

// The realizations a settlement left in positions it did not write,
// settled (reads.go): payout less basis, at the market's resolution.
var settledRealization = payoutSQL("x", "m.winning_outcome") + ` - x.cost_basis`

// boardUpsert adds the rows of delta (user_id, day, pnl, volume, trades)
// to the buckets and the totals.
const boardUpsert = `
days AS (
	INSERT INTO leaderboard_days AS d (user_id, day, pnl, volume, trades)
	SELECT user_id, day, pnl::bigint, LEAST(volume, ` + maxBigint + `)::bigint, trades::bigint FROM delta
	ON CONFLICT (user_id, day) DO UPDATE SET pnl = d.pnl + EXCLUDED.pnl,
		volume = LEAST(d.volume::numeric + EXCLUDED.volume, ` + maxBigint + `)::bigint,
		trades = d.trades + EXCLUDED.trades
),
totals AS (
	INSERT INTO leaderboard_totals AS l (user_id, pnl, volume, trades)
	SELECT user_id, sum(pnl)::bigint, LEAST(sum(volume), ` + maxBigint + `)::bigint, sum(trades)::bigint FROM delta GROUP BY user_id
	ON CONFLICT (user_id) DO UPDATE SET pnl = l.pnl + EXCLUDED.pnl,
		volume = LEAST(l.volume::numeric + EXCLUDED.volume, ` + maxBigint + `)::bigint,
		trades = l.trades + EXCLUDED.trades
),
periods AS (
	INSERT INTO leaderboard_periods AS p (days, user_id, pnl, volume, trades)
	SELECT w.days, d.user_id, sum(d.pnl)::bigint, LEAST(sum(d.volume), ` + maxBigint + `)::bigint, sum(d.trades)::bigint
	FROM delta d CROSS JOIN (VALUES (7), (30)) w(days)
	WHERE d.day BETWEEN $4::date - (w.days - 1) AND $4::date
	GROUP BY w.days, d.user_id
	ON CONFLICT (days, user_id) DO UPDATE SET pnl = p.pnl + EXCLUDED.pnl,
		volume = LEAST(p.volume::numeric + EXCLUDED.volume, ` + maxBigint + `)::bigint,
		trades = p.trades + EXCLUDED.trades
)`

// sqlBoardRoll sums the periods' totals again from the buckets, for the
// periods ending with day $1.
// (The caller deletes the old totals first: the statements of one WITH
// see one snapshot, in which a DELETE's rows are still there.)
const sqlBoardRoll = `WITH summed AS (
	INSERT INTO leaderboard_periods (days, user_id, pnl, volume, trades)
	SELECT w.days, d.user_id, sum(d.pnl)::bigint, LEAST(sum(d.volume), ` + maxBigint + `)::bigint, sum(d.trades)::bigint
	FROM leaderboard_days d JOIN (VALUES (7), (30)) w(days) ON d.day BETWEEN $1::date - (w.days - 1) AND $1::date
	GROUP BY w.days, d.user_id
)
UPDATE leaderboard_state SET as_of = $1`

// sqlBoardApply applies trades $1 and resolved markets $2 and moves the
// cursor to $3; the periods' totals end with day $4 (NULL: not summed
// yet). Partner sub-accounts are not ranked: only they trade, and hold
// positions, with a partner_id.
var sqlBoardApply = `WITH t AS MATERIALIZED (
	SELECT t.user_id, t.created_at, t.cost, t.action, t.xmin::text::bigint AS tx
	FROM unnest($1::bigint[]) AS i(id)
	JOIN trades t ON t.id = i.id
	WHERE t.partner_id IS NULL
),
delta AS (
	SELECT user_id, day, sum(pnl) AS pnl, sum(volume) AS volume, sum(trades) AS trades FROM (
		SELECT user_id, ` + dayOf("created_at") + ` AS day, 0::numeric AS pnl, cost::numeric AS volume, 1 AS trades FROM t
		UNION ALL
		SELECT e.user_id, ` + dayOf("e.at") + `, e.delta, 0, 0
		FROM (SELECT DISTINCT user_id, created_at, tx FROM t WHERE action = 'sell') k
		JOIN pnl_events e ON e.user_id = k.user_id AND e.at = k.created_at AND e.xmin::text::bigint = k.tx
		UNION ALL
		SELECT x.user_id, ` + dayOf("m.resolved_at") + `, ` + settledRealization + `, 0, 0
		FROM unnest($2::bigint[]) AS r(id)
		JOIN markets m ON m.id = r.id
		JOIN positions x ON x.market_id = m.id
		WHERE ` + settledSQL + ` AND x.partner_id IS NULL
	) r GROUP BY user_id, day
),` + boardUpsert + `
UPDATE change_consumers SET after = $3, updated_at = now() WHERE name = '` + LeaderboardConsumer + `'`

// sqlBoardBackfill fills the empty buckets and totals from everything
// the tables hold: the trades, the realizations of the PnL chart
// (reads.go: sqlPnLEvents) and the settlements of positions left open.
// The periods' totals are summed by the next apply (rollBoard).
var sqlBoardBackfill = `WITH delta AS MATERIALIZED (
	SELECT r.user_id, r.day, sum(r.pnl) AS pnl, sum(r.volume) AS volume, sum(r.trades) AS trades FROM (
		SELECT user_id, ` + dayOf("created_at") + ` AS day, 0::numeric AS pnl, cost::numeric AS volume, 1 AS trades FROM trades
		UNION ALL
		SELECT user_id, ` + dayOf("at") + `, delta, 0, 0 FROM pnl_events
		UNION ALL
		SELECT user_id, ` + dayOf("closed_at") + `, settle_pnl, 0, 0 FROM positions WHERE closed_at IS NOT NULL AND settle_pnl IS NOT NULL
		UNION ALL
		SELECT x.user_id, ` + dayOf("m.resolved_at") + `, ` + settledRealization + `, 0, 0
		FROM positions x JOIN markets m ON m.id = x.market_id WHERE ` + settledSQL + `
	) r JOIN users u ON u.id = r.user_id
	WHERE u.partner_id IS NULL
	GROUP BY r.user_id, r.day
),
days AS (
	INSERT INTO leaderboard_days (user_id, day, pnl, volume, trades)
	SELECT user_id, day, pnl::bigint, LEAST(volume, ` + maxBigint + `)::bigint, trades::bigint FROM delta
)
INSERT INTO leaderboard_totals (user_id, pnl, volume, trades)
SELECT user_id, sum(pnl)::bigint, LEAST(sum(volume), ` + maxBigint + `)::bigint, sum(trades)::bigint FROM delta GROUP BY user_id`

// ApplyLeaderboard implements leaderboard.Applier: it applies the change
// log's entries after the board's cursor, whole transactions of them up
// to about limit entries, and moves the cursor, in one transaction. The
// cursor's row is locked first, so that of several servers one applies
// at a time and the others then find the cursor moved. The first call on
// a database fills the board from its tables (backfillBoard).
func (s *Store) ApplyLeaderboard(ctx context.Context, limit int) (int, error) {
	limit = max(limit, 1)
	// A consumer that has caught up, on a day whose periods are summed
	// already, has nothing to do.
	caughtUp := func(ctx context.Context) (bool, error) {
		var done bool
		err := s.pool.QueryRow(ctx, `SELECT COALESCE((SELECT after FROM change_consumers WHERE name = $1) >= (SELECT last FROM change_log_head)
			AND (SELECT as_of FROM leaderboard_state) = $2, false)`, LeaderboardConsumer, boardToday()).Scan(&done)
		return done, err
	}
	return s.applyConsumer(ctx, LeaderboardConsumer, caughtUp, func(ctx context.Context, tx pgx.Tx, after int64) (int, error) {
		asOf, err := rollBoard(ctx, tx)
		if err != nil {
			return 0, err
		}
		refs, err := changeRefsAfter(ctx, tx, after, limit, false)
		if errors.Is(err, errChangeGap) {
			return 0, errBoardGap
		}
		if err != nil || refs.n == 0 {
			return 0, err
		}
		if _, err := tx.Exec(ctx, sqlBoardApply, refs.trades, refs.resolved, refs.last, asOf); err != nil {
			return 0, err
		}
		if leaderboardBeforeCommit != nil {
			if err := leaderboardBeforeCommit(); err != nil {
				return 0, err
			}
		}
		return refs.n, nil
	}, s.backfillBoard)
}

// boardToday is the day the periods' totals end with: the UTC day of
// the server's clock. A board asked for another day (a server whose
// clock is a little off at midnight) is summed from the buckets.
var boardToday = func() time.Time { return leaderboard.Day(time.Now()) }

// rollBoard sums the periods' totals again when the day has changed
// since they were last summed. The caller holds the cursor's lock.
// It returns the day they end with.
func rollBoard(ctx context.Context, tx pgx.Tx) (time.Time, error) {
	today := boardToday()
	var asOf *time.Time
	if err := tx.QueryRow(ctx, `SELECT as_of FROM leaderboard_state`).Scan(&asOf); err != nil {
		return today, err
	}
	if asOf != nil && asOf.Equal(today) {
		return today, nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM leaderboard_periods`); err != nil {
		return today, err
	}
	_, err := tx.Exec(ctx, sqlBoardRoll, today)
	return today, err
}

// tradeIDOf is the trade_id of a trade entry's data, 0 when it names none.
// The data is written by TradeChanges with trade_id first; anything else
// is decoded in full.
func tradeIDOf(data []byte) int64 {
	const prefix = `{"trade_id":`
	if rest, ok := bytes.CutPrefix(data, []byte(prefix)); ok {
		var id int64
		i := 0
		for ; i < len(rest) && i < 18 && rest[i] >= '0' && rest[i] <= '9'; i++ {
			id = id*10 + int64(rest[i]-'0')
		}
		if i > 0 && i < len(rest) && (rest[i] == ',' || rest[i] == '}') {
			return id
		}
	}
	var d struct {
		TradeID int64 `json:"trade_id"`
	}
	if json.Unmarshal(data, &d) != nil {
		return 0
	}
	return d.TradeID
}

// backfillBoard fills the board from the tables and sets its cursor to
// the change log's head, in one repeatable-read transaction: its one
// snapshot holds exactly the transactions whose entries are at or before
// that head, so the consumer goes on from there with nothing counted
// twice or missed. When another server got there first, inserting the
// cursor fails to serialize and the retry finds it: nothing is done.
func (s *Store) backfillBoard(ctx context.Context) error {
	err := s.tx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var head int64
		if err := tx.QueryRow(ctx, `SELECT last FROM change_log_head`).Scan(&head); err != nil {
			return err
		}
		var set int64
		err := tx.QueryRow(ctx, `INSERT INTO change_consumers (name, after) VALUES ($1, $2)
			ON CONFLICT (name) DO NOTHING RETURNING after`, LeaderboardConsumer, head).Scan(&set)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		// A board whose cursor was deleted is rebuilt from nothing.
		if _, err := tx.Exec(ctx, `DELETE FROM leaderboard_days`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM leaderboard_totals`); err != nil {
			return err
		}
		// The consumer sums the periods again at its first apply.
		if _, err := tx.Exec(ctx, `DELETE FROM leaderboard_periods`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE leaderboard_state SET as_of = NULL`); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, sqlBoardBackfill)
		return err
	})
	return translate(err, nil)
}

// LeaderboardCursor is the last change-log entry the board counts (0
// before the board was first filled).
func (s *Store) LeaderboardCursor(ctx context.Context) (int64, error) {
	return s.ChangeCursor(ctx, LeaderboardConsumer)
}

// The boards: all time from the totals, and a period from its totals,
// each along an index from the top; a period that does not end with the
// day the totals were summed for sums the buckets of its days instead.
var (
	sqlBoardAll = func(by string) string {
		return `SELECT l.user_id, u.name, u.avatar_url, u.profile_hidden, u.level, l.pnl, l.volume, l.trades
		FROM (SELECT * FROM leaderboard_totals ORDER BY ` + by + ` DESC, user_id LIMIT $1) l
		JOIN users u ON u.id = l.user_id
		ORDER BY l.` + by + ` DESC, l.user_id`
	}
	sqlBoardPeriod = func(by string) string {
		return `SELECT l.user_id, u.name, u.avatar_url, u.profile_hidden, u.level, l.pnl, l.volume, l.trades
		FROM (SELECT * FROM leaderboard_periods WHERE days = $2 ORDER BY ` + by + ` DESC, user_id LIMIT $1) l
		JOIN users u ON u.id = l.user_id
		ORDER BY l.` + by + ` DESC, l.user_id`
	}
	sqlBoardBuckets = func(by string) string {
		return `SELECT l.user_id, u.name, u.avatar_url, u.profile_hidden, u.level, l.pnl, l.volume, l.trades
		FROM (
			SELECT user_id, sum(pnl)::bigint AS pnl, LEAST(sum(volume), ` + maxBigint + `)::bigint AS volume, sum(trades)::bigint AS trades
			FROM leaderboard_days WHERE day BETWEEN $2 AND $3
			GROUP BY user_id ORDER BY ` + by + ` DESC, user_id LIMIT $1
		) l
		JOIN users u ON u.id = l.user_id
		ORDER BY l.` + by + ` DESC, l.user_id`
	}
	sqlBoards = map[leaderboard.By][3]string{
		leaderboard.ByPnL:    {sqlBoardAll("pnl"), sqlBoardPeriod("pnl"), sqlBoardBuckets("pnl")},
		leaderboard.ByVolume: {sqlBoardAll("volume"), sqlBoardPeriod("volume"), sqlBoardBuckets("volume")},
	}
)

// Leaderboard implements leaderboard.Store.
func (s *Store) Leaderboard(ctx context.Context, q leaderboard.Query) ([]leaderboard.Row, error) {
	return s.leaderboard(ctx, q, false)
}

func (s *Store) leaderboard(ctx context.Context, q leaderboard.Query, buckets bool) ([]leaderboard.Row, error) {
	qs, ok := sqlBoards[q.By]
	if !ok {
		return nil, fmt.Errorf("postgres: leaderboard: no ranking by %q", q.By)
	}
	db := s.reader(ctx)
	var rows pgx.Rows
	var err error
	since, period := q.Since()
	switch {
	case !period:
		rows, err = db.Query(ctx, qs[0], int64(q.Limit))
	default:
		var asOf *time.Time
		if !buckets {
			if err := db.QueryRow(ctx, `SELECT as_of FROM leaderboard_state`).Scan(&asOf); err != nil {
				return nil, translate(err, nil)
			}
		}
		if asOf != nil && asOf.Equal(q.Today) {
			rows, err = db.Query(ctx, qs[1], int64(q.Limit), int16(q.Period.Days()))
		} else {
			rows, err = db.Query(ctx, qs[2], int64(q.Limit), since, q.Today)
		}
	}
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []leaderboard.Row{}
	var r leaderboard.Row
	_, err = pgx.ForEachRow(rows, []any{&r.UserID, &r.Name, &r.AvatarURL, &r.Hidden, &r.Level, &r.PnL, &r.Volume, &r.Trades}, func() error {
		out = append(out, r)
		r.AvatarURL = nil
		return nil
	})
	return out, translate(err, nil)
}

// ChangesCommitted returns a channel closed when WatchChanges next hears
// that entries were committed (here or on another server).
func (s *Store) ChangesCommitted() <-chan struct{} { return s.changed.Wait() }

// LeaderboardTotals implements leaderboard.Store: one row of
// leaderboard_totals, none for a user who never traded.
func (s *Store) LeaderboardTotals(ctx context.Context, userID int64) (leaderboard.Row, error) {
	r := leaderboard.Row{UserID: userID}
	err := s.reader(ctx).QueryRow(ctx, `SELECT pnl, volume, trades FROM leaderboard_totals WHERE user_id = $1`, userID).Scan(&r.PnL, &r.Volume, &r.Trades)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, nil
	}
	return r, translate(err, nil)
}
