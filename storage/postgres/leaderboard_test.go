package postgres_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/leaderboard"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// boardRows are every row of every board the store keeps.
func (e *env) boardRows() map[string][]leaderboard.Row {
	e.t.Helper()
	out := map[string][]leaderboard.Row{}
	for _, p := range []leaderboard.Period{leaderboard.AllTime, leaderboard.Month, leaderboard.Week} {
		for _, by := range []leaderboard.By{leaderboard.ByPnL, leaderboard.ByVolume} {
			q := leaderboard.Query{Period: p, By: by, Limit: leaderboard.MaxLimit, Today: e.today()}
			rows, err := e.store.Leaderboard(e.ctx, q)
			if err != nil {
				e.t.Fatal(err)
			}
			// The periods' totals and the buckets they sum agree.
			summed, err := e.store.LeaderboardFromBuckets(e.ctx, q)
			if err != nil {
				e.t.Fatal(err)
			}
			if !slices.EqualFunc(rows, summed, sameRow) {
				e.t.Fatalf("%s by %s: the totals say\n%+v\nthe buckets\n%+v", p, by, rows, summed)
			}
			out[string(p)+"/"+string(by)] = rows
		}
	}
	return out
}

// drain applies the change log until the board is caught up, limit
// entries at a time, and returns how many it applied.
func (e *env) drain(limit int) int {
	e.t.Helper()
	total := 0
	for {
		n, err := e.store.ApplyLeaderboard(e.ctx, limit)
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}

// history trades, sells and settles on a few markets.
func (e *env) history(users ...*account.User) {
	e.t.Helper()
	ev, c := e.event(0.02, 20000, 0.5, 0.5, 0.5)
	ms := ev.Pools[0].Markets
	for i, u := range users {
		for j, m := range ms {
			side := market.Yes
			if (i+j)%2 == 1 {
				side = market.No
			}
			r, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: side, Action: market.ActionBuy, Amount: int64(1000 * (i + j + 1))})
			if err != nil {
				e.t.Fatal(err)
			}
			if _, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: side, Action: market.ActionSell, Shares: r.Trade.Shares / 3}); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[0].PoolID, ms[0].ID, "YES"); err != nil {
		e.t.Fatal(err)
	}
	if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[1].PoolID, ms[1].ID, "VOID"); err != nil {
		e.t.Fatal(err)
	}
}

func TestLeaderboardConsumer(t *testing.T) {
	t.Run("a crash before the commit leaves the board and the cursor as they were, and the rerun counts everything once", func(t *testing.T) {
		e := newEnv(t)
		users := []*account.User{e.user("a", 1_000_000), e.user("b", 1_000_000), e.user("c", 1_000_000)}
		e.drain(1000) // the first call fills the empty board
		e.history(users...)
		before := e.boardRows()
		cursor, err := e.store.LeaderboardCursor(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		crash := errors.New("crash")
		restore := postgres.SetLeaderboardBeforeCommit(func() error { return crash })
		for range 3 {
			if _, err := e.store.ApplyLeaderboard(e.ctx, 10); !errors.Is(err, crash) {
				restore()
				t.Fatalf("apply with a crash before commit: %v", err)
			}
		}
		restore()
		if got, _ := e.store.LeaderboardCursor(e.ctx); got != cursor || !equalBoards(e.boardRows(), before) {
			t.Fatalf("a crashed apply changed the board or moved the cursor (%d, was %d)", got, cursor)
		}
		e.drain(10)
		want := e.rebuilt()
		if got := e.boardRows(); !equalBoards(got, want) {
			t.Fatalf("after the crash and the rerun the board is\n%+v\nrebuilt from the tables it is\n%+v", got, want)
		}
	})

	t.Run("rows written before the log kept their trades' ids are counted from their entries' data", func(t *testing.T) {
		e := newEnv(t)
		users := []*account.User{e.user("a", 1_000_000), e.user("b", 1_000_000), e.user("c", 1_000_000)}
		e.drain(1000)
		e.history(users...)
		// The older half of the rows as migration 00026 found them.
		tag, err := e.store.DB().Exec(e.ctx, `UPDATE change_log SET trade_ids = '{}'
WHERE cardinality(trade_ids) > 0 AND first_seq <= (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY first_seq) FROM change_log)`)
		if err != nil || tag.RowsAffected() == 0 {
			t.Fatalf("no row made old (%v)", err)
		}
		e.drain(5)
		want := e.rebuilt()
		if got := e.boardRows(); !equalBoards(got, want) || len(got["all/pnl"]) == 0 {
			t.Fatalf("from old and new rows the board is\n%+v\nrebuilt from the tables it is\n%+v", got, want)
		}
	})

	t.Run("the backfill of a database with history gives the board the consumer built entry by entry", func(t *testing.T) {
		e := newEnv(t)
		users := []*account.User{e.user("a", 1_000_000), e.user("b", 1_000_000)}
		e.drain(1)
		e.history(users...)
		e.drain(1)
		incremental := e.boardRows()
		if len(incremental["all/pnl"]) != 2 {
			t.Fatalf("the board: %+v", incremental["all/pnl"])
		}
		for _, u := range users {
			evs, err := e.store.PnLEvents(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, ev := range evs {
				sum += ev.Delta
			}
			i := slices.IndexFunc(incremental["all/pnl"], func(r leaderboard.Row) bool { return r.UserID == u.ID })
			if i < 0 || incremental["all/pnl"][i].PnL != sum {
				t.Fatalf("user %d: board %+v, realizations sum to %d", u.ID, incremental["all/pnl"], sum)
			}
		}
		if got := e.rebuilt(); !equalBoards(got, incremental) {
			t.Fatalf("backfilled:\n%+v\nincremental:\n%+v", got, incremental)
		}
		last, err := e.store.ChangeBounds(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c, _ := e.store.LeaderboardCursor(e.ctx); c != last.Last {
			t.Fatalf("the backfill set the cursor to %d, the log's head is %d", c, last.Last)
		}
	})

	t.Run("the periods' totals follow the days: a day later the week's first day has left them", func(t *testing.T) {
		e := newEnv(t)
		users := []*account.User{e.user("a", 1_000_000), e.user("b", 1_000_000)}
		now := leaderboard.Day(time.Now())
		for i, day := range []time.Time{now.AddDate(0, 0, -29), now.AddDate(0, 0, -6), now} {
			defer postgres.SetBoardToday(day)()
			e.history(users...)
			// Every trade of history is made now: move them to day.
			if _, err := e.store.DB().Exec(e.ctx, `UPDATE trades SET created_at = $1 WHERE created_at > now() - interval '1 minute'`, day.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := e.store.DB().Exec(e.ctx, `UPDATE pnl_events SET at = $1 WHERE at > now() - interval '1 minute'`, day.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if _, err := e.store.DB().Exec(e.ctx, `UPDATE markets SET resolved_at = $1 WHERE resolved_at > now() - interval '1 minute'`, day.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			e.drain(7)
			if got := e.today(); !got.Equal(day) {
				t.Fatalf("history %d: the totals end %s, want %s", i, got, day)
			}
			e.boardRows() // the totals and the buckets agree
		}
		for _, day := range []time.Time{now.AddDate(0, 0, 1), now.AddDate(0, 0, 7), now.AddDate(0, 0, 40)} {
			defer postgres.SetBoardToday(day)()
			if n := e.drain(7); n != 0 {
				t.Fatalf("nothing was left to apply, yet %d entries were", n)
			}
			if got := e.today(); !got.Equal(day) {
				t.Fatalf("with no entries the totals still end %s, want %s", got, day)
			}
			e.boardRows()
		}
		rows, err := e.store.Leaderboard(e.ctx, leaderboard.Query{Period: leaderboard.Month, By: leaderboard.ByPnL, Limit: 10, Today: now.AddDate(0, 0, 40)})
		if err != nil || len(rows) != 0 {
			t.Fatalf("forty days on the month is empty: %+v, %v", rows, err)
		}
	})

	t.Run("several servers applying at once count every entry once", func(t *testing.T) {
		e := newEnv(t)
		users := []*account.User{e.user("a", 1_000_000), e.user("b", 1_000_000), e.user("c", 1_000_000)}
		e.history(users...) // before the first apply: the servers race to backfill too
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for {
					n, err := e.store.ApplyLeaderboard(e.ctx, 3)
					if err != nil {
						errs <- err
						return
					}
					if n == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := e.boardRows()
		if want := e.rebuilt(); !equalBoards(got, want) {
			t.Fatalf("concurrent appliers:\n%+v\nrebuilt:\n%+v", got, want)
		}
	})
}

// rebuilt drops the board's cursor and lets the next apply fill the
// board again from the tables, and returns that board.
func (e *env) rebuilt() map[string][]leaderboard.Row {
	e.t.Helper()
	if err := e.store.DropChangeCursor(e.ctx, postgres.LeaderboardConsumer); err != nil {
		e.t.Fatal(err)
	}
	e.drain(1000)
	return e.boardRows()
}

// today is the day the boards end with: the consumer's.
func (e *env) today() time.Time {
	e.t.Helper()
	var d *time.Time
	if err := e.store.DB().QueryRow(e.ctx, `SELECT as_of FROM leaderboard_state`).Scan(&d); err != nil {
		e.t.Fatal(err)
	}
	if d == nil {
		return leaderboard.Day(time.Now())
	}
	return *d
}

func sameRow(x, y leaderboard.Row) bool {
	return x.UserID == y.UserID && x.PnL == y.PnL && x.Volume == y.Volume && x.Trades == y.Trades
}

func equalBoards(a, b map[string][]leaderboard.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for k, rows := range a {
		if !slices.EqualFunc(rows, b[k], sameRow) {
			return false
		}
	}
	return true
}
