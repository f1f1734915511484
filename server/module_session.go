package server

// The web app's cookie session: POST /api/v1/auth/session puts a user's
// access token into an HttpOnly cookie, which every user route then
// accepts in place of an Authorization header, so that the app's
// scripts never hold the token (a script injected into the page could
// not read it). Against cross-site request forgery the cookie is
// SameSite=Strict, and a request it authenticates with an unsafe method
// must come from a page of this server's own origin (originPolicy).

import (
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
)

// SessionCookie is the cookie that carries a user's access token for the
// web app (POST /api/v1/auth/session).
const SessionCookie = "predictkit_session"

// sessionCookiePath: the cookie goes with the API's requests only, never
// with the page or its assets.
const sessionCookiePath = "/api/"

// errCrossOrigin: a request authenticated by the session cookie, with an
// unsafe method, does not come from a page of this server's origin (or a
// request to open a session comes from another origin); the answer is
// 403 cross_origin_request and nothing is done.
var errCrossOrigin = errors.New("server: a cookie-authenticated request from another origin")

// credentialToken is the user credential a request carries: the Bearer
// token of its Authorization header or, when it has no Authorization
// header at all, the session cookie's token (fromCookie). An
// Authorization header always wins, even one that is not a Bearer token:
// a client that sends one means it.
func credentialToken(c *fiber.Ctx) (tok string, fromCookie bool) {
	if len(c.Request().Header.Peek(fiber.HeaderAuthorization)) > 0 {
		return bearer(c), false
	}
	if tok = c.Cookies(SessionCookie); tok != "" {
		return tok, true
	}
	return "", false
}

// unsafeMethod reports whether method may change something: every
// method but GET, HEAD and OPTIONS.
func unsafeMethod(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// originPolicy tells whether a request comes from a page of this
// server's own origin.
//
// Browsers say where a request comes from in Sec-Fetch-Site (every
// current browser, which a page's scripts cannot set) and in Origin (on
// every request with an unsafe method). Sec-Fetch-Site, when sent,
// decides: only "same-origin" is this server's own pages. Without it,
// Origin must be the server's own origin: scheme://host of the request
// (https when the connection is TLS; behind a trusted proxy, as
// X-Forwarded-Proto and X-Forwarded-Host say, when they do), or the
// origin of Config.PublicURL.
type originPolicy struct {
	proxies proxies
	// public is the origin of Config.PublicURL, normalized; "" when unset.
	public string
}

func newOriginPolicy(cfg Config) originPolicy {
	ps, _ := parseProxies(cfg.TrustedProxies) // Validate reports errors
	o := originPolicy{proxies: ps}
	if cfg.PublicURL != "" {
		if u, err := url.Parse(cfg.PublicURL); err == nil {
			o.public = normalizeOrigin(u.Scheme + "://" + u.Host)
		}
	}
	return o
}

// sameOrigin reports whether c comes from a page of this server's
// origin: what a request authenticated by the cookie must show to change
// anything. A request that says nothing (neither header: not a browser's
// request) is refused: a program sends its token as a Bearer token.
func (o originPolicy) sameOrigin(c *fiber.Ctx) bool {
	if site := c.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := c.Get(fiber.HeaderOrigin)
	return origin != "" && o.own(c, origin)
}

// notCrossOrigin reports whether c may open a session: refused only when
// the browser says it comes from another origin, so that no other site
// can sign a visitor into an account of its choosing; a program that
// says nothing may.
func (o originPolicy) notCrossOrigin(c *fiber.Ctx) bool {
	if site := c.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	origin := c.Get(fiber.HeaderOrigin)
	return origin == "" || o.own(c, origin)
}

// own reports whether origin (an Origin header) is this server's.
func (o originPolicy) own(c *fiber.Ctx, origin string) bool {
	n := normalizeOrigin(origin)
	if n == "" {
		return false // "null", or not an origin at all
	}
	return n == o.requestOrigin(c) || o.public != "" && n == o.public
}

// requestOrigin is the origin c was sent to, normalized.
func (o originPolicy) requestOrigin(c *fiber.Ctx) string {
	scheme := "http"
	if c.Context().IsTLS() {
		scheme = "https"
	}
	host := string(c.Request().Host())
	if o.fromTrustedProxy(c) {
		if v := firstValue(c.Get(fiber.HeaderXForwardedProto)); v != "" {
			scheme = v
		}
		if v := firstValue(c.Get(fiber.HeaderXForwardedHost)); v != "" {
			host = v
		}
	}
	return normalizeOrigin(scheme + "://" + host)
}

// fromTrustedProxy reports whether the peer is a trusted proxy, whose
// X-Forwarded-* headers are believed.
func (o originPolicy) fromTrustedProxy(c *fiber.Ctx) bool {
	if len(o.proxies) == 0 {
		return false
	}
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	return ok && o.proxies.trusts(peer)
}

// firstValue is the first of a header's comma-separated values: what the
// proxy nearest the client saw.
func firstValue(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.TrimSpace(v)
}

// normalizeOrigin is scheme://host[:port] in lower case without a default
// port, or "" when s is not an http or https origin.
func normalizeOrigin(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	switch scheme {
	case "http":
		host = strings.TrimSuffix(host, ":80")
	case "https":
		host = strings.TrimSuffix(host, ":443")
	default:
		return ""
	}
	return scheme + "://" + host
}

// sessionHandlers serves the cookie session's routes.
type sessionHandlers struct {
	accounts *account.Service
	auth     *Auth
	profiles *profiles
	onLogout []logoutHook
	secure   bool
}

// sessionRoutes lists POST and DELETE /auth/session. Each handler below
// follows its error table, which says what the route answers and in
// which order.
func sessionRoutes(in accountRoutesIn, cfg Config) RoutesOut {
	h := &sessionHandlers{accounts: in.Accounts, auth: in.Auth, profiles: in.Profiles, onLogout: in.OnLogout, secure: cfg.CookieSecure}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/auth/session", Errors: errsSessionOpen, Handler: h.handleOpen},
		{Method: http.MethodDelete, Path: "/api/v1/auth/session", Errors: errsSessionEnd, Handler: h.handleEnd},
	}}
}

// POST /auth/session: open a cookie session, with e-mail and password
// (as login) or with the access token of an Authorization header, which
// moves into the cookie; answers the profile (as GET /auth/me) and sets
// the cookie, never showing the token. Checks run 429 (per client
// address, as login), 403 insufficient_scope (a personal API key never
// becomes a cookie), 403 cross_origin_request (a browser says the
// request comes from another site), then, with a token, 400 (a body
// beside it) and 401 unauthorized, or, without, 400 (body) and 401
// invalid_credentials.
var errsSessionOpen = table("internal_error",
	on(account.ErrInvalidCredentials, http.StatusUnauthorized, "invalid_credentials"),
	on(account.ErrUserNotFound, http.StatusUnauthorized, "invalid_credentials"),
	unauthorized,
)

// handleOpen signs the caller in and sets the cookie. A token the cookie
// held before (another login in this browser) is revoked: nothing else
// holds it.
func (h *sessionHandlers) handleOpen(c *fiber.Ctx) error {
	if !h.auth.origins.notCrossOrigin(c) {
		return errCrossOrigin
	}
	var (
		u   *account.User
		tok string
	)
	if len(c.Request().Header.Peek(fiber.HeaderAuthorization)) > 0 {
		if len(c.Body()) > 0 {
			return badRequest("body", "must be empty with an Authorization header, whose token moves into the cookie")
		}
		cr, err := h.auth.Credential(c)
		if err != nil {
			return err
		}
		if cr.Key != nil { // the scopes' guard refused it already; kept so that no change there can turn a key into a cookie
			return errInsufficientScope
		}
		u, tok = cr.User, bearer(c)
	} else {
		var b loginBody
		if err := decodeBody(c, &b); err != nil {
			return err
		}
		var err error
		if u, tok, err = h.accounts.Login(c.UserContext(), b.Email, b.Password); err != nil {
			return err
		}
		c.Locals(localUserID, u.ID) // for the access log
	}
	if old := c.Cookies(SessionCookie); old != "" && old != tok {
		if err := h.accounts.Logout(c.UserContext(), old); err != nil {
			return err
		}
	}
	v, err := h.profiles.build(c.UserContext(), u)
	if err != nil {
		return err
	}
	h.setCookie(c, tok, int(h.accounts.TokenTTL/time.Second))
	return c.JSON(fiber.Map{"user": v})
}

// DELETE /auth/session: revoke the cookie's token (after the logout
// hooks, as logout) and clear the cookie; 204, also without a cookie, or
// with one whose token is gone already. Checks run 403
// cross_origin_request (a cookie, and the request does not come from a
// page of this server), 403 insufficient_scope (an API key in the
// Authorization header).
var errsSessionEnd = table("internal_error")

// handleEnd ends the cookie session. The Authorization header, if any,
// is not what it ends: the cookie is.
func (h *sessionHandlers) handleEnd(c *fiber.Ctx) error {
	if tok := c.Cookies(SessionCookie); tok != "" {
		if !h.auth.origins.sameOrigin(c) {
			return errCrossOrigin
		}
		cr, err := h.accounts.Credential(c.UserContext(), tok)
		switch {
		case errors.Is(err, account.ErrUnauthorized): // expired, revoked or made up: nothing to revoke
		case err != nil:
			return err
		case cr.Key == nil:
			c.Locals(localUserID, cr.User.ID) // for the access log
			for _, hook := range h.onLogout {
				if err := hook(c.UserContext(), cr.User.ID); err != nil {
					return err
				}
			}
			if err := h.accounts.Logout(c.UserContext(), tok); err != nil {
				return err
			}
		}
	}
	clearSessionCookie(c, h.secure)
	return c.SendStatus(http.StatusNoContent)
}

// setCookie sets the session cookie to tok for maxAge seconds (the
// token's lifetime: it lives no longer).
func (h *sessionHandlers) setCookie(c *fiber.Ctx, tok string, maxAge int) {
	c.Cookie(&fiber.Cookie{
		Name: SessionCookie, Value: tok, Path: sessionCookiePath, MaxAge: maxAge,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: h.secure,
	})
}

// clearSessionCookie tells the browser to drop the session cookie.
func clearSessionCookie(c *fiber.Ctx, secure bool) {
	c.Cookie(&fiber.Cookie{
		Name: SessionCookie, Value: "", Path: sessionCookiePath, Expires: time.Unix(0, 0),
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: secure,
	})
}
