package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// clock is a settable clock for the rate limits.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// expectLimited checks a 429 rate_limited answer with its Retry-After.
func expectLimited(t *testing.T, r *response, retryAfter string) {
	t.Helper()
	expect(t, r, http.StatusTooManyRequests, "rate_limited")
	if got := r.header.Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After %q, want %q", got, retryAfter)
	}
}

func TestRateLimits(t *testing.T) {
	limited := func(t *testing.T, clk *clock, f func(*server.Config)) *harness {
		return newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
			c.Now = clk.Now
			c.TrustedProxies = []string{"0.0.0.0"} // app.Test's peer: X-Forwarded-For names the client
			f(c)
		}))
	}
	from := func(ip string, r req) req {
		r.header = map[string]string{"X-Forwarded-For": ip}
		return r
	}
	login := func(email string) req {
		return req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": "password-x"}}
	}

	t.Run("login: the fourth attempt of a client in a minute of 3/m is 429, other clients are not, and a token comes back every 20 s", func(t *testing.T) {
		clk := newClock()
		h := limited(t, clk, func(c *server.Config) { c.RateLogin = server.Rate{N: 3, Per: time.Minute} })
		for range 3 {
			expect(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), http.StatusUnauthorized, "invalid_credentials")
		}
		expectLimited(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), "20")
		clk.advance(5 * time.Second)
		expectLimited(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), "15")
		expect(t, h.do(t, from("203.0.113.8", login("nobody@test.predictkit"))), http.StatusUnauthorized, "invalid_credentials")
		// Registration has a budget of its own.
		r := h.do(t, from("203.0.113.7", req{method: http.MethodPost, path: "/api/v1/auth/register",
			body: map[string]any{"email": "limited@test.predictkit", "password": "password-limited", "name": "L"}}))
		expect(t, r, http.StatusCreated, "")
		clk.advance(15 * time.Second)
		expect(t, h.do(t, from("203.0.113.7", login("limited@test.predictkit"))), http.StatusUnauthorized, "invalid_credentials")
		expectLimited(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), "20")
		clk.advance(time.Minute)
		for range 3 {
			expect(t, h.do(t, from("203.0.113.7", login("nobody@test.predictkit"))), http.StatusUnauthorized, "invalid_credentials")
		}
	})

	t.Run("trading: a user past 2/m gets 429 and nothing changes, another user trades, an unauthenticated trade is 401", func(t *testing.T) {
		clk := newClock()
		h := limited(t, clk, func(c *server.Config) { c.RateTrade = server.Rate{N: 2, Per: time.Minute} })
		w := newWorld(t, h)
		h.buy(t, w.alice.token, w.a1.ID, "YES", 1_000)
		h.buy(t, w.alice.token, w.a1.ID, "YES", 1_000)
		before := h.me(t, w.alice.token)
		buy := req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: w.alice.token, body: map[string]any{"side": "YES", "amount_kopecks": 1_000}}
		expectLimited(t, h.do(t, buy), "30")
		sell := req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/sell", w.a1.ID), token: w.alice.token, body: map[string]any{"side": "YES", "shares": 10}}
		expectLimited(t, h.do(t, sell), "30")
		if after := h.me(t, w.alice.token); after.Balance != before.Balance || after.Positions[0].Amount != before.Positions[0].Amount {
			t.Errorf("a refused trade changed Alice's account: %+v → %+v", before, after)
		}
		h.buy(t, w.bob.token, w.a1.ID, "YES", 1_000)
		anon := buy
		anon.token = ""
		expect(t, h.do(t, anon), http.StatusUnauthorized, "unauthorized")
		clk.advance(30 * time.Second)
		h.sell(t, w.alice.token, w.a1.ID, "YES", 10)
		expectLimited(t, h.do(t, buy), "30")
	})

	t.Run("partners: a partner past 3/m gets 429 on every partner route, another partner does not, a bad key is 401", func(t *testing.T) {
		clk := newClock()
		h := limited(t, clk, func(c *server.Config) { c.RatePartner = server.Rate{N: 3, Per: time.Minute} })
		w := newWorld(t, h)
		a, b := h.createPartner(t, "A", 1_000_000), h.createPartner(t, "B", 1_000_000)
		bet := func(key, id string) req {
			return betReq(key, map[string]any{"external_user_id": "u", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 1_000, "client_bet_id": id})
		}
		expect(t, h.do(t, bet(a.Key, "1")), http.StatusOK, "")
		expect(t, h.do(t, bet(a.Key, "1")), http.StatusOK, "") // a replay counts too
		h.partnerState(t, a.Key, "u")
		expectLimited(t, h.do(t, bet(a.Key, "2")), "20")
		expectLimited(t, h.do(t, partnerReq(http.MethodGet, statePath("u"), a.Key, nil)), "20")
		expectLimited(t, h.do(t, sellReq(a.Key, map[string]any{"external_user_id": "u", "market_id": w.a1.ID, "side": "yes", "shares": 10, "client_bet_id": "3"})), "20")
		expect(t, h.do(t, bet(b.Key, "1")), http.StatusOK, "")
		expect(t, h.do(t, bet("pk_wrong", "1")), http.StatusUnauthorized, "UNAUTHORIZED")
		clk.advance(20 * time.Second)
		expect(t, h.do(t, bet(a.Key, "2")), http.StatusOK, "")
	})

	t.Run("off: a limit of off lets any number through", func(t *testing.T) {
		h := limited(t, newClock(), func(c *server.Config) { c.RateLogin, c.LoginFailuresPerAccount = server.Rate{}, 0 })
		for range 50 {
			expect(t, h.do(t, login("nobody@test.predictkit")), http.StatusUnauthorized, "invalid_credentials")
		}
	})
}

// TestClientAddress: the rate limit's key is the client's address. Behind
// a trusted proxy it is the rightmost X-Forwarded-For hop that is not a
// trusted proxy; from any other peer the header is ignored.
func TestClientAddress(t *testing.T) {
	login := func(xff string) req {
		r := req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": "nobody@test.predictkit", "password": "password-x"}}
		if xff != "" {
			r.header = map[string]string{"X-Forwarded-For": xff}
		}
		return r
	}
	build := func(t *testing.T, trusted ...string) *harness {
		return newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
			c.RateLogin = server.Rate{N: 1, Per: time.Hour}
			c.TrustedProxies = trusted
		}))
	}
	t.Run("from an untrusted peer a varying X-Forwarded-For does not buy a fresh budget", func(t *testing.T) {
		h := build(t, "10.0.0.0/8") // app.Test's peer, 0.0.0.0, is not a proxy
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "")
		expect(t, h.do(t, login("198.51.100.2")), http.StatusTooManyRequests, "rate_limited")
		expect(t, h.do(t, login("")), http.StatusTooManyRequests, "rate_limited")
	})
	t.Run("with no trusted proxy configured X-Forwarded-For is ignored", func(t *testing.T) {
		h := build(t)
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "")
		expect(t, h.do(t, login("198.51.100.2")), http.StatusTooManyRequests, "rate_limited")
	})
	t.Run("behind a trusted proxy each client has its own budget", func(t *testing.T) {
		h := build(t, "0.0.0.0", "10.0.0.0/8")
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "")
		expect(t, h.do(t, login("198.51.100.2")), http.StatusUnauthorized, "")
		expect(t, h.do(t, login("198.51.100.1")), http.StatusTooManyRequests, "rate_limited")
	})
	t.Run("behind a trusted proxy what the client prepends is not believed", func(t *testing.T) {
		h := build(t, "0.0.0.0", "10.0.0.0/8")
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "")
		for _, spoof := range []string{"1.1.1.1, 198.51.100.1", "garbage, 198.51.100.1", "198.51.100.9, 198.51.100.1, 10.0.0.5", "2.2.2.2,198.51.100.1:4711"} {
			expect(t, h.do(t, login(spoof)), http.StatusTooManyRequests, "rate_limited")
		}
	})
}
