package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/server"
)

// TestRequestLimits: encoded bodies, unknown routes and methods are
// refused with the documented codes, and nothing changes. (Oversized
// bodies are refused before any handler runs, which app.Test cannot
// observe: see TestServerLifecycle.)
func TestRequestLimits(t *testing.T) {
	h := newHarness(t, memoryStore())
	w := newWorld(t, h)
	before := takeSnapshot(t, h, w)
	buyPath := fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID)

	cases := []struct {
		name   string
		req    req
		status int
		code   string
	}{
		{"a gzip-encoded body is 415 unsupported_content_encoding", req{method: "POST", path: buyPath, token: w.alice.token,
			body: `{"side":"YES","amount_kopecks":100}`, header: map[string]string{"Content-Encoding": "gzip"}}, 415, "unsupported_content_encoding"},
		{"an identity Content-Encoding is 415 too", req{method: "POST", path: "/api/v1/auth/login",
			body: `{"email":"a@b.co","password":"password1"}`, header: map[string]string{"Content-Encoding": "identity"}}, 415, "unsupported_content_encoding"},
		{"a Content-Encoding on a GET is 415", req{method: "GET", path: "/api/v1/market/trades/latest", header: map[string]string{"Content-Encoding": "br"}}, 415, "unsupported_content_encoding"},
		{"an unknown path is 404 not_found", req{method: "GET", path: "/api/v1/nothing/here"}, 404, "not_found"},
		{"a file outside the API is 404 not_found", req{method: "GET", path: "/favicon.ico"}, 404, "not_found"},
		{"a path in another case is 404 not_found", req{method: "GET", path: "/API/V1/EVENTS"}, 404, "not_found"},
		{"a known path with another method is 405 method_not_allowed", req{method: "DELETE", path: "/api/v1/auth/me", token: w.alice.token}, 405, "method_not_allowed"},
		{"a GET on a POST-only path is 405 method_not_allowed", req{method: "GET", path: buyPath}, 405, "method_not_allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expect(t, h.do(t, c.req), c.status, c.code) })
	}
	t.Run("a body of exactly 1 MiB is read (and refused for what it says)", func(t *testing.T) {
		body := `{"side":"YES","amount_kopecks":100,"pad":"` // unknown field: 400 from the decoder, not 413
		body += strings.Repeat("x", server.BodyLimit-len(body)-2) + `"}`
		expect(t, h.do(t, req{method: "POST", path: buyPath, token: w.alice.token, body: body}), 400, "invalid_request")
	})
	t.Run("nothing the refused requests said changed anything", func(t *testing.T) {
		before.same(t, takeSnapshot(t, h, w))
	})
}

func TestRequestIDs(t *testing.T) {
	h := newHarness(t, memoryStore())
	cases := []struct {
		name, sent string
		echoed     bool
	}{
		{"a well-formed client id is echoed", "req-123_abc.DEF", true},
		{"an id with spaces is replaced", "two words", false},
		{"an id over 64 characters is replaced", strings.Repeat("a", 65), false},
		{"no id gets a fresh one", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.sent != "" {
				hdr["X-Request-ID"] = c.sent
			}
			r := h.do(t, req{method: "GET", path: "/healthz", header: hdr})
			got := r.header.Get("X-Request-ID")
			if c.echoed != (got == c.sent) || got == "" {
				t.Errorf("sent %q, got %q", c.sent, got)
			}
		})
	}
}

// TestPanicsAreContained: a handler that panics answers 500 and the
// server keeps serving.
func TestPanicsAreContained(t *testing.T) {
	boom := fx.Provide(fx.Annotate(func() []server.Route {
		return []server.Route{{Method: "GET", Path: "/boom", Handler: func(*fiber.Ctx) error { panic("kaboom") }}}
	}, fx.ResultTags(`group:"routes,flatten"`)))
	h := newHarness(t, memoryStore(), withFx(boom))
	r, err := h.app.Test(mustRequest(t, "GET", "/boom"), -1)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	r.Body.Close()
	if r.StatusCode != 500 || body.Error != "internal_error" {
		t.Errorf("a panic answered %d %q, want 500 internal_error", r.StatusCode, body.Error)
	}
	expect(t, h.do(t, req{method: "GET", path: "/healthz"}), 200, "")
}

func mustRequest(t *testing.T, method, path string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestServiceEndpoints(t *testing.T) {
	h := newHarness(t, memoryStore())
	t.Run("healthz and readyz answer ok", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz"} {
			r := h.do(t, req{method: "GET", path: p})
			expect(t, r, 200, "")
			if !bytes.Equal(r.body, []byte(`{"status":"ok"}`)) {
				t.Errorf("%s answered %s", p, r)
			}
		}
	})
	t.Run("the API document is served as JSON and lists every path", func(t *testing.T) {
		r := h.do(t, req{method: "GET", path: "/api/v1/openapi.json"})
		expect(t, r, 200, "")
		var d struct {
			OpenAPI string         `json:"openapi"`
			Paths   map[string]any `json:"paths"`
		}
		r.decode(t, &d)
		doc, _ := openAPI(t)
		if !strings.HasPrefix(d.OpenAPI, "3.0") || len(d.Paths) != doc.Paths.Len() {
			t.Errorf("served document: openapi %q with %d paths, want %d", d.OpenAPI, len(d.Paths), doc.Paths.Len())
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("content type %q", ct)
		}
	})
	t.Run("metrics count requests by route template and status", func(t *testing.T) {
		h.do(t, req{method: "GET", path: "/api/v1/pools/987654"})
		r := h.do(t, req{method: "GET", path: "/metrics"})
		expect(t, r, 200, "")
		want := `predictkit_http_requests_total{method="GET",route="/api/v1/pools/:id",status="404"} 1`
		if !strings.Contains(string(r.body), want) {
			t.Errorf("metrics lack %s:\n%s", want, r.body)
		}
	})
}
