package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestTradingWindow: a pool's markets take trades and quotes only while
// live_at <= now < finish_at. Outside it a buy, a sale or a quote is 409
// market_closed and a partner's bet 400 TRADE_FAILED "market closed", as
// on a resolved market; every market view says trading_open. The event's
// creator, or the operator, moves finish_at: later reopens a finished
// pool; into the past, to or before live_at, or on a pool with a resolved
// market it is refused and nothing changes.
func TestTradingWindow(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		// The windows are hours from now: no edge is crossed while the
		// test runs.
		now := time.Now().UTC().Truncate(time.Second)
		stamp := func(at time.Time) string { return at.Format(time.RFC3339) }
		windowEvent := func(live, finish time.Time) apiEvent {
			t.Helper()
			ev := h.createEvent(t, w.creator.token, map[string]any{"name": "Window", "pools": []any{map[string]any{
				"name": "Window", "margin": 0.02, "lmsr_b_kopecks": 100_000, "live_at": stamp(live), "finish_at": stamp(finish),
				"markets": []any{map[string]any{"name": "W1", "probability": 0.5}, map[string]any{"name": "W2", "probability": 0.4}}}}})
			h.activate(t, w.creator.token, ev.ID, true)
			return ev
		}
		pool := func(id int64) apiPool {
			t.Helper()
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", id)})
			expect(t, r, http.StatusOK, "")
			var p apiPool
			r.decode(t, &p)
			return p
		}
		// open checks that every view of ev's markets says trading_open is
		// open: the event, its pool, each market and the public feed.
		open := func(t *testing.T, ev apiEvent, want bool) {
			t.Helper()
			var ms []apiMarket
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/events/%d", ev.ID)})
			expect(t, r, http.StatusOK, "")
			var e apiEvent
			r.decode(t, &e)
			ms = append(ms, e.Pools[0].Markets...)
			ms = append(ms, pool(ev.Pools[0].ID).Markets...)
			for _, m := range ev.Pools[0].Markets {
				ms = append(ms, h.market(t, m.ID))
			}
			r = h.do(t, req{method: http.MethodGet, path: "/api/v1/events?limit=100"})
			expect(t, r, http.StatusOK, "")
			var feed struct {
				Events []apiEvent `json:"events"`
			}
			r.decode(t, &feed)
			for _, fe := range feed.Events {
				if fe.ID == ev.ID {
					ms = append(ms, fe.Pools[0].Markets...)
				}
			}
			if len(ms) != 8 {
				t.Fatalf("found %d views of the event's 2 markets, want 8", len(ms))
			}
			for _, m := range ms {
				if m.TradingOpen != want {
					t.Fatalf("market %d shows trading_open %v, want %v", m.ID, m.TradingOpen, want)
				}
			}
		}
		partner := h.createPartner(t, "Window bookie", 1_000_000)
		early := windowEvent(now.Add(time.Hour), now.Add(2*time.Hour))
		late := windowEvent(now.Add(-2*time.Hour), now.Add(-time.Hour))

		for _, c := range []struct {
			name string
			ev   apiEvent
		}{{"before live_at", early}, {"from finish_at on", late}} {
			m := c.ev.Pools[0].Markets[0]
			t.Run("a buy, a sale and a quote "+c.name+" are 409 market_closed", func(t *testing.T) {
				for _, r := range []req{
					{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", m.ID), token: w.alice.token, body: map[string]any{"side": "YES", "amount_kopecks": 1000}},
					{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/sell", m.ID), token: w.alice.token, body: map[string]any{"side": "YES", "shares": 100}},
					{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/quote?side=YES&amount_kopecks=1000", m.ID)},
					{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/quote?side=NO&shares=1000", m.ID)},
				} {
					expect(t, h.do(t, r), http.StatusConflict, "market_closed")
				}
				if got := h.me(t, w.alice.token).Balance; got != 1_000_000 {
					t.Fatalf("Alice's balance is %d after refused trades", got)
				}
			})
			t.Run("a partner's bet "+c.name+" is 400 TRADE_FAILED and makes no sub-account", func(t *testing.T) {
				r := h.do(t, betReq(partner.Key, map[string]any{"external_user_id": "window", "market_id": m.ID, "side": "yes",
					"amount_kopecks": 1000, "client_bet_id": "window-" + c.name}))
				expect(t, r, http.StatusBadRequest, "TRADE_FAILED")
				if d := r.errorDetail(t); d != "market closed" {
					t.Fatalf("detail %q, want market closed", d)
				}
				if h.partnerState(t, partner.Key, "window").Exists {
					t.Fatal("a refused first bet made a sub-account")
				}
			})
			t.Run("every view of a market "+c.name+" says trading_open false", func(t *testing.T) {
				open(t, c.ev, false)
			})
		}
		t.Run("every view of a market inside its window says trading_open true", func(t *testing.T) {
			open(t, windowEvent(now.Add(-time.Hour), now.Add(time.Hour)), true)
		})

		t.Run("the creator moves a finished pool's finish_at later and it trades again", func(t *testing.T) {
			later := now.Add(3 * time.Hour)
			r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/pools/%d", late.Pools[0].ID), token: w.creator.token,
				body: map[string]any{"finish_at": stamp(later)}})
			expect(t, r, http.StatusOK, "")
			var p apiPool
			r.decode(t, &p)
			if p.ID != late.Pools[0].ID || p.FinishAt != stamp(later) || len(p.Markets) != 2 || !p.Markets[0].TradingOpen {
				t.Fatalf("the moved pool = %s", r)
			}
			if got := pool(p.ID).FinishAt; got != stamp(later) {
				t.Fatalf("the pool reads finish_at %s, want %s", got, stamp(later))
			}
			open(t, late, true)
			m := late.Pools[0].Markets[0]
			tr := h.buy(t, w.alice.token, m.ID, "YES", 10_000)
			if !tr.Market.TradingOpen {
				t.Fatalf("the trade's market says trading_open false: %+v", tr.Market)
			}
			h.sell(t, w.alice.token, m.ID, "YES", tr.Shares/2)
		})

		t.Run("the creator moves an open pool's finish_at earlier", func(t *testing.T) {
			earlier := now.Add(90 * time.Minute)
			r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID), token: w.creator.token,
				body: map[string]any{"finish_at": stamp(earlier)}})
			expect(t, r, http.StatusOK, "")
			if got := pool(w.poolA.ID).FinishAt; got != stamp(earlier) {
				t.Fatalf("finish_at %s, want %s", got, stamp(earlier))
			}
			h.buy(t, w.bob.token, w.a1.ID, "NO", 1_000)
		})

		other := h.register(t, "other-creator")
		h.makeCreator(t, other.id)
		path := func(id int64) string { return fmt.Sprintf("/api/v1/pools/%d", id) }
		finish := func(at time.Time) map[string]any { return map[string]any{"finish_at": stamp(at)} }
		poolA := w.poolA.ID
		for _, c := range []struct {
			name   string
			r      req
			status int
			code   string
		}{
			{"no token is 401", req{path: path(poolA), body: finish(now.Add(time.Hour))}, 401, "unauthorized"},
			{"an id that is not an integer is 400 invalid_pool_id", req{path: "/api/v1/pools/abc", token: w.creator.token, body: finish(now.Add(time.Hour))}, 400, "invalid_pool_id"},
			{"a body without finish_at is 400", req{path: path(poolA), token: w.creator.token, body: map[string]any{}}, 400, "invalid_request"},
			{"a finish_at that is no timestamp is 400", req{path: path(poolA), token: w.creator.token, body: map[string]any{"finish_at": "tomorrow"}}, 400, "invalid_request"},
			{"another field is 400", req{path: path(poolA), token: w.creator.token, body: map[string]any{"finish_at": stamp(now.Add(time.Hour)), "live_at": stamp(now)}}, 400, "invalid_request"},
			{"malformed JSON is 400", req{path: path(poolA), token: w.creator.token, body: `{"finish_at":`}, 400, "invalid_request"},
			{"an unknown pool is 404", req{path: path(999_999), token: w.creator.token, body: finish(now.Add(time.Hour))}, 404, "pool_not_found"},
			{"a user who is not the creator is 403", req{path: path(poolA), token: w.alice.token, body: finish(now.Add(time.Hour))}, 403, "forbidden"},
			{"another creator is 403", req{path: path(poolA), token: other.token, body: finish(now.Add(time.Hour))}, 403, "forbidden"},
			{"a finish_at in the past is 400", req{path: path(poolA), token: w.creator.token, body: finish(now.Add(-time.Minute))}, 400, "invalid_request"},
			{"a finish_at before live_at is 400", req{path: path(early.Pools[0].ID), token: w.creator.token, body: finish(now.Add(30 * time.Minute))}, 400, "invalid_request"},
			{"the operator's move of an unknown pool is 404", req{path: "/api/v1/admin/pools/999999", token: adminToken, body: finish(now.Add(time.Hour))}, 404, "pool_not_found"},
			{"the operator's move into the past is 400", req{path: fmt.Sprintf("/api/v1/admin/pools/%d", poolA), token: adminToken, body: finish(now.Add(-time.Hour))}, 400, "invalid_request"},
			{"a user's token on the operator's route is 401", req{path: fmt.Sprintf("/api/v1/admin/pools/%d", poolA), token: w.creator.token, body: finish(now.Add(time.Hour))}, 401, "unauthorized"},
		} {
			t.Run("moving finish_at: "+c.name+", and nothing changes", func(t *testing.T) {
				before := pool(poolA).FinishAt
				c.r.method = http.MethodPatch
				r := h.do(t, c.r)
				expect(t, r, c.status, c.code)
				if c.code == "invalid_request" && c.status == 400 && r.errorDetail(t) == "" {
					t.Errorf("a 400 without a detail: %s", r)
				}
				if got := pool(poolA).FinishAt; got != before {
					t.Fatalf("finish_at moved from %s to %s", before, got)
				}
			})
		}

		t.Run("the operator moves any pool's finish_at", func(t *testing.T) {
			at := now.Add(5 * time.Hour)
			r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/pools/%d", w.poolB.ID), token: adminToken, body: finish(at)})
			expect(t, r, http.StatusOK, "")
			if got := pool(w.poolB.ID).FinishAt; got != stamp(at) {
				t.Fatalf("finish_at %s, want %s", got, stamp(at))
			}
		})

		t.Run("a pool with a resolved market keeps its finish_at: 409 market_resolved", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolB.ID, w.b1.ID), token: w.creator.token, body: map[string]any{"won_side": "NO"}})
			expect(t, r, http.StatusOK, "")
			before := pool(w.poolB.ID).FinishAt
			for _, rq := range []req{
				{method: http.MethodPatch, path: path(w.poolB.ID), token: w.creator.token, body: finish(now.Add(6 * time.Hour))},
				{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/pools/%d", w.poolB.ID), token: adminToken, body: finish(now.Add(6 * time.Hour))},
			} {
				expect(t, h.do(t, rq), http.StatusConflict, "market_resolved")
			}
			if got := pool(w.poolB.ID).FinishAt; got != before {
				t.Fatalf("finish_at moved from %s to %s", before, got)
			}
			if m := h.market(t, w.b1.ID); m.TradingOpen {
				t.Fatal("a resolved market says trading_open true")
			}
		})

		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit: %v", problems)
		}
	})
}
