package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

func TestDocsPage(t *testing.T) {
	h := newHarness(t, memoryStore())
	t.Run("GET /docs is an HTML page with its own self-only Content-Security-Policy", func(t *testing.T) {
		r := h.do(t, req{method: http.MethodGet, path: "/docs"})
		expect(t, r, http.StatusOK, "")
		if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("content type %q", ct)
		}
		if csp := r.header.Get("Content-Security-Policy"); csp != server.DocsCSP {
			t.Errorf("CSP %q, want %q", csp, server.DocsCSP)
		}
		for _, directive := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(server.DocsCSP, directive) {
				t.Errorf("the docs CSP lacks %s", directive)
			}
		}
		if strings.Contains(server.DocsCSP, "unsafe") || strings.Contains(server.DocsCSP, "http") {
			t.Errorf("the docs CSP allows more than this server's files: %s", server.DocsCSP)
		}
		body := string(r.body)
		for _, want := range []string{`src="docs/swagger-ui-bundle.js"`, `src="docs/docs.js"`, `href="docs/swagger-ui.css"`, `href="api/v1/openapi.json"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the page lacks %s", want)
			}
		}
		// Nothing is loaded from elsewhere, and nothing from an absolute
		// path (which a proxy's path prefix would miss): every src and href
		// is relative to the page.
		for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			if u := m[1]; (strings.HasPrefix(u, "/") || strings.Contains(u, ":")) && u != "data:," {
				t.Errorf("the page refers to %q, which is not relative to the page", u)
			}
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, "style=") {
			t.Error("the page has inline script or style, which its CSP forbids")
		}
	})
	t.Run("the API's strict CSP stays on the API", func(t *testing.T) {
		r := h.do(t, req{method: http.MethodGet, path: "/healthz"})
		if csp := r.header.Get("Content-Security-Policy"); csp == server.DocsCSP {
			t.Errorf("/healthz has the docs' CSP")
		}
	})
	t.Run("the assets are served with types and the same CSP", func(t *testing.T) {
		for file, ct := range map[string]string{
			"swagger-ui-bundle.js":             "text/javascript; charset=utf-8",
			"docs.js":                          "text/javascript; charset=utf-8",
			"swagger-ui.css":                   "text/css; charset=utf-8",
			"docs.css":                         "text/css; charset=utf-8",
			"swagger-ui-LICENSE.txt":           "text/plain; charset=utf-8",
			"swagger-ui-bundle.js.LICENSE.txt": "text/plain; charset=utf-8",
			"index.html":                       "text/html; charset=utf-8",
		} {
			r := h.do(t, req{method: http.MethodGet, path: "/docs/" + file})
			expect(t, r, http.StatusOK, "")
			if got := r.header.Get("Content-Type"); got != ct {
				t.Errorf("%s: content type %q, want %q", file, got, ct)
			}
			if r.header.Get("Content-Security-Policy") != server.DocsCSP || r.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s: headers %v", file, r.header)
			}
			if len(r.body) == 0 {
				t.Errorf("%s is empty", file)
			}
		}
	})
	t.Run("the bundle is gzipped for clients that take it", func(t *testing.T) {
		plain := h.do(t, req{method: http.MethodGet, path: "/docs/swagger-ui-bundle.js"})
		r := h.do(t, req{method: http.MethodGet, path: "/docs/swagger-ui-bundle.js", header: map[string]string{"Accept-Encoding": "gzip"}})
		expect(t, r, http.StatusOK, "")
		if r.header.Get("Content-Encoding") != "gzip" || len(r.body) >= len(plain.body)/2 {
			t.Fatalf("Content-Encoding %q, %d bytes against %d plain", r.header.Get("Content-Encoding"), len(r.body), len(plain.body))
		}
		zr, err := gzip.NewReader(bytes.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(zr)
		if !bytes.Equal(got, plain.body) {
			t.Error("the gzipped bundle is not the bundle")
		}
	})
	t.Run("a known ETag is answered 304", func(t *testing.T) {
		r := h.do(t, req{method: http.MethodGet, path: "/docs/swagger-ui.css"})
		etag := r.header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		expect(t, h.do(t, req{method: http.MethodGet, path: "/docs/swagger-ui.css", header: map[string]string{"If-None-Match": etag}}), http.StatusNotModified, "")
		expect(t, h.do(t, req{method: http.MethodGet, path: "/docs", header: map[string]string{"If-None-Match": etag}}), http.StatusOK, "")
	})
	t.Run("an unknown file is 404 not_found", func(t *testing.T) {
		for _, f := range []string{"nope.js", "README.md", "..%2Fopenapi.yaml"} {
			expect(t, h.do(t, req{method: http.MethodGet, path: "/docs/" + f}), http.StatusNotFound, "not_found")
		}
	})
}

// chromium is the path of a Chromium or Chrome binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestDocsPageInChromium loads /docs in headless Chromium from a running
// server and checks that Swagger UI rendered every operation of the
// OpenAPI document, and that the page broke none of its own
// Content-Security-Policy (so it loaded nothing from outside the server).
// It skips without Chromium, unless PREDICTKIT_REQUIRE_CHROMIUM=1.
func TestDocsPageInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		if os.Getenv("PREDICTKIT_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("PREDICTKIT_REQUIRE_CHROMIUM=1 but no chromium is installed (apt-get install chromium)")
		}
		t.Skip("no chromium: install it (apt-get install chromium) to load /docs in a browser; PREDICTKIT_REQUIRE_CHROMIUM=1 makes this a failure")
	}
	h, _ := startServer(t, testConfig(memoryStore()))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=10000", "--dump-dom", "http://"+h.base+"/docs")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(stderr.String(), 4000))
	}
	dom := stdout.String()

	t.Run("every operation of the document is listed", func(t *testing.T) {
		d, _ := openAPI(t)
		n := 0
		for path, item := range d.Paths.Map() {
			if !strings.Contains(dom, `data-path="`+path+`"`) {
				t.Errorf("the page does not list %s", path)
			}
			for _, op := range item.Operations() {
				n++
				id := `id="operations-` + op.Tags[0] + `-` + op.OperationID + `"`
				if !strings.Contains(dom, id) {
					t.Errorf("the page does not list operation %s (%s)", op.OperationID, id)
				}
			}
		}
		if n < 50 {
			t.Errorf("only %d operations in the document", n)
		}
	})
	t.Run("known operations show their path and summary", func(t *testing.T) {
		for _, want := range []string{`data-path="/api/v1/partner/sell"`, `data-path="/api/v1/pools/{id}"`,
			"Log in with e-mail and password", "predictkit"} {
			if !strings.Contains(dom, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
	})
	t.Run("the page broke none of its Content-Security-Policy", func(t *testing.T) {
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(line, "Content Security Policy") || strings.Contains(line, "Refused to") {
				t.Errorf("CSP violation: %s", line)
			}
		}
	})
	if t.Failed() {
		t.Logf("DOM (end):\n%s\nchromium log (end):\n%s", tail(dom, 3000), tail(stderr.String(), 3000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
