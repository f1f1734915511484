package postgres_test

import (
	"strings"
	"testing"

	"github.com/predictkit/predictkit/storage/postgres"
)

// TestFeedsWalkIndexes checks that every feed has an index to walk: with
// sequential scans and sorts priced out, the planner must pick the index
// the migrations made for it.
func TestFeedsWalkIndexes(t *testing.T) {
	e := newEnv(t)
	want := map[string]string{
		"open positions":   "positions_user_open_idx",
		"closed positions": "positions_user_closed_idx",
		"closed stats":     "positions_user_closed_idx",
		"pnl events":       "pnl_events_user_idx",
		"latest trades":    "trades_pkey",
		"price history":    "price_points_market_id_idx",
		"trades":           "trades_market_id_idx",
		"active events":    "events_active_created_idx",
	}
	for name, q := range postgres.FeedQueries {
		t.Run("the "+name+" query walks "+want[name], func(t *testing.T) {
			tx, err := e.store.DB().Begin(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(e.ctx)
			if _, err := tx.Exec(e.ctx, `SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off`); err != nil {
				t.Fatal(err)
			}
			rows, err := tx.Query(e.ctx, "EXPLAIN "+q.SQL, q.Args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, line)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			if !strings.Contains(text, want[name]) {
				t.Fatalf("plan does not use %s:\n%s", want[name], text)
			}
		})
	}
}
