package postgres

// The statistics (migration 00041). Like the leaderboard's buckets, the
// aggregates are not written by the transactions they count: a consumer
// of the change log applies the entries after its cursor ("stats" in
// change_consumers) and moves the cursor in the same transaction, so a
// crash neither loses nor repeats anything. It decodes no trade entry: a
// row's trade ids (trade_ids) name the trades, whose rows give the day,
// trader, market and money; a market_resolved entry names its market.
// Only the rare deposit and withdrawal entries are decoded
// (stats.Money), their amounts and days taken from the entry itself.
// Registrations are counted by a trigger on users (see the migration).

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/stats"
)

var (
	_ stats.Store   = (*Store)(nil)
	_ stats.Applier = (*Store)(nil)
)

// StatsConsumer is the name of the statistics' cursor in change_consumers.
const StatsConsumer = "stats"

// errStatsGap: entries after the cursor were pruned, which the cursor
// should have prevented (someone moved or dropped it by hand).
var errStatsGap = errors.New("postgres: stats: change-log entries after its cursor are gone; delete its cursor (change_consumers) to rebuild the statistics")

// statsBeforeCommit, when set (tests), runs just before the consumer's
// transaction commits; an error rolls it back, as a crash would.
var statsBeforeCommit func() error

// sqlStatsOI is what a trade adds to its market's open interest: a buy
// its cost (its charge less the fee), a sell minus what it paid out.
const sqlStatsOI = `CASE WHEN t.action = 'buy' THEN t.cost ELSE -t.amount END`

// sqlStatsTrades applies trades $1 (their ids).
var sqlStatsTrades = `WITH t AS MATERIALIZED (
	SELECT t.user_id, t.market_id, ` + dayOf("t.created_at") + ` AS day, t.cost, t.fee, ` + sqlStatsOI + ` AS oi
	FROM unnest($1::bigint[]) AS i(id) JOIN trades t ON t.id = i.id
),
dt AS (
	INSERT INTO stats_day_traders (day, user_id) SELECT DISTINCT day, user_id FROM t
	ON CONFLICT DO NOTHING RETURNING day
),
nt AS (
	INSERT INTO stats_traders (user_id) SELECT DISTINCT user_id FROM t
	ON CONFLICT DO NOTHING RETURNING user_id
),
days AS (
	INSERT INTO stats_days AS s (day, volume, fees, trades, active_traders, open_interest)
	SELECT d.day, d.volume, d.fees, d.trades, COALESCE(a.n, 0), d.oi
	FROM (SELECT day, sum(cost)::bigint AS volume, sum(fee)::bigint AS fees, count(*) AS trades, sum(oi)::bigint AS oi
		FROM t GROUP BY day) d
	LEFT JOIN (SELECT day, count(*) AS n FROM dt GROUP BY day) a ON a.day = d.day
	ON CONFLICT (day) DO UPDATE SET volume = s.volume + EXCLUDED.volume, fees = s.fees + EXCLUDED.fees,
		trades = s.trades + EXCLUDED.trades, active_traders = s.active_traders + EXCLUDED.active_traders,
		open_interest = s.open_interest + EXCLUDED.open_interest
),
markets AS (
	INSERT INTO stats_markets AS s (market_id, open_interest)
	SELECT market_id, sum(oi)::bigint FROM t GROUP BY market_id
	ON CONFLICT (market_id) DO UPDATE SET open_interest = s.open_interest + EXCLUDED.open_interest
),
market_days AS (
	INSERT INTO stats_market_days AS s (day, market_id, volume, trades)
	SELECT day, market_id, sum(cost)::bigint, count(*) FROM t GROUP BY day, market_id
	ON CONFLICT (day, market_id) DO UPDATE SET volume = s.volume + EXCLUDED.volume, trades = s.trades + EXCLUDED.trades
)
UPDATE stats_state SET traders = traders + (SELECT count(*) FROM nt)`

// sqlStatsResolved takes the open interest of markets $1, resolved or
// voided, out on the day of their resolution, once per market. It runs
// after the trades of the same entries were applied (a statement sees
// none of another's changes in its own snapshot).
var sqlStatsResolved = `WITH r AS (
	INSERT INTO stats_markets AS s (market_id, resolved)
	SELECT DISTINCT m.id, true FROM unnest($1::bigint[]) AS r(id) JOIN markets m ON m.id = r.id WHERE m.resolved
	ON CONFLICT (market_id) DO UPDATE SET resolved = true WHERE NOT s.resolved
	RETURNING s.market_id, s.open_interest
)
INSERT INTO stats_days AS s (day, open_interest)
SELECT ` + dayOf("m.resolved_at") + `, -sum(r.open_interest)::bigint FROM r JOIN markets m ON m.id = r.market_id GROUP BY 1
ON CONFLICT (day) DO UPDATE SET open_interest = s.open_interest + EXCLUDED.open_interest`

// sqlStatsMoney adds deposits $2 and withdrawals $3 to days $1.
const sqlStatsMoney = `INSERT INTO stats_days AS s (day, deposits, withdrawals)
SELECT day, sum(dep)::bigint, sum(wd)::bigint FROM unnest($1::date[], $2::bigint[], $3::bigint[]) AS x(day, dep, wd) GROUP BY day
ON CONFLICT (day) DO UPDATE SET deposits = s.deposits + EXCLUDED.deposits, withdrawals = s.withdrawals + EXCLUDED.withdrawals`

// sqlStatsBackfill fills the emptied aggregates from the tables: the
// trades, the resolved markets, the credited deposits and the paid
// withdrawals. stats_signups is the trigger's and stays.
var sqlStatsBackfill = []string{
	`INSERT INTO stats_day_traders (day, user_id) SELECT DISTINCT ` + dayOf("created_at") + `, user_id FROM trades`,
	`INSERT INTO stats_traders (user_id) SELECT DISTINCT user_id FROM trades`,
	`UPDATE stats_state SET traders = (SELECT count(*) FROM stats_traders)`,
	`INSERT INTO stats_markets (market_id, open_interest, resolved)
	SELECT t.market_id, sum(` + sqlStatsOI + `)::bigint, bool_or(m.resolved)
	FROM trades t JOIN markets m ON m.id = t.market_id GROUP BY t.market_id`,
	`INSERT INTO stats_market_days (day, market_id, volume, trades)
	SELECT ` + dayOf("created_at") + `, market_id, sum(cost)::bigint, count(*) FROM trades GROUP BY 1, 2`,
	`INSERT INTO stats_days (day, volume, fees, trades, active_traders, deposits, withdrawals, open_interest)
	SELECT day, sum(volume)::bigint, sum(fees)::bigint, sum(trades)::bigint, sum(active)::bigint,
		sum(deposits)::bigint, sum(withdrawals)::bigint, sum(oi)::bigint
	FROM (
		SELECT ` + dayOf("t.created_at") + ` AS day, sum(t.cost) AS volume, sum(t.fee) AS fees, count(*) AS trades, 0 AS active,
			0 AS deposits, 0 AS withdrawals, sum(` + sqlStatsOI + `) AS oi
		FROM trades t GROUP BY 1
		UNION ALL
		SELECT day, 0, 0, 0, count(*), 0, 0, 0 FROM stats_day_traders GROUP BY day
		UNION ALL
		SELECT ` + dayOf("credited_at") + `, 0, 0, 0, 0, sum(amount_kopecks), 0, 0 FROM deposits WHERE status = 'credited' GROUP BY 1
		UNION ALL
		SELECT ` + dayOf("decided_at") + `, 0, 0, 0, 0, 0, sum(amount), 0 FROM withdrawals WHERE status = 'paid' GROUP BY 1
		UNION ALL
		SELECT ` + dayOf("m.resolved_at") + `, 0, 0, 0, 0, 0, 0, -sum(s.open_interest)
		FROM stats_markets s JOIN markets m ON m.id = s.market_id WHERE s.resolved GROUP BY 1
	) x GROUP BY day`,
}

// ApplyStats implements stats.Applier: it applies the change log's
// entries after the statistics' cursor, whole rows of them up to about
// limit entries, and moves the cursor, in one transaction. The cursor's
// row is locked first, so that of several servers one applies at a time
// and the others then find the cursor moved. The first call on a
// database fills the aggregates from its tables (backfillStats).
func (s *Store) ApplyStats(ctx context.Context, limit int) (int, error) {
	limit = max(limit, 1)
	return s.applyConsumer(ctx, StatsConsumer, s.cursorAtHead(StatsConsumer), func(ctx context.Context, tx pgx.Tx, after int64) (int, error) {
		refs, err := changeRefsAfter(ctx, tx, after, limit, true)
		if errors.Is(err, errChangeGap) {
			return 0, errStatsGap
		}
		if err != nil || refs.n == 0 {
			return 0, err
		}
		if len(refs.trades) > 0 {
			if _, err := tx.Exec(ctx, sqlStatsTrades, refs.trades); err != nil {
				return 0, err
			}
		}
		if len(refs.moneyDays) > 0 {
			if _, err := tx.Exec(ctx, sqlStatsMoney, refs.moneyDays, refs.deposits, refs.withdrawals); err != nil {
				return 0, err
			}
		}
		if len(refs.resolved) > 0 {
			if _, err := tx.Exec(ctx, sqlStatsResolved, refs.resolved); err != nil {
				return 0, err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE change_consumers SET after = $2, updated_at = now() WHERE name = $1`, StatsConsumer, refs.last); err != nil {
			return 0, err
		}
		if statsBeforeCommit != nil {
			if err := statsBeforeCommit(); err != nil {
				return 0, err
			}
		}
		return refs.n, nil
	}, s.backfillStats)
}

// backfillStats fills the aggregates from the tables and sets the cursor
// to the change log's head, in one repeatable-read transaction, as
// backfillBoard does: its snapshot holds exactly the transactions whose
// entries are at or before that head. When another server got there
// first, inserting the cursor finds it and nothing is done.
func (s *Store) backfillStats(ctx context.Context) error {
	err := s.tx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var head int64
		if err := tx.QueryRow(ctx, `SELECT last FROM change_log_head`).Scan(&head); err != nil {
			return err
		}
		var set int64
		err := tx.QueryRow(ctx, `INSERT INTO change_consumers (name, after) VALUES ($1, $2)
			ON CONFLICT (name) DO NOTHING RETURNING after`, StatsConsumer, head).Scan(&set)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		// Aggregates whose cursor was deleted are rebuilt from nothing.
		for _, q := range []string{`DELETE FROM stats_days`, `DELETE FROM stats_day_traders`, `DELETE FROM stats_traders`,
			`DELETE FROM stats_markets`, `DELETE FROM stats_market_days`} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		for _, q := range sqlStatsBackfill {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	return translate(err, nil)
}

// StatsCursor is the last change-log entry the statistics count (0
// before they were first filled).
func (s *Store) StatsCursor(ctx context.Context) (int64, error) {
	return s.ChangeCursor(ctx, StatsConsumer)
}

// sqlStatsDays reads the days from $1 to $2 that have figures, with the
// day's change of the open interest.
const sqlStatsDays = `SELECT day, COALESCE(d.volume, 0), COALESCE(d.fees, 0), COALESCE(d.trades, 0),
	COALESCE(d.active_traders, 0), COALESCE(u.users, 0), COALESCE(d.deposits, 0), COALESCE(d.withdrawals, 0),
	COALESCE(d.open_interest, 0)
FROM (SELECT * FROM stats_days WHERE day BETWEEN $1 AND $2) d
FULL JOIN (SELECT * FROM stats_signups WHERE day BETWEEN $1 AND $2) u USING (day)
ORDER BY day`

// StatsDays implements stats.Store.
func (s *Store) StatsDays(ctx context.Context, from, to time.Time) (int64, []stats.Day, error) {
	var before int64
	db := s.reader(ctx)
	err := db.QueryRow(ctx, `SELECT COALESCE(sum(open_interest), 0)::bigint FROM stats_days WHERE day < $1`, from).Scan(&before)
	if err != nil {
		return 0, nil, translate(err, nil)
	}
	rows, err := db.Query(ctx, sqlStatsDays, from, to)
	if err != nil {
		return 0, nil, translate(err, nil)
	}
	var days []stats.Day
	var d stats.Day
	open := before
	_, err = pgx.ForEachRow(rows, []any{&d.Date, &d.Volume, &d.Fees, &d.Trades, &d.ActiveTraders, &d.NewUsers,
		&d.Deposits, &d.Withdrawals, &d.OpenInterest}, func() error {
		open += d.OpenInterest
		d.OpenInterest = open
		d.Date = stats.DayOf(d.Date)
		days = append(days, d)
		return nil
	})
	return before, days, translate(err, nil)
}

// StatsTotals implements stats.Store: the sums of a few hundred days.
func (s *Store) StatsTotals(ctx context.Context) (stats.Totals, error) {
	var t stats.Totals
	err := s.reader(ctx).QueryRow(ctx, `SELECT COALESCE(sum(volume), 0)::bigint, COALESCE(sum(fees), 0)::bigint,
		COALESCE(sum(trades), 0)::bigint, (SELECT traders FROM stats_state),
		(SELECT COALESCE(sum(users), 0) FROM stats_signups)::bigint,
		COALESCE(sum(deposits), 0)::bigint, COALESCE(sum(withdrawals), 0)::bigint, COALESCE(sum(open_interest), 0)::bigint
		FROM stats_days`).Scan(&t.Volume, &t.Fees, &t.Trades, &t.Traders, &t.Users, &t.Deposits, &t.Withdrawals, &t.OpenInterest)
	return t, translate(err, nil)
}

// StatsTopMarkets implements stats.Store.
func (s *Store) StatsTopMarkets(ctx context.Context, day time.Time, limit int) ([]stats.TopMarket, error) {
	rows, err := s.reader(ctx).Query(ctx, `SELECT d.market_id, m.event_id, e.name, m.name, d.volume, d.trades
		FROM (SELECT * FROM stats_market_days WHERE day = $1 ORDER BY volume DESC, market_id LIMIT $2) d
		JOIN markets m ON m.id = d.market_id JOIN events e ON e.id = m.event_id
		ORDER BY d.volume DESC, d.market_id`, stats.DayOf(day), int64(limit))
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []stats.TopMarket{}
	var m stats.TopMarket
	_, err = pgx.ForEachRow(rows, []any{&m.MarketID, &m.EventID, &m.EventName, &m.MarketName, &m.Volume, &m.Trades}, func() error {
		out = append(out, m)
		return nil
	})
	return out, translate(err, nil)
}

// RebuildStats deletes the statistics' cursor, so that the next
// ApplyStats fills the aggregates again from the tables (the operator's
// way to rebuild them, as for the leaderboard).
func (s *Store) RebuildStats(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM change_consumers WHERE name = $1`, StatsConsumer)
	return translate(err, nil)
}
