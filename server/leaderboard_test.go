package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/server"
)

type apiBoard struct {
	Entries []struct {
		Rank      int     `json:"rank"`
		UserID    *int64  `json:"user_id"`
		Name      string  `json:"name"`
		AvatarURL *string `json:"avatar_url"`
		PnL       int64   `json:"pnl"`
		Volume    int64   `json:"volume"`
		Trades    int64   `json:"trades"`
	} `json:"entries"`
}

// boardStore is what the tests wait on: the board's cursor and the log's
// head.
type boardStore interface {
	changelog.Reader
	LeaderboardCursor(ctx context.Context) (int64, error)
}

// caughtUp waits until the server's consumer has applied every entry the
// log holds now: the board trails the trades by design.
func caughtUp(t *testing.T, store server.Store) {
	t.Helper()
	bs := store.(boardStore)
	b, err := bs.ChangeBounds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := bs.LeaderboardCursor(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c >= b.Last {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the board's consumer is at %d after 30 s, the log at %d", c, b.Last)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLeaderboard(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			store := sc.new(t)
			h, _ := startServer(t, testConfig(store))
			w := newWorld(t, h)
			board := func(query string) apiBoard {
				t.Helper()
				caughtUp(t, store)
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/leaderboard" + query})
				expect(t, r, http.StatusOK, "")
				var b apiBoard
				r.decode(t, &b)
				return b
			}
			t.Run("an empty board has no entries", func(t *testing.T) {
				if b := board(""); len(b.Entries) != 0 {
					t.Fatalf("entries before any trade: %+v", b.Entries)
				}
			})
			buy := h.buy(t, w.alice.token, w.b1.ID, "YES", 100_000)
			h.buy(t, w.bob.token, w.b1.ID, "NO", 50_000)
			sale := h.sell(t, w.alice.token, w.b1.ID, "YES", buy.Shares/2)
			h.buy(t, w.bob.token, w.a1.ID, "YES", 20_000)
			r := h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolB.ID, w.b1.ID), token: w.creator.token,
				body: map[string]any{"won_side": "NO"}})
			expect(t, r, http.StatusOK, "")

			t.Run("the board ranks by realized pnl as the PnL chart ends, with volume and trades", func(t *testing.T) {
				b := board("?period=all&by=pnl&limit=10")
				if len(b.Entries) != 2 {
					t.Fatalf("entries: %+v", b.Entries)
				}
				for i, e := range b.Entries {
					if e.Rank != i+1 || e.UserID == nil {
						t.Fatalf("entry %d: %+v", i, e)
					}
					who := w.alice
					if *e.UserID == w.bob.id {
						who = w.bob
					}
					r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/pnl/chart", token: who.token})
					var chart apiChart
					r.decode(t, &chart)
					end := chart.Points[len(chart.Points)-1].PnL
					if float64(e.PnL)/100 != end || e.Name != who.name {
						t.Fatalf("%s: board pnl %d kopecks, chart ends at %v RUB", who.name, e.PnL, end)
					}
				}
				if *b.Entries[0].UserID != w.bob.id || b.Entries[0].Trades != 2 || *b.Entries[1].UserID != w.alice.id || b.Entries[1].Trades != 2 {
					t.Fatalf("Bob won on NO and leads: %+v", b.Entries)
				}
				// Alice's volume: what her buy cost and her sale refunded,
				// without the fees.
				if a := b.Entries[1]; a.Volume != buy.CostKopecks-buy.FeeKopecks+sale.PayoutKopecks+sale.FeeKopecks {
					t.Fatalf("Alice's volume %d, want %d", a.Volume, buy.CostKopecks-buy.FeeKopecks+sale.PayoutKopecks+sale.FeeKopecks)
				}
			})
			t.Run("by volume, for the week and the month, the same two traders", func(t *testing.T) {
				for _, q := range []string{"?by=volume", "?period=7d&by=volume", "?period=30d"} {
					if b := board(q); len(b.Entries) != 2 {
						t.Fatalf("%s: %+v", q, b.Entries)
					}
				}
				if b := board("?by=volume&limit=1"); len(b.Entries) != 1 || *b.Entries[0].UserID != w.alice.id {
					t.Fatalf("Alice traded the most: %+v", b.Entries)
				}
			})
			t.Run("a hidden profile shows as Anonymous with no user_id and a null avatar", func(t *testing.T) {
				r := h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: w.bob.token,
					body: map[string]any{"profile_hidden": true, "avatar_url": "https://example.com/bob.png"}})
				expect(t, r, http.StatusOK, "")
				raw := h.do(t, req{method: http.MethodGet, path: "/api/v1/leaderboard"})
				var b apiBoard
				raw.decode(t, &b)
				if e := b.Entries[0]; e.UserID != nil || e.Name != "Anonymous" || e.AvatarURL != nil || e.Rank != 1 || e.Trades != 2 {
					t.Fatalf("the hidden leader: %s", raw)
				}
			})
			t.Run("bad parameters are 400 invalid_request naming the field, and change nothing", func(t *testing.T) {
				for _, c := range []struct{ query, detail string }{
					{"?period=1d", "period: must be all, 30d or 7d"},
					{"?period=ALL", "period: must be all, 30d or 7d"},
					{"?by=trades", "by: must be pnl or volume"},
					{"?limit=0", "limit: must be at least 1"},
					{"?limit=101", "limit: must be at most 100"},
					{"?limit=ten", "limit: must be an integer from 1 to 100"},
					{"?limit=99999999999999999999", "limit: must be an integer from 1 to 100"},
				} {
					r := h.do(t, req{method: http.MethodGet, path: "/api/v1/leaderboard" + c.query})
					expect(t, r, http.StatusBadRequest, "invalid_request")
					var body struct{ Detail string }
					r.decode(t, &body)
					if body.Detail != c.detail {
						t.Fatalf("%s: detail %q, want %q", c.query, body.Detail, c.detail)
					}
				}
			})
		})
	}
}
