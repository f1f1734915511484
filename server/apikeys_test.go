package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/server"
)

// apiKey is a created key as POST /api/v1/auth/api-keys answers it.
type apiKey struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	Key       string   `json:"key"`
	CreatedAt string   `json:"created_at"`
}

type listedKey struct {
	ID         int64    `json:"id"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
}

func (h *harness) createKey(t *testing.T, token, name string, scopes ...string) apiKey {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/api-keys", token: token, body: map[string]any{"name": name, "scopes": scopes}})
	expect(t, r, http.StatusCreated, "")
	var k apiKey
	r.decode(t, &k)
	return k
}

func (h *harness) listKeys(t *testing.T, token string) []listedKey {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/api-keys", token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Keys []listedKey `json:"keys"`
	}
	r.decode(t, &out)
	return out.Keys
}

func TestAPIKeys(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)

		t.Run("a key is shown once at creation and listed without its secret", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/api-keys", token: w.alice.token, body: map[string]any{"name": "Market maker", "scopes": []string{"trade", "read"}}})
			expect(t, r, http.StatusCreated, "")
			if cc := r.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			var k apiKey
			r.decode(t, &k)
			if !strings.HasPrefix(k.Key, "pak_") || len(k.Key) != 47 || k.Name != "Market maker" || strings.Join(k.Scopes, ",") != "read,trade" {
				t.Fatalf("created %+v", k)
			}
			ks := h.listKeys(t, w.alice.token)
			if len(ks) != 1 || ks[0].ID != k.ID || ks[0].CreatedAt != k.CreatedAt || ks[0].LastUsedAt != nil {
				t.Fatalf("listed %+v", ks)
			}
			if strings.Contains(string(h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/api-keys", token: w.alice.token}).body), k.Key) {
				t.Fatal("the list shows the secret")
			}
			if me := h.me(t, k.Key); me.ID != w.alice.id {
				t.Fatalf("the key authenticated as user %d, want %d", me.ID, w.alice.id)
			}
			if ks := h.listKeys(t, w.alice.token); ks[0].LastUsedAt == nil {
				t.Error("a used key has no last_used_at")
			}
			if ks := h.listKeys(t, w.bob.token); len(ks) != 0 {
				t.Fatalf("bob sees keys %+v", ks)
			}
		})

		t.Run("a bad key request is refused and stores nothing", func(t *testing.T) {
			cases := []struct {
				name string
				body any
			}{
				{"an empty name", map[string]any{"name": "  ", "scopes": []string{"read"}}},
				{"a name over 64 characters", map[string]any{"name": strings.Repeat("й", 65), "scopes": []string{"read"}}},
				{"no scopes", map[string]any{"name": "bot", "scopes": []string{}}},
				{"missing scopes", map[string]any{"name": "bot"}},
				{"an unknown scope", map[string]any{"name": "bot", "scopes": []string{"read", "admin"}}},
				{"a scope twice", map[string]any{"name": "bot", "scopes": []string{"read", "read"}}},
				{"scopes that are not strings", map[string]any{"name": "bot", "scopes": []int{1}}},
				{"an unknown field", map[string]any{"name": "bot", "scopes": []string{"read"}, "expires": 1}},
				{"a body that is not JSON", "name=bot"},
			}
			for _, c := range cases {
				t.Run(c.name+" is 400 invalid_request", func(t *testing.T) {
					expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/api-keys", token: w.bob.token, body: c.body}), http.StatusBadRequest, "invalid_request")
				})
			}
			if ks := h.listKeys(t, w.bob.token); len(ks) != 0 {
				t.Fatalf("refused requests stored keys %+v", ks)
			}
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/api-keys", body: map[string]any{"name": "bot", "scopes": []string{"read"}}}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/api-keys"}), http.StatusUnauthorized, "unauthorized")
		})

		t.Run("a read key reads but cannot trade", func(t *testing.T) {
			k := h.createKey(t, w.bob.token, "reader", "read")
			before := h.me(t, w.bob.token).Balance
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/trades", token: k.Key}), http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d", w.a1.ID), token: k.Key}), http.StatusOK, "")
			for _, path := range []string{"buy", "sell"} {
				body := map[string]any{"side": "YES", "amount_kopecks": 1000}
				if path == "sell" {
					body = map[string]any{"side": "YES", "shares": 100}
				}
				expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/%s", w.a1.ID, path), token: k.Key, body: body}), http.StatusForbidden, "insufficient_scope")
			}
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/notifications/read-all", token: k.Key}), http.StatusForbidden, "insufficient_scope")
			if after := h.me(t, w.bob.token).Balance; after != before {
				t.Fatalf("a refused trade moved the balance from %d to %d", before, after)
			}
		})

		t.Run("a trade key trades but cannot read", func(t *testing.T) {
			k := h.createKey(t, w.alice.token, "trader", "trade")
			tr := h.buy(t, k.Key, w.a1.ID, "YES", 5_000)
			h.sell(t, k.Key, w.a1.ID, "YES", tr.Shares/2)
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/notifications/read-all", token: k.Key}), http.StatusOK, "")
			for _, path := range []string{"/api/v1/auth/me", "/api/v1/users/me/trades", fmt.Sprintf("/api/v1/markets/%d", w.a1.ID), "/api/v1/notifications/unread"} {
				expect(t, h.do(t, req{method: http.MethodGet, path: path, token: k.Key}), http.StatusForbidden, "insufficient_scope")
			}
		})

		t.Run("no key manages keys, passwords, the profile or the session", func(t *testing.T) {
			k := h.createKey(t, w.alice.token, "everything", "read", "trade")
			other := h.createKey(t, w.alice.token, "other", "read")
			for _, r := range []req{
				{method: http.MethodPost, path: "/api/v1/auth/api-keys", body: map[string]any{"name": "child", "scopes": []string{"read"}}},
				{method: http.MethodGet, path: "/api/v1/auth/api-keys"},
				{method: http.MethodDelete, path: fmt.Sprintf("/api/v1/auth/api-keys/%d", other.ID)},
				{method: http.MethodDelete, path: fmt.Sprintf("/api/v1/auth/api-keys/%d", k.ID)},
				{method: http.MethodPatch, path: "/api/v1/auth/me", body: map[string]any{"name": "Pwned"}},
				{method: http.MethodPost, path: "/api/v1/auth/logout"},
				{method: http.MethodPost, path: "/api/v1/events", body: twoPoolEvent("Not by a key")},
				{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/comments", w.event.ID), body: map[string]any{"content": "hi"}},
			} {
				t.Run(r.method+" "+r.path+" is 403 insufficient_scope", func(t *testing.T) {
					r.token = k.Key
					expect(t, h.do(t, r), http.StatusForbidden, "insufficient_scope")
				})
			}
			if ks := h.listKeys(t, w.alice.token); len(ks) < 2 || h.me(t, w.alice.token).Name == "Pwned" {
				t.Fatalf("a refused key request changed something: keys %+v", ks)
			}
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: k.Key}), http.StatusOK, "")
		})

		t.Run("a revoked key is refused at once, and only its owner revokes it", func(t *testing.T) {
			k := h.createKey(t, w.bob.token, "short-lived", "read")
			h.me(t, k.Key)
			path := fmt.Sprintf("/api/v1/auth/api-keys/%d", k.ID)
			expect(t, h.do(t, req{method: http.MethodDelete, path: path, token: w.alice.token}), http.StatusNotFound, "api_key_not_found")
			h.me(t, k.Key)
			expect(t, h.do(t, req{method: http.MethodDelete, path: path}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodDelete, path: "/api/v1/auth/api-keys/x", token: w.bob.token}), http.StatusBadRequest, "invalid_id")
			expect(t, h.do(t, req{method: http.MethodDelete, path: path, token: w.bob.token}), http.StatusNoContent, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: k.Key}), http.StatusUnauthorized, "UNAUTHORIZED")
			expect(t, h.do(t, req{method: http.MethodDelete, path: path, token: w.bob.token}), http.StatusNotFound, "api_key_not_found")
			expect(t, h.do(t, req{method: http.MethodDelete, path: "/api/v1/auth/api-keys/999999", token: w.bob.token}), http.StatusNotFound, "api_key_not_found")
		})

		t.Run("the operator lists and revokes a user's keys", func(t *testing.T) {
			k := h.createKey(t, w.bob.token, "leaked", "read", "trade")
			admin := map[string]string{"Authorization": "Bearer " + adminToken}
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/admin/users/%d/api-keys", w.bob.id), header: admin})
			expect(t, r, http.StatusOK, "")
			var out struct {
				Keys []listedKey `json:"keys"`
			}
			r.decode(t, &out)
			if len(out.Keys) == 0 || out.Keys[0].ID != k.ID || strings.Contains(string(r.body), k.Key) {
				t.Fatalf("the operator's list: %s", r.body)
			}
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/users/999999/api-keys", header: admin}), http.StatusNotFound, "user_not_found")
			expect(t, h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/admin/users/%d/api-keys", w.bob.id), token: k.Key}), http.StatusUnauthorized, "unauthorized")
			path := fmt.Sprintf("/api/v1/admin/users/%d/api-keys/%d", w.alice.id, k.ID)
			expect(t, h.do(t, req{method: http.MethodDelete, path: path, header: admin}), http.StatusNotFound, "api_key_not_found")
			h.me(t, k.Key)
			path = fmt.Sprintf("/api/v1/admin/users/%d/api-keys/%d", w.bob.id, k.ID)
			expect(t, h.do(t, req{method: http.MethodDelete, path: path, header: admin}), http.StatusNoContent, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: k.Key}), http.StatusUnauthorized, "UNAUTHORIZED")
			expect(t, h.do(t, req{method: http.MethodDelete, path: path, header: admin}), http.StatusNotFound, "api_key_not_found")
		})

		t.Run("an unknown key is a bad token: anonymous on public routes, 401 elsewhere", func(t *testing.T) {
			fake := "pak_" + strings.Repeat("A", 43)
			expect(t, h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID), token: fake}), http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/trades", token: fake}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/api-keys", token: fake, body: map[string]any{"name": "x", "scopes": []string{"read"}}}), http.StatusUnauthorized, "unauthorized")
		})

		t.Run("a stream ticket is read scope", func(t *testing.T) {
			reader, trader := h.createKey(t, w.bob.token, "streamer", "read"), h.createKey(t, w.bob.token, "no reads", "trade")
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/stream/tickets", token: reader.Key}), http.StatusCreated, "")
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/stream/tickets", token: trader.Key}), http.StatusForbidden, "insufficient_scope")
		})
	})
}

// TestAPIKeysStreamMe opens the me topic with a read key: the stream is
// the key's user's.
func TestAPIKeysStreamMe(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h = streamHarness(t, h.store)
		w := newWorld(t, h)
		reader := h.createKey(t, w.alice.token, "streamer", "read")
		trader := h.createKey(t, w.alice.token, "no reads", "trade")
		t.Run("a read key opens the me topic of its user", func(t *testing.T) {
			c := openStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + reader.Key})
			h.credit(t, w.alice.id, 100, false)
			if m := c.message(t); m.event != "balance" || !strings.Contains(m.data, fmt.Sprintf(`"user_id":%d`, w.alice.id)) {
				t.Fatalf("got %v, want alice's balance", m)
			}
		})
		t.Run("a trade key cannot open a stream", func(t *testing.T) {
			_, res := tryStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + trader.Key})
			if res == nil || res.status != http.StatusForbidden || res.errorCode() != "insufficient_scope" {
				t.Fatalf("answered %v, want 403 insufficient_scope", res)
			}
		})
	})
}

// TestAPIKeysShareTheUsersRateLimit: a bot's key spends its user's
// trading budget, so that keys cannot multiply it.
func TestAPIKeysShareTheUsersRateLimit(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.RateTrade = server.Rate{N: 2, Per: time.Hour} }))
			w := newWorld(t, h)
			k1, k2 := h.createKey(t, w.alice.token, "bot 1", "trade"), h.createKey(t, w.alice.token, "bot 2", "trade")
			h.buy(t, w.alice.token, w.a1.ID, "YES", 1000)
			h.buy(t, k1.Key, w.a1.ID, "YES", 1000)
			r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: k2.Key, body: map[string]any{"side": "YES", "amount_kopecks": 1000}})
			expect(t, r, http.StatusTooManyRequests, "rate_limited")
			// Another user's budget is untouched.
			h.buy(t, w.bob.token, w.a1.ID, "YES", 1000)
		})
	}
}

// TestAPIKeyRevocationAcrossServers runs two servers on one database,
// each trusting a looked-up credential for an hour: a key revoked through
// one is refused by the other at once, which only the announcement of the
// revocation can tell it.
func TestAPIKeyRevocationAcrossServers(t *testing.T) {
	if postgresURL == nil {
		t.Skip("no PostgreSQL test helper")
	}
	dbURL := postgresURL(t)
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.DatabaseURL = dbURL
	cfg.AuthCache = time.Hour
	a, _ := startServer(t, cfg)
	b, _ := startServer(t, cfg)

	ctx := context.Background()
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	ann := a.register(t, "ann")
	k := a.createKey(t, ann.token, "bot", "read")
	// Server B answers from its cache once a rename made with the triggers
	// off (announced to nobody) does not show through the key.
	for i := 0; ; i++ {
		b.me(t, k.Key)
		name := fmt.Sprintf("Unannounced %d", i)
		if _, err := db.Exec(ctx, `UPDATE users SET name = $2 WHERE id = $1`, ann.id, name); err != nil {
			t.Fatal(err)
		}
		if b.me(t, k.Key).Name != name {
			break
		}
		if i == 200 {
			t.Fatal("server B never answered the key from its cache")
		}
		time.Sleep(50 * time.Millisecond) // B's feed is still connecting
	}
	expect(t, a.do(t, req{method: http.MethodDelete, path: fmt.Sprintf("/api/v1/auth/api-keys/%d", k.ID), token: ann.token}), http.StatusNoContent, "")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: k.Key}).status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server B still accepts the revoked key after 20s (its cache trusts it for an hour)")
		}
	}
	// The token that made the key, cached too, still works: only the key
	// was revoked.
	b.me(t, ann.token)
}

// TestOwnTrades pages GET /api/v1/users/me/trades.
func TestOwnTrades(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		var want []int64
		for i := range 5 {
			m := w.a1.ID
			if i%2 == 1 {
				m = w.b1.ID
			}
			want = append([]int64{h.buy(t, w.alice.token, m, "YES", int64(1000+100*i)).TradeID}, want...)
			h.buy(t, w.bob.token, m, "NO", 700)
		}
		sold := h.sell(t, w.alice.token, w.a1.ID, "YES", 50)
		want = append([]int64{sold.TradeID}, want...)

		type ownTrade struct {
			TradeID        int64   `json:"trade_id"`
			MarketID       int64   `json:"market_id"`
			Side           string  `json:"side"`
			Action         string  `json:"action"`
			Shares         int64   `json:"shares"`
			AmountKopecks  int64   `json:"amount_kopecks"`
			FeeKopecks     int64   `json:"fee_kopecks"`
			AvgPriceBps    int64   `json:"avg_price_bps"`
			YesProbability float64 `json:"yes_probability"`
			CreatedAt      string  `json:"created_at"`
		}
		type page struct {
			Trades     []ownTrade `json:"trades"`
			NextCursor *string    `json:"next_cursor"`
		}
		get := func(t *testing.T, token, query string) page {
			t.Helper()
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/trades" + query, token: token})
			expect(t, r, http.StatusOK, "")
			var p page
			r.decode(t, &p)
			return p
		}

		t.Run("the caller's trades come newest first, a page at a time", func(t *testing.T) {
			var got []int64
			q := "?limit=4"
			for n := 0; ; n++ {
				p := get(t, w.alice.token, q)
				for _, tr := range p.Trades {
					got = append(got, tr.TradeID)
				}
				if p.NextCursor == nil {
					break
				}
				q = "?limit=4&cursor=" + *p.NextCursor
				if n > 5 {
					t.Fatal("the pages never end")
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("trade ids %v, want %v", got, want)
			}
			first := get(t, w.alice.token, "").Trades[0]
			if first.TradeID != sold.TradeID || first.Action != "sell" || first.Side != "YES" || first.Shares != 50 ||
				first.AmountKopecks != sold.PayoutKopecks || first.FeeKopecks != sold.FeeKopecks || first.AvgPriceBps != sold.AvgPriceBps || first.MarketID != w.a1.ID {
				t.Fatalf("the newest trade %+v, the sale was %+v", first, sold)
			}
		})

		t.Run("a user without trades has an empty last page", func(t *testing.T) {
			p := get(t, w.creator.token, "")
			if p.Trades == nil || len(p.Trades) != 0 || p.NextCursor != nil {
				t.Fatalf("page %+v", p)
			}
		})

		t.Run("trades made while paging never show twice nor shift the later pages", func(t *testing.T) {
			p1 := get(t, w.alice.token, "?limit=2")
			seen := map[int64]bool{}
			for _, tr := range p1.Trades {
				seen[tr.TradeID] = true
			}
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // alice's bot keeps trading meanwhile
				defer wg.Done()
				for range 6 {
					r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a2.ID), token: w.alice.token, body: map[string]any{"side": "NO", "amount_kopecks": 800}})
					if r.status != http.StatusOK {
						t.Errorf("buy while paging: %s", r)
					}
				}
			}()
			var rest []int64
			for cursor := p1.NextCursor; cursor != nil; {
				p := get(t, w.alice.token, "?limit=2&cursor="+*cursor)
				for _, tr := range p.Trades {
					if seen[tr.TradeID] {
						t.Fatalf("trade %d shown twice", tr.TradeID)
					}
					seen[tr.TradeID] = true
					rest = append(rest, tr.TradeID)
				}
				cursor = p.NextCursor
			}
			wg.Wait()
			if fmt.Sprint(rest) != fmt.Sprint(want[2:]) {
				t.Fatalf("the later pages %v, want %v as they were before the new trades", rest, want[2:])
			}
		})

		t.Run("a bad limit or cursor is 400 invalid_request", func(t *testing.T) {
			for _, q := range []string{"?limit=0", "?limit=-1", "?limit=101", "?limit=abc", "?limit=1.5", "?cursor=%21%21", "?cursor=MTA", "?cursor=dDA"} {
				t.Run(q, func(t *testing.T) {
					expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/trades" + q, token: w.alice.token}), http.StatusBadRequest, "invalid_request")
				})
			}
		})

		t.Run("the history needs a caller", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/trades"}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/trades", token: "nope"}), http.StatusUnauthorized, "unauthorized")
		})
	})
}
