package web_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"

	"github.com/predictkit/predictkit/web"
)

// pageBudget is the most the first load of the app may weigh, compressed
// as served with gzip: the page and everything it loads, transitively
// (see TestFirstLoadFitsTheBudget).
const pageBudget = 200_000

func TestEncodingNegotiation(t *testing.T) {
	site, err := web.Load(fstest.MapFS{
		"index.html":    {Data: []byte("<!doctype html>")},
		"assets/app.js": {Data: []byte(strings.Repeat("export const x = 'predictkit';\n", 50))},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := site.File("assets/app.js")
	cases := []struct {
		name, accept, want string
	}{
		{"a browser that takes Brotli gets Brotli", "gzip, deflate, br, zstd", "br"},
		{"a client that takes only gzip gets gzip", "gzip", "gzip"},
		{"names are compared without regard to case", "GZIP", "gzip"},
		{"a quality above zero still accepts", "gzip;q=0.5", "gzip"},
		{"q=0 refuses Brotli, and gzip is next", "br;q=0, gzip", "gzip"},
		{"a star accepts both", "*", "br"},
		{"a star with q=0 refuses what is not named", "gzip, *;q=0", "gzip"},
		{"no header gets the plain file", "", ""},
		{"identity only gets the plain file", "identity", ""},
		{"a malformed quality refuses", "br;q=x, gzip;q=", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, enc := f.Encoding(c.accept)
			if enc != c.want {
				t.Fatalf("Accept-Encoding %q: encoding %q, want %q", c.accept, enc, c.want)
			}
			if got := decode(t, enc, body); !bytes.Equal(got, f.Body) {
				t.Errorf("the %q body does not decode to the file", enc)
			}
		})
	}
}

// decode undoes a Content-Encoding.
func decode(t *testing.T, enc string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	default:
		t.Fatalf("unknown encoding %q", enc)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", enc, err)
	}
	return out
}

func TestLoad(t *testing.T) {
	t.Run("a file system without index.html is no app", func(t *testing.T) {
		_, err := web.Load(fstest.MapFS{"assets/app.js": {Data: []byte("x")}})
		if !errors.Is(err, web.ErrNoIndex) {
			t.Fatalf("err %v, want ErrNoIndex", err)
		}
	})
	site, err := web.Load(fstest.MapFS{
		"index.html":          {Data: []byte("<!doctype html>")},
		"assets/app.css":      {Data: []byte(strings.Repeat("a { color: red }\n", 40))},
		"assets/admin/a.js":   {Data: []byte("export {}\n")},
		"assets/logo.png":     {Data: bytes.Repeat([]byte{0}, 4096)},
		"assets/unknown.blob": {Data: []byte("?")},
		"secret.txt":          {Data: []byte("outside assets/")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("only the page and the files under assets/ are loaded, nested ones too", func(t *testing.T) {
		got := strings.Join(site.Names(), " ")
		if want := "assets/admin/a.js assets/app.css assets/logo.png assets/unknown.blob index.html"; got != want {
			t.Errorf("names %q, want %q", got, want)
		}
		if site.File("secret.txt") != nil || site.File("nope") != nil {
			t.Error("a file that is not served was found")
		}
	})
	t.Run("content types follow the extension, unknown ones are octet streams", func(t *testing.T) {
		for name, want := range map[string]string{
			"index.html": "text/html; charset=utf-8", "assets/app.css": "text/css; charset=utf-8",
			"assets/admin/a.js": "text/javascript; charset=utf-8", "assets/logo.png": "image/png",
			"assets/unknown.blob": "application/octet-stream",
		} {
			if got := site.File(name).ContentType; got != want {
				t.Errorf("%s: %q, want %q", name, got, want)
			}
		}
	})
	t.Run("text is compressed, small files and images are not", func(t *testing.T) {
		if gz, br := site.File("assets/app.css").Compressed(); gz == nil || br == nil {
			t.Error("the style sheet is not compressed")
		}
		for _, name := range []string{"index.html", "assets/admin/a.js", "assets/logo.png"} {
			if gz, br := site.File(name).Compressed(); gz != nil || br != nil {
				t.Errorf("%s is compressed", name)
			}
		}
	})
	t.Run("ETags are weak, and differ when the content does", func(t *testing.T) {
		a, b := site.File("assets/app.css").ETag, site.File("assets/admin/a.js").ETag
		if !strings.HasPrefix(a, `W/"`) || !strings.HasSuffix(a, `"`) || a == b {
			t.Errorf("ETags %s and %s", a, b)
		}
	})
}

func TestEmbeddedApp(t *testing.T) {
	site, err := web.Embedded()
	if err != nil {
		t.Fatalf("the embedded app does not load: %v", err)
	}
	page := string(site.File(web.Index).Body)
	t.Run("the page loads the app's module and style sheet", func(t *testing.T) {
		if !regexp.MustCompile(`<script\b[^>]*\btype="module"[^>]*\bsrc="/assets/app\.js"|<script\b[^>]*\bsrc="/assets/app\.js"[^>]*\btype="module"`).MatchString(page) {
			t.Error(`the page has no <script type="module" src="/assets/app.js">`)
		}
		if !regexp.MustCompile(`<link\b[^>]*\bhref="/assets/app\.css"`).MatchString(page) {
			t.Error(`the page has no <link href="/assets/app.css">`)
		}
	})
	t.Run("the page has nothing its Content-Security-Policy would block", func(t *testing.T) {
		if m := regexp.MustCompile(`(?is)<script\b[^>]*>\s*[^<\s]`).FindString(page); m != "" {
			t.Errorf("inline script: %q", m)
		}
		if m := regexp.MustCompile(`(?i)<[^>]*\s(style|on[a-z]+)\s*=`).FindString(page); m != "" {
			t.Errorf("inline style or event handler: %q", m)
		}
		if strings.Contains(strings.ToLower(page), "<style") {
			t.Error("a <style> element")
		}
	})
}

// Where a file refers to others: src and href attributes of the page's
// scripts and links, static imports and re-exports of the modules, their
// dynamic imports (apart: see references), whose specifiers a browser
// takes only as paths ("./x.js", "../x.js", "/x.js"), and url() and
// @import of the style sheets.
var (
	htmlRef   = regexp.MustCompile(`(?is)<(?:script|link)\b[^>]*?\s(?:src|href)\s*=\s*["']([^"']+)["']`)
	jsRef     = regexp.MustCompile(`(?s)(?:\bimport\s*(?:[\w$*{}\s,]+?\s*\bfrom\s*)?|\bexport\s*[\w$*{}\s,]+?\s*\bfrom\s*)["'](\.{0,2}/[^"'\n]*)["']`)
	jsDynamic = regexp.MustCompile(`\bimport\s*\(\s*["'](\.{0,2}/[^"'\n]*)["']\s*\)`)
	cssRef    = regexp.MustCompile(`url\(\s*["']?([^"')\s]+)["']?\s*\)|@import\s+["']([^"']+)["']`)
)

// references returns what file f refers to, as names in the site,
// resolved against f's own path: what it needs (names), and what its
// dynamic imports may load (lazy), which the module handles failing
// itself (the router's optional pages). external lists what points off
// the server (http:, https:, //host), which the CSP would refuse anyway.
func references(f *web.File) (names, lazy, external []string) {
	var raw, rawLazy []string
	body := string(f.Body)
	switch {
	case strings.HasPrefix(f.ContentType, "text/html"):
		for _, m := range htmlRef.FindAllStringSubmatch(body, -1) {
			raw = append(raw, m[1])
		}
	case strings.HasPrefix(f.ContentType, "text/javascript"):
		for _, m := range jsRef.FindAllStringSubmatch(body, -1) {
			raw = append(raw, m[1])
		}
		for _, m := range jsDynamic.FindAllStringSubmatch(body, -1) {
			rawLazy = append(rawLazy, m[1])
		}
	case strings.HasPrefix(f.ContentType, "text/css"):
		for _, m := range cssRef.FindAllStringSubmatch(body, -1) {
			raw = append(raw, m[1]+m[2])
		}
	}
	resolve := func(us []string) (out []string) {
		for _, u := range us {
			u, _, _ = strings.Cut(u, "#")
			u, _, _ = strings.Cut(u, "?")
			switch {
			case u == "" || strings.HasPrefix(u, "data:"):
			case strings.HasPrefix(u, "//") || strings.Contains(u, "://"):
				external = append(external, u)
			case strings.HasPrefix(u, "/"):
				out = append(out, strings.TrimPrefix(path.Clean(u), "/"))
			default:
				out = append(out, path.Join(path.Dir(f.Name), u))
			}
		}
		return out
	}
	return resolve(raw), resolve(rawLazy), external
}

// TestFirstLoadFitsTheBudget weighs what a browser downloads for the
// first visit: the page and every file it refers to, transitively (the
// modules' dynamic imports too, so the lazy pages and the operator's
// count), each as the server sends it to a client that takes gzip. The
// app fails this test when it outgrows pageBudget, or when the page or a
// static import refers to a file it does not have (a dynamic import's
// may be missing: the module that imports it handles that).
func TestFirstLoadFitsTheBudget(t *testing.T) {
	site, err := web.Embedded()
	if err != nil {
		t.Fatalf("the embedded app does not load: %v", err)
	}
	type ref struct {
		name, from string
		lazy       bool
	}
	total := 0
	seen := map[string]bool{}
	queue := []ref{{name: web.Index}}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if seen[r.name] {
			continue
		}
		seen[r.name] = true
		f := site.File(r.name)
		switch {
		case f == nil && r.lazy:
			t.Logf("%s imports %s lazily, which the app does not have", r.from, r.name)
			continue
		case f == nil:
			t.Errorf("%s refers to %s, which is not a file of the app", r.from, r.name)
			continue
		}
		body, _ := f.Encoding("gzip")
		total += len(body)
		t.Logf("%7d bytes  %s", len(body), r.name)
		names, lazy, external := references(f)
		for _, e := range external {
			t.Errorf("%s refers to %s, off this server", r.name, e)
		}
		for _, n := range names {
			queue = append(queue, ref{name: n, from: r.name})
		}
		for _, n := range lazy {
			queue = append(queue, ref{name: n, from: r.name, lazy: true})
		}
	}
	t.Logf("%7d bytes in all, of %d allowed", total, pageBudget)
	if total > pageBudget {
		t.Errorf("the first load weighs %d bytes gzipped, over the budget of %d", total, pageBudget)
	}
}

func TestReferences(t *testing.T) {
	js := `import { h } from './dom.js';
import * as api from "/assets/api.js";
import './side-effect.js';
import {
  t,
  setLanguage as lang,
} from './i18n.js?v=1';
export { x } from '../common.js';
export * from './all.js';
const admin = () => import('./admin/admin.js');
const u = "https://cdn.example.com/x.js"; // not an import
const s = t('import'), from = 'from'; // nor these
`
	f := &web.File{Name: "assets/app.js", ContentType: "text/javascript; charset=utf-8", Body: []byte(js)}
	names, lazy, external := references(f)
	want := "assets/dom.js assets/api.js assets/side-effect.js assets/i18n.js common.js assets/all.js"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("module references %q, want %q", got, want)
	}
	if got := strings.Join(lazy, " "); got != "assets/admin/admin.js" {
		t.Errorf("dynamic imports %q", got)
	}
	if len(external) != 0 {
		t.Errorf("external %v", external)
	}
	page := &web.File{Name: "index.html", ContentType: "text/html; charset=utf-8", Body: []byte(
		`<link rel="stylesheet" href="/assets/app.css"><script type="module" src="/assets/app.js"></script><script src="https://evil.example/x.js"></script><a href="/profile">`)}
	names, _, external = references(page)
	if got := strings.Join(names, " "); got != "assets/app.css assets/app.js" {
		t.Errorf("page references %q", got)
	}
	if strings.Join(external, " ") != "https://evil.example/x.js" {
		t.Errorf("external %v", external)
	}
	css := &web.File{Name: "assets/app.css", ContentType: "text/css; charset=utf-8", Body: []byte(
		`@import "base.css"; .x { background: url(img/a.svg) } .y { background: url("data:image/png;base64,AA") }`)}
	names, _, _ = references(css)
	if got := strings.Join(names, " "); got != "assets/base.css assets/img/a.svg" {
		t.Errorf("style sheet references %q", got)
	}
}
