package postgres

// The change log's consumers that keep aggregates in the database (the
// leaderboard, the growth rules, the statistics) share one shape: a
// cursor row in change_consumers, locked by each apply so that of
// several servers one applies at a time; the apply's writes and the
// cursor's move in one transaction, so a crash neither loses nor repeats
// an entry; and, where the cursor has no row yet, a fill from the tables
// in one snapshot that also places the cursor at the log's head.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/stats"
)

// consumerStep applies, in tx, what follows the cursor after (whose row
// tx holds locked), moves the cursor, and returns how many entries it
// applied.
type consumerStep func(ctx context.Context, tx pgx.Tx, after int64) (int, error)

// applyConsumer runs one apply of consumer name. caughtUp, asked first
// without a transaction (a consumer looks after every commit and every
// second), may tell that there is nothing to do; fill fills the
// aggregates on a database where the cursor has no row, after which the
// apply runs.
func (s *Store) applyConsumer(ctx context.Context, name string, caughtUp func(context.Context) (bool, error), step consumerStep,
	fill func(context.Context) error) (int, error) {
	done, err := caughtUp(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	if done {
		return 0, nil
	}
	for {
		applied, fresh := 0, false
		err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
			applied, fresh = 0, false
			var after int64
			err := tx.QueryRow(ctx, `SELECT after FROM change_consumers WHERE name = $1 FOR UPDATE`, name).Scan(&after)
			if errors.Is(err, pgx.ErrNoRows) {
				fresh = true
				return nil
			}
			if err != nil {
				return err
			}
			// The statements are planned for the ids they get: a
			// generic plan of "id = ANY($1)" may scan whole tables.
			if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_custom_plan`); err != nil {
				return err
			}
			applied, err = step(ctx, tx, after)
			return err
		})
		if err != nil {
			return 0, translate(err, nil)
		}
		if !fresh {
			return applied, nil
		}
		if err := fill(ctx); err != nil {
			return 0, err
		}
	}
}

// cursorAtHead is the usual caughtUp of applyConsumer: the cursor of
// consumer name has reached the change log's head.
func (s *Store) cursorAtHead(name string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		var done bool
		err := s.pool.QueryRow(ctx, `SELECT COALESCE((SELECT after FROM change_consumers WHERE name = $1) >= (SELECT last FROM change_log_head), false)`,
			name).Scan(&done)
		return done, err
	}
}

// changeRefs is what the aggregates need of a run of change-log entries:
// the trades they record, the markets they resolve and, when asked for,
// the money of the deposits and withdrawals (stats.Money: a day and its
// kopecks, one of them 0).
type changeRefs struct {
	trades, resolved      []int64
	moneyDays             []time.Time
	deposits, withdrawals []int64
	n                     int   // entries
	last                  int64 // the last entry's seq
}

// errChangeGap: entries after a consumer's cursor were pruned, which the
// cursor should have prevented (someone moved or dropped it by hand).
// Each consumer says so in its own words.
var errChangeGap = errors.New("postgres: change-log entries after the cursor are gone")

// sqlChangeRefs reads the change log's rows after the cursor $1, whole, up
// to the one that brings the entries to $2 or more: of each entry, its
// type and market, and the ids of the row's trades. The entries' data is
// read only where it must be: a row written before it kept its trades'
// ids (migration 00026), and, when $3, a row holding a deposit or a
// withdrawal.
const sqlChangeRefs = `SELECT first_seq, types, market_ids, trade_ids, lens,
	CASE WHEN (cardinality(trade_ids) = 0 AND 'trade' = ANY (types)) OR ($3 AND types && '{deposit,withdrawal}'::text[]) THEN data END
FROM (
	SELECT c.first_seq, c.types, c.market_ids, c.trade_ids, c.lens, c.data, sum(c.n) OVER (ORDER BY c.first_seq) - c.n AS before
	FROM (SELECT * FROM change_log WHERE first_seq > $1 ORDER BY first_seq LIMIT $2) c
) r WHERE before < $2 ORDER BY first_seq`

// changeRefsAfter reads the refs of whole change-log rows after after. It
// decodes no trade entry: on a hot market a consumer reads ten thousand
// entries a second, and building each one cost the server more than
// applying them cost the database. With money it decodes the deposit and
// withdrawal entries.
func changeRefsAfter(ctx context.Context, tx pgx.Tx, after int64, limit int, money bool) (changeRefs, error) {
	var out changeRefs
	rows, err := tx.Query(ctx, sqlChangeRefs, after, int64(limit), money)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	var (
		first   int64
		types   []string
		markets []int64
		trades  []int64
		lens    []int32
		// The entries' data is read in place, not copied: only what is
		// needed is taken from it, before the next row.
		data pgtype.DriverBytes
	)
	malformed := func() error { return fmt.Errorf("postgres: change log row %d is malformed", first) }
	for rows.Next() {
		if err := rows.Scan(&first, &types, &markets, &trades, &lens, &data); err != nil {
			return out, err
		}
		if out.n == 0 && first != after+1 {
			return out, errChangeGap
		}
		if len(markets) != len(types) || len(lens) != len(types) {
			return out, malformed()
		}
		oldTrades := len(trades) == 0
		off, k := 0, 0
		for i, t := range types {
			end := off + int(lens[i])
			if lens[i] < 0 || data != nil && end > len(data) {
				return out, malformed()
			}
			switch changelog.Type(t) {
			case changelog.Trade:
				var id int64
				switch {
				case !oldTrades && k < len(trades):
					id = trades[k]
				case oldTrades && data != nil:
					id = tradeIDOf(data[off:end])
				}
				k++
				if id == 0 {
					return out, fmt.Errorf("postgres: change log: trade entry %d names no trade", first+int64(i))
				}
				out.trades = append(out.trades, id)
			case changelog.MarketResolved:
				out.resolved = append(out.resolved, markets[i])
			case changelog.Deposit, changelog.Withdrawal:
				if !money {
					break
				}
				if data == nil {
					return out, malformed()
				}
				if day, dep, wd, ok := stats.Money(changelog.Type(t), data[off:end]); ok {
					out.moneyDays = append(out.moneyDays, day)
					out.deposits = append(out.deposits, dep)
					out.withdrawals = append(out.withdrawals, wd)
				}
			}
			off = end
		}
		if !oldTrades && k != len(trades) {
			return out, malformed()
		}
		out.n += len(types)
		out.last = first + int64(len(types)) - 1
	}
	return out, rows.Err()
}
