package postgres_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
)

// TestClosedPageOfSettledPositions checks the closed feed's positions
// closed by settlements against a plain sort of all of them, for a user
// whose page lies in the most recently resolved markets (the feed walks
// them) and for one whose positions lie in markets older than those it
// walks (the feed reads all of the user's positions), with markets
// resolved at the same instant, so that ties go by position id across
// markets.
func TestClosedPageOfSettledPositions(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0.02, 100_000, 0.5)
	m := ev.Pools[0].Markets[0]
	dense := e.user("dense", 0)
	// 1,200 markets, more than the feed walks, each held on both sides
	// by dense and two others.
	seedSettledPositions(t, e, dense, m, 2400, 2)
	// Groups of 60 markets share their resolution instant.
	if _, err := e.store.DB().Exec(e.ctx, `UPDATE markets SET resolved_at = date_trunc('hour', resolved_at) WHERE resolved`); err != nil {
		t.Fatal(err)
	}
	sparse := e.user("sparse", 0)
	if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO positions (user_id, market_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at)
		SELECT $1, m.id, 1, 100, 50, 100, 60, 0, m.created_at, m.created_at
		FROM (SELECT id, created_at FROM markets WHERE resolved ORDER BY resolved_at, id LIMIT 30) m`, sparse.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `VACUUM ANALYZE positions, markets`); err != nil {
		t.Fatal(err)
	}
	want := func(t *testing.T, user int64, limit, offset int) []int64 {
		rows, err := e.store.DB().Query(e.ctx, `SELECT x.id FROM positions x JOIN markets m ON m.id = x.market_id
			WHERE x.user_id = $1 AND x.closed_at IS NULL AND m.resolved
			ORDER BY m.resolved_at DESC, x.id DESC LIMIT $2 OFFSET $3`, user, limit, offset)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	for _, c := range []struct {
		name          string
		user          int64
		limit, offset int
	}{
		{"a user's first page in the newest markets comes from them", dense.ID, market.ClosedInProfile, 0},
		{"a page across a tie of markets resolved at once is ordered by id", dense.ID, 100, 90},
		{"a page past the markets walked reads all of the user's positions", dense.ID, 50, 2350},
		{"a user whose markets are old gets its positions all the same", sparse.ID, 10, 0},
		{"a user's last page holds what is left", sparse.ID, 10, 25},
		{"a page past the end is empty", sparse.ID, 10, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, err := e.store.ClosedPositions(e.ctx, c.user, c.limit, c.offset)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int64, len(ps))
			for i, p := range ps {
				got[i] = p.ID
				if p.ClosedAt == nil {
					t.Fatalf("position %d is not closed", p.ID)
				}
			}
			if w := want(t, c.user, c.limit, c.offset); !slices.Equal(got, w) {
				t.Fatalf("page (%d, %d):\n got %v\nwant %v", c.limit, c.offset, got, w)
			}
		})
	}
	t.Run("every page of one position each follows the plain order", func(t *testing.T) {
		for offset := range 32 {
			ps, err := e.store.ClosedPositions(e.ctx, sparse.ID, 1, offset)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int64, len(ps))
			for i, p := range ps {
				got[i] = p.ID
			}
			if w := want(t, sparse.ID, 1, offset); !slices.Equal(got, w) {
				t.Fatal(fmt.Sprintf("offset %d: got %v, want %v", offset, got, w))
			}
		}
	})
}
