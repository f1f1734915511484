package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/web"
)

// testApp is a small web app of known files, so that the serving tests
// do not depend on what the real app holds.
var testApp = fstest.MapFS{
	"index.html":             {Data: []byte(`<!doctype html><link rel="stylesheet" href="/assets/app.css"><script type="module" src="/assets/app.js"></script><main id="app"></main>`)},
	"assets/app.js":          {Data: []byte(strings.Repeat("import { h } from './dom.js';\nexport const title = 'predictkit';\n", 30))},
	"assets/app.css":         {Data: []byte(strings.Repeat("body { margin: 0; color: #222 }\n", 30))},
	"assets/admin/admin.js":  {Data: []byte("export function mount() {}\n")},
	"assets/img/logo.svg":    {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
	"assets/unknown.kind":    {Data: []byte("?")},
	"not-under-assets.js":    {Data: []byte("never served")},
	"assets/fonts/x.woff2":   {Data: []byte{0x77, 0x4f, 0x46, 0x32}},
	"assets/i18n/ru.json":    {Data: []byte(`{"hello":"привет"}`)},
	"assets/dom.js":          {Data: []byte("export function h() {}\n")},
	"assets/nested/deep.css": {Data: []byte("a{}")},
}

// webHarness serves testApp.
func webHarness(t *testing.T, opts ...harnessOption) *harness {
	t.Helper()
	opts = append(opts, withFx(fx.Decorate(func() (*web.Site, error) { return web.Load(testApp) })))
	return newHarness(t, memoryStore(), opts...)
}

// fetch sends one request through app.Test, without the harness's
// OpenAPI check (the app's client routes are not in the document), and
// reads the answer as it came: not decompressed.
func fetch(t *testing.T, h *harness, method, path string, header map[string]string) *response {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	res, err := h.app.Test(r, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: b}
}

func TestWebAppServing(t *testing.T) {
	h := webHarness(t)
	page := testApp["index.html"].Data
	const (
		html     = "text/html; charset=utf-8"
		js       = "text/javascript; charset=utf-8"
		css      = "text/css; charset=utf-8"
		jsonType = "application/json"
	)
	cases := []struct {
		name, method, path string
		status             int
		contentType        string
		// body, when set, is what the answer must be; code, the error.
		body []byte
		code string
	}{
		{"/ is the page", http.MethodGet, "/", 200, html, page, ""},
		{"a deep link (/events/1) is the page", http.MethodGet, "/events/1", 200, html, page, ""},
		{"a client route with a trailing slash is the page", http.MethodGet, "/profile/", 200, html, page, ""},
		{"a client route that only begins like a meta path is the page", http.MethodGet, "/docsearch", 200, html, page, ""},
		{"HEAD of a deep link is the page's head", http.MethodHead, "/events/1", 200, html, []byte{}, ""},
		{"HEAD of / is the page's head", http.MethodHead, "/", 200, html, []byte{}, ""},
		{"an unknown API path is the API's 404 JSON, not the page", http.MethodGet, "/api/v1/nope", 404, jsonType, nil, "not_found"},
		{"/api itself is the API's", http.MethodGet, "/api", 404, jsonType, nil, "not_found"},
		{"an API path in capitals is the API's 404, not the page", http.MethodGet, "/API/v1/nope", 404, jsonType, nil, "not_found"},
		{"a path under a probe is 404, not the page", http.MethodGet, "/healthz/deeper", 404, jsonType, nil, "not_found"},
		{"a path under /docs that is no file is 404, not the page", http.MethodGet, "/docs/a/b", 404, jsonType, nil, "not_found"},
		{"a missing file outside the assets is 404, not the page", http.MethodGet, "/favicon.ico", 404, jsonType, nil, "not_found"},
		{"a file of the app outside assets/ is not served", http.MethodGet, "/not-under-assets.js", 404, jsonType, nil, "not_found"},
		{"a POST to a client route is 404, not the page", http.MethodPost, "/events/1", 404, jsonType, nil, "not_found"},
		{"a POST to / is 405", http.MethodPost, "/", 405, jsonType, nil, "method_not_allowed"},
		{"a known API route with another method stays 405", http.MethodGet, "/api/v1/auth/logout", 405, jsonType, nil, "method_not_allowed"},
		{"the module is JavaScript", http.MethodGet, "/assets/app.js", 200, js, testApp["assets/app.js"].Data, ""},
		{"the style sheet is CSS", http.MethodGet, "/assets/app.css", 200, css, testApp["assets/app.css"].Data, ""},
		{"a nested module is served", http.MethodGet, "/assets/admin/admin.js", 200, js, testApp["assets/admin/admin.js"].Data, ""},
		{"an SVG image is SVG", http.MethodGet, "/assets/img/logo.svg", 200, "image/svg+xml", testApp["assets/img/logo.svg"].Data, ""},
		{"a font is a font", http.MethodGet, "/assets/fonts/x.woff2", 200, "font/woff2", testApp["assets/fonts/x.woff2"].Data, ""},
		{"JSON is JSON", http.MethodGet, "/assets/i18n/ru.json", 200, "application/json", testApp["assets/i18n/ru.json"].Data, ""},
		{"an unknown kind of file is an octet stream", http.MethodGet, "/assets/unknown.kind", 200, "application/octet-stream", []byte("?"), ""},
		{"HEAD of an asset is its head", http.MethodHead, "/assets/app.css", 200, css, []byte{}, ""},
		{"an unknown asset is the API's 404 JSON", http.MethodGet, "/assets/nope.js", 404, jsonType, nil, "not_found"},
		{"an unknown asset without an extension is 404, not the page", http.MethodGet, "/assets/nope", 404, jsonType, nil, "not_found"},
		{"the assets directory itself is 404", http.MethodGet, "/assets/", 404, jsonType, nil, "not_found"},
		{"an asset's name in another case is 404", http.MethodGet, "/assets/APP.js", 404, jsonType, nil, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fetch(t, h, c.method, c.path, nil)
			if r.status != c.status {
				t.Fatalf("got %s, want %d", r, c.status)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, c.contentType) {
				t.Errorf("Content-Type %q, want %q", ct, c.contentType)
			}
			if c.body != nil && !bytes.Equal(r.body, c.body) {
				t.Errorf("body %q, want %q", r.body, c.body)
			}
			if c.code != "" && r.errorCode() != c.code {
				t.Errorf("error %q, want %q", r.errorCode(), c.code)
			}
			if r.header.Get("X-Frame-Options") != "DENY" || r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("X-Request-ID") == "" {
				t.Errorf("headers %v", r.header)
			}
			wantCSP := server.APIContentSecurityPolicy
			if strings.HasPrefix(c.path, "/docs/") {
				wantCSP = "" // the reference's paths set their own policy, and are left without one otherwise
			}
			if c.status == 200 {
				wantCSP = web.ContentSecurityPolicy
				if r.header.Get("Cache-Control") != "no-cache" || !strings.HasPrefix(r.header.Get("ETag"), `W/"`) {
					t.Errorf("Cache-Control %q, ETag %q", r.header.Get("Cache-Control"), r.header.Get("ETag"))
				}
			}
			if csp := r.header.Get("Content-Security-Policy"); csp != wantCSP {
				t.Errorf("CSP %q, want %q", csp, wantCSP)
			}
		})
	}
	t.Run("the page and an asset answer as the OpenAPI document says", func(t *testing.T) {
		expect(t, h.do(t, req{method: http.MethodGet, path: "/"}), http.StatusOK, "")
		expect(t, h.do(t, req{method: http.MethodGet, path: "/assets/app.js"}), http.StatusOK, "")
		expect(t, h.do(t, req{method: http.MethodGet, path: "/assets/app.css", header: map[string]string{"Accept-Encoding": "gzip"}}), http.StatusOK, "")
		expect(t, h.do(t, req{method: http.MethodGet, path: "/assets/nope.js"}), http.StatusNotFound, "not_found")
	})
	t.Run("the app's policy allows this server only, and no inline script or style", func(t *testing.T) {
		p := web.ContentSecurityPolicy
		for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
			"font-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(p, d+";") && !strings.HasSuffix(p, d) {
				t.Errorf("the policy lacks %s", d)
			}
		}
		if strings.Contains(p, "unsafe") || strings.Contains(p, "http") || strings.Contains(p, "*") {
			t.Errorf("the policy allows more than this server: %s", p)
		}
	})
	t.Run("the API keeps its own policy", func(t *testing.T) {
		for _, p := range []string{"/api/v1/events", "/healthz", "/api/v1/openapi.json"} {
			if csp := fetch(t, h, http.MethodGet, p, nil).header.Get("Content-Security-Policy"); csp != server.APIContentSecurityPolicy {
				t.Errorf("%s: CSP %q", p, csp)
			}
		}
	})
	t.Run("the page is no-cache even for a request with cookies, as it is the same for everyone", func(t *testing.T) {
		r := fetch(t, h, http.MethodGet, "/events/1", map[string]string{"Cookie": "theme=dark"})
		if cc := r.header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("Cache-Control %q", cc)
		}
	})
}

func TestWebAppRevalidation(t *testing.T) {
	h := webHarness(t)
	etag := fetch(t, h, http.MethodGet, "/assets/app.js", nil).header.Get("ETag")
	pageTag := fetch(t, h, http.MethodGet, "/", nil).header.Get("ETag")
	if etag == "" || pageTag == "" || etag == pageTag {
		t.Fatalf("ETags %q and %q", etag, pageTag)
	}
	cases := []struct {
		name, path, ifNoneMatch string
		status                  int
	}{
		{"the asset's own ETag is 304", "/assets/app.js", etag, 304},
		{"its ETag without W/ is 304 (If-None-Match compares weakly)", "/assets/app.js", strings.TrimPrefix(etag, "W/"), 304},
		{"a list that holds its ETag is 304", "/assets/app.js", `"other", ` + etag, 304},
		{"* is 304", "/assets/app.js", "*", 304},
		{"another file's ETag is 200", "/assets/app.js", pageTag, 200},
		{"the page's ETag revalidates a deep link", "/events/7", pageTag, 304},
		{"a stale ETag is 200", "/", `W/"stale"`, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fetch(t, h, http.MethodGet, c.path, map[string]string{"If-None-Match": c.ifNoneMatch})
			if r.status != c.status {
				t.Fatalf("got %d, want %d", r.status, c.status)
			}
			if c.status == 304 && (len(r.body) != 0 || r.header.Get("ETag") == "" || r.header.Get("Content-Security-Policy") != web.ContentSecurityPolicy) {
				t.Errorf("304 with %d bytes, headers %v", len(r.body), r.header)
			}
		})
	}
}

func TestWebAppCompression(t *testing.T) {
	h := webHarness(t)
	plain := testApp["assets/app.js"].Data
	cases := []struct {
		name, accept, encoding string
	}{
		{"a client that takes gzip gets gzip", "gzip", "gzip"},
		{"a browser that takes Brotli gets Brotli", "gzip, deflate, br, zstd", "br"},
		{"a client that refuses Brotli gets gzip", "br;q=0, gzip", "gzip"},
		{"a client that says nothing gets the plain file", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			header := map[string]string{}
			if c.accept != "" {
				header["Accept-Encoding"] = c.accept
			}
			r := fetch(t, h, http.MethodGet, "/assets/app.js", header)
			expect(t, r, http.StatusOK, "")
			if got := r.header.Get("Content-Encoding"); got != c.encoding {
				t.Fatalf("Content-Encoding %q, want %q", got, c.encoding)
			}
			if !strings.Contains(r.header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("Vary %q", r.header.Get("Vary"))
			}
			var got []byte
			switch c.encoding {
			case "gzip":
				zr, err := gzip.NewReader(bytes.NewReader(r.body))
				if err != nil {
					t.Fatal(err)
				}
				got, _ = io.ReadAll(zr)
			case "br":
				got, _ = io.ReadAll(brotli.NewReader(bytes.NewReader(r.body)))
			default:
				got = r.body
			}
			if !bytes.Equal(got, plain) {
				t.Error("the answer does not decode to the file")
			}
			if c.encoding != "" && len(r.body) >= len(plain) {
				t.Errorf("%d bytes compressed, %d plain", len(r.body), len(plain))
			}
		})
	}
	t.Run("the API's answers are not compressed", func(t *testing.T) {
		r := fetch(t, h, http.MethodGet, "/api/v1/openapi.json", map[string]string{"Accept-Encoding": "gzip, br"})
		if r.header.Get("Content-Encoding") != "" || !json.Valid(r.body) {
			t.Errorf("Content-Encoding %q", r.header.Get("Content-Encoding"))
		}
	})
}

func TestWebAppSetting(t *testing.T) {
	t.Run("with PREDICTKIT_WEB=false the app's paths are 404, as before the app", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.Web = false }))
		for _, p := range []string{"/", "/events/1", "/assets/app.js"} {
			r := fetch(t, h, http.MethodGet, p, nil)
			if r.status != http.StatusNotFound || r.errorCode() != "not_found" || r.header.Get("Content-Security-Policy") != server.APIContentSecurityPolicy {
				t.Errorf("%s: got %s", p, r)
			}
		}
		expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/events"}), http.StatusOK, "")
	})
	t.Run("the setting is read from the environment and is on by default", func(t *testing.T) {
		if !server.DefaultConfig().Web {
			t.Error("the app is off by default")
		}
		c, err := server.ConfigFromEnv()
		if err != nil || !c.Web {
			t.Fatalf("%v, %v", c.Web, err)
		}
		t.Setenv("PREDICTKIT_WEB", "false")
		if c, err := server.ConfigFromEnv(); err != nil || c.Web {
			t.Errorf("PREDICTKIT_WEB=false: %v, %v", c.Web, err)
		}
		t.Setenv("PREDICTKIT_WEB", "maybe")
		if _, err := server.ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "PREDICTKIT_WEB") {
			t.Errorf("PREDICTKIT_WEB=maybe: %v", err)
		}
	})
}

// TestEmbeddedWebApp serves the app this binary embeds: the page at /
// and at a deep link, and every one of its files under /assets/ with its
// type.
func TestEmbeddedWebApp(t *testing.T) {
	site, err := web.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, memoryStore())
	for _, p := range []string{"/", "/events/1", "/admin"} {
		r := fetch(t, h, http.MethodGet, p, nil)
		if r.status != 200 || !bytes.Equal(r.body, site.File(web.Index).Body) {
			t.Errorf("%s: got %d, not the embedded page", p, r.status)
		}
	}
	for _, name := range site.Names() {
		if name == web.Index {
			continue
		}
		f := site.File(name)
		r := fetch(t, h, http.MethodGet, "/"+name, nil)
		if r.status != 200 || r.header.Get("Content-Type") != f.ContentType || !bytes.Equal(r.body, f.Body) {
			t.Errorf("/%s: %d %q", name, r.status, r.header.Get("Content-Type"))
		}
	}
}
