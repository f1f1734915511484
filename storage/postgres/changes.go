package postgres

// The change log (migration 00016). A transaction that changes what the
// log tells of writes its entries, as one row, in its last statement
// before COMMIT, which also takes their numbers from the one row of
// change_log_head: that row's lock orders the commits of every
// transaction that writes entries, and it is held only from that
// statement to COMMIT. So an entry
// committed after another has a larger seq, and a reader that has read
// everything up to n never later finds a committed entry <= n it did not
// see. The same transaction NOTIFYs the schema's change channel, which
// PostgreSQL delivers at COMMIT (WatchChanges wakes the readers).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
)

var _ changelog.Reader = (*Store)(nil)

// sqlAppendChanges appends the entries of a logRow's arguments to the
// change log, as one row: the last statement before COMMIT of every
// transaction that writes entries, because it takes their numbers from
// change_log_head. The row is found by its key: a trade's transaction
// turns sequential scans off (sqlTradePlans), and the cost that puts on
// one would make PostgreSQL compile the statement (JIT) every time. The
// row is built whole in Go, ids included: a statement that spread the
// entries over rows and gathered them again cost a hot market's batch a
// fifth of its time.
const sqlAppendChanges = `WITH head AS (
	UPDATE change_log_head SET last = last + cardinality($1::text[])
	WHERE only_row = true
	RETURNING last - cardinality($1::text[]) AS base
)
INSERT INTO change_log (first_seq, n, at, types, event_ids, pool_ids, market_ids, user_ids, ats, lens, data, trade_ids)
SELECT base + 1, cardinality($1::text[]), $2, $1, $3, $4, $5, $6, $7, $8, $9, $10 FROM head`

// logRow is the arguments of sqlAppendChanges: the entries column by
// column, their data one after another, and the ids of the trade
// entries' trades (which the leaderboard reads instead of the data). A
// trade's rows are kept for the next (logRows), as its entries are
// (market.PreparedChanges.Release).
type logRow struct {
	types                      []string
	events, pools, mkts, users []int64
	ats                        []time.Time
	lens                       []int32
	data                       []byte
	trades                     []int64
	last                       time.Time
}

var logRows = sync.Pool{New: func() any { return new(logRow) }}

// newLogRow returns the row of es (at least one). data, when not nil, is
// their data one after another already (market.PreparedChanges.Data).
func newLogRow(es []changelog.Entry, data []byte) *logRow {
	r := logRows.Get().(*logRow)
	n := len(es)
	r.types = slices.Grow(r.types[:0], n)
	r.events, r.pools = slices.Grow(r.events[:0], n), slices.Grow(r.pools[:0], n)
	r.mkts, r.users = slices.Grow(r.mkts[:0], n), slices.Grow(r.users[:0], n)
	r.ats, r.lens = slices.Grow(r.ats[:0], n), slices.Grow(r.lens[:0], n)
	r.trades = r.trades[:0]
	if r.trades == nil {
		r.trades = []int64{} // not nil: the column takes no NULL
	}
	if data == nil {
		size := 0
		for _, en := range es {
			size += len(en.Data)
		}
		r.data = slices.Grow(r.data[:0], size)
	}
	r.last = time.Time{}
	for _, en := range es {
		if en.Type == changelog.Trade {
			r.trades = append(r.trades, tradeIDOf(en.Data))
		}
		r.types = append(r.types, string(en.Type))
		r.events, r.pools = append(r.events, en.EventID), append(r.pools, en.PoolID)
		r.mkts, r.users = append(r.mkts, en.MarketID), append(r.users, en.UserID)
		at := dbTime(en.At)
		if at.After(r.last) {
			r.last = at
		}
		r.ats, r.lens = append(r.ats, at), append(r.lens, int32(len(en.Data)))
		if data == nil {
			r.data = append(r.data, en.Data...)
		}
	}
	if data != nil {
		r.data = data
	}
	return r
}

// args returns the arguments of sqlAppendChanges. data goes as it is: a
// text parameter takes bytes, and a copy into a string would be one more
// of the entries' size on every commit.
func (r *logRow) args() []any {
	return []any{r.types, r.last, r.events, r.pools, r.mkts, r.users, r.ats, r.lens, r.data, r.trades}
}

// release keeps r's arrays for the next row, once its statement has been
// sent. Its data is the entries' (market.PreparedChanges.Data), which
// they release themselves.
func (r *logRow) release() {
	r.data = nil
	logRows.Put(r)
}

// sqlNotifyChanges announces new entries on channel $1, at COMMIT.
const sqlNotifyChanges = `SELECT pg_notify($1, '')`

// changeChannel is the channel a store of schema announces its entries
// on. A channel name is an identifier, at most 63 bytes: a long schema
// name is cut, which at worst wakes another schema's readers for nothing.
func changeChannel(schema string) string {
	ch := "predictkit_changes"
	if schema != "" {
		ch += "_" + schema
	}
	if len(ch) > 63 {
		ch = ch[:63]
	}
	return ch
}

// queueChanges queues what appends es to the change log and announces
// them on channel: the last statements of a transaction before its
// COMMIT.
func queueChanges(b *pgx.Batch, channel string, es []changelog.Entry) {
	if len(es) == 0 {
		return
	}
	b.Queue(sqlNotifyChanges, channel)
	b.Queue(sqlAppendChanges, newLogRow(es, nil).args()...)
}

// resolvedChanges are the entries of a settlement: one market_resolved
// per market it resolved, and none per holder.
func resolvedChanges(effs ...*market.Effects) []changelog.Entry {
	var out []changelog.Entry
	for _, eff := range effs {
		if eff != nil && eff.Market != nil && eff.Market.Resolved {
			out = append(out, market.ResolvedChange(eff.Market))
		}
	}
	return out
}

// appendChanges appends es to the change log in transaction tx, as its
// last statements before COMMIT.
func (s *Store) appendChanges(ctx context.Context, tx pgx.Tx, es []changelog.Entry) error {
	b := &pgx.Batch{}
	queueChanges(b, s.changeChannel, es)
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}

// sqlChanges reads the rows that hold the $2 entries from seq $1 on:
// from the row that holds $1 (or, when $1 was pruned, the first row after
// it) to the last that starts before the entry $2 places further, along
// the primary key. A row whose entries all come before $1 is left out, so
// that a reader waiting at the end of the log reads nothing.
const sqlChanges = `WITH s AS (
	SELECT b.start, LEAST(GREATEST(b.start, $1)::numeric + $2, 9223372036854775807)::bigint AS stop
	FROM (SELECT COALESCE(
		(SELECT max(first_seq) FROM change_log WHERE first_seq <= $1),
		(SELECT min(first_seq) FROM change_log WHERE first_seq > $1)) AS start) b
)
SELECT c.first_seq, c.types, c.event_ids, c.pool_ids, c.market_ids, c.user_ids, c.ats, c.lens, c.data
FROM s JOIN change_log c ON c.first_seq >= s.start AND c.first_seq < s.stop
WHERE c.first_seq + c.n > $1
ORDER BY c.first_seq`

// Changes returns at most limit entries with a Seq larger than after, in
// ascending order.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]changelog.Entry, error) {
	if limit <= 0 || after == math.MaxInt64 {
		return nil, nil
	}
	after = max(after, 0)
	rows, err := s.pool.Query(ctx, sqlChanges, after+1, int64(limit))
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	var out []changelog.Entry
	for rows.Next() {
		var r changeRow
		if err := rows.Scan(&r.first, &r.types, &r.events, &r.pools, &r.markets, &r.users, &r.ats, &r.lens, &r.data); err != nil {
			return nil, translate(err, nil)
		}
		if out, err = r.entries(out, after, limit); err != nil {
			return nil, err
		}
	}
	return out, translate(rows.Err(), nil)
}

// changeRow is a row of change_log: the entries of one transaction.
type changeRow struct {
	first                         int64
	types                         []string
	events, pools, markets, users []int64
	ats                           []time.Time
	lens                          []int32
	data                          []byte
}

// entries appends to out the row's entries after seq after, while out
// holds fewer than limit.
func (r *changeRow) entries(out []changelog.Entry, after int64, limit int) ([]changelog.Entry, error) {
	n := len(r.types)
	if len(r.events) != n || len(r.pools) != n || len(r.markets) != n || len(r.users) != n || len(r.ats) != n || len(r.lens) != n {
		return out, fmt.Errorf("postgres: change log row %d is malformed", r.first)
	}
	off := 0
	for i := range n {
		end := off + int(r.lens[i])
		if r.lens[i] < 0 || end > len(r.data) {
			return out, fmt.Errorf("postgres: change log row %d is malformed", r.first)
		}
		seq := r.first + int64(i)
		if seq > after && len(out) < limit {
			out = append(out, changelog.Entry{Seq: seq, Type: changelog.Type(r.types[i]), EventID: r.events[i], PoolID: r.pools[i],
				MarketID: r.markets[i], UserID: r.users[i], Data: r.data[off:end:end], At: r.ats[i].UTC()})
		}
		off = end
	}
	return out, nil
}

// ChangeBounds returns the part of the change log the store holds. It
// reads both rows without locking them.
func (s *Store) ChangeBounds(ctx context.Context) (changelog.Bounds, error) {
	var b changelog.Bounds
	err := s.pool.QueryRow(ctx, `SELECT (SELECT pruned FROM change_log_pruned), (SELECT last FROM change_log_head)`).Scan(&b.Pruned, &b.Last)
	return b, translate(err, nil)
}

// ChangeFeed follows the change log: a Poller woken by every NOTIFY that
// WatchChanges hears, and every second besides (a wake-up is lost while
// its connection is down, or when nothing watches).
func (s *Store) ChangeFeed() changelog.Feed {
	return &changelog.Poller{Log: s, Woken: s.changed.Wait}
}

// sqlPruneCut is the first seq of the last of the oldest $2 rows that
// pruning before $1 deletes (those up to the first row with an entry made
// at or after $1 or one a consumer has not read, or all of them), and its
// last seq; NULLs for none.
const sqlPruneCut = `WITH oldest AS (SELECT first_seq, n, at FROM change_log ORDER BY first_seq LIMIT $2),
stop AS (SELECT min(first_seq) AS first_seq FROM oldest
	WHERE at >= $1 OR first_seq + n - 1 > (SELECT COALESCE(min(after), 9223372036854775807) FROM change_consumers))
SELECT max(o.first_seq), max(o.first_seq + o.n - 1) FROM oldest o, stop WHERE stop.first_seq IS NULL OR o.first_seq < stop.first_seq`

// PruneBatch is the most rows (transactions' entries) PruneChanges
// deletes in one transaction.
const PruneBatch = 1000

// PruneChanges deletes the entries made before before, oldest first, in
// transactions of at most PruneBatch rows, and returns how many it
// deleted. It stops at the first transaction with an entry made at or
// after before (a transaction's entries go together), or with an entry a
// consumer has not read (SetChangeCursor), so that what remains is always
// a suffix of the log, and records the last seq it
// deleted in change_log_pruned, a row no writer touches: pruning never
// waits on a writer nor holds one up.
func (s *Store) PruneChanges(ctx context.Context, before time.Time) (int, error) {
	return s.pruneChanges(ctx, before, PruneBatch)
}

func (s *Store) pruneChanges(ctx context.Context, before time.Time, batch int) (int, error) {
	total := 0
	for {
		var n, rowsGone int
		err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
			// The prefix of the oldest batch entries made before before:
			// up to the first one that is not, if any.
			n, rowsGone = 0, 0
			var cut, last *int64
			if err := tx.QueryRow(ctx, sqlPruneCut, before, batch).Scan(&cut, &last); err != nil {
				return err
			}
			if cut == nil {
				return nil
			}
			if err := tx.QueryRow(ctx, `WITH gone AS (DELETE FROM change_log WHERE first_seq <= $1 RETURNING n)
SELECT count(*), COALESCE(sum(n), 0) FROM gone`, *cut).Scan(&rowsGone, &n); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE change_log_pruned SET pruned = greatest(pruned, $1)`, *last)
			return err
		})
		if err != nil {
			return total, translate(err, nil)
		}
		total += n
		if rowsGone < batch {
			return total, nil
		}
	}
}

// sqlSetChangeCursor moves consumer $1's cursor to $2, never back. A
// consumer runs it in the transaction that applies what it read.
const sqlSetChangeCursor = `INSERT INTO change_consumers (name, after) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET after = greatest(change_consumers.after, EXCLUDED.after), updated_at = now()`

// ChangeCursor returns the seq consumer name has read the change log up
// to (0 when it has no cursor).
func (s *Store) ChangeCursor(ctx context.Context, name string) (int64, error) {
	var after int64
	err := s.pool.QueryRow(ctx, `SELECT COALESCE((SELECT after FROM change_consumers WHERE name = $1), 0)`, name).Scan(&after)
	return after, translate(err, nil)
}

// SetChangeCursor records that consumer name has read the change log up
// to after (a cursor never moves back); pruning keeps every entry after
// the smallest cursor. A consumer whose effects are in this database
// moves its cursor in the transaction that writes them instead
// (sqlSetChangeCursor), so that a crash between the two repeats nothing.
func (s *Store) SetChangeCursor(ctx context.Context, name string, after int64) error {
	_, err := s.pool.Exec(ctx, sqlSetChangeCursor, name, after)
	return translate(err, nil)
}

// DropChangeCursor forgets consumer name's cursor: pruning no longer
// waits for it.
func (s *Store) DropChangeCursor(ctx context.Context, name string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM change_consumers WHERE name = $1`, name)
	return translate(err, nil)
}

// WatchChanges listens on the store's change channel, on a connection of
// its own outside the pool, and wakes the pollers of ChangeFeed at every
// announcement, until ctx is done; it then returns nil. live is called
// with nil once it listens, and with the reason each time the connection
// is lost; it reconnects on its own, waiting 100 ms at first and up to 5 s
// between attempts, and wakes the pollers each time it is back, for what
// committed meanwhile.
func (s *Store) WatchChanges(ctx context.Context, live func(error)) error {
	wait := 100 * time.Millisecond
	for {
		err := s.watchChanges(ctx, func() { wait = 100 * time.Millisecond; live(nil) })
		if ctx.Err() != nil {
			live(ctx.Err())
			return nil
		}
		live(err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (s *Store) watchChanges(ctx context.Context, listening func()) error {
	conn, done, err := s.listenConn(ctx, "changes")
	if err != nil {
		return fmt.Errorf("postgres: changes: connect: %w", err)
	}
	defer done()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.changeChannel}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: changes: listen: %w", err)
	}
	listening()
	s.changed.Notify()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return fmt.Errorf("postgres: changes: %w", err)
		}
		s.changed.Notify()
	}
}
