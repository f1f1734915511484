package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

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
	// aliceKey is a personal API key of Alice's (read and trade), for
	// the MCP endpoint, which takes nothing else.
	aliceKey string
}

func newSecWorld(t *testing.T, h *harness) *secWorld {
	t.Helper()
	w := &secWorld{world: newWorld(t, h), other: h.register(t, "other-creator"), hidden: h.register(t, "hidden")}
	h.makeCreator(t, w.other.id)
	h.makeStatsViewer(t, w.other.id) // the statistics' one allowed user
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
	w.aliceKey = h.createKey(t, w.alice.token, "Matrix agent", "read", "trade").Key
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

// statsCells: no credential, a made-up or revoked token 401; a user who
// is no stats viewer 403; a stats viewer (the other creator) and the
// admin token 200.
func statsCells(r func(w *secWorld) req) []cell {
	return []cell{
		{as: pAnonymous, req: r, status: http.StatusUnauthorized, code: "unauthorized"},
		{as: pGarbageToken, req: r, status: http.StatusUnauthorized, code: "unauthorized"},
		{as: pRevokedToken, req: r, status: http.StatusUnauthorized, code: "unauthorized"},
		{as: pWrongAdmin, req: r, status: http.StatusUnauthorized, code: "unauthorized"},
		{as: pAlice, req: r, status: http.StatusForbidden, code: "forbidden"},
		{as: pCreator, req: r, status: http.StatusForbidden, code: "forbidden"},
		{as: pOtherCreator, req: r, status: http.StatusOK},
		{as: pAdminAsUser, req: r, status: http.StatusOK},
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
