package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// The CORS setting of these tests: a pattern, which lets any host under
// example.com call the API without credentials, and one origin listed
// exactly, which may send them.
var (
	patternOrigins = []string{"https://*.example.com"}
	mixedOrigins   = []string{"https://*.example.com", "https://app.example.com"}
)

func withCORS(origins []string) harnessOption {
	return withConfig(func(c *server.Config) { c.CORSOrigins = origins })
}

// TestCookiesOnlyFromTheServersOriginAndListedOrigins: with
// PREDICTKIT_CORS_ORIGINS='https://*.example.com', a page on any host
// under example.com (the same site, so the SameSite=Strict cookie goes
// along) could read a signed-in visitor's profile. The cookie now counts
// only from the server's own origin and from origins listed exactly.
func TestCookiesOnlyFromTheServersOriginAndListedOrigins(t *testing.T) {
	for _, origins := range [][]string{patternOrigins, mixedOrigins} {
		t.Run("with CORS origins "+strings.Join(origins, ","), func(t *testing.T) {
			h := newHarness(t, memoryStore(), withCORS(origins))
			w := newWorld(t, h)
			alice := h.openSession(t, w.alice.email, "password-alice")
			me := func(b browser) *response { return h.do(t, b.req(http.MethodGet, "/api/v1/auth/me", nil)) }

			for _, origin := range []string{"https://evil.example.com", "https://EVIL.example.com:443", "http://evil.example.com", "https://example.org", "null"} {
				t.Run("GET /auth/me with the cookie from "+origin+" is 403 cross_origin_request, without credentials", func(t *testing.T) {
					r := me(fromOrigin(alice, origin))
					expect(t, r, http.StatusForbidden, "cross_origin_request")
					if got := r.header.Get("Access-Control-Allow-Credentials"); got != "" {
						t.Errorf("Access-Control-Allow-Credentials %q", got)
					}
					if strings.Contains(string(r.body), w.alice.email) {
						t.Errorf("the answer shows Alice's profile: %s", r.body)
					}
				})
			}
			t.Run("HEAD and other GETs with the cookie from a host the pattern allows are 403 too", func(t *testing.T) {
				b := browser{alice, map[string]string{"Origin": "https://evil.example.com", "Sec-Fetch-Site": "same-site"}}
				for _, path := range []string{"/api/v1/users/me/trades", "/api/v1/notifications", "/api/v1/events", "/api/v1/auth/api-keys"} {
					expect(t, h.do(t, b.req(http.MethodGet, path, nil)), http.StatusForbidden, "cross_origin_request")
				}
				if r := rawCall(t, h, http.MethodHead, "/api/v1/auth/me", map[string]string{"Cookie": server.SessionCookie + "=" + alice, "Origin": "https://evil.example.com"}); r.StatusCode != http.StatusForbidden {
					t.Errorf("HEAD answered %d", r.StatusCode)
				}
			})
			t.Run("a preflight from a host the pattern allows gets no credentials", func(t *testing.T) {
				res := rawCall(t, h, http.MethodOptions, "/api/v1/auth/me", map[string]string{"Origin": "https://evil.example.com", "Access-Control-Request-Method": "GET"})
				if res.Header.Get("Access-Control-Allow-Origin") != "https://evil.example.com" || res.Header.Get("Access-Control-Allow-Credentials") != "" {
					t.Errorf("preflight answered %d %v", res.StatusCode, res.Header)
				}
			})
			t.Run("a Bearer token without the cookie from a host the pattern allows reads, without credentials", func(t *testing.T) {
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: w.alice.token, header: map[string]string{"Origin": "https://evil.example.com"}})
				expect(t, r, http.StatusOK, "")
				if r.header.Get("Access-Control-Allow-Origin") != "https://evil.example.com" || r.header.Get("Access-Control-Allow-Credentials") != "" {
					t.Errorf("CORS headers %v", r.header)
				}
			})
			t.Run("the cookie from the server's own origin reads", func(t *testing.T) {
				for _, b := range []browser{fromOrigin(alice, "http://example.com"), fromApp(alice), {cookie: alice}} {
					expect(t, me(b), http.StatusOK, "")
				}
			})
			t.Run("a refused GET changed nothing: the cookie still works", func(t *testing.T) {
				expect(t, me(fromApp(alice)), http.StatusOK, "")
			})
		})
	}

	t.Run("the cookie from an origin listed exactly reads, with credentials", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withCORS(mixedOrigins))
		w := newWorld(t, h)
		alice := h.openSession(t, w.alice.email, "password-alice")
		for _, origin := range []string{"https://app.example.com", "https://App.Example.com"} {
			r := h.do(t, fromOrigin(alice, origin).req(http.MethodGet, "/api/v1/auth/me", nil))
			expect(t, r, http.StatusOK, "")
			if !strings.Contains(string(r.body), fmt.Sprintf(`"id":%d`, w.alice.id)) {
				t.Errorf("from %s: not Alice's profile: %s", origin, r.body)
			}
			if r.header.Get("Access-Control-Allow-Credentials") != "true" || !strings.EqualFold(r.header.Get("Access-Control-Allow-Origin"), "https://app.example.com") {
				t.Errorf("from %s: CORS headers %v", origin, r.header)
			}
		}
		res := rawCall(t, h, http.MethodOptions, "/api/v1/auth/me", map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"})
		if res.Header.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("the listed origin's preflight answered %v", res.Header)
		}
	})
	t.Run("without CORS, the cookie from another origin is 403 on a GET too", func(t *testing.T) {
		h := newHarness(t, memoryStore())
		w := newWorld(t, h)
		alice := h.openSession(t, w.alice.email, "password-alice")
		expect(t, h.do(t, fromOrigin(alice, "https://sibling.example.com").req(http.MethodGet, "/api/v1/auth/me", nil)), http.StatusForbidden, "cross_origin_request")
	})
	t.Run("behind a trusted proxy the forwarded scheme and host are the server's origin", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withCORS(patternOrigins), withConfig(func(c *server.Config) { c.TrustedProxies = []string{"0.0.0.0/0"} }))
		w := newWorld(t, h)
		alice := h.openSession(t, w.alice.email, "password-alice")
		b := fromOrigin(alice, "https://api.example.com")
		b.header["X-Forwarded-Proto"] = "https"
		b.header["X-Forwarded-Host"] = "api.example.com"
		expect(t, h.do(t, b.req(http.MethodGet, "/api/v1/auth/me", nil)), http.StatusOK, "")
	})
	t.Run("the support chat's cookie from a host the pattern allows is 403 too", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withCORS(patternOrigins))
		c := &chatClient{}
		h.openChat(t, c)
		h.chatSend(t, c, "my card number is 1234")
		rq := c.req(http.MethodGet, "/api/v1/chat/history", nil)
		rq.header["Origin"] = "https://evil.example.com"
		r := h.do(t, rq)
		expect(t, r, http.StatusForbidden, "cross_origin_request")
		if strings.Contains(string(r.body), "1234") {
			t.Errorf("the answer shows the chat: %s", r.body)
		}
		rq.header["Origin"] = "http://example.com"
		expect(t, h.do(t, rq), http.StatusOK, "")
	})
}

// TestStreamMeOnlyFromTheServersOriginAndListedOrigins: an EventSource
// with credentials from a host a CORS pattern allows sends the cookie
// and its Origin; the me topic is then refused, never streamed.
func TestStreamMeOnlyFromTheServersOriginAndListedOrigins(t *testing.T) {
	h := streamHarness(t, memoryStore(), func(c *server.Config) { c.CORSOrigins = mixedOrigins })
	w := newWorld(t, h)
	alice := h.openSession(t, w.alice.email, "password-alice")
	cookie := server.SessionCookie + "=" + alice

	t.Run("a stream of me with the cookie from a host the pattern allows is 403 cross_origin_request", func(t *testing.T) {
		for _, topics := range []string{"me", fmt.Sprintf("me,market:%d", w.a1.ID), fmt.Sprintf("market:%d", w.a1.ID)} {
			c, res := tryStream(t, h, "topics="+topics, map[string]string{"Cookie": cookie, "Origin": "https://evil.example.com"})
			if c != nil {
				t.Fatalf("topics=%s: the stream opened", topics)
			}
			expect(t, res, http.StatusForbidden, "cross_origin_request")
			if res.header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("topics=%s: Access-Control-Allow-Credentials %q", topics, res.header.Get("Access-Control-Allow-Credentials"))
			}
		}
	})
	t.Run("a ticket cannot be had with the cookie from there either", func(t *testing.T) {
		expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/stream/tickets",
			header: map[string]string{"Cookie": cookie, "Origin": "https://evil.example.com"}}), http.StatusForbidden, "cross_origin_request")
	})
	for _, from := range []struct{ name, origin string }{{"the server's own origin", "http://" + h.base}, {"the origin listed exactly", "https://app.example.com"}} {
		t.Run("a stream of me with the cookie from "+from.name+" carries the user's balance", func(t *testing.T) {
			c := openStream(t, h, "topics=me", map[string]string{"Cookie": cookie, "Origin": from.origin})
			h.credit(t, w.alice.id, 100, false)
			if m := c.message(t); m.event != "balance" || !strings.Contains(m.data, fmt.Sprintf(`"user_id":%d`, w.alice.id)) {
				t.Fatalf("got %v, want alice's balance", m)
			}
		})
	}
}
