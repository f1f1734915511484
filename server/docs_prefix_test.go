package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// behindPrefix serves the running server at base under /prefix/ through a
// reverse proxy that strips the prefix, as an operator's proxy would, and
// answers 404 for anything outside the prefix. It returns the proxy's URL.
func behindPrefix(t *testing.T, base string) string {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: base}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.URL.Path = strings.TrimPrefix(r.In.URL.Path, "/prefix")
		r.Out.URL.RawPath = ""
	}}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/prefix/") {
			http.NotFound(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL
}

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestDocsBehindPathPrefix loads /docs through a reverse proxy that serves
// the app under /prefix/ and follows every URL the page refers to, as a
// browser would resolve it: all of them must stay under the prefix and be
// found there, the OpenAPI document included.
func TestDocsBehindPathPrefix(t *testing.T) {
	h, _ := startServer(t, testConfig(memoryStore()))
	front := behindPrefix(t, h.base)
	attr := regexp.MustCompile(`(?:src|href)="([^"]*)"`)
	for _, page := range []string{"/prefix/docs", "/prefix/docs/", "/prefix/docs/index.html"} {
		t.Run("the page at "+page+" loads every script, style and the document from under the prefix", func(t *testing.T) {
			pageURL, _ := url.Parse(front + page)
			resp, body := get(t, pageURL.String())
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("GET %s: %d %s", page, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			refs := attr.FindAllStringSubmatch(body, -1)
			if len(refs) < 5 {
				t.Fatalf("the page refers to only %d URLs", len(refs))
			}
			var sawDocument bool
			for _, m := range refs {
				if m[1] == "data:," {
					continue
				}
				ref, err := url.Parse(m[1])
				if err != nil {
					t.Errorf("%q: %v", m[1], err)
					continue
				}
				u := pageURL.ResolveReference(ref)
				if !strings.HasPrefix(u.Path, "/prefix/") {
					t.Errorf("%q resolves to %s, outside the prefix", m[1], u.Path)
					continue
				}
				r, b := get(t, u.String())
				if r.StatusCode != http.StatusOK || len(b) == 0 {
					t.Errorf("%q resolves to %s, which answers %d", m[1], u.Path, r.StatusCode)
				}
				if u.Path == "/prefix/api/v1/openapi.json" {
					sawDocument = true
					if !strings.Contains(b, `"openapi"`) {
						t.Errorf("%s is not the OpenAPI document", u.Path)
					}
				}
			}
			if !sawDocument {
				t.Errorf("the page links no /prefix/api/v1/openapi.json")
			}
		})
	}
	t.Run("the page's script names no absolute path of its own", func(t *testing.T) {
		resp, body := get(t, front+"/prefix/docs/docs.js")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("docs.js: %d", resp.StatusCode)
		}
		if m := regexp.MustCompile(`["'](/[a-z][^"']*)["']`).FindString(body); m != "" {
			t.Errorf("docs.js refers to %s, which misses the prefix", m)
		}
	})
}
