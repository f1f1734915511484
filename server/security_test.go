package server_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/server"
)

// secWorld is newWorld plus everything the access matrix reaches for:
// a second creator with an event of their own, a hidden user, a revoked
// token, Alice's position, closed position, comment and notifications,
// partners A, B and a disabled one, chat sessions and a P2P ad.
type secWorld struct {
	*world
	other      apiUser // a creator, but not of w.event
	otherEvent apiEvent
	hidden     apiUser // profile_hidden
	revoked    string  // a token of Alice's, logged out
	// aliceNote is an unread notification of Alice's; aliceComment her
	// comment on the event.
	aliceNote    int64
	aliceComment apiComment
	adID         int64
	pA, pB, pOff apiNewPartner
	// aliceChat is Alice's chat session (cookie and token); anonChat an
	// anonymous one; adminChat a session the operator cells may close.
	aliceChat, anonChat *chatClient
	adminChat           string
	// fresh holds a second token per user, for cells that log out.
	fresh map[int64]string
}

func newSecWorld(t *testing.T, h *harness) *secWorld {
	t.Helper()
	w := &secWorld{world: newWorld(t, h), other: h.register(t, "other-creator"), hidden: h.register(t, "hidden")}
	h.makeCreator(t, w.other.id)
	w.otherEvent = h.createEvent(t, w.other.token, twoPoolEvent("Other's event"))
	h.setProfile(t, w.hidden.token, map[string]any{"profile_hidden": true})

	// A second token of Alice's, revoked.
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": w.alice.email, "password": "password-alice"}})
	expect(t, r, http.StatusOK, "")
	var login struct {
		AccessToken string `json:"access_token"`
	}
	r.decode(t, &login)
	w.revoked = login.AccessToken
	expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/logout", token: w.revoked}), http.StatusOK, "")

	// Alice holds YES on A1, and sold out of A2 (a closed position).
	h.buy(t, w.alice.token, w.a1.ID, "YES", 20_000)
	tr := h.buy(t, w.alice.token, w.a2.ID, "NO", 5_000)
	h.sell(t, w.alice.token, w.a2.ID, "NO", tr.Shares)
	w.aliceNote = h.unread(t, w.alice.token)[0].ID
	w.aliceComment = h.postComment(t, w.alice.token, w.event.ID, "Alice's comment", 0)

	w.pA = h.createPartner(t, "Partner A", 1_000_000)
	w.pB = h.createPartner(t, "Partner B", 1_000_000)
	w.pOff = h.createPartner(t, "Partner Off", 1_000_000)
	h.setPartnerDisabled(t, w.pOff.ID, true)
	h.partnerBet(t, w.pA.Key, map[string]any{"external_user_id": "a-user", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 10_000, "client_bet_id": "setup"})

	r = h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/p2p/ads", token: adminToken, body: map[string]any{
		"user_id": w.alice.id, "type": "sell", "fiat_currency": "RUB", "exchange_rate": 100, "min_amount": 1000, "max_amount": 50000,
		"payment_methods": []string{"SBP"}, "payment_duration": 15, "instructions": "SBP"}})
	expect(t, r, http.StatusCreated, "")
	var ad struct {
		ID int64 `json:"id"`
	}
	r.decode(t, &ad)
	w.adID = ad.ID

	w.aliceChat = &chatClient{token: w.alice.token}
	h.openChat(t, w.aliceChat)
	h.chatSend(t, w.aliceChat, "Alice's secret question")
	w.anonChat = &chatClient{}
	h.openChat(t, w.anonChat)
	w.adminChat = h.openChat(t, &chatClient{}).SessionID
	return w
}

// A principal is who sends a request: it sets the credentials of r.
type principal struct {
	name string
	set  func(w *secWorld, r req) req
}

func bearerOf(name string, tok func(w *secWorld) string) principal {
	return principal{name, func(w *secWorld, r req) req { r.token = tok(w); return r }}
}

func partnerOf(name string, key func(w *secWorld) string) principal {
	return principal{name, func(w *secWorld, r req) req {
		r.header = map[string]string{"X-Partner-Key": key(w)}
		return r
	}}
}

func chatOf(name string, c func(w *secWorld) *chatClient) principal {
	return principal{name, func(w *secWorld, r req) req {
		cc := c(w)
		out := cc.req(r.method, r.path, r.body)
		return out
	}}
}

var (
	pAnonymous    = principal{"anonymous", func(_ *secWorld, r req) req { return r }}
	pGarbageToken = bearerOf("a made-up token", func(*secWorld) string { return "not-a-token-0123456789" })
	pRevokedToken = bearerOf("a logged-out token", func(w *secWorld) string { return w.revoked })
	pAdminAsUser  = bearerOf("the admin token", func(*secWorld) string { return adminToken })
	pAlice        = bearerOf("Alice", func(w *secWorld) string { return w.alice.token })
	pBob          = bearerOf("Bob", func(w *secWorld) string { return w.bob.token })
	pCreator      = bearerOf("the event's creator", func(w *secWorld) string { return w.creator.token })
	pOtherCreator = bearerOf("another creator", func(w *secWorld) string { return w.other.token })
	pHidden       = bearerOf("the hidden user", func(w *secWorld) string { return w.hidden.token })
	pUserAsAdmin  = bearerOf("a user's token", func(w *secWorld) string { return w.alice.token })
	pWrongAdmin   = bearerOf("a wrong admin token", func(*secWorld) string { return adminToken + "-wrong" })
	pNoKey        = principal{"no partner key", func(_ *secWorld, r req) req { return r }}
	pBadKey       = partnerOf("an unknown partner key", func(*secWorld) string { return "pk_unknown0123456789" })
	pKeyA         = partnerOf("partner A", func(w *secWorld) string { return w.pA.Key })
	pKeyB         = partnerOf("partner B", func(w *secWorld) string { return w.pB.Key })
	pKeyOff       = partnerOf("a disabled partner", func(w *secWorld) string { return w.pOff.Key })
)

// cell is one square of the access matrix: a principal sends a request
// and gets the status (and code); check, when set, looks further.
type cell struct {
	as     principal
	req    func(w *secWorld) req
	status int
	code   string
	check  func(t *testing.T, h *harness, w *secWorld, r *response)
}

func mxGet(path func(w *secWorld) string) func(w *secWorld) req {
	return func(w *secWorld) req { return req{method: http.MethodGet, path: path(w)} }
}

func mxSend(method string, path func(w *secWorld) string, body func(w *secWorld) any) func(w *secWorld) req {
	return func(w *secWorld) req {
		var b any
		if body != nil {
			b = body(w)
		}
		return req{method: method, path: path(w), body: b}
	}
}

func mxPath(p string) func(*secWorld) string { return func(*secWorld) string { return p } }

// mxPublic is answered the same to anyone: anonymous, or with a token that
// is not valid.
func mxPublic(r func(w *secWorld) req, status int) []cell {
	return []cell{{as: pAnonymous, req: r, status: status}, {as: pGarbageToken, req: r, status: status}}
}

// mxUserOnly needs a valid user token: anonymous, made-up, revoked and
// admin tokens are 401; who gets status.
func mxUserOnly(r func(w *secWorld) req, code401 string, who principal, status int, check func(t *testing.T, h *harness, w *secWorld, r *response)) []cell {
	cs := []cell{}
	for _, p := range []principal{pAnonymous, pGarbageToken, pRevokedToken, pAdminAsUser} {
		cs = append(cs, cell{as: p, req: r, status: http.StatusUnauthorized, code: code401})
	}
	return append(cs, cell{as: who, req: r, status: status, check: check})
}

// mxPartnerOnly needs a partner key: none or an unknown one is 401
// UNAUTHORIZED, a disabled partner's 403 FORBIDDEN.
func mxPartnerOnly(r func(w *secWorld) req) []cell {
	return []cell{
		{as: pNoKey, req: r, status: http.StatusUnauthorized, code: "UNAUTHORIZED"},
		{as: pBadKey, req: r, status: http.StatusUnauthorized, code: "UNAUTHORIZED"},
		{as: pKeyOff, req: r, status: http.StatusForbidden, code: "FORBIDDEN"},
		{as: pAlice, req: r, status: http.StatusUnauthorized, code: "UNAUTHORIZED"},
	}
}

func mxCells(groups ...[]cell) []cell { return slices.Concat(groups...) }

// adminCells are the cells of every operator route, whatever it does:
// without the admin token (none, a wrong one, a user's) 401, with it
// anything but 401 and the 404 of a disabled operator API. (With no
// admin token configured every operator route is 404: see
// TestAccessMatrix.)
func adminCells(r func(w *secWorld) req) []cell {
	ok := func(t *testing.T, _ *harness, _ *secWorld, resp *response) {
		t.Helper()
		if resp.status == http.StatusUnauthorized || resp.status == http.StatusForbidden ||
			resp.status == http.StatusNotFound && resp.errorCode() == "not_found" || resp.status >= 500 {
			t.Errorf("the admin token got %s", resp)
		}
	}
	return []cell{
		{as: pAnonymous, req: r, status: http.StatusUnauthorized, code: "unauthorized"},
		{as: pWrongAdmin, req: r, status: http.StatusUnauthorized, code: "unauthorized"},
		{as: pUserAsAdmin, req: r, status: http.StatusUnauthorized, code: "unauthorized"},
		{as: bearerOf("the admin token", func(*secWorld) string { return adminToken }), req: r, status: -1, check: ok},
	}
}

// adminRequest fills an operator route's path with ids that exist and
// sends no body (so that the request changes nothing: a body is
// required, and its absence is 400), except the chat close, which
// closes a session kept for it.
func adminRequest(method, path string) func(w *secWorld) req {
	return func(w *secWorld) req {
		segs := strings.Split(path, "/")
		for i, s := range segs {
			if !strings.HasPrefix(s, ":") {
				continue
			}
			switch {
			case s == ":session_id":
				segs[i] = w.adminChat
			case slices.Contains(segs[:i], "partners"):
				segs[i] = fmt.Sprint(w.pA.ID)
			case slices.Contains(segs[:i], "ads"):
				segs[i] = fmt.Sprint(w.adID)
			case slices.Contains(segs[:i], "pools"):
				segs[i] = fmt.Sprint(w.poolA.ID)
			default:
				segs[i] = fmt.Sprint(w.bob.id)
			}
		}
		return req{method: method, path: strings.Join(segs, "/")}
	}
}

// accessMatrix is who may do what, route by route. Every route the app
// serves must have an entry (operator routes get adminCells whatever
// their entry says).
func accessMatrix() map[string][]cell {
	trade := func(kind string, body func(w *secWorld) any) func(w *secWorld) req {
		return mxSend(http.MethodPost, func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d/%s", w.a1.ID, kind) }, body)
	}
	closePath := func(w *secWorld) string { return w.closePath(w.event.ID, w.poolB.ID, w.b1.ID) }
	activePath := func(w *secWorld) string { return fmt.Sprintf("/api/v1/events/%d/active", w.event.ID) }
	poolPath := func(w *secWorld) string { return fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID) }
	finishBody := func(*secWorld) any {
		return map[string]any{"finish_at": time.Now().AddDate(1, 0, 0).UTC().Format(time.RFC3339)}
	}
	notes := func(t *testing.T, r *response) []apiNotification {
		t.Helper()
		var ns []apiNotification
		if r.body[0] == '{' {
			var out struct {
				Notifications []apiNotification `json:"notifications"`
			}
			r.decode(t, &out)
			ns = out.Notifications
		} else {
			r.decode(t, &ns)
		}
		return ns
	}
	onlyOwn := func(owner func(w *secWorld) int64) func(t *testing.T, h *harness, w *secWorld, r *response) {
		return func(t *testing.T, _ *harness, w *secWorld, r *response) {
			for _, n := range notes(t, r) {
				if n.UserID != owner(w) {
					t.Errorf("user %d was shown notification %d of user %d", owner(w), n.ID, n.UserID)
				}
			}
		}
	}
	aliceNoteUnread := func(t *testing.T, h *harness, w *secWorld, _ *response) {
		t.Helper()
		for _, n := range h.unread(t, w.alice.token) {
			if n.ID == w.aliceNote {
				return
			}
		}
		t.Errorf("Alice's notification %d was marked read by someone else", w.aliceNote)
	}
	aliceHolds := func(t *testing.T, h *harness, w *secWorld, _ *response) {
		t.Helper()
		if p := h.me(t, w.alice.token).Positions; len(p) != 1 || p[0].MarketID != w.a1.ID {
			t.Errorf("Alice's positions changed: %+v", p)
		}
	}
	partnerState := func(ext string) func(w *secWorld) req {
		return mxGet(func(*secWorld) string { return statePath(ext) })
	}
	betBody := func(id string) func(w *secWorld) any {
		return func(w *secWorld) any {
			return map[string]any{"external_user_id": "b-user", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 1_000, "client_bet_id": id}
		}
	}
	sellBody := func(ext, id string) func(w *secWorld) any {
		return func(w *secWorld) any {
			return map[string]any{"external_user_id": ext, "market_id": w.a1.ID, "side": "yes", "shares": 10, "client_bet_id": id}
		}
	}
	return map[string][]cell{
		// Probes, documents and public reads.
		"GET /healthz":                   mxPublic(mxGet(mxPath("/healthz")), 200),
		"GET /readyz":                    mxPublic(mxGet(mxPath("/readyz")), 200),
		"GET /metrics":                   mxPublic(mxGet(mxPath("/metrics")), 200),
		"GET /api/v1/openapi.json":       mxPublic(mxGet(mxPath("/api/v1/openapi.json")), 200),
		"GET /docs":                      mxPublic(mxGet(mxPath("/docs")), 200),
		"GET /docs/:file":                mxPublic(mxGet(mxPath("/docs/docs.css")), 200),
		"GET /api/v1/events":             mxPublic(mxGet(mxPath("/api/v1/events")), 200),
		"GET /api/v1/events/:id":         mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/events/%d", w.event.ID) }), 200),
		"GET /api/v1/pools/:id":          mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID) }), 200),
		"GET /api/v1/markets/:market_id": mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d", w.a1.ID) }), 200),
		"GET /api/v1/markets/:market_id/quote": mxPublic(mxGet(func(w *secWorld) string {
			return fmt.Sprintf("/api/v1/markets/%d/quote?side=YES&amount_kopecks=1000", w.a1.ID)
		}), 200),
		"GET /api/v1/markets/:market_id/history": mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d/history", w.a1.ID) }), 200),
		"GET /api/v1/markets/:market_id/candles": mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d/candles?interval=1h", w.a1.ID) }), 200),
		"GET /api/v1/market/trades/latest":       mxPublic(mxGet(mxPath("/api/v1/market/trades/latest")), 200),
		"GET /api/v1/leaderboard":                mxPublic(mxGet(mxPath("/api/v1/leaderboard?period=7d&by=volume")), 200),
		"GET /api/v1/p2p/ads":                    mxPublic(mxGet(mxPath("/api/v1/p2p/ads")), 200),
		"GET /api/v1/p2p/ads/:id":                mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/p2p/ads/%d", w.adID) }), 200),
		"GET /api/v1/events/:event_id/comments":  mxPublic(mxGet(func(w *secWorld) string { return commentsPath(w.event.ID) }), 200),
		"GET /api/v1/comments/:id/replies": mxPublic(mxGet(func(w *secWorld) string {
			return fmt.Sprintf("/api/v1/comments/%d/replies", w.aliceComment.ID)
		}), 200),
		// The web app: its page, and an asset (one that is not there: the
		// files are the app's, which this matrix does not know).
		"GET /":         mxPublic(mxGet(mxPath("/")), 200),
		"GET /assets/*": mxPublic(mxGet(mxPath("/assets/no-such-file.js")), 404),

		"POST /api/v1/auth/register": {{as: pAnonymous, status: 201, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/register"), func(*secWorld) any {
			return map[string]any{"email": "matrix-new@test.predictkit", "password": "password-matrix", "name": "New"}
		})}},
		"POST /api/v1/auth/login": {{as: pAnonymous, status: 200, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/login"), func(w *secWorld) any {
			return map[string]any{"email": w.bob.email, "password": "password-bob"}
		})}, {as: pAnonymous, status: 401, code: "invalid_credentials", req: mxSend(http.MethodPost, mxPath("/api/v1/auth/login"), func(w *secWorld) any {
			return map[string]any{"email": w.bob.email, "password": "password-alice"}
		})}},

		// A public profile's chart is anyone's; a hidden one only its
		// owner's; "me" needs a token.
		"GET /api/v1/users/:id/pnl/chart": mxCells(
			mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.alice.id) }), 200),
			[]cell{
				{as: pAnonymous, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.hidden.id) }), status: 404, code: "user_not_found"},
				{as: pBob, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.hidden.id) }), status: 404, code: "user_not_found"},
				{as: pHidden, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.hidden.id) }), status: 200},
			},
			mxUserOnly(mxGet(mxPath("/api/v1/users/me/pnl/chart")), "unauthorized", pAlice, 200, nil),
		),

		// The caller's own account.
		"GET /api/v1/auth/me": mxCells(
			mxUserOnly(mxGet(mxPath("/api/v1/auth/me")), "UNAUTHORIZED", pAlice, 200, func(t *testing.T, _ *harness, w *secWorld, r *response) {
				var out struct {
					User apiProfile `json:"user"`
				}
				r.decode(t, &out)
				if out.User.ID != w.alice.id {
					t.Errorf("Alice was shown user %d", out.User.ID)
				}
			}),
		),
		"PATCH /api/v1/auth/me": mxUserOnly(mxSend(http.MethodPatch, mxPath("/api/v1/auth/me"), func(*secWorld) any { return map[string]any{"name": "Alice Renamed"} }),
			"UNAUTHORIZED", pAlice, 200, func(t *testing.T, h *harness, w *secWorld, _ *response) {
				if got := h.me(t, w.bob.token).Name; got != "bob" {
					t.Errorf("Alice's profile change renamed Bob to %q", got)
				}
				if got := h.me(t, w.alice.token).Name; got != "Alice Renamed" {
					t.Errorf("Alice is named %q", got)
				}
			}),
		// The web app's cookie session: opened with a password or a
		// session token (never a key: see the scopes' tests); ended by
		// the cookie, from the app's own origin only.
		"POST /api/v1/auth/session": mxCells(
			[]cell{
				{as: pAnonymous, status: 200, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), func(w *secWorld) any {
					return map[string]any{"email": w.bob.email, "password": "password-bob"}
				}), check: sessionOf(func(w *secWorld) int64 { return w.bob.id })},
				{as: pAnonymous, status: 401, code: "invalid_credentials", req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), func(w *secWorld) any {
					return map[string]any{"email": w.bob.email, "password": "password-alice"}
				})},
			},
			[]cell{
				{as: pGarbageToken, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), nil), status: 401, code: "unauthorized"},
				{as: pRevokedToken, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), nil), status: 401, code: "unauthorized"},
				{as: pAdminAsUser, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), nil), status: 401, code: "unauthorized"},
				{as: pAlice, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), nil), status: 200, check: sessionOf(func(w *secWorld) int64 { return w.alice.id })},
			},
		),
		"DELETE /api/v1/auth/session": {
			{as: pAnonymous, req: mxSend(http.MethodDelete, mxPath("/api/v1/auth/session"), nil), status: 204},
			{as: sessionCookieOf("Alice's session cookie from another site", "cross-site", func(w *secWorld) string { return w.alice.token }),
				req: mxSend(http.MethodDelete, mxPath("/api/v1/auth/session"), nil), status: 403, code: "cross_origin_request",
				check: func(t *testing.T, h *harness, w *secWorld, _ *response) { h.me(t, w.alice.token) }},
			{as: sessionCookieOf("a session cookie of the hidden user's, from the app", "same-origin", func(w *secWorld) string { return w.freshToken(w.hidden) }),
				req: mxSend(http.MethodDelete, mxPath("/api/v1/auth/session"), nil), status: 204,
				check: func(t *testing.T, h *harness, w *secWorld, _ *response) {
					expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: w.freshToken(w.hidden)}), http.StatusUnauthorized, "UNAUTHORIZED")
					h.me(t, w.hidden.token) // the user's other tokens still work
				}},
		},
		"POST /api/v1/auth/logout": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/auth/logout"), nil), "unauthorized",
			bearerOf("a fresh token of Bob's", func(w *secWorld) string {
				return w.freshToken(w.bob)
			}), 200, func(t *testing.T, h *harness, w *secWorld, _ *response) {
				h.me(t, w.alice.token) // other tokens still work
				h.me(t, w.bob.token)
			}),
		// A password change needs the user's token; the rightful caller
		// here gives a wrong current password, so that no token of the
		// world is revoked. Reset requests and resets are anyone's.
		"POST /api/v1/auth/password": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/auth/password"), func(*secWorld) any {
			return map[string]any{"current_password": "not alice's", "new_password": "a new password"}
		}), "unauthorized", pAlice, 401, func(t *testing.T, h *harness, w *secWorld, r *response) {
			if r.errorCode() != "invalid_credentials" {
				t.Errorf("Alice got %s", r)
			}
			h.me(t, w.alice.token)
		}),
		"POST /api/v1/auth/password/reset-request": mxPublic(mxSend(http.MethodPost, mxPath("/api/v1/auth/password/reset-request"), func(w *secWorld) any {
			return map[string]any{"email": w.bob.email}
		}), 202),
		"POST /api/v1/auth/password/reset": {
			{as: pAnonymous, status: 400, code: "invalid_token", req: mxSend(http.MethodPost, mxPath("/api/v1/auth/password/reset"), func(*secWorld) any {
				return map[string]any{"token": "not-a-reset-token", "new_password": "a new password"}
			})},
			{as: pAlice, status: 400, code: "invalid_token", req: mxSend(http.MethodPost, mxPath("/api/v1/auth/password/reset"), func(w *secWorld) any {
				return map[string]any{"token": w.alice.token, "new_password": "a new password"} // an access token is no reset token
			})},
		},
		"GET /api/v1/users/me/positions/closed": mxCells(
			mxUserOnly(mxGet(mxPath("/api/v1/users/me/positions/closed")), "unauthorized", pAlice, 200, func(t *testing.T, _ *harness, w *secWorld, r *response) {
				var out struct {
					Positions []apiPosition `json:"positions"`
				}
				r.decode(t, &out)
				if len(out.Positions) != 1 || out.Positions[0].UserID != w.alice.id {
					t.Errorf("Alice's closed positions: %+v", out.Positions)
				}
			}),
			[]cell{{as: pBob, req: mxGet(mxPath("/api/v1/users/me/positions/closed")), status: 200, check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
				var out struct {
					Positions []apiPosition `json:"positions"`
				}
				r.decode(t, &out)
				if len(out.Positions) != 0 {
					t.Errorf("Bob was shown closed positions %+v", out.Positions)
				}
			}}},
		),

		// Personal API keys: each user's own (a key of Alice's is Bob's 404).
		"POST /api/v1/auth/api-keys": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/auth/api-keys"), func(*secWorld) any {
			return map[string]any{"name": "Alice's bot", "scopes": []string{"read"}}
		}), "unauthorized", pAlice, 201, func(t *testing.T, h *harness, w *secWorld, _ *response) {
			if ks := h.listKeys(t, w.bob.token); len(ks) != 0 {
				t.Errorf("Alice's new key is listed for Bob: %+v", ks)
			}
		}),
		"GET /api/v1/auth/api-keys": mxUserOnly(mxGet(mxPath("/api/v1/auth/api-keys")), "unauthorized", pBob, 200, func(t *testing.T, _ *harness, _ *secWorld, r *response) {
			if strings.Contains(string(r.body), "Alice") {
				t.Errorf("Bob was shown Alice's keys: %s", r.body)
			}
		}),
		"DELETE /api/v1/auth/api-keys/:id": mxCells(
			mxUserOnly(mxSend(http.MethodDelete, mxPath("/api/v1/auth/api-keys/999999"), nil), "unauthorized", pAlice, 404, nil),
			[]cell{{as: pBob, req: mxSend(http.MethodDelete, mxPath("/api/v1/auth/api-keys/1"), nil), status: 404, code: "api_key_not_found"}},
		),
		"GET /api/v1/users/me/trades": mxUserOnly(mxGet(mxPath("/api/v1/users/me/trades")), "unauthorized", pAlice, 200, func(t *testing.T, _ *harness, w *secWorld, r *response) {
			var out struct {
				Trades []struct {
					MarketID int64 `json:"market_id"`
				} `json:"trades"`
			}
			r.decode(t, &out)
			if len(out.Trades) == 0 {
				t.Errorf("Alice's trades are missing: %s", r.body)
			}
		}),

		// Trading: one's own money and positions only.
		"POST /api/v1/markets/:market_id/buy": mxCells(
			mxUserOnly(trade("buy", func(*secWorld) any { return map[string]any{"side": "NO", "amount_kopecks": 1_000} }), "unauthorized", pBob, 200,
				func(t *testing.T, h *harness, w *secWorld, r *response) {
					var tr apiTrade
					r.decode(t, &tr)
					if got := h.me(t, w.bob.token).Balance; got != tr.Balance || got != 500_000-tr.CostKopecks {
						t.Errorf("Bob's balance %d after a buy of %d answered %d", got, tr.CostKopecks, tr.Balance)
					}
					aliceHolds(t, h, w, r)
				}),
		),
		"POST /api/v1/markets/:market_id/sell": mxCells(
			mxUserOnly(trade("sell", func(*secWorld) any { return map[string]any{"side": "YES", "shares": 10} }), "unauthorized", pAlice, 200, nil),
			[]cell{{as: pBob, req: trade("sell", func(*secWorld) any { return map[string]any{"side": "YES", "shares": 10} }),
				status: 400, code: "insufficient_shares", check: aliceHolds}},
		),

		// Creator operations: creators create; only an event's creator
		// activates it and closes its markets.
		"POST /api/v1/events": mxCells(
			mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/events"), func(*secWorld) any { return twoPoolEvent("Matrix") }), "unauthorized", pOtherCreator, 201, nil),
			[]cell{{as: pAlice, req: mxSend(http.MethodPost, mxPath("/api/v1/events"), func(*secWorld) any { return twoPoolEvent("Matrix") }), status: 403, code: "forbidden"}},
		),
		"POST /api/v1/events/:id/active": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPost, activePath, func(*secWorld) any { return map[string]any{"is_active": false} }), status: 403, code: "forbidden"},
				{as: pOtherCreator, req: mxSend(http.MethodPost, activePath, func(*secWorld) any { return map[string]any{"is_active": false} }), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPost, activePath, func(*secWorld) any { return map[string]any{"is_active": true} }), "unauthorized", pCreator, 200, nil),
		),
		"PATCH /api/v1/pools/:id": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPatch, poolPath, finishBody), status: 403, code: "forbidden"},
				{as: pOtherCreator, req: mxSend(http.MethodPatch, poolPath, finishBody), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPatch, poolPath, finishBody), "unauthorized", pCreator, 200, nil),
		),
		"POST /api/v1/events/:id/pools/:pool_id/markets/:market_id/close": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPost, closePath, func(*secWorld) any { return map[string]any{"won_side": "YES"} }), status: 403, code: "forbidden"},
				{as: pOtherCreator, req: mxSend(http.MethodPost, closePath, func(*secWorld) any { return map[string]any{"won_side": "YES"} }), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPost, closePath, func(*secWorld) any { return map[string]any{"won_side": "YES"} }), "unauthorized", pCreator, 200, nil),
		),

		// Comments: anyone signed in posts and reacts as themself.
		"POST /api/v1/events/:event_id/comments": mxUserOnly(mxSend(http.MethodPost, func(w *secWorld) string { return commentsPath(w.event.ID) },
			func(*secWorld) any { return map[string]any{"content": "Bob's comment"} }), "unauthorized", pBob, 201,
			func(t *testing.T, _ *harness, w *secWorld, r *response) {
				var c apiComment
				r.decode(t, &c)
				if c.UserID != w.bob.id {
					t.Errorf("Bob's comment was posted as user %d", c.UserID)
				}
			}),
		"PUT /api/v1/comments/:id/reaction": mxUserOnly(mxSend(http.MethodPut, func(w *secWorld) string { return fmt.Sprintf("/api/v1/comments/%d/reaction", w.aliceComment.ID) },
			func(*secWorld) any { return map[string]any{"reaction": "like"} }), "unauthorized", pBob, 200,
			func(t *testing.T, h *harness, w *secWorld, _ *response) {
				cs := h.comments(t, commentsPath(w.event.ID), w.alice.token)
				for _, c := range cs {
					if c.ID == w.aliceComment.ID && c.UserReaction != nil {
						t.Errorf("Bob's like shows as Alice's own reaction %q", *c.UserReaction)
					}
				}
			}),

		// Notifications: one's own only.
		"GET /api/v1/notifications/unread": mxCells(
			mxUserOnly(mxGet(mxPath("/api/v1/notifications/unread")), "unauthorized", pAlice, 200, onlyOwn(func(w *secWorld) int64 { return w.alice.id })),
			[]cell{{as: pBob, req: mxGet(mxPath("/api/v1/notifications/unread")), status: 200, check: onlyOwn(func(w *secWorld) int64 { return w.bob.id })}},
		),
		"GET /api/v1/notifications": mxCells(
			mxUserOnly(mxGet(mxPath("/api/v1/notifications")), "unauthorized", pAlice, 200, onlyOwn(func(w *secWorld) int64 { return w.alice.id })),
			[]cell{{as: pBob, req: mxGet(mxPath("/api/v1/notifications")), status: 200, check: onlyOwn(func(w *secWorld) int64 { return w.bob.id })}},
		),
		"POST /api/v1/notifications/:id/read": mxCells(
			[]cell{{as: pBob, req: mxSend(http.MethodPost, func(w *secWorld) string { return fmt.Sprintf("/api/v1/notifications/%d/read", w.aliceNote) }, nil),
				status: 404, code: "not_found", check: aliceNoteUnread}},
			mxUserOnly(mxSend(http.MethodPost, func(w *secWorld) string { return fmt.Sprintf("/api/v1/notifications/%d/read", w.aliceNote) }, nil), "unauthorized", pAlice, 200, nil),
		),
		"POST /api/v1/notifications/read-all": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/notifications/read-all"), nil), "unauthorized", pHidden, 200,
			func(t *testing.T, h *harness, w *secWorld, _ *response) {
				if len(h.unread(t, w.alice.token)) == 0 {
					t.Error("another user's read-all marked Alice's notifications read")
				}
			}),

		// The live stream: public topics for anyone, me for a user (a
		// stream cannot be read through app.Test, so the rightful caller's
		// cell asks for a last id after the newest: past authentication,
		// refused as 400 invalid_request).
		"GET /api/v1/stream": mxCells(
			mxPublic(mxGet(mxPath("/api/v1/stream?topics=trades&last_event_id=999999999")), 400),
			mxUserOnly(mxGet(mxPath("/api/v1/stream?topics=me&last_event_id=999999999")), "unauthorized", pAlice, 400, nil),
			[]cell{{as: pAnonymous, req: mxGet(mxPath("/api/v1/stream?topics=me&ticket=not-a-ticket")), status: 401, code: "unauthorized"}},
		),
		"POST /api/v1/stream/tickets": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/stream/tickets"), nil), "unauthorized", pAlice, 201, nil),

		// Support chat: the cookie is the session; no cookie is no session.
		"POST /api/v1/chat/session": {{as: pAnonymous, req: mxSend(http.MethodPost, mxPath("/api/v1/chat/session"), nil), status: 200}},
		"GET /api/v1/chat/history": {
			{as: pAnonymous, req: mxGet(mxPath("/api/v1/chat/history")), status: 401, code: "unauthorized"},
			{as: pAlice, req: mxGet(mxPath("/api/v1/chat/history")), status: 401, code: "unauthorized"}, // a token is not a session
			{as: chatOf("another session's cookie", func(w *secWorld) *chatClient { return w.anonChat }), req: mxGet(mxPath("/api/v1/chat/history")), status: 200,
				check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					if strings.Contains(string(r.body), "Alice's secret question") {
						t.Errorf("another session was shown Alice's messages: %s", r)
					}
				}},
			{as: chatOf("Alice's cookie", func(w *secWorld) *chatClient { return w.aliceChat }), req: mxGet(mxPath("/api/v1/chat/history")), status: 200,
				check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					if !strings.Contains(string(r.body), "Alice's secret question") {
						t.Errorf("Alice's history lacks her message: %s", r)
					}
				}},
		},
		"POST /api/v1/chat/messages": {
			{as: pAnonymous, req: mxSend(http.MethodPost, mxPath("/api/v1/chat/messages"), func(*secWorld) any { return map[string]any{"text": "hi"} }), status: 404, code: "not_found"},
			{as: chatOf("an pAnonymous session's cookie", func(w *secWorld) *chatClient { return w.anonChat }),
				req: mxSend(http.MethodPost, mxPath("/api/v1/chat/messages"), func(*secWorld) any { return map[string]any{"text": "hi"} }), status: 201},
		},
		"POST /api/v1/chat/session/call-operator": {
			{as: pAnonymous, req: mxSend(http.MethodPost, mxPath("/api/v1/chat/session/call-operator"), nil), status: 404, code: "not_found"},
			{as: pGarbageToken, req: mxSend(http.MethodPost, mxPath("/api/v1/chat/session/call-operator"), nil), status: 404, code: "not_found"},
			{as: chatOf("an pAnonymous session's cookie", func(w *secWorld) *chatClient { return w.anonChat }),
				req: mxSend(http.MethodPost, mxPath("/api/v1/chat/session/call-operator"), nil), status: 200},
		},

		// Partner API: each partner sees and trades its own users only.
		"POST /api/v1/partner/bet": mxCells(
			mxPartnerOnly(mxSend(http.MethodPost, mxPath("/api/v1/partner/bet"), betBody("matrix-bet"))),
			[]cell{{as: pKeyB, req: mxSend(http.MethodPost, mxPath("/api/v1/partner/bet"), betBody("matrix-bet")), status: 200,
				check: func(t *testing.T, h *harness, w *secWorld, _ *response) {
					if h.partnerState(t, w.pA.Key, "b-user").Exists {
						t.Error("partner B's bet created a sub-account under partner A")
					}
				}}},
		),
		"POST /api/v1/partner/sell": mxCells(
			mxPartnerOnly(mxSend(http.MethodPost, mxPath("/api/v1/partner/sell"), sellBody("a-user", "matrix-sell"))),
			[]cell{
				{as: pKeyB, req: mxSend(http.MethodPost, mxPath("/api/v1/partner/sell"), sellBody("a-user", "steal")), status: 404, code: "NO_ACCOUNT"},
				{as: pKeyA, req: mxSend(http.MethodPost, mxPath("/api/v1/partner/sell"), sellBody("a-user", "matrix-sell")), status: 200},
			},
		),
		"GET /api/v1/partner/users/:external_user_id": mxCells(
			mxPartnerOnly(partnerState("a-user")),
			[]cell{
				{as: pKeyB, req: partnerState("a-user"), status: 200, check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					var st apiPartnerState
					r.decode(t, &st)
					if st.Exists || st.UserID != 0 || len(st.Positions) != 0 {
						t.Errorf("partner B sees partner A's user: %s", r)
					}
				}},
				{as: pKeyA, req: partnerState("a-user"), status: 200, check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					var st apiPartnerState
					r.decode(t, &st)
					if !st.Exists || len(st.Positions) != 1 {
						t.Errorf("partner A does not see its user: %s", r)
					}
				}},
			},
		),
	}
}

// freshToken logs u in and returns the new token.
func (w *secWorld) freshToken(u apiUser) string { return w.fresh[u.id] }

// TestAccessMatrix sends every route's requests as pAnonymous callers,
// callers with invalid, revoked or other people's credentials, and the
// rightful caller, and checks each answer. The routes come from the app's
// route table: a route without an entry fails the test, so a new route
// cannot be forgotten.
func TestAccessMatrix(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newSecWorld(t, h)
		w.fresh = map[int64]string{}
		r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": w.bob.email, "password": "password-bob"}})
		expect(t, r, http.StatusOK, "")
		var login struct {
			AccessToken string `json:"access_token"`
		}
		r.decode(t, &login)
		w.fresh[w.bob.id] = login.AccessToken
		r = h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": w.hidden.email, "password": "password-hidden"}})
		expect(t, r, http.StatusOK, "")
		r.decode(t, &login)
		w.fresh[w.hidden.id] = login.AccessToken

		matrix := accessMatrix()
		off := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.AdminToken = "" }))
		served := map[string]bool{}
		var routes []string
		for _, rt := range h.app.GetRoutes(true) {
			if rt.Method == http.MethodHead {
				continue
			}
			k := rt.Method + " " + rt.Path
			if !served[k] {
				served[k] = true
				routes = append(routes, k)
			}
		}
		slices.Sort(routes)
		total := 0
		for _, route := range routes {
			method, path, _ := strings.Cut(route, " ")
			cs := matrix[route]
			if strings.HasPrefix(path, "/api/v1/admin/") {
				cs = adminCells(adminRequest(method, path))
				t.Run(route+" is 404 not_found with no admin token configured", func(t *testing.T) {
					for _, tok := range []string{"", adminToken, w.alice.token} {
						r := adminRequest(method, path)(w)
						r.token = tok
						expect(t, off.do(t, r), http.StatusNotFound, "not_found")
						total++
					}
				})
			}
			if len(cs) == 0 {
				t.Errorf("route %s has no entry in the access matrix: say who may call it", route)
				continue
			}
			for _, c := range cs {
				want := fmt.Sprint(c.status)
				if c.status < 0 {
					want = "allowed"
				}
				t.Run(fmt.Sprintf("%s as %s is %s", route, c.as.name, want), func(t *testing.T) {
					r := h.do(t, c.as.set(w, c.req(w)))
					if c.status >= 0 {
						expect(t, r, c.status, c.code)
					}
					if c.check != nil {
						c.check(t, h, w, r)
					}
				})
				total++
			}
		}
		for route := range matrix {
			if !served[route] {
				t.Errorf("the access matrix names %s, which the app does not serve", route)
			}
		}
		t.Logf("access matrix: %d routes, %d cells", len(routes), total)
	})
}

// TestRevokedTokensAreRefused: a token stops working everywhere once its
// owner logs out (the matrix sends one to every user route as well).
func TestRevokedTokensAreRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		u := h.register(t, "leaver")
		h.me(t, u.token)
		expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/logout", token: u.token}), http.StatusOK, "")
		for _, r := range []req{
			{method: http.MethodGet, path: "/api/v1/auth/me"},
			{method: http.MethodGet, path: "/api/v1/notifications/unread"},
			{method: http.MethodPost, path: "/api/v1/markets/1/buy", body: map[string]any{"side": "YES", "amount_kopecks": 100}},
			{method: http.MethodPost, path: "/api/v1/auth/logout"},
		} {
			r.token = u.token
			t.Run(r.method+" "+r.path+" with the logged-out token is 401", func(t *testing.T) {
				if got := h.do(t, r); got.status != http.StatusUnauthorized {
					t.Errorf("got %s", got)
				}
			})
		}
	})
}

// secrets are the plaintext credentials a test created: none of them may
// be stored as given.
type secrets struct {
	password, token, key, chat string
}

func (s secrets) each() map[string]string {
	return map[string]string{"a password": s.password, "an access token": s.token, "a partner key": s.key, "a chat session secret": s.chat}
}

// makeSecrets registers a user, logs in, creates a partner and opens a
// chat session, and returns their plaintexts.
func makeSecrets(t *testing.T, h *harness) secrets {
	t.Helper()
	u := h.register(t, "secretive") // password "password-secretive"
	c := &chatClient{token: u.token}
	h.openChat(t, c)
	return secrets{password: "password-secretive", token: u.token, key: h.createPartner(t, "Secret keeper", 0).Key, chat: c.cookie}
}

// TestSecretsAreStoredAsHashes: passwords (bcrypt), access tokens,
// partner keys and chat secrets (SHA-256) are stored only as hashes. On
// memory the store's whole state is searched, on PostgreSQL every column
// of every table, for each plaintext (as text, and hex-encoded as a
// bytea would show it).
func TestSecretsAreStoredAsHashes(t *testing.T) {
	t.Run("through the store's own methods", func(t *testing.T) {
		eachStore(t, func(t *testing.T, h *harness) {
			s := makeSecrets(t, h)
			ctx := context.Background()
			u, _, err := h.store.UserByToken(ctx, account.HashToken(s.token), time.Now())
			if err != nil {
				t.Fatalf("the token's hash finds no user: %v", err)
			}
			if _, _, err := h.store.UserByToken(ctx, []byte(s.token), time.Now()); err == nil {
				t.Error("the plaintext token is a key of the token table")
			}
			_, hash, err := h.store.UserByEmail(ctx, u.Email)
			if err != nil {
				t.Fatal(err)
			}
			if hash == s.password || bcrypt.CompareHashAndPassword([]byte(hash), []byte(s.password)) != nil {
				t.Errorf("the stored password %q is not a bcrypt hash of the password", hash)
			}
			if _, err := h.store.PartnerByKey(ctx, account.HashToken(s.key)); err != nil {
				t.Errorf("the key's hash finds no partner: %v", err)
			}
			if _, err := h.store.PartnerByKey(ctx, []byte(s.key)); err == nil {
				t.Error("the plaintext partner key is a key of the partner table")
			}
			if _, err := h.store.ChatSessionBySecret(ctx, []byte(s.chat)); err == nil {
				t.Error("the plaintext chat secret is a key of the session table")
			}
		})
	})
	t.Run("in the memory store's whole state", func(t *testing.T) {
		store := memoryStore()
		h := newHarness(t, store)
		s := makeSecrets(t, h)
		for what, plain := range s.each() {
			if path, ok := findString(reflect.ValueOf(store), []string{plain, hex.EncodeToString([]byte(plain))}); ok {
				t.Errorf("%s is stored in plaintext at %s", what, path)
			}
		}
	})
	t.Run("in every column of every PostgreSQL table", func(t *testing.T) {
		if postgresStore == nil {
			t.Skip("no PostgreSQL")
		}
		store := postgresStore(t)
		h := newHarness(t, store)
		s := makeSecrets(t, h)
		db := store.(interface{ DB() *pgxpool.Pool }).DB()
		ctx := context.Background()
		rows, err := db.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		if err != nil {
			t.Fatal(err)
		}
		var tables []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, name)
		}
		if rows.Err() != nil || len(tables) < 10 {
			t.Fatalf("tables %v, %v", tables, rows.Err())
		}
		for _, table := range tables {
			rows, err := db.Query(ctx, fmt.Sprintf(`SELECT t::text FROM %q t`, table))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var row string
				if err := rows.Scan(&row); err != nil {
					t.Fatal(err)
				}
				for what, plain := range s.each() {
					if strings.Contains(row, plain) || strings.Contains(row, hex.EncodeToString([]byte(plain))) {
						t.Errorf("%s is stored in plaintext in table %s: %s", what, table, row)
					}
				}
			}
			rows.Close()
		}
	})
}

// findString walks v (pointers, maps, slices, structs, unexported fields
// included) and reports the first string or byte slice that contains one
// of needles.
func findString(v reflect.Value, needles []string) (string, bool) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value, path string) (string, bool)
	contains := func(s string) bool {
		for _, n := range needles {
			if strings.Contains(s, n) {
				return true
			}
		}
		return false
	}
	walk = func(v reflect.Value, path string) (string, bool) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return "", false
			}
			if v.Kind() == reflect.Pointer {
				if seen[v.Pointer()] {
					return "", false
				}
				seen[v.Pointer()] = true
			}
			return walk(v.Elem(), path)
		case reflect.String:
			if contains(v.String()) {
				return path, true
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				b := make([]byte, v.Len())
				for i := range b {
					b[i] = byte(v.Index(i).Uint())
				}
				if contains(string(b)) {
					return path, true
				}
				return "", false
			}
			for i := range v.Len() {
				if p, ok := walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); ok {
					return p, true
				}
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				if p, ok := walk(it.Key(), path+"{key}"); ok {
					return p, true
				}
				if p, ok := walk(it.Value(), path+"{value}"); ok {
					return p, true
				}
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if p, ok := walk(v.Field(i), path+"."+v.Type().Field(i).Name); ok {
					return p, true
				}
			}
		}
		return "", false
	}
	return walk(v, "store")
}

// clock is a settable clock for the rate limits.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// expectLimited checks a 429 rate_limited answer with its Retry-After.
func expectLimited(t *testing.T, r *response, retryAfter string) {
	t.Helper()
	expect(t, r, http.StatusTooManyRequests, "rate_limited")
	if got := r.header.Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After %q, want %q", got, retryAfter)
	}
}

func TestRateLimits(t *testing.T) {
	limited := func(t *testing.T, clk *clock, f func(*server.Config)) *harness {
		return newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
			c.Now = clk.Now
			c.TrustedProxies = []string{"0.0.0.0"} // app.Test's peer: X-Forwarded-For names the client
			f(c)
		}))
	}
	from := func(ip string, r req) req {
		r.header = map[string]string{"X-Forwarded-For": ip}
		return r
	}
	login := func(email string) req {
		return req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": "password-x"}}
	}

	t.Run("login: the fourth attempt of a client in a minute of 3/m is 429, other clients are not, and a token comes back every 20 s", func(t *testing.T) {
		clk := newClock()
		h := limited(t, clk, func(c *server.Config) { c.RateLogin = server.Rate{N: 3, Per: time.Minute} })
		for range 3 {
			expect(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), http.StatusUnauthorized, "invalid_credentials")
		}
		expectLimited(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), "20")
		clk.advance(5 * time.Second)
		expectLimited(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), "15")
		expect(t, h.do(t, from("203.0.113.8", login("nobody@test.predictkit"))), http.StatusUnauthorized, "invalid_credentials")
		// Registration has a budget of its own.
		r := h.do(t, from("203.0.113.7", req{method: http.MethodPost, path: "/api/v1/auth/register",
			body: map[string]any{"email": "limited@test.predictkit", "password": "password-limited", "name": "L"}}))
		expect(t, r, http.StatusCreated, "")
		clk.advance(15 * time.Second)
		expect(t, h.do(t, from("203.0.113.7", login("limited@test.predictkit"))), http.StatusUnauthorized, "invalid_credentials")
		expectLimited(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), "20")
		clk.advance(time.Minute)
		for range 3 {
			expect(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), http.StatusUnauthorized, "invalid_credentials")
		}
	})

	t.Run("trading: a user past 2/m gets 429 and nothing changes, another user trades, an unauthenticated trade is 401", func(t *testing.T) {
		clk := newClock()
		h := limited(t, clk, func(c *server.Config) { c.RateTrade = server.Rate{N: 2, Per: time.Minute} })
		w := newWorld(t, h)
		h.buy(t, w.alice.token, w.a1.ID, "YES", 1_000)
		h.buy(t, w.alice.token, w.a1.ID, "YES", 1_000)
		before := h.me(t, w.alice.token)
		buy := req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: w.alice.token, body: map[string]any{"side": "YES", "amount_kopecks": 1_000}}
		expectLimited(t, h.do(t, buy), "30")
		sell := req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/sell", w.a1.ID), token: w.alice.token, body: map[string]any{"side": "YES", "shares": 10}}
		expectLimited(t, h.do(t, sell), "30")
		if after := h.me(t, w.alice.token); after.Balance != before.Balance || after.Positions[0].Amount != before.Positions[0].Amount {
			t.Errorf("a refused trade changed Alice's account: %+v → %+v", before, after)
		}
		h.buy(t, w.bob.token, w.a1.ID, "YES", 1_000)
		anon := buy
		anon.token = ""
		expect(t, h.do(t, anon), http.StatusUnauthorized, "unauthorized")
		clk.advance(30 * time.Second)
		h.sell(t, w.alice.token, w.a1.ID, "YES", 10)
		expectLimited(t, h.do(t, buy), "30")
	})

	t.Run("partners: a partner past 3/m gets 429 on every partner route, another partner does not, a bad key is 401", func(t *testing.T) {
		clk := newClock()
		h := limited(t, clk, func(c *server.Config) { c.RatePartner = server.Rate{N: 3, Per: time.Minute} })
		w := newWorld(t, h)
		a, b := h.createPartner(t, "A", 1_000_000), h.createPartner(t, "B", 1_000_000)
		bet := func(key, id string) req {
			return betReq(key, map[string]any{"external_user_id": "u", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 1_000, "client_bet_id": id})
		}
		expect(t, h.do(t, bet(a.Key, "1")), http.StatusOK, "")
		expect(t, h.do(t, bet(a.Key, "1")), http.StatusOK, "") // a replay counts too
		h.partnerState(t, a.Key, "u")
		expectLimited(t, h.do(t, bet(a.Key, "2")), "20")
		expectLimited(t, h.do(t, partnerReq(http.MethodGet, statePath("u"), a.Key, nil)), "20")
		expectLimited(t, h.do(t, sellReq(a.Key, map[string]any{"external_user_id": "u", "market_id": w.a1.ID, "side": "yes", "shares": 10, "client_bet_id": "3"})), "20")
		expect(t, h.do(t, bet(b.Key, "1")), http.StatusOK, "")
		expect(t, h.do(t, bet("pk_wrong", "1")), http.StatusUnauthorized, "UNAUTHORIZED")
		clk.advance(20 * time.Second)
		expect(t, h.do(t, bet(a.Key, "2")), http.StatusOK, "")
	})

	t.Run("off: a limit of off lets any number through", func(t *testing.T) {
		h := limited(t, newClock(), func(c *server.Config) { c.RateLogin, c.LoginFailuresPerAccount = server.Rate{}, 0 })
		for range 50 {
			expect(t, h.do(t, login("nobody@test.predictkit")), http.StatusUnauthorized, "invalid_credentials")
		}
	})
}

// TestClientAddress: the rate limit's key is the client's address. Behind
// a trusted proxy it is the rightmost X-Forwarded-For hop that is not a
// trusted proxy; from any other peer the header is ignored.
func TestClientAddress(t *testing.T) {
	login := func(xff string) req {
		r := req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": "nobody@test.predictkit", "password": "password-x"}}
		if xff != "" {
			r.header = map[string]string{"X-Forwarded-For": xff}
		}
		return r
	}
	build := func(t *testing.T, trusted ...string) *harness {
		return newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
			c.RateLogin = server.Rate{N: 1, Per: time.Hour}
			c.TrustedProxies = trusted
		}))
	}
	t.Run("from an untrusted peer a varying X-Forwarded-For does not buy a fresh budget", func(t *testing.T) {
		h := build(t, "10.0.0.0/8") // app.Test's peer, 0.0.0.0, is not a proxy
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "")
		expect(t, h.do(t, login("198.51.100.2")), http.StatusTooManyRequests, "rate_limited")
		expect(t, h.do(t, login("")), http.StatusTooManyRequests, "rate_limited")
	})
	t.Run("with no trusted proxy configured X-Forwarded-For is ignored", func(t *testing.T) {
		h := build(t)
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "")
		expect(t, h.do(t, login("198.51.100.2")), http.StatusTooManyRequests, "rate_limited")
	})
	t.Run("behind a trusted proxy each client has its own budget", func(t *testing.T) {
		h := build(t, "0.0.0.0", "10.0.0.0/8")
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "")
		expect(t, h.do(t, login("198.51.100.2")), http.StatusUnauthorized, "")
		expect(t, h.do(t, login("198.51.100.1")), http.StatusTooManyRequests, "rate_limited")
	})
	t.Run("behind a trusted proxy what the client prepends is not believed", func(t *testing.T) {
		h := build(t, "0.0.0.0", "10.0.0.0/8")
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "")
		for _, spoof := range []string{"1.1.1.1, 198.51.100.1", "garbage, 198.51.100.1", "198.51.100.9, 198.51.100.1, 10.0.0.5", "2.2.2.2,198.51.100.1:4711"} {
			expect(t, h.do(t, login(spoof)), http.StatusTooManyRequests, "rate_limited")
		}
	})
}

// rawCall sends a request through app.Test without the OpenAPI check
// (for CORS preflights, which the document does not describe).
func rawCall(t *testing.T, h *harness, method, path string, header map[string]string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	res, err := h.app.Test(r, -1)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestCORS(t *testing.T) {
	preflight := map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}
	t.Run("off by default: a preflight gets no Access-Control-Allow-Origin, nor does a simple request", func(t *testing.T) {
		h := newHarness(t, memoryStore())
		res := rawCall(t, h, http.MethodOptions, "/api/v1/auth/login", preflight)
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != "" || res.StatusCode < 400 {
			t.Errorf("preflight answered %d with Access-Control-Allow-Origin %q", res.StatusCode, got)
		}
		res = rawCall(t, h, http.MethodGet, "/api/v1/events", map[string]string{"Origin": "https://app.example.com"})
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin %q", got)
		}
	})
	t.Run("configured: a listed origin's preflight is allowed with credentials, an unlisted one's is not", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.CORSOrigins = []string{"https://app.example.com"} }))
		res := rawCall(t, h, http.MethodOptions, "/api/v1/auth/login", preflight)
		if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			res.Header.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Authorization") ||
			!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") {
			t.Errorf("preflight answered %d %v", res.StatusCode, res.Header)
		}
		other := map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
		res = rawCall(t, h, http.MethodOptions, "/api/v1/auth/login", other)
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("an unlisted origin was allowed: %q", got)
		}
		res = rawCall(t, h, http.MethodGet, "/api/v1/events", map[string]string{"Origin": "https://app.example.com"})
		if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
			t.Errorf("a simple request answered %d %v", res.StatusCode, res.Header)
		}
	})
	t.Run("* allows any origin, without credentials", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.CORSOrigins = []string{"*"} }))
		res := rawCall(t, h, http.MethodOptions, "/api/v1/events", preflight)
		if res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("preflight answered %d %v", res.StatusCode, res.Header)
		}
	})
	t.Run("malformed origins are refused at start", func(t *testing.T) {
		for _, origins := range [][]string{{"app.example.com"}, {"https://app.example.com/path"}, {"*", "https://app.example.com"}, {"ftp://x.example"}} {
			cfg := testConfig(memoryStore())
			cfg.CORSOrigins = origins
			if err := cfg.Validate(); err == nil {
				t.Errorf("origins %q were accepted", origins)
			}
		}
	})
}

func TestSecurityHeaders(t *testing.T) {
	h := newHarness(t, memoryStore())
	w := newWorld(t, h)
	base := map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"}
	cases := []struct {
		name string
		r    req
		// private: an answer to a request with credentials must not be
		// cached.
		private bool
	}{
		{"a public read", req{method: http.MethodGet, path: "/api/v1/events"}, false},
		{"a probe", req{method: http.MethodGet, path: "/healthz"}, false},
		{"the metrics", req{method: http.MethodGet, path: "/metrics"}, false},
		{"the API document", req{method: http.MethodGet, path: "/api/v1/openapi.json"}, false},
		{"an authenticated read", req{method: http.MethodGet, path: "/api/v1/auth/me", token: w.alice.token}, true},
		{"an authenticated trade", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: w.alice.token, body: map[string]any{"side": "YES", "amount_kopecks": 1000}}, true},
		{"a partner call", partnerReq(http.MethodGet, statePath("x"), "pk_unknown", nil), true},
		{"an error", req{method: http.MethodGet, path: "/api/v1/pools/987654"}, true},
		{"an unknown route", req{method: http.MethodGet, path: "/api/v1/nothing"}, true},
		{"a wrong method", req{method: http.MethodDelete, path: "/api/v1/events"}, true},
		{"a refused encoding", req{method: http.MethodGet, path: "/api/v1/events", header: map[string]string{"Content-Encoding": "gzip"}}, true},
	}
	for _, c := range cases {
		t.Run(c.name+" carries the security headers", func(t *testing.T) {
			r := h.do(t, c.r)
			for k, v := range base {
				if got := r.header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if got := r.header.Get("Content-Security-Policy"); got != server.APIContentSecurityPolicy {
				t.Errorf("Content-Security-Policy %q", got)
			}
			if got := r.header.Get("Strict-Transport-Security"); got != "" {
				t.Errorf("HSTS %q without HTTPS", got)
			}
			if c.private && r.header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q on a private answer", r.header.Get("Cache-Control"))
			}
		})
	}
	t.Run("the docs page sets a policy of its own", func(t *testing.T) {
		r := h.do(t, req{method: http.MethodGet, path: "/docs"})
		if r.status == 200 && r.header.Get("Content-Security-Policy") == server.APIContentSecurityPolicy {
			t.Errorf("the docs page got the API's policy, which blocks its scripts")
		}
		if r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("headers %v", r.header)
		}
	})
	t.Run("with cookie-secure every answer carries Strict-Transport-Security", func(t *testing.T) {
		hs := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.CookieSecure = true }))
		for _, r := range []req{{method: http.MethodGet, path: "/healthz"}, {method: http.MethodGet, path: "/api/v1/nothing"}} {
			if got := hs.do(t, r).header.Get("Strict-Transport-Security"); !strings.HasPrefix(got, "max-age=") {
				t.Errorf("%s: HSTS %q", r.path, got)
			}
		}
	})
	t.Run("answers Fiber makes before any middleware (413) carry them too", func(t *testing.T) {
		hl, _ := startServer(t, testConfig(memoryStore()))
		r := rawPost(t, hl, "/api/v1/auth/register", "Content-Length: "+fmt.Sprint(server.BodyLimit+1)+"\r\n", func(w io.Writer) { _, _ = io.WriteString(w, "{") })
		expect(t, r, http.StatusRequestEntityTooLarge, "request_too_large")
		for k, v := range base {
			if got := r.header.Get(k); got != v {
				t.Errorf("%s: %q, want %q", k, got, v)
			}
		}
	})
}
