package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/server"
)

type apiStatsDay struct {
	Date         string `json:"date"`
	Volume       int64  `json:"volume_kopecks"`
	Fees         int64  `json:"fees_kopecks"`
	Trades       int64  `json:"trades"`
	Active       int64  `json:"active_traders"`
	NewUsers     int64  `json:"new_users"`
	Deposits     int64  `json:"deposits_kopecks"`
	Withdrawals  int64  `json:"withdrawals_kopecks"`
	OpenInterest int64  `json:"open_interest_kopecks"`
}

type apiStatsOverview struct {
	AsOf   string `json:"as_of"`
	Totals struct {
		Volume       int64 `json:"volume_kopecks"`
		Fees         int64 `json:"fees_kopecks"`
		Trades       int64 `json:"trades"`
		Traders      int64 `json:"traders"`
		Users        int64 `json:"users"`
		Deposits     int64 `json:"deposits_kopecks"`
		Withdrawals  int64 `json:"withdrawals_kopecks"`
		OpenInterest int64 `json:"open_interest_kopecks"`
	} `json:"totals"`
	Today      apiStatsDay `json:"today"`
	TopMarkets []struct {
		MarketID   int64  `json:"market_id"`
		EventID    int64  `json:"event_id"`
		EventName  string `json:"event_name"`
		MarketName string `json:"market_name"`
		Volume     int64  `json:"volume_kopecks"`
		Trades     int64  `json:"trades"`
	} `json:"top_markets"`
}

// statsCaughtUp waits until the server's statistics consumer has applied
// every entry the log holds now.
func statsCaughtUp(t *testing.T, store server.Store) {
	t.Helper()
	ss := store.(interface {
		changelog.Reader
		StatsCursor(ctx context.Context) (int64, error)
	})
	b, err := ss.ChangeBounds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := ss.StatsCursor(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c >= b.Last {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the statistics' consumer is at %d after 30 s, the log at %d", c, b.Last)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStats(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			store := sc.new(t)
			h, _ := startServer(t, testConfig(store))
			w := newWorld(t, h)
			viewer := h.register(t, "viewer")
			h.makeStatsViewer(t, viewer.id)
			overview := func(token string) apiStatsOverview {
				t.Helper()
				statsCaughtUp(t, store)
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/stats/overview", token: token})
				expect(t, r, http.StatusOK, "")
				var o apiStatsOverview
				r.decode(t, &o)
				return o
			}
			daily := func(token, query string) []apiStatsDay {
				t.Helper()
				statsCaughtUp(t, store)
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/stats/daily" + query, token: token})
				expect(t, r, http.StatusOK, "")
				var d struct {
					Days []apiStatsDay `json:"days"`
				}
				r.decode(t, &d)
				return d.Days
			}

			t.Run("without credentials it is 401, for an ordinary user 403", func(t *testing.T) {
				for _, path := range []string{"/api/v1/stats/daily", "/api/v1/stats/overview"} {
					expect(t, h.do(t, req{method: http.MethodGet, path: path}), http.StatusUnauthorized, "unauthorized")
					expect(t, h.do(t, req{method: http.MethodGet, path: path, token: "not-a-token"}), http.StatusUnauthorized, "unauthorized")
					expect(t, h.do(t, req{method: http.MethodGet, path: path, token: w.alice.token}), http.StatusForbidden, "forbidden")
					expect(t, h.do(t, req{method: http.MethodGet, path: path, token: w.creator.token}), http.StatusForbidden, "forbidden")
				}
			})

			t.Run("the operator's admin token, a stats viewer and the viewer's read key read the same figures", func(t *testing.T) {
				a, v := overview(adminToken), overview(viewer.token)
				k := overview(h.createKey(t, viewer.token, "dashboard", "read").Key)
				a.AsOf, v.AsOf, k.AsOf = "", "", ""
				if a.Totals != v.Totals || a.Today != v.Today || k.Totals != v.Totals || a.Totals.Users != 4 {
					t.Fatalf("admin %+v, viewer %+v, viewer's key %+v; want the same, with 4 users", a, v, k)
				}
				// A wrong admin token is no credential at all.
				expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/stats/overview", token: adminToken + "-wrong"}), http.StatusUnauthorized, "unauthorized")
			})

			t.Run("a reversed range, one over a year and a bad date are 400 and change nothing", func(t *testing.T) {
				before := overview(viewer.token)
				for _, q := range []string{"?from=2026-03-02&to=2026-03-01", "?from=2025-01-01&to=2026-01-02",
					"?from=2026-02-30", "?to=yesterday", "?from=2026-1-1", "?from=2026-01-01T00:00:00Z"} {
					r := h.do(t, req{method: http.MethodGet, path: "/api/v1/stats/daily" + q, token: viewer.token})
					expect(t, r, http.StatusBadRequest, "invalid_request")
				}
				after := overview(viewer.token)
				before.AsOf, after.AsOf = "", ""
				if before.Totals != after.Totals || before.Today != after.Today {
					t.Fatalf("before %+v, after %+v", before, after)
				}
				// A leap year's 366 days are one range.
				if days := daily(viewer.token, "?from=2024-01-01&to=2024-12-31"); len(days) != 366 || days[0].Date != "2024-01-01" || days[365].Date != "2024-12-31" {
					t.Fatalf("2024: %d days", len(days))
				}
			})

			t.Run("trades count on their day, with their fees, traders and open interest", func(t *testing.T) {
				buy := h.buy(t, w.alice.token, w.b1.ID, "YES", 100_000)
				h.buy(t, w.bob.token, w.b1.ID, "NO", 50_000)
				h.sell(t, w.alice.token, w.b1.ID, "YES", buy.Shares/2)
				h.buy(t, w.bob.token, w.a1.ID, "YES", 20_000)
				var want apiStatsDay
				for _, id := range []int64{w.b1.ID, w.a1.ID} {
					ts, err := store.Trades(context.Background(), id)
					if err != nil {
						t.Fatal(err)
					}
					for _, tr := range ts {
						want.Volume += tr.Cost
						want.Fees += tr.Fee
						want.Trades++
						if tr.Action == market.ActionBuy {
							want.OpenInterest += tr.Cost
						} else {
							want.OpenInterest -= tr.Amount
						}
					}
				}
				want.Active, want.NewUsers = 2, 4
				want.Date = time.Now().UTC().Format(time.DateOnly)
				days := daily(viewer.token, "")
				if len(days) != 30 || days[29] != want {
					t.Fatalf("%d days, today %+v; want 30 days, today %+v", len(days), days[len(days)-1], want)
				}
				for _, d := range days[:29] {
					if d != (apiStatsDay{Date: d.Date}) {
						t.Fatalf("a day before today has figures: %+v", d)
					}
				}
				o := overview(adminToken)
				if o.Today != want || o.Totals.Trades != 4 || o.Totals.Traders != 2 || o.Totals.OpenInterest != want.OpenInterest {
					t.Fatalf("overview %+v; want today %+v", o, want)
				}
				if len(o.TopMarkets) != 2 || o.TopMarkets[0].MarketID != w.b1.ID || o.TopMarkets[0].EventName != w.event.Name ||
					o.TopMarkets[0].Trades != 3 || o.TopMarkets[1].MarketID != w.a1.ID {
					t.Fatalf("top markets %+v", o.TopMarkets)
				}
			})
		})
	}
}
