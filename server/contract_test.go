package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
)

// TestContractErrors answers every error the interface lists with its
// exact status and string, in the documented order of checks.
func TestContractErrors(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		other := h.register(t, "other")
		otherCreator := h.register(t, "othercreator")
		h.makeCreator(t, otherCreator.id)
		resolved := h.createEvent(t, w.creator.token, twoPoolEvent("Resolved"))
		rm := resolved.Pools[0].Markets[0]
		expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(resolved.ID, rm.PoolID, rm.ID), token: w.creator.token,
			body: map[string]any{"won_side": "NO"}}), http.StatusOK, "")
		activePath := fmt.Sprintf("/api/v1/events/%d/active", w.event.ID)
		closeA1 := w.closePath(w.event.ID, w.poolA.ID, w.a1.ID)

		cases := []struct {
			name   string
			req    req
			status int
			code   string
		}{
			// GET /users/{id}/pnl/chart and /users/me/pnl/chart.
			{"the chart of a non-integer id is 400 invalid_id", req{method: "GET", path: "/api/v1/users/abc/pnl/chart"}, 400, "invalid_id"},
			{"the chart of a fractional id is 400 invalid_id", req{method: "GET", path: "/api/v1/users/1.5/pnl/chart"}, 400, "invalid_id"},
			{"the chart of an id past int64 is 400 invalid_id", req{method: "GET", path: "/api/v1/users/9223372036854775808/pnl/chart"}, 400, "invalid_id"},
			{"my chart without a token is 401 unauthorized", req{method: "GET", path: "/api/v1/users/me/pnl/chart"}, 401, "unauthorized"},
			{"my chart with an unknown token is 401 unauthorized", req{method: "GET", path: "/api/v1/users/me/pnl/chart", token: "nope"}, 401, "unauthorized"},
			{"the chart of an unknown user is 404 user_not_found", req{method: "GET", path: "/api/v1/users/987654321/pnl/chart"}, 404, "user_not_found"},
			{"the chart of user 0 is 404 user_not_found", req{method: "GET", path: "/api/v1/users/0/pnl/chart"}, 404, "user_not_found"},
			{"the chart of a known user is public", req{method: "GET", path: fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.alice.id)}, 200, ""},
			{"the chart with a bad optional token is still public", req{method: "GET", path: fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.alice.id), token: "nope"}, 200, ""},
			// GET /auth/me.
			{"auth/me without a token is 401 UNAUTHORIZED", req{method: "GET", path: "/api/v1/auth/me"}, 401, "UNAUTHORIZED"},
			{"auth/me with an unknown token is 401 UNAUTHORIZED", req{method: "GET", path: "/api/v1/auth/me", token: "not-a-token"}, 401, "UNAUTHORIZED"},
			{"auth/me with another scheme is 401 UNAUTHORIZED", req{method: "GET", path: "/api/v1/auth/me", header: map[string]string{"Authorization": "Basic " + w.alice.token}}, 401, "UNAUTHORIZED"},
			{"auth/me with an oversized token is 401 UNAUTHORIZED", req{method: "GET", path: "/api/v1/auth/me", token: string(make([]byte, 300))}, 401, "UNAUTHORIZED"},
			// GET /pools/{id}.
			{"a pool id that is not an integer is 400 invalid_pool_id", req{method: "GET", path: "/api/v1/pools/abc"}, 400, "invalid_pool_id"},
			{"a fractional pool id is 400 invalid_pool_id", req{method: "GET", path: "/api/v1/pools/1.0"}, 400, "invalid_pool_id"},
			{"an unknown pool is 404 pool_not_found", req{method: "GET", path: "/api/v1/pools/987654321"}, 404, "pool_not_found"},
			{"a negative pool id is 404 pool_not_found", req{method: "GET", path: "/api/v1/pools/-3"}, 404, "pool_not_found"},
			// POST /events/{id}/active: 401, 404, 403, 400.
			{"activating without a token is 401", req{method: "POST", path: activePath, body: `{"is_active":true}`}, 401, "unauthorized"},
			{"activating without a token and with a bad body is still 401", req{method: "POST", path: "/api/v1/events/987654321/active", body: `nonsense`}, 401, "unauthorized"},
			{"activating an unknown event is 404", req{method: "POST", path: "/api/v1/events/987654321/active", token: w.creator.token, body: `{"is_active":true}`}, 404, "event not found"},
			{"activating a non-integer event id is 404", req{method: "POST", path: "/api/v1/events/x/active", token: w.creator.token, body: `{"is_active":true}`}, 404, "event not found"},
			{"activating an unknown event with a bad body is 404 first", req{method: "POST", path: "/api/v1/events/987654321/active", token: other.token, body: `{`}, 404, "event not found"},
			{"activating someone else's event is 403", req{method: "POST", path: activePath, token: other.token, body: `{"is_active":false}`}, 403, "forbidden"},
			{"another creator activating the event is 403", req{method: "POST", path: activePath, token: otherCreator.token, body: `{"is_active":false}`}, 403, "forbidden"},
			{"a non-creator with a bad body is 403 before 400", req{method: "POST", path: activePath, token: other.token, body: `{`}, 403, "forbidden"},
			{"a missing is_active is 400 invalid request", req{method: "POST", path: activePath, token: w.creator.token, body: `{}`}, 400, "invalid request"},
			{"a string is_active is 400 invalid request", req{method: "POST", path: activePath, token: w.creator.token, body: `{"is_active":"true"}`}, 400, "invalid request"},
			{"a numeric is_active is 400 invalid request", req{method: "POST", path: activePath, token: w.creator.token, body: `{"is_active":1}`}, 400, "invalid request"},
			{"a differently cased key is 400 invalid request", req{method: "POST", path: activePath, token: w.creator.token, body: `{"IS_ACTIVE":true}`}, 400, "invalid request"},
			{"malformed JSON is 400 invalid request", req{method: "POST", path: activePath, token: w.creator.token, body: `{"is_active":`}, 400, "invalid request"},
			{"no body is 400 invalid request", req{method: "POST", path: activePath, token: w.creator.token}, 400, "invalid request"},
			// POST /events/{id}/pools/{pool_id}/markets/{market_id}/close: 401, 404, 403, 400, 409.
			{"closing without a token is 401", req{method: "POST", path: closeA1, body: `{"won_side":"YES"}`}, 401, "unauthorized"},
			{"closing an unknown market is 404", req{method: "POST", path: w.closePath(w.event.ID, w.poolA.ID, 987654321), token: w.creator.token, body: `{"won_side":"YES"}`}, 404, "market not found"},
			{"closing a market through another pool is 404", req{method: "POST", path: w.closePath(w.event.ID, w.poolB.ID, w.a1.ID), token: w.creator.token, body: `{"won_side":"YES"}`}, 404, "market not found"},
			{"closing a market through another event is 404", req{method: "POST", path: w.closePath(resolved.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: `{"won_side":"YES"}`}, 404, "market not found"},
			{"closing with a non-integer id is 404", req{method: "POST", path: fmt.Sprintf("/api/v1/events/%d/pools/x/markets/%d/close", w.event.ID, w.a1.ID), token: w.creator.token, body: `{"won_side":"YES"}`}, 404, "market not found"},
			{"an unknown market with a bad body is 404 first", req{method: "POST", path: w.closePath(w.event.ID, w.poolA.ID, 987654321), token: other.token, body: `]`}, 404, "market not found"},
			{"closing someone else's market is 403", req{method: "POST", path: closeA1, token: other.token, body: `{"won_side":"YES"}`}, 403, "forbidden"},
			{"another creator closing the market is 403", req{method: "POST", path: closeA1, token: otherCreator.token, body: `{"won_side":"YES"}`}, 403, "forbidden"},
			{"a non-creator with a bad body is 403 before 400", req{method: "POST", path: closeA1, token: other.token, body: `{"won_side":"MAYBE"}`}, 403, "forbidden"},
			{"a non-creator on a resolved market is 403 before 409", req{method: "POST", path: w.closePath(resolved.ID, rm.PoolID, rm.ID), token: other.token, body: `{"won_side":"YES"}`}, 403, "forbidden"},
			{"an invalid won_side is 400 invalid request", req{method: "POST", path: closeA1, token: w.creator.token, body: `{"won_side":"MAYBE"}`}, 400, "invalid request"},
			{"a lowercase won_side is 400 invalid request", req{method: "POST", path: closeA1, token: w.creator.token, body: `{"won_side":"yes"}`}, 400, "invalid request"},
			{"a missing won_side is 400 invalid request", req{method: "POST", path: closeA1, token: w.creator.token, body: `{}`}, 400, "invalid request"},
			{"a numeric won_side is 400 invalid request", req{method: "POST", path: closeA1, token: w.creator.token, body: `{"won_side":1}`}, 400, "invalid request"},
			{"malformed JSON on close is 400 invalid request", req{method: "POST", path: closeA1, token: w.creator.token, body: `won_side=YES`}, 400, "invalid request"},
			{"a bad body on a resolved market is 400 before 409", req{method: "POST", path: w.closePath(resolved.ID, rm.PoolID, rm.ID), token: w.creator.token, body: `{}`}, 400, "invalid request"},
			{"closing a resolved market is 409", req{method: "POST", path: w.closePath(resolved.ID, rm.PoolID, rm.ID), token: w.creator.token, body: `{"won_side":"YES"}`}, 409, "market already resolved"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				expect(t, h.do(t, c.req), c.status, c.code)
			})
		}
		t.Run("nothing that was refused changed the event or the market", func(t *testing.T) {
			m := h.market(t, w.a1.ID)
			if m.Resolved || m.QYes != w.a1.QYes || m.QNo != w.a1.QNo {
				t.Errorf("market A1 changed: %+v, was %+v", m, w.a1)
			}
			r := h.do(t, req{method: "GET", path: fmt.Sprintf("/api/v1/events/%d", w.event.ID)})
			var e apiEvent
			r.decode(t, &e)
			if !e.IsActive {
				t.Error("the event was hidden by a refused request")
			}
		})
	})
}

// brokenStore fails the reads behind the documented 500 answers of GET
// /pools/{id} and GET /market/trades/latest, and the ping of /readyz.
type brokenStore struct{ server.Store }

var errBroken = errors.New("disk on fire")

func (brokenStore) Pool(context.Context, int64) (*market.Pool, error) { return nil, errBroken }
func (brokenStore) LatestTrades(context.Context, int) ([]*market.FeedTrade, error) {
	return nil, errBroken
}
func (brokenStore) Ping(context.Context) error { return errBroken }

func TestInternalErrorsKeepTheContractCodesAndHideTheCause(t *testing.T) {
	h := newHarness(t, brokenStore{memory.New()})
	cases := []struct {
		name   string
		path   string
		status int
		code   string
	}{
		{"a failing pool read is 500 internal_error", "/api/v1/pools/1", 500, "internal_error"},
		{"a failing trade feed is 500 INTERNAL_ERROR", "/api/v1/market/trades/latest", 500, "INTERNAL_ERROR"},
		{"a failing ping makes readyz 503 database_unavailable", "/readyz", 503, "database_unavailable"},
		{"healthz stays 200 while the store is down", "/healthz", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(t, req{method: "GET", path: c.path})
			expect(t, r, c.status, c.code)
			if c.status >= 500 && (strings.Contains(string(r.body), "disk") || strings.Contains(string(r.body), "fire")) {
				t.Errorf("the answer leaks the cause: %s", r.body)
			}
		})
	}
}
