package server

// What a personal API key may call: the one place the scopes are
// enforced. Each route's need is worked out once, from its method and
// path, when the app is built (routeScope); each request that carries a
// key is checked against it before its rate limit and its handler.

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
)

// errInsufficientScope: the caller's API key lacks the scope the route
// needs, or the route is never open to keys; the answer is 403
// insufficient_scope.
var errInsufficientScope = errors.New("server: the API key's scopes do not allow this request")

// tradeRoutes are the writing routes a trading bot needs, which the
// trade scope opens: buying, selling, and marking its notifications read
// (a bot that polls its unread notifications must be able to clear them).
// Every other writing route is closed to keys, whatever their scopes:
// creating events, commenting, reacting, the profile, chat, logout.
var tradeRoutes = map[string]bool{
	"POST /api/v1/markets/:market_id/buy":  true,
	"POST /api/v1/markets/:market_id/sell": true,
	"POST /api/v1/notifications/:id/read":  true,
	"POST /api/v1/notifications/read-all":  true,
}

// readWrites are writing routes that grant only reading, which the read
// scope opens: a stream ticket opens the caller's own stream.
var readWrites = map[string]bool{
	"POST /api/v1/stream/tickets": true,
}

// authPrefix is where credentials are managed: sign-up, log-in, log-out,
// the profile, passwords, API keys. A key may read its user's profile
// (GET /api/v1/auth/me) and nothing else here, so that a leaked key can
// never make itself new keys, change the password or lock its owner out.
const authPrefix = "/api/v1/auth/"

// routeScope is the scope an API key needs to call method path (a route
// pattern); ok is false when no key may call it at all.
func routeScope(method, path string) (scope account.Scope, ok bool) {
	route := method + " " + path
	switch {
	case strings.HasPrefix(path, authPrefix):
		if route == "GET /api/v1/auth/me" {
			return account.ScopeRead, true
		}
		return "", false
	case tradeRoutes[route]:
		return account.ScopeTrade, true
	case method == http.MethodGet || method == http.MethodHead || readWrites[route]:
		return account.ScopeRead, true
	}
	return "", false
}

// userRoute reports whether path is a route of the user API, where a
// Bearer credential is a user's. The operator's routes take the admin
// token and the partner API its own key: an API key there is no more
// than a wrong credential, which those routes answer themselves; the
// probes and the reference page take none.
func userRoute(path string) bool {
	return strings.HasPrefix(path, "/api/v1/") && !strings.HasPrefix(path, "/api/v1/admin/") &&
		!strings.HasPrefix(path, "/api/v1/partner/")
}

// keyScopes enforces routeScope on the requests that carry an API key.
type keyScopes struct{ users *Auth }

// guard wraps the handler of route method path. A request whose Bearer
// credential is an API key that authenticates is refused with
// errInsufficientScope unless the key holds the route's scope; a key that
// does not authenticate goes on to the handler, which treats it as any
// bad token (401 where authentication is required, anonymous where it is
// optional). Session tokens pass untouched.
func (ks keyScopes) guard(method, path string, h fiber.Handler) fiber.Handler {
	if ks.users == nil || !userRoute(path) {
		return h
	}
	need, open := routeScope(method, path)
	return func(c *fiber.Ctx) error {
		if !account.IsAPIKey(bearer(c)) {
			return h(c)
		}
		cr, err := ks.users.Credential(c)
		switch {
		case errors.Is(err, account.ErrUnauthorized):
			return h(c)
		case err != nil:
			return err
		case cr.Key != nil && (!open || !cr.Key.Allows(need)):
			return errInsufficientScope
		}
		return h(c)
	}
}
