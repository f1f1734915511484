package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

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
