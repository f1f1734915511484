package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/web"
)

// WebModule serves the web app (package web) from the binary: its page
// at / and at every client route of the app, its files under /assets/.
// With Config.Web off it serves nothing, and / is 404 as any path outside
// the API.
//
// The page and the files carry the app's own Content-Security-Policy
// (web.ContentSecurityPolicy) instead of the API's, revalidate by ETag
// (Cache-Control: no-cache: the files keep their names from one release
// to the next, as there is no build step to give them hashed names), and
// go out Brotli- or gzip-compressed, each compressed once, when first asked for.
// The API's answers are never compressed.
var WebModule = fx.Module("web",
	fx.Provide(newWebSite, webRoutes, webFallback),
)

// newWebSite is the app the server serves: the embedded one, or nil when
// Config.Web is off. Tests replace it (fx.Decorate) with an app of their
// own.
func newWebSite(cfg Config) (*web.Site, error) {
	if !cfg.Web {
		return nil, nil
	}
	return web.Embedded()
}

// webApp serves the app's files.
type webApp struct {
	site *web.Site
	// head adds to the page's <head> at some client routes (an event's
	// Open Graph tags: ShareModule); nil adds nothing.
	head pageHead
}

// pageHead returns what the page answered at client route path p carries
// in its <head> besides the app's own (the Open Graph tags of a shared
// event's page) and the title it has before the app sets its own, or nil
// for nothing.
type pageHead func(c *fiber.Ctx, p string) (head []byte, title string)

// The app's paths: the page's route, and where the assets are.
const (
	webPagePath   = "/"
	webAssetsPath = "/" + web.AssetsDir + "/"
	// webFallbackRoute is the route template of the page answered at a
	// client route of the app (the access log's and the metrics' label).
	webFallbackRoute = "/{app route}"
)

// errsWeb: the app's routes map nothing of their own; an unknown asset
// is 404 not_found, in the API's error shape.
var errsWeb = table("internal_error")

// webRoutes lists GET / and GET /assets/*, or nothing when the app is
// off. The client routes of the app (/events/42, /profile...) are
// webFallback's.
func webRoutes(site *web.Site) RoutesOut {
	if site == nil {
		return RoutesOut{}
	}
	a := webApp{site: site}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: webPagePath, Errors: errsWeb, Handler: a.handlePage},
		{Method: http.MethodGet, Path: webAssetsPath + "*", Errors: errsWeb, Handler: a.handleAsset},
	}}
}

// Fallback answers what no route matched. NewApp runs it after every
// route; it calls c.Next() for what it does not answer, which is then 404
// not_found or 405 method_not_allowed as without it.
type Fallback fiber.Handler

// webFallback answers the page for a GET or HEAD of a client route of
// the app, and HEAD of / and of the assets (the routes are GET only); nil
// when the app is off.
func webFallback(site *web.Site, head pageHead) Fallback {
	if site == nil {
		return nil
	}
	a := webApp{site: site, head: head}
	return func(c *fiber.Ctx) error {
		m := c.Method()
		if m != http.MethodGet && m != http.MethodHead {
			return c.Next()
		}
		p := c.Path()
		switch {
		case p == webPagePath:
			c.Locals(localRoute, webPagePath)
			return a.handlePage(c)
		case strings.HasPrefix(p, webAssetsPath):
			c.Locals(localRoute, webAssetsPath+"*")
			return a.handleAsset(c)
		case !appRoute(p):
			return c.Next()
		}
		c.Locals(localRoute, webFallbackRoute)
		return a.handleRoutePage(c, p)
	}
}

// notAppPrefixes are the paths that are never the app's, whatever their
// case: the API, the reference, the probes, the metrics, the share
// cards, the embeds and the MCP endpoint.
var notAppPrefixes = []string{"/api", "/docs", "/healthz", "/readyz", "/metrics", "/og", "/embed", MCPPath}

// appRoute reports whether path p may be a client route of the app,
// which the page answers: not under a prefix of notAppPrefixes (compared
// without regard to case, so that /API/v1/nope stays the API's 404), and
// not a file name (a last segment with a dot, such as /favicon.ico or
// /robots.txt: a missing file is 404, not the page).
func appRoute(p string) bool {
	lower := strings.ToLower(p)
	for _, prefix := range notAppPrefixes {
		if lower == prefix || strings.HasPrefix(lower, prefix+"/") {
			return false
		}
	}
	last := p[strings.LastIndexByte(p, '/')+1:]
	return !strings.Contains(last, ".")
}

// handlePage answers the app's page.
func (a webApp) handlePage(c *fiber.Ctx) error {
	return serveWebFile(c, a.site.File(web.Index))
}

// handleRoutePage answers the page at client route p, with the tags
// a.head gives it, if any. That page is made for the request: it is sent
// uncompressed (it is the app's small page plus a few lines), with an
// ETag of its own, so that a trade that changes the tags changes it.
func (a webApp) handleRoutePage(c *fiber.Ctx, p string) error {
	page := a.site.File(web.Index)
	var head []byte
	var title string
	if a.head != nil {
		head, title = a.head(c, p)
	}
	if head == nil {
		return serveWebFile(c, page)
	}
	body := withHead(page.Body, head, title)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := &c.Response().Header
	h.Set(fiber.HeaderContentSecurityPolicy, web.ContentSecurityPolicy)
	h.Set(fiber.HeaderCacheControl, "no-cache")
	h.Set(fiber.HeaderETag, etag)
	if etagMatch(c.Get(fiber.HeaderIfNoneMatch), etag) {
		return c.SendStatus(http.StatusNotModified)
	}
	h.Set(fiber.HeaderContentType, page.ContentType)
	return c.Send(body)
}

// handleAsset answers one file under /assets/, or 404 not_found.
func (a webApp) handleAsset(c *fiber.Ctx) error {
	name := strings.TrimPrefix(c.Path(), "/")
	f := a.site.File(name)
	if f == nil || !strings.HasPrefix(name, web.AssetsDir+"/") {
		return fiber.ErrNotFound
	}
	return serveWebFile(c, f)
}

// serveWebFile answers f with the app's headers: its
// Content-Security-Policy instead of the API's; no-cache (whatever the
// request's cookies: the files are the same for everyone), so that the
// browser asks again each time and gets 304 while f is unchanged; and
// the best encoding the client accepts.
func serveWebFile(c *fiber.Ctx, f *web.File) error {
	h := &c.Response().Header
	h.Set(fiber.HeaderContentSecurityPolicy, web.ContentSecurityPolicy)
	h.Set(fiber.HeaderCacheControl, "no-cache")
	h.Set(fiber.HeaderETag, f.ETag)
	h.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	if etagMatch(c.Get(fiber.HeaderIfNoneMatch), f.ETag) {
		return c.SendStatus(http.StatusNotModified)
	}
	h.Set(fiber.HeaderContentType, f.ContentType)
	body, enc := f.Encoding(c.Get(fiber.HeaderAcceptEncoding))
	if enc != "" {
		h.Set(fiber.HeaderContentEncoding, enc)
	}
	return c.Send(body)
}

// etagMatch reports whether an If-None-Match header names etag, compared
// weakly (W/ aside), as If-None-Match is: "*", or one of a list.
func etagMatch(header, etag string) bool {
	header = strings.TrimSpace(header)
	if header == "" {
		return false
	}
	if header == "*" {
		return true
	}
	want := strings.TrimPrefix(etag, "W/")
	for t := range strings.SplitSeq(header, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == want {
			return true
		}
	}
	return false
}
