package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/server"
)

// TestAuthCacheAcrossServers runs two servers on one database, each
// trusting a looked-up token for an hour, and checks that a logout or a
// role change made through one is honoured by the other at once: only the
// announcement of the change can tell it.
func TestAuthCacheAcrossServers(t *testing.T) {
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
	// A rename with triggers off is a change nobody announces: server B
	// still showing the old name proves that it answers from its cache.
	if _, err := db.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	cached := func(t *testing.T, u apiUser) {
		t.Helper()
		for i := 0; ; i++ {
			b.me(t, u.token)
			name := fmt.Sprintf("Unannounced %d", i)
			if _, err := db.Exec(ctx, `UPDATE users SET name = $2 WHERE id = $1`, u.id, name); err != nil {
				t.Fatal(err)
			}
			if b.me(t, u.token).Name != name {
				return
			}
			if i == 200 {
				t.Fatal("server B never answered from its cache")
			}
			time.Sleep(50 * time.Millisecond) // B's feed is still connecting
		}
	}
	eventually := func(t *testing.T, what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("server B did not see %s within 20s (its cache trusts a token for an hour)", what)
			}
		}
	}

	t.Run("a token revoked on one server is refused by the other", func(t *testing.T) {
		ann := a.register(t, "ann")
		cached(t, ann)
		if on := mustMetric(t, b.scrape(t), "predictkit_auth_cache_on", nil); on != 1 {
			t.Errorf("predictkit_auth_cache_on = %v on a server answering from its cache", on)
		}
		expect(t, a.do(t, req{method: http.MethodPost, path: "/api/v1/auth/logout", token: ann.token}), http.StatusOK, "")
		eventually(t, "the logout", func() bool {
			return b.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: ann.token}).status == http.StatusUnauthorized
		})
	})
	t.Run("a role given on one server is seen by the other", func(t *testing.T) {
		bob := a.register(t, "bob")
		cached(t, bob)
		a.makeCreator(t, bob.id)
		eventually(t, "the new role", func() bool { return b.me(t, bob.token).IsCreator })
	})
	t.Run("a partner disabled on one server is refused by the other", func(t *testing.T) {
		p := a.createPartner(t, "Bookmaker", 0)
		state := func() int {
			return b.do(t, partnerReq(http.MethodGet, statePath("nobody"), p.Key, nil)).status
		}
		// Server B answers from its cache once it still accepts the key
		// after the key was changed unannounced (and put back).
		for i := 0; ; i++ {
			if s := state(); s != http.StatusOK {
				t.Fatalf("a known key answered %d, want 200", s)
			}
			if _, err := db.Exec(ctx, `UPDATE partners SET key_hash = 'x' || key_hash WHERE id = $1`, p.ID); err != nil {
				t.Fatal(err)
			}
			s := state()
			if _, err := db.Exec(ctx, `UPDATE partners SET key_hash = substr(key_hash, 2) WHERE id = $1`, p.ID); err != nil {
				t.Fatal(err)
			}
			if s == http.StatusOK {
				break
			}
			if i == 200 {
				t.Fatal("server B never answered a partner key from its cache")
			}
			time.Sleep(50 * time.Millisecond)
		}
		a.setPartnerDisabled(t, p.ID, true)
		eventually(t, "the disabled partner", func() bool { return state() == http.StatusForbidden })
		a.setPartnerDisabled(t, p.ID, false)
		eventually(t, "the re-enabled partner", func() bool { return state() == http.StatusOK })
	})
}

func TestAuthCacheSetting(t *testing.T) {
	if postgresURL == nil {
		t.Skip("no PostgreSQL test helper")
	}
	cases := []struct {
		name  string
		store string
		ttl   time.Duration
		want  float64
	}{
		{"the cache is on by default on PostgreSQL", "postgres", server.DefaultAuthCache, 1},
		{"0 turns the cache off", "postgres", 0, 0},
		{"the memory store has no cache: its look-up is as cheap", "memory", server.DefaultAuthCache, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(nil)
			cfg.Store, cfg.AuthCache = nil, c.ttl
			if c.store == "postgres" {
				cfg.DatabaseURL = postgresURL(t)
			}
			h, _ := startServer(t, cfg)
			for deadline := time.Now().Add(20 * time.Second); mustMetric(t, h.scrape(t), "predictkit_auth_cache_on", nil) != c.want; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("predictkit_auth_cache_on never became %v", c.want) // the feed connects in the background
				}
			}
			// Either way, a logout is refused at once.
			u := h.register(t, "cy")
			h.me(t, u.token)
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/logout", token: u.token}), http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: u.token}), http.StatusUnauthorized, "UNAUTHORIZED")
		})
	}
}
