package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/internal/telegramtest"
)

// TestTelegramLinkReachesOtherServersCaches: a chat linked through one
// server's webhook, and unlinked there, is seen at once by another
// server on the same database that answers its users from its
// authentication cache (the users' change feed announces it).
func TestTelegramLinkReachesOtherServersCaches(t *testing.T) {
	if postgresURL == nil {
		t.Skip("no PostgreSQL test helper")
	}
	dbURL := postgresURL(t)
	api := telegramtest.New(telegramToken)
	t.Cleanup(api.Close)
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.DatabaseURL = dbURL
	cfg.AuthCache = time.Hour
	cfg.TelegramBotToken, cfg.TelegramAPIURL, cfg.TelegramWebhookSecret = telegramToken, api.URL(), telegramSecret
	a, _ := startServer(t, cfg)
	b, _ := startServer(t, cfg)
	api.SetWebhook("http://"+a.base+telegramHook+telegramSecret, telegramSecret)
	ea, eb := &telegramEnv{h: a, api: api}, &telegramEnv{h: b, api: api}

	ctx := context.Background()
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	// A rename nobody announces (triggers off) still unseen by B proves
	// that B answers from its cache.
	if _, err := db.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	ann := a.register(t, "ann")
	for i := 0; ; i++ {
		b.me(t, ann.token)
		name := fmt.Sprintf("Unannounced %d", i)
		if _, err := db.Exec(ctx, `UPDATE users SET name = $2 WHERE id = $1`, ann.id, name); err != nil {
			t.Fatal(err)
		}
		if b.me(t, ann.token).Name != name {
			break
		}
		if i == 200 {
			t.Fatal("server B never answered from its cache")
		}
		time.Sleep(50 * time.Millisecond)
	}
	eventually := func(what string, verified, notifications bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if v, n := eb.state(t, ann); v == verified && n == notifications {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("server B did not see %s within 20s (its cache trusts a token for an hour)", what)
			}
		}
	}
	ea.linkChat(t, ann, 5001)
	eventually("the link", true, true)
	expect(t, a.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: ann.token, body: map[string]any{"telegram_notifications": false}}), http.StatusOK, "")
	eventually("the notifications turned off", true, false)
	expect(t, a.do(t, req{method: http.MethodDelete, path: "/api/v1/auth/telegram", token: ann.token}), http.StatusNoContent, "")
	eventually("the unlink", false, false)
}
