package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/server"
)

// sessionCookieOf sends the session cookie holding tok, with
// Sec-Fetch-Site site (as a browser would, for a page of the server's
// origin "same-origin", for another site's "cross-site").
func sessionCookieOf(name, site string, tok func(w *secWorld) string) principal {
	return principal{name, func(w *secWorld, r req) req {
		r.header = map[string]string{"Cookie": server.SessionCookie + "=" + tok(w), "Sec-Fetch-Site": site}
		return r
	}}
}

// sessionOf checks an answer of POST /auth/session: the profile of the
// user id names, and the cookie.
func sessionOf(id func(w *secWorld) int64) func(t *testing.T, h *harness, w *secWorld, r *response) {
	return func(t *testing.T, _ *harness, w *secWorld, r *response) {
		t.Helper()
		var out struct {
			User apiProfile `json:"user"`
		}
		r.decode(t, &out)
		if out.User.ID != id(w) {
			t.Errorf("the session is user %d's, want %d's", out.User.ID, id(w))
		}
		if sessionCookie(t, r).Value == "" {
			t.Error("the cookie is empty")
		}
	}
}

// sessionCookie is the predictkit_session cookie an answer sets.
func sessionCookie(t *testing.T, r *response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == server.SessionCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", server.SessionCookie, r.header)
	return nil
}

// setsNoSession fails when the answer sets the session cookie.
func setsNoSession(t *testing.T, r *response) {
	t.Helper()
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == server.SessionCookie {
			t.Errorf("the answer set the cookie: %v", c)
		}
	}
}

// browser is how the tests' browser sends a request: with the session
// cookie, and the headers a browser adds (none when empty).
type browser struct {
	cookie string
	header map[string]string
}

// fromApp is a page of the server's origin; fromOrigin sends only an
// Origin header (an older browser); fromSite another site's page.
func fromApp(cookie string) browser {
	return browser{cookie, map[string]string{"Sec-Fetch-Site": "same-origin"}}
}
func fromSite(cookie string) browser {
	return browser{cookie, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}}
}
func fromOrigin(cookie, origin string) browser {
	return browser{cookie, map[string]string{"Origin": origin}}
}

func (b browser) req(method, path string, body any) req {
	hd := map[string]string{}
	for k, v := range b.header {
		hd[k] = v
	}
	if b.cookie != "" {
		hd["Cookie"] = server.SessionCookie + "=" + b.cookie
	}
	return req{method: method, path: path, body: body, header: hd}
}

// openSession logs in through POST /auth/session and returns the
// cookie's token.
func (h *harness) openSession(t *testing.T, email, password string) string {
	t.Helper()
	r := h.do(t, fromApp("").req(http.MethodPost, "/api/v1/auth/session", map[string]any{"email": email, "password": password}))
	expect(t, r, http.StatusOK, "")
	return sessionCookie(t, r).Value
}

func TestCookieSession(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		me := func(b browser) *response { return h.do(t, b.req(http.MethodGet, "/api/v1/auth/me", nil)) }
		meID := func(r *response) int64 {
			var out struct {
				User apiProfile `json:"user"`
			}
			r.decode(t, &out)
			return out.User.ID
		}

		t.Run("logging in sets an HttpOnly SameSite=Strict cookie on /api/ for a token's lifetime, and shows no token", func(t *testing.T) {
			r := h.do(t, fromApp("").req(http.MethodPost, "/api/v1/auth/session", map[string]any{"email": w.alice.email, "password": "password-alice"}))
			expect(t, r, http.StatusOK, "")
			c := sessionCookie(t, r)
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/api/" || c.Secure {
				t.Errorf("cookie %v: want HttpOnly, SameSite=Strict, Path=/api/, not Secure without cookie-secure", c)
			}
			if want := int(account.DefaultTokenTTL / time.Second); c.MaxAge != want {
				t.Errorf("Max-Age %d, want the token lifetime %d", c.MaxAge, want)
			}
			if strings.Contains(string(r.body), c.Value) || strings.Contains(string(r.body), "access_token") {
				t.Errorf("the answer shows the token: %s", r.body)
			}
			if meID(r) != w.alice.id {
				t.Errorf("the answer is not Alice's profile: %s", r.body)
			}
			if got := meID(me(browser{cookie: c.Value})); got != w.alice.id {
				t.Errorf("GET /auth/me with the cookie is user %d", got)
			}
		})

		alice := h.openSession(t, w.alice.email, "password-alice")
		bob := h.openSession(t, w.bob.email, "password-bob")

		t.Run("GET /auth/me with the cookie alone is the cookie's user", func(t *testing.T) {
			r := me(browser{cookie: alice})
			expect(t, r, http.StatusOK, "")
			if meID(r) != w.alice.id {
				t.Errorf("got %s", r)
			}
			if r.header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q on an answer to a request with a cookie", r.header.Get("Cache-Control"))
			}
		})
		t.Run("a Bearer token wins over the cookie", func(t *testing.T) {
			rq := browser{cookie: alice}.req(http.MethodGet, "/api/v1/auth/me", nil)
			rq.token = w.bob.token
			if got := meID(h.do(t, rq)); got != w.bob.id {
				t.Errorf("the cookie won: user %d", got)
			}
		})
		t.Run("an Authorization header that is not a Bearer token is no credential, cookie or not", func(t *testing.T) {
			rq := browser{cookie: alice, header: map[string]string{"Authorization": "Basic YWxpY2U6cGFzc3dvcmQ="}}.req(http.MethodGet, "/api/v1/auth/me", nil)
			expect(t, h.do(t, rq), http.StatusUnauthorized, "UNAUTHORIZED")
		})
		t.Run("a made-up or revoked cookie is 401, and reads anonymously where a token is optional", func(t *testing.T) {
			expect(t, me(browser{cookie: "made-up"}), http.StatusUnauthorized, "UNAUTHORIZED")
			expect(t, h.do(t, browser{cookie: "made-up"}.req(http.MethodGet, fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.alice.id), nil)), http.StatusOK, "")
		})

		buy := func(b browser) *response {
			return h.do(t, b.req(http.MethodPost, fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), map[string]any{"side": "YES", "amount_kopecks": 1_000}))
		}
		refusals := []struct {
			name string
			b    browser
		}{
			{"another site's page (Sec-Fetch-Site: cross-site)", fromSite(alice)},
			{"a sibling site's page (Sec-Fetch-Site: same-site)", browser{alice, map[string]string{"Sec-Fetch-Site": "same-site"}}},
			{"Sec-Fetch-Site same-site with our Origin (the fetch metadata decides)", browser{alice, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://example.com"}}},
			{"an older browser on another origin (Origin only)", fromOrigin(alice, "https://evil.example")},
			{"an older browser on our host over another scheme", fromOrigin(alice, "https://example.com")},
			{"an opaque origin (Origin: null)", fromOrigin(alice, "null")},
			{"a request that says nothing of where it comes from", browser{cookie: alice}},
		}
		for _, c := range refusals {
			t.Run("a POST with the cookie from "+c.name+" is 403 cross_origin_request and changes nothing", func(t *testing.T) {
				before := h.me(t, w.alice.token)
				expect(t, buy(c.b), http.StatusForbidden, "cross_origin_request")
				if after := h.me(t, w.alice.token); after.Balance != before.Balance || len(after.Positions) != len(before.Positions) {
					t.Errorf("balance %d → %d, positions %d → %d", before.Balance, after.Balance, len(before.Positions), len(after.Positions))
				}
			})
		}
		t.Run("a PATCH, a DELETE and other POSTs with the cookie from another site are refused too", func(t *testing.T) {
			expect(t, h.do(t, fromSite(alice).req(http.MethodPatch, "/api/v1/auth/me", map[string]any{"name": "Mallory"})), http.StatusForbidden, "cross_origin_request")
			if got := h.me(t, w.alice.token).Name; got != "alice" {
				t.Errorf("Alice is named %q", got)
			}
			expect(t, h.do(t, fromSite(alice).req(http.MethodPost, "/api/v1/auth/logout", nil)), http.StatusForbidden, "cross_origin_request")
			expect(t, h.do(t, fromSite(alice).req(http.MethodDelete, "/api/v1/auth/api-keys/1", nil)), http.StatusForbidden, "cross_origin_request")
			expect(t, me(browser{cookie: alice}), http.StatusOK, "")
		})
		t.Run("a GET with the cookie from another site's page is 403 cross_origin_request too", func(t *testing.T) {
			expect(t, me(fromSite(alice)), http.StatusForbidden, "cross_origin_request")
		})
		t.Run("a Bearer token from another site is not the cookie's business", func(t *testing.T) {
			rq := fromSite("").req(http.MethodPost, fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), map[string]any{"side": "YES", "amount_kopecks": 1_000})
			rq.token = w.bob.token
			expect(t, h.do(t, rq), http.StatusOK, "")
		})

		accepted := []struct {
			name string
			b    browser
		}{
			{"the app's page (Sec-Fetch-Site: same-origin)", fromApp(bob)},
			{"an older browser on the app's origin (Origin only)", fromOrigin(bob, "http://example.com")},
			{"an Origin that differs only in case and default port", fromOrigin(bob, "HTTP://Example.com:80")},
		}
		for _, c := range accepted {
			t.Run("a POST with the cookie from "+c.name+" trades", func(t *testing.T) {
				before := h.me(t, w.bob.token).Balance
				r := buy(c.b)
				expect(t, r, http.StatusOK, "")
				var tr apiTrade
				r.decode(t, &tr)
				if tr.Balance != before-1_000 {
					t.Errorf("Bob's balance %d after a buy of 1000 from %d", tr.Balance, before)
				}
			})
		}

		t.Run("a personal API key never becomes a cookie", func(t *testing.T) {
			k := h.createKey(t, w.bob.token, "bot", "read", "trade")
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/session", token: k.Key})
			expect(t, r, http.StatusForbidden, "insufficient_scope")
			setsNoSession(t, r)
			expect(t, me(browser{cookie: k.Key}), http.StatusUnauthorized, "UNAUTHORIZED")
			expect(t, buy(fromApp(k.Key)), http.StatusUnauthorized, "unauthorized")
		})
		t.Run("a token moves into the cookie, and the answer shows none", func(t *testing.T) {
			u := h.register(t, "mover")
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/session", token: u.token})
			expect(t, r, http.StatusOK, "")
			if c := sessionCookie(t, r); c.Value != u.token {
				t.Errorf("the cookie holds another token")
			}
			if strings.Contains(string(r.body), u.token) {
				t.Error("the answer shows the token")
			}
		})
		t.Run("a token and a body at once is 400 invalid_request and sets nothing", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/session", token: w.bob.token, body: map[string]any{"email": w.alice.email, "password": "password-alice"}})
			expect(t, r, http.StatusBadRequest, "invalid_request")
			setsNoSession(t, r)
		})
		t.Run("a malformed body is 400 invalid_request and sets nothing", func(t *testing.T) {
			for _, body := range []any{"", "{", `{"email":"a@b.co"}`, `{"email":"a@b.co","password":"x","extra":1}`, `[]`} {
				r := h.do(t, fromApp("").req(http.MethodPost, "/api/v1/auth/session", body))
				expect(t, r, http.StatusBadRequest, "invalid_request")
				setsNoSession(t, r)
			}
		})
		t.Run("a wrong password is 401 invalid_credentials and keeps the cookie's session", func(t *testing.T) {
			r := h.do(t, fromApp(alice).req(http.MethodPost, "/api/v1/auth/session", map[string]any{"email": w.alice.email, "password": "wrong password"}))
			expect(t, r, http.StatusUnauthorized, "invalid_credentials")
			setsNoSession(t, r)
			expect(t, me(browser{cookie: alice}), http.StatusOK, "")
		})
		t.Run("another site cannot open a session, with a password or a token", func(t *testing.T) {
			for _, b := range []browser{fromSite(""), fromOrigin("", "https://evil.example"), {"", map[string]string{"Sec-Fetch-Site": "same-site"}}} {
				r := h.do(t, b.req(http.MethodPost, "/api/v1/auth/session", map[string]any{"email": w.bob.email, "password": "password-bob"}))
				expect(t, r, http.StatusForbidden, "cross_origin_request")
				setsNoSession(t, r)
				rq := b.req(http.MethodPost, "/api/v1/auth/session", nil)
				rq.token = w.bob.token
				r = h.do(t, rq)
				expect(t, r, http.StatusForbidden, "cross_origin_request")
				setsNoSession(t, r)
			}
		})
		t.Run("a second login in the same browser revokes the token the cookie held", func(t *testing.T) {
			first := h.openSession(t, w.bob.email, "password-bob")
			r := h.do(t, fromApp(first).req(http.MethodPost, "/api/v1/auth/session", map[string]any{"email": w.alice.email, "password": "password-alice"}))
			expect(t, r, http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: first}), http.StatusUnauthorized, "UNAUTHORIZED")
			if got := meID(me(browser{cookie: sessionCookie(t, r).Value})); got != w.alice.id {
				t.Errorf("the new cookie is user %d's", got)
			}
		})

		t.Run("DELETE /auth/session from another site is 403 and revokes nothing", func(t *testing.T) {
			r := h.do(t, fromSite(alice).req(http.MethodDelete, "/api/v1/auth/session", nil))
			expect(t, r, http.StatusForbidden, "cross_origin_request")
			setsNoSession(t, r)
			expect(t, me(browser{cookie: alice}), http.StatusOK, "")
		})
		t.Run("DELETE /auth/session revokes the cookie's token on the server and clears the cookie", func(t *testing.T) {
			tok := h.openSession(t, w.alice.email, "password-alice")
			r := h.do(t, fromApp(tok).req(http.MethodDelete, "/api/v1/auth/session", nil))
			expect(t, r, http.StatusNoContent, "")
			if c := sessionCookie(t, r); c.Value != "" || c.Path != "/api/" || c.Expires.After(time.Now()) {
				t.Errorf("the answer does not clear the cookie: %v", c)
			}
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: tok}), http.StatusUnauthorized, "UNAUTHORIZED")
			expect(t, me(browser{cookie: tok}), http.StatusUnauthorized, "UNAUTHORIZED")
			h.me(t, w.alice.token) // her other tokens still work
		})
		t.Run("DELETE /auth/session without a cookie, or with a stale one, is 204 too", func(t *testing.T) {
			expect(t, h.do(t, fromApp("").req(http.MethodDelete, "/api/v1/auth/session", nil)), http.StatusNoContent, "")
			expect(t, h.do(t, fromApp("made-up").req(http.MethodDelete, "/api/v1/auth/session", nil)), http.StatusNoContent, "")
		})
		t.Run("logging out with the cookie revokes its token and clears the cookie", func(t *testing.T) {
			tok := h.openSession(t, w.bob.email, "password-bob")
			r := h.do(t, fromApp(tok).req(http.MethodPost, "/api/v1/auth/logout", nil))
			expect(t, r, http.StatusOK, "")
			if c := sessionCookie(t, r); c.Value != "" {
				t.Errorf("the cookie is not cleared: %v", c)
			}
			expect(t, me(browser{cookie: tok}), http.StatusUnauthorized, "UNAUTHORIZED")
		})
		t.Run("changing the password with the cookie keeps the cookie's token", func(t *testing.T) {
			u := h.register(t, "changer")
			tok := h.openSession(t, u.email, "password-changer")
			r := h.do(t, fromApp(tok).req(http.MethodPost, "/api/v1/auth/password", map[string]any{"current_password": "password-changer", "new_password": "a new password"}))
			expect(t, r, http.StatusOK, "")
			expect(t, me(browser{cookie: tok}), http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: u.token}), http.StatusUnauthorized, "UNAUTHORIZED")
		})
	})
}

func TestCookieSessionSettings(t *testing.T) {
	t.Run("with cookie-secure the cookie is Secure", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.CookieSecure = true }))
		u := h.register(t, "secure")
		r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/session", token: u.token})
		expect(t, r, http.StatusOK, "")
		if !sessionCookie(t, r).Secure {
			t.Error("the cookie is not Secure")
		}
		r = h.do(t, fromApp(u.token).req(http.MethodDelete, "/api/v1/auth/session", nil))
		if c := sessionCookie(t, r); !c.Secure {
			t.Errorf("the clearing cookie is not Secure: %v", c)
		}
	})
	t.Run("the cookie lasts as long as the configured token lifetime", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.TokenTTL = 2 * time.Hour }))
		u := h.register(t, "brief")
		r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/session", token: u.token})
		if c := sessionCookie(t, r); c.MaxAge != 7200 {
			t.Errorf("Max-Age %d, want 7200", c.MaxAge)
		}
	})
	t.Run("the public URL's origin is the server's own", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.PublicURL = "https://app.example.org" }))
		u := h.register(t, "public")
		rq := func(origin string) req {
			return fromOrigin(u.token, origin).req(http.MethodPatch, "/api/v1/auth/me", map[string]any{"name": "Renamed"})
		}
		expect(t, h.do(t, rq("https://app.example.org")), http.StatusOK, "")
		expect(t, h.do(t, rq("https://other.example.org")), http.StatusForbidden, "cross_origin_request")
	})
	t.Run("behind a trusted proxy, X-Forwarded-Proto and X-Forwarded-Host say the origin; from anyone else they do not", func(t *testing.T) {
		// app.Test's connections come from 0.0.0.0.
		for _, c := range []struct {
			name    string
			proxies []string
			status  int
		}{{"trusted", []string{"0.0.0.0"}, http.StatusOK}, {"not trusted", nil, http.StatusForbidden}} {
			h := newHarness(t, memoryStore(), withConfig(func(cfg *server.Config) { cfg.TrustedProxies = c.proxies }))
			u := h.register(t, "proxied")
			rq := fromOrigin(u.token, "https://app.example.net").req(http.MethodPatch, "/api/v1/auth/me", map[string]any{"name": "Renamed"})
			rq.header["X-Forwarded-Proto"] = "https"
			rq.header["X-Forwarded-Host"] = "app.example.net"
			if r := h.do(t, rq); r.status != c.status {
				t.Errorf("%s proxy: got %s, want %d", c.name, r, c.status)
			}
		}
	})
	t.Run("opening sessions is rate limited per client address, apart from login", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.RateLogin = server.Rate{N: 2, Per: time.Hour} }))
		u := h.register(t, "limited") // spends registration's budget, not the session's
		body := map[string]any{"email": u.email, "password": "wrong password"}
		for range 2 {
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/session", body: body}), http.StatusUnauthorized, "invalid_credentials")
		}
		r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/session", body: map[string]any{"email": u.email, "password": "password-limited"}})
		expect(t, r, http.StatusTooManyRequests, "rate_limited")
		setsNoSession(t, r)
		expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": u.email, "password": "password-limited"}}), http.StatusOK, "")
	})
}

// TestStreamMeWithTheSessionCookie: the app's EventSource sends the
// cookie, which opens the me topic without a ticket.
func TestStreamMeWithTheSessionCookie(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h = streamHarness(t, h.store)
		w := newWorld(t, h)
		tok := h.openSession(t, w.bob.email, "password-bob")
		c := openStream(t, h, "topics=me", map[string]string{"Cookie": server.SessionCookie + "=" + tok})
		h.credit(t, w.alice.id, 100, false)
		h.credit(t, w.bob.id, 100, false)
		if m := c.message(t); m.event != "balance" || !strings.Contains(m.data, fmt.Sprintf(`"user_id":%d`, w.bob.id)) {
			t.Fatalf("got %v, want Bob's balance", m)
		}
		_, res := tryStream(t, h, "topics=me", map[string]string{"Cookie": server.SessionCookie + "=made-up"})
		if res == nil {
			t.Fatal("a made-up cookie opened me")
		}
		expect(t, res, http.StatusUnauthorized, "unauthorized")
	})
}
