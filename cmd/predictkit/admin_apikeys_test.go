package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAdminAPIKeys(t *testing.T) {
	base := adminServer(t)
	status, reg, _ := api(t, base, http.MethodPost, "/api/v1/auth/register", "", map[string]any{"email": "bot-owner@example.com", "password": "correct horse battery", "name": "Boris"}, nil)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	token := reg["access_token"].(string)
	userID := fmt.Sprint(int64(reg["user"].(map[string]any)["id"].(float64)))
	status, created, _ := api(t, base, http.MethodPost, "/api/v1/auth/api-keys", token, map[string]any{"name": "Scalper", "scopes": []string{"trade", "read"}}, nil)
	if status != http.StatusCreated {
		t.Fatalf("create key: %d %v", status, created)
	}
	keyID := fmt.Sprint(int64(created["id"].(float64)))
	secret := created["key"].(string)

	t.Run("api-keys lists a user's keys without their secrets", func(t *testing.T) {
		out := mustAdmin(t, base, "api-keys", "-user", userID)
		contains(t, "api-keys", out, "KEY", "NAME", "SCOPES", "LAST_USED", keyID, "Scalper", "read,trade", "never")
		if strings.Contains(out, secret) {
			t.Fatalf("the listing shows the secret:\n%s", out)
		}
		var js struct {
			Keys []struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			} `json:"keys"`
		}
		if err := json.Unmarshal([]byte(mustAdmin(t, base, "-json", "api-keys", "-user", userID)), &js); err != nil || len(js.Keys) != 1 || fmt.Sprint(js.Keys[0].ID) != keyID {
			t.Fatalf("-json api-keys: %+v (%v)", js, err)
		}
	})
	t.Run("bad usage exits 2, an unknown user or key exits 1 with the server's 404", func(t *testing.T) {
		for _, args := range [][]string{{"api-keys"}, {"revoke-api-key", "-user", userID}, {"revoke-api-key", "-key", keyID}} {
			if code, _, stderr := admin(t, base, args...); code != 2 || stderr == "" {
				t.Errorf("%q: exit %d, stderr %q; want 2 with a message", args, code, stderr)
			}
		}
		if code, _, stderr := admin(t, base, "api-keys", "-user", "999999"); code != 1 || !strings.Contains(stderr, "404 user_not_found") {
			t.Errorf("unknown user: exit %d, stderr %q", code, stderr)
		}
		if code, _, stderr := admin(t, base, "revoke-api-key", "-user", userID, "-key", "999999"); code != 1 || !strings.Contains(stderr, "404 api_key_not_found") {
			t.Errorf("unknown key: exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("revoke-api-key revokes the key at once", func(t *testing.T) {
		if s, _, _ := api(t, base, http.MethodGet, "/api/v1/auth/me", secret, nil, nil); s != http.StatusOK {
			t.Fatalf("the key before revocation: %d", s)
		}
		out := mustAdmin(t, base, "revoke-api-key", "-user", userID, "-key", keyID)
		contains(t, "revoke-api-key", out, "revoked key "+keyID+" of user "+userID)
		if s, body, _ := api(t, base, http.MethodGet, "/api/v1/auth/me", secret, nil, nil); s != http.StatusUnauthorized {
			t.Fatalf("the revoked key: %d %v", s, body)
		}
		if out := mustAdmin(t, base, "api-keys", "-user", userID); strings.Contains(out, "Scalper") {
			t.Fatalf("the revoked key is still listed:\n%s", out)
		}
	})
}
