package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// docsFiles is the API reference page and its assets: predictkit's page
// (index.html, docs.js, docs.css) and Swagger UI, vendored from the npm
// package swagger-ui-dist (Apache-2.0; see docs/README.md). Nothing is
// fetched from anywhere else.
//
//go:embed docs
var docsFiles embed.FS

// DocsCSP is the Content-Security-Policy of /docs and its assets: the
// page may load scripts, styles and fonts from this server only, fetch
// the API document (and, with "Try it out", the API) from this server
// only, show images from this server or data: URLs (Swagger UI's icons),
// and may not be framed.
const DocsCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docAsset is one embedded file, ready to serve.
type docAsset struct {
	body, gzipped []byte
	contentType   string
	etag          string
}

// docAssets are the files served under /docs/, by name; "" is the page
// as GET /docs serves it (see pageFromParent).
var docAssets = sync.OnceValue(func() map[string]*docAsset {
	out := map[string]*docAsset{}
	entries, err := fs.ReadDir(docsFiles, "docs")
	if err != nil {
		panic("server: embedded docs: " + err.Error()) // cannot happen: the directory is embedded
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "README.md" {
			continue
		}
		body, err := docsFiles.ReadFile("docs/" + name)
		if err != nil {
			panic("server: embedded docs: " + err.Error())
		}
		a := newDocAsset(name, body)
		out[name] = a
		if name == "index.html" {
			out[""] = newDocAsset(name, pageFromParent(body))
		}
	}
	return out
})

// pageURL is a src or href attribute of the page.
var pageURL = regexp.MustCompile(`((?:src|href)=")([^"]*)"`)

// pageFromParent rewrites the page, whose URLs are relative to /docs/ (so
// that it works behind a proxy that adds a path prefix), for GET /docs,
// where a browser resolves them against the directory above: "x.css"
// becomes "docs/x.css" and "../api/..." becomes "api/...". Data URLs and
// fragments are left alone.
func pageFromParent(page []byte) []byte {
	return pageURL.ReplaceAllFunc(page, func(m []byte) []byte {
		sub := pageURL.FindSubmatch(m)
		attr, u := string(sub[1]), string(sub[2])
		switch {
		case strings.HasPrefix(u, "data:"), strings.HasPrefix(u, "#"):
			return m
		case strings.HasPrefix(u, "../"):
			u = strings.TrimPrefix(u, "../")
		default:
			u = "docs/" + u
		}
		return []byte(attr + u + `"`)
	})
}

// newDocAsset is the file name with body, its type, ETag and (when it is
// worth it) gzipped body.
func newDocAsset(name string, body []byte) *docAsset {
	sum := sha256.Sum256(body)
	a := &docAsset{body: body, contentType: docsContentType(name), etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
	if len(body) > 1024 {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		a.gzipped = buf.Bytes()
	}
	return a
}

func docsContentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".png":
		return "image/png"
	}
	return "text/plain; charset=utf-8"
}

// serveDoc answers one embedded file with its own security headers: the
// strict DocsCSP instead of the API's, revalidation by ETag, and gzip
// when the client takes it.
func serveDoc(c *fiber.Ctx, name string) error {
	a, ok := docAssets()[name]
	if !ok {
		return fiber.ErrNotFound
	}
	h := &c.Response().Header
	h.Set(fiber.HeaderContentSecurityPolicy, DocsCSP)
	h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	h.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	h.Set(fiber.HeaderXFrameOptions, "DENY")
	h.Set(fiber.HeaderCacheControl, "no-cache")
	h.Set(fiber.HeaderETag, a.etag)
	h.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	if c.Get(fiber.HeaderIfNoneMatch) == a.etag {
		return c.SendStatus(http.StatusNotModified)
	}
	h.Set(fiber.HeaderContentType, a.contentType)
	if a.gzipped != nil && c.Request().Header.HasAcceptEncoding("gzip") {
		h.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(a.gzipped)
	}
	return c.Send(a.body)
}

// docsRoutes serves the API reference: GET /docs renders the OpenAPI
// document (GET /api/v1/openapi.json) with the embedded Swagger UI, and
// GET /docs/{file} serves the page's assets. Only the common rules apply
// (errsMeta); an unknown file is 404 not_found.
func docsRoutes() RoutesOut {
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/docs", Errors: errsMeta, Handler: handleDocsPage},
		{Method: http.MethodGet, Path: "/docs/:file", Errors: errsMeta, Handler: handleDocsFile},
	}}
}

// handleDocsPage answers the reference page. Its URLs are relative, so
// that it works under any path prefix a proxy adds: GET /docs/ (which this
// route also matches) gets them relative to /docs/, as /docs/index.html
// does, and GET /docs relative to /.
func handleDocsPage(c *fiber.Ctx) error {
	if strings.HasSuffix(c.Path(), "/") {
		return serveDoc(c, "index.html")
	}
	return serveDoc(c, "")
}

// handleDocsFile answers one of the page's assets.
func handleDocsFile(c *fiber.Ctx) error { return serveDoc(c, c.Params("file")) }
