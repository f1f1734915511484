package server

// Response headers that harden every answer, CORS, and the client's
// address behind trusted proxies.

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
)

// APIContentSecurityPolicy is the Content-Security-Policy of every answer
// whose handler does not set its own: the API serves JSON, never a page
// to render, so nothing may load and nothing may frame it.
const APIContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'"

// hstsValue is Strict-Transport-Security when the server is configured
// for HTTPS (CookieSecure): browsers keep to HTTPS for a year.
const hstsValue = "max-age=31536000"

// headerPolicy sets the security headers. It runs as a middleware and
// again from the error handler, for the answers Fiber makes before any
// middleware runs (413, 431, a panic).
type headerPolicy struct{ hsts bool }

// middleware sets the headers around the rest of the chain.
func (hp headerPolicy) middleware(c *fiber.Ctx) error {
	hp.base(c)
	err := c.Next()
	hp.csp(c)
	return err
}

// base sets the headers that every answer carries: no MIME sniffing, no
// framing, no Referer; HSTS over HTTPS; and no caching of an answer to a
// request that carried credentials (a Bearer token, a partner key or a
// cookie), so no shared cache or browser history keeps private data.
func (hp headerPolicy) base(c *fiber.Ctx) {
	h := &c.Response().Header
	h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	h.Set(fiber.HeaderXFrameOptions, "DENY")
	h.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	if hp.hsts {
		h.Set(fiber.HeaderStrictTransportSecurity, hstsValue)
	}
	rh := &c.Request().Header
	if len(rh.Peek(fiber.HeaderAuthorization)) > 0 || len(rh.Peek(HeaderPartnerKey)) > 0 || len(rh.Peek(fiber.HeaderCookie)) > 0 {
		h.Set(fiber.HeaderCacheControl, "no-store")
	}
}

// csp sets APIContentSecurityPolicy unless the handler set a policy of
// its own: a route that serves a page (e.g. the /docs reference, which
// embeds its scripts and styles) sets the policy its page needs with
// c.Set(fiber.HeaderContentSecurityPolicy, ...). Under /docs no policy is
// forced: should that page set none, it is left working rather than
// blank.
func (hp headerPolicy) csp(c *fiber.Ctx) {
	h := &c.Response().Header
	if len(h.Peek(fiber.HeaderContentSecurityPolicy)) > 0 {
		return
	}
	if p := c.Path(); p == "/docs" || strings.HasPrefix(p, "/docs/") {
		return
	}
	h.Set(fiber.HeaderContentSecurityPolicy, APIContentSecurityPolicy)
}

// newCORS is the CORS middleware for origins, or nil when there are none
// (then no CORS header is ever sent and browsers keep to same-origin
// calls). Only the origins listed exactly may send credentials
// (Access-Control-Allow-Credentials: the session and chat cookies); a
// pattern ("https://*.example.com") and "*" allow their origins to call
// without them: any host under a domain is not one the operator can
// vouch for (a user's page, a forgotten test host), and cookieOrigins
// refuses a cookie from it anyway.
func newCORS(origins []string) fiber.Handler {
	if len(origins) == 0 {
		return nil
	}
	base := cors.Config{
		AllowMethods:  "GET,POST,PUT,PATCH,DELETE,HEAD",
		AllowHeaders:  "Authorization,Content-Type,X-Partner-Key,X-Request-ID",
		ExposeHeaders: "Retry-After,X-Request-ID,Idempotent-Replayed",
		MaxAge:        600,
	}
	if slices.Contains(origins, "*") {
		base.AllowOrigins = "*"
		return cors.New(base)
	}
	var exact, patterns []string
	for _, o := range origins {
		if strings.Contains(o, "://*.") {
			patterns = append(patterns, o)
		} else {
			exact = append(exact, o)
		}
	}
	// The listed origins are matched as cookieOrigins matches them
	// (normalizeOrigin), so that CORS lets a page read exactly what the
	// cookie may be sent for.
	listed := exactOrigins(origins)
	isListed := func(origin string) bool { return listed[normalizeOrigin(origin)] }
	withCredentials := base
	withCredentials.AllowOriginsFunc = isListed
	withCredentials.AllowCredentials = true
	if len(patterns) == 0 {
		return cors.New(withCredentials)
	}
	withoutCredentials := base
	withoutCredentials.AllowOrigins = strings.Join(patterns, ",")
	if len(exact) == 0 {
		return cors.New(withoutCredentials)
	}
	credentialed, other := cors.New(withCredentials), cors.New(withoutCredentials)
	return func(c *fiber.Ctx) error {
		if isListed(c.Get(fiber.HeaderOrigin)) {
			return credentialed(c)
		}
		return other(c)
	}
}

// exactOrigins are the CORS origins listed exactly (neither "*" nor a
// "*." pattern), normalized (normalizeOrigin): the only other origins
// that may send the server's cookies.
func exactOrigins(origins []string) map[string]bool {
	m := map[string]bool{}
	for _, o := range origins {
		if o == "*" || strings.Contains(o, "://*.") {
			continue
		}
		if n := normalizeOrigin(o); n != "" {
			m[n] = true
		}
	}
	return m
}

// cookieOrigins refuses a request that carries one of the server's
// cookies (the session's, SessionCookie, or the support chat's,
// ChatCookie) from an origin that may not send it: only the server's
// own origin (originPolicy.own: the request's scheme and Host, as a
// trusted proxy forwards them, or PREDICTKIT_PUBLIC_URL's) and the CORS
// origins listed exactly may; anything else is errCrossOrigin (403
// cross_origin_request) before any route under /api/ runs, safe methods
// included.
// Without it a page on a host a CORS pattern allows, or on a sibling
// subdomain, which SameSite counts as the same site and so sends the
// cookie to, could use the visitor's cookie.
//
// Browsers name the origin of every cross-origin fetch, EventSource and
// unsafe request in Origin, and say "same-origin" in Sec-Fetch-Site
// (which no page can set) for the server's own pages, which then pass
// even when a proxy hides the origin the browser used. A request
// without Origin passes: a program (curl), or a browser's navigation or
// no-cors request (an image, a link), whose answer no other page can
// read. Sec-Fetch-Site alone ("cross-site", "same-site") does not
// refuse: it cannot tell a listed origin from another, and such
// requests read nothing and, with an unsafe method, still need an
// Origin of this server (Auth.Credential).
type cookieOrigins struct {
	policy originPolicy
	listed map[string]bool
}

func (g cookieOrigins) middleware(c *fiber.Ctx) error {
	rh := &c.Request().Header
	if len(rh.Cookie(SessionCookie)) == 0 && len(rh.Cookie(ChatCookie)) == 0 || !strings.HasPrefix(c.Path(), "/api/") {
		return c.Next() // browsers send the cookies under /api/ only
	}
	if c.Get("Sec-Fetch-Site") == "same-origin" {
		return c.Next()
	}
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" || g.listed[normalizeOrigin(origin)] || g.policy.own(c, origin) {
		return c.Next()
	}
	return errCrossOrigin
}

// checkOrigins refuses CORS origins that are not "*" alone or
// scheme://host[:port] (a leading "*." in the host allows its
// subdomains).
func checkOrigins(origins []string) error {
	for _, o := range origins {
		if o == "*" {
			if len(origins) > 1 {
				return fmt.Errorf("CORS origins: * allows every origin and cannot be listed with others")
			}
			continue
		}
		host := strings.Replace(o, "://*.", "://", 1)
		u, err := url.Parse(host)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Contains(u.Host, "*") ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return fmt.Errorf("CORS origin %q: must be scheme://host[:port], such as https://app.example.com", o)
		}
	}
	return nil
}

// proxies are the trusted reverse proxies.
type proxies []netip.Prefix

// parseProxies reads IPs and CIDR ranges.
func parseProxies(list []string) (proxies, error) {
	var ps proxies
	for _, s := range list {
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: must be an IP address or a CIDR range", s)
			}
			ps = append(ps, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: must be an IP address or a CIDR range", s)
		}
		a = a.Unmap()
		ps = append(ps, netip.PrefixFrom(a, a.BitLen()))
	}
	return ps, nil
}

func (ps proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP is the address of the client the request comes from: the
// peer's, unless the peer is a trusted proxy. Then it is the rightmost
// address of X-Forwarded-For that is not a trusted proxy, i.e. the one
// the outermost trusted proxy saw; what a client writes into the header
// itself lies to the left of it and is never believed. (Fiber's c.IP()
// returns the header's whole text instead, which a client can vary at
// will behind a proxy that appends to it.)
func (ps proxies) clientIP(c *fiber.Ctx) string {
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		return c.Context().RemoteIP().String()
	}
	peer = peer.Unmap()
	if len(ps) == 0 || !ps.trusts(peer) {
		return peer.String()
	}
	client := peer
	values := c.Request().Header.PeekAll(fiber.HeaderXForwardedFor)
	for i := len(values) - 1; i >= 0; i-- {
		hops := strings.Split(string(values[i]), ",")
		for j := len(hops) - 1; j >= 0; j-- {
			a, ok := parseHop(hops[j])
			if !ok {
				return client.String() // garbage: nothing left of it is believed
			}
			client = a
			if !ps.trusts(a) {
				return client.String()
			}
		}
	}
	return client.String()
}

// clientGroup is the key of every rate limit by client address, for the
// client address ip (proxies.clientIP): an IPv4 address is itself (an
// IPv4-mapped IPv6 address counts as the IPv4 address), an IPv6 address
// is its /64 ("2001:db8:1:2::/64"). A /64 is what one subscriber gets
// (a home, a phone, a server), and any host in it may pick a new address
// within it for every request, so counting IPv6 addresses one by one
// would give one client 2^64 budgets. Anything that is not an address is
// itself.
func clientGroup(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, err := a.WithZone("").Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}

// parseHop reads one X-Forwarded-For entry: an address, optionally with a
// port ("1.2.3.4:5678", "[2001:db8::1]:80").
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// errorHandler sets the headers on an error answer before next writes it:
// Fiber calls its ErrorHandler directly for what it refuses before any
// middleware runs (413, 431), and the recoverer's 500 comes back past the
// middleware.
func (hp headerPolicy) errorHandler(next fiber.ErrorHandler) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		hp.base(c)
		hp.csp(c)
		return next(c, err)
	}
}
