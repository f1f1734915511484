package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
}
