package server

import (
	"testing"

	"github.com/predictkit/predictkit/account"
)

func TestRouteScope(t *testing.T) {
	never := account.Scope("")
	cases := []struct {
		name, method, path string
		want               account.Scope
	}{
		{"reading the profile needs read", "GET", "/api/v1/auth/me", account.ScopeRead},
		{"changing the profile is never open to keys", "PATCH", "/api/v1/auth/me", never},
		{"listing keys is never open to keys", "GET", "/api/v1/auth/api-keys", never},
		{"making a key is never open to keys", "POST", "/api/v1/auth/api-keys", never},
		{"revoking a key is never open to keys", "DELETE", "/api/v1/auth/api-keys/:id", never},
		{"changing the password is never open to keys", "POST", "/api/v1/auth/password", never},
		{"asking for a password reset is never open to keys", "POST", "/api/v1/auth/password/reset-request", never},
		{"resetting a password is never open to keys", "POST", "/api/v1/auth/password/reset", never},
		{"any later route under /auth/ is never open to keys", "GET", "/api/v1/auth/sessions", never},
		{"logging out is never open to keys", "POST", "/api/v1/auth/logout", never},
		{"a Telegram link is never open to keys", "POST", "/api/v1/auth/telegram/link", never},
		{"unlinking Telegram is never open to keys", "DELETE", "/api/v1/auth/telegram", never},
		{"the Telegram webhook is never open to keys", "POST", "/api/v1/telegram/webhook/:secret", never},
		{"buying needs trade", "POST", "/api/v1/markets/:market_id/buy", account.ScopeTrade},
		{"selling needs trade", "POST", "/api/v1/markets/:market_id/sell", account.ScopeTrade},
		{"marking a notification read needs trade", "POST", "/api/v1/notifications/:id/read", account.ScopeTrade},
		{"marking all notifications read needs trade", "POST", "/api/v1/notifications/read-all", account.ScopeTrade},
		{"a stream ticket needs read", "POST", "/api/v1/stream/tickets", account.ScopeRead},
		{"the stream needs read", "GET", "/api/v1/stream", account.ScopeRead},
		{"the own trade history needs read", "GET", "/api/v1/users/me/trades", account.ScopeRead},
		{"a quote needs read", "GET", "/api/v1/markets/:market_id/quote", account.ScopeRead},
		{"creating an event is never open to keys", "POST", "/api/v1/events", never},
		{"commenting is never open to keys", "POST", "/api/v1/events/:event_id/comments", never},
		{"reacting is never open to keys", "PUT", "/api/v1/comments/:id/reaction", never},
		{"moving a pool's window is never open to keys", "PATCH", "/api/v1/pools/:id", never},
		{"an unknown writing route is never open to keys", "POST", "/api/v1/something/new", never},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := routeScope(c.method, c.path)
			if ok != (c.want != never) || got != c.want {
				t.Fatalf("routeScope(%s %s) = %q, %v; want %q", c.method, c.path, got, ok, c.want)
			}
		})
	}
}

func TestUserRoute(t *testing.T) {
	for path, want := range map[string]bool{
		"/api/v1/auth/me":           true,
		"/api/v1/markets/:id/buy":   true,
		"/api/v1/admin/users":       false,
		"/api/v1/partner/bet":       false,
		"/healthz":                  false,
		"/docs":                     false,
		"/api/v1/partners-and-more": true,
	} {
		if got := userRoute(path); got != want {
			t.Errorf("userRoute(%q) = %v, want %v", path, got, want)
		}
	}
}
