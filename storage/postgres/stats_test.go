package postgres_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/stats"
	"github.com/predictkit/predictkit/storage/postgres"
)

// drainStats applies the change log to the statistics until they are
// caught up, limit entries at a time.
func (e *env) drainStats(limit int) {
	e.t.Helper()
	for {
		n, err := e.store.ApplyStats(e.ctx, limit)
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// statsFigures is everything the statistics say, as text: the last 30
// days, the totals and today's top markets.
func (e *env) statsFigures() string {
	e.t.Helper()
	svc := stats.NewService(e.store)
	days, err := svc.Daily(e.ctx, "", "")
	if err != nil {
		e.t.Fatal(err)
	}
	o, err := svc.Overview(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return fmt.Sprintf("%+v\n%+v\n%+v", days, o.Totals, o.TopMarkets)
}

// statsRebuilt fills the statistics again from the tables and returns them.
func (e *env) statsRebuilt() string {
	e.t.Helper()
	if err := e.store.RebuildStats(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.drainStats(1000)
	return e.statsFigures()
}

func TestStatsConsumer(t *testing.T) {
	t.Run("a crash before the commit leaves the figures and the cursor as they were, and the rerun counts everything once", func(t *testing.T) {
		e := newEnv(t)
		users := []*account.User{e.user("a", 1_000_000), e.user("b", 1_000_000), e.user("c", 1_000_000)}
		e.drainStats(1000) // the first call fills the empty aggregates
		e.history(users...)
		// Registrations count as they commit (a trigger), trades once applied.
		before := e.statsFigures()
		cursor, err := e.store.StatsCursor(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		crash := errors.New("crash")
		restore := postgres.SetStatsBeforeCommit(func() error { return crash })
		for range 3 {
			if _, err := e.store.ApplyStats(e.ctx, 10); !errors.Is(err, crash) {
				restore()
				t.Fatalf("apply with a crash before commit: %v", err)
			}
		}
		restore()
		if got, _ := e.store.StatsCursor(e.ctx); got != cursor || e.statsFigures() != before {
			t.Fatalf("a crashed apply changed the figures or moved the cursor (%d, was %d)", got, cursor)
		}
		e.drainStats(10)
		got := e.statsFigures()
		if got == before {
			t.Fatal("the history counted nothing")
		}
		if want := e.statsRebuilt(); got != want {
			t.Fatalf("after the crash and the rerun the figures are\n%s\nrebuilt from the tables they are\n%s", got, want)
		}
	})

	t.Run("rows written before the log kept their trades' ids are counted from their entries' data", func(t *testing.T) {
		e := newEnv(t)
		users := []*account.User{e.user("a", 1_000_000), e.user("b", 1_000_000), e.user("c", 1_000_000)}
		e.drainStats(1000)
		e.history(users...)
		tag, err := e.store.DB().Exec(e.ctx, `UPDATE change_log SET trade_ids = '{}'
WHERE cardinality(trade_ids) > 0 AND first_seq <= (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY first_seq) FROM change_log)`)
		if err != nil || tag.RowsAffected() == 0 {
			t.Fatalf("no row made old (%v)", err)
		}
		e.drainStats(5)
		got := e.statsFigures()
		if want := e.statsRebuilt(); got != want {
			t.Fatalf("from old and new rows the figures are\n%s\nrebuilt from the tables they are\n%s", got, want)
		}
	})

	t.Run("a registration is counted in its own transaction, a partner's sub-account is not", func(t *testing.T) {
		e := newEnv(t)
		var before int64
		if err := e.store.DB().QueryRow(e.ctx, `SELECT COALESCE(sum(users), 0) FROM stats_signups`).Scan(&before); err != nil {
			t.Fatal(err)
		}
		e.user("new", 0)
		if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO partners (name, key_hash, created_at) VALUES ('p', '\x01', now())`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO users (name, partner_id, external_id, created_at)
			SELECT 'sub', id, 'x', now() FROM partners WHERE name = 'p'`); err != nil {
			t.Fatal(err)
		}
		var after int64
		if err := e.store.DB().QueryRow(e.ctx, `SELECT COALESCE(sum(users), 0) FROM stats_signups`).Scan(&after); err != nil {
			t.Fatal(err)
		}
		if after != before+1 {
			t.Fatalf("registrations %d, then %d; want one more", before, after)
		}
	})
}

func TestSignupsCountedPerStatement(t *testing.T) {
	t.Run("users inserted by one statement over two days count once each, on their own day", func(t *testing.T) {
		e := newEnv(t)
		count := func(day string) int64 {
			var n int64
			err := e.store.DB().QueryRow(e.ctx, `SELECT COALESCE((SELECT users FROM stats_signups WHERE day = $1::date), 0)`, day).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		before1, before2 := count("2031-03-01"), count("2031-03-02")
		_, err := e.store.DB().Exec(e.ctx, `INSERT INTO users (name, created_at)
			SELECT 'bulk ' || g, CASE WHEN g % 3 = 0 THEN '2031-03-02 23:59:59Z'::timestamptz ELSE '2031-03-01 00:00:00Z'::timestamptz END
			FROM generate_series(1, 3000) g`)
		if err != nil {
			t.Fatal(err)
		}
		if got1, got2 := count("2031-03-01")-before1, count("2031-03-02")-before2; got1 != 2000 || got2 != 1000 {
			t.Fatalf("sign-ups counted: %d on the first day and %d on the second, want 2000 and 1000", got1, got2)
		}
		// A statement of no rows (an INSERT ... SELECT that finds none) counts nothing.
		if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO users (name, created_at) SELECT 'none', now() WHERE false`); err != nil {
			t.Fatal(err)
		}
		if got := count("2031-03-01") - before1; got != 2000 {
			t.Fatalf("after an empty insert: %d, want 2000", got)
		}
	})
}
