package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logLines parses JSON log lines.
func logLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// TestLogsNeverHoldSecrets captures every log line, at DEBUG (fx's own
// events included), while users register and log in, use their tokens, a
// partner uses its key, the operator its token, a chat its cookie, and
// wrong credentials are tried; none of those secrets may appear.
func TestLogsNeverHoldSecrets(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
		c.Logger = logger
		c.LogLevel = "debug"
	}))

	const password = "correct-horse-battery-staple-42"
	const wrongPassword = "not-my-password-but-still-secret"
	const bogusToken = "bogus-token-that-must-not-be-logged"
	const bogusKey = "pk_bogus-key-that-must-not-be-logged"
	secrets := []string{password, wrongPassword, bogusToken, bogusKey, adminToken}
	requests := 0
	do := func(r req) *response {
		requests++
		return h.do(t, r)
	}

	r := do(req{method: http.MethodPost, path: "/api/v1/auth/register", body: map[string]any{"email": "sec@example.com", "password": password, "name": "Sec"}})
	expect(t, r, http.StatusCreated, "")
	var reg struct {
		AccessToken string `json:"access_token"`
		User        struct {
			ID int64 `json:"id"`
		} `json:"user"`
	}
	r.decode(t, &reg)
	r = do(req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": "sec@example.com", "password": password}})
	expect(t, r, http.StatusOK, "")
	var login struct {
		AccessToken string `json:"access_token"`
	}
	r.decode(t, &login)
	expect(t, do(req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": "sec@example.com", "password": wrongPassword}}), http.StatusUnauthorized, "")
	expect(t, do(req{method: http.MethodGet, path: "/api/v1/auth/me", token: login.AccessToken}), http.StatusOK, "")
	expect(t, do(req{method: http.MethodGet, path: "/api/v1/auth/me", token: bogusToken}), http.StatusUnauthorized, "")
	expect(t, do(req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/users/%d/credit", reg.User.ID), token: adminToken,
		body: map[string]any{"amount_kopecks": 1000}}), http.StatusOK, "")
	r = do(req{method: http.MethodPost, path: "/api/v1/admin/partners", token: adminToken, body: map[string]any{"name": "Logged partner"}})
	expect(t, r, http.StatusCreated, "")
	var p struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	r.decode(t, &p)
	expect(t, do(req{method: http.MethodGet, path: "/api/v1/partner/users/someone", header: map[string]string{"X-Partner-Key": p.Key}}), http.StatusOK, "")
	expect(t, do(req{method: http.MethodGet, path: "/api/v1/partner/users/someone", header: map[string]string{"X-Partner-Key": bogusKey}}), http.StatusUnauthorized, "")
	r = do(req{method: http.MethodPost, path: "/api/v1/chat/session"})
	expect(t, r, http.StatusOK, "")
	cookie := ""
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == server.ChatCookie {
			cookie = c.Value
		}
	}
	if cookie == "" {
		t.Fatal("no chat cookie")
	}
	expect(t, do(req{method: http.MethodPost, path: "/api/v1/chat/messages", body: map[string]any{"text": "hello"},
		header: map[string]string{"Cookie": server.ChatCookie + "=" + cookie}}), http.StatusCreated, "")
	expect(t, do(req{method: http.MethodPost, path: "/api/v1/auth/logout", token: reg.AccessToken}), http.StatusOK, "")
	secrets = append(secrets, reg.AccessToken, login.AccessToken, p.Key, cookie)

	out := logs.String()
	t.Run("no secret appears in any log line", func(t *testing.T) {
		for _, s := range secrets {
			if s == "" {
				t.Fatal("a secret is empty: the test is broken")
			}
			if strings.Contains(out, s) {
				t.Errorf("the logs contain the secret %q", s)
			}
		}
	})
	lines := logLines(t, out)
	var reqs []map[string]any
	for _, l := range lines {
		if l["msg"] == "request" {
			reqs = append(reqs, l)
		}
	}
	t.Run("one structured line per request, with method, route template, status, duration and request id", func(t *testing.T) {
		if len(reqs) != requests {
			t.Fatalf("%d request lines for %d requests", len(reqs), requests)
		}
		for _, l := range reqs {
			for _, k := range []string{"method", "route", "status", "duration", "request_id"} {
				if _, ok := l[k]; !ok {
					t.Errorf("a request line lacks %s: %v", k, l)
				}
			}
		}
		if reqs[7]["route"] != "/api/v1/partner/users/:external_user_id" {
			t.Errorf("route %v, want the template", reqs[7]["route"])
		}
	})
	t.Run("the line names the authenticated caller", func(t *testing.T) {
		if id, _ := reqs[3]["user_id"].(float64); int64(id) != reg.User.ID {
			t.Errorf("GET /auth/me logged user_id %v, want %d", reqs[3]["user_id"], reg.User.ID)
		}
		if _, ok := reqs[4]["user_id"]; ok {
			t.Errorf("a refused token logged a user: %v", reqs[4])
		}
		if reqs[5]["operator"] != true {
			t.Errorf("an operator request does not say operator: %v", reqs[5])
		}
		if id, _ := reqs[7]["partner_id"].(float64); int64(id) != p.ID {
			t.Errorf("a partner request logged partner_id %v, want %d", reqs[7]["partner_id"], p.ID)
		}
		if _, ok := reqs[8]["partner_id"]; ok {
			t.Errorf("an unknown key logged a partner: %v", reqs[8])
		}
	})
	t.Run("fx's own events are logged only at DEBUG", func(t *testing.T) {
		var quiet syncBuffer
		qh := newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
			c.Logger = slog.New(slog.NewJSONHandler(&quiet, &slog.HandlerOptions{Level: slog.LevelInfo}))
			c.LogLevel = "info"
		}))
		qh.do(t, req{method: http.MethodGet, path: "/healthz"})
		if s := quiet.String(); s != "" {
			t.Errorf("at INFO, building the server and a probe logged:\n%s", s)
		}
		fxEvents := 0
		for _, l := range lines {
			if _, ok := l["constructor"]; ok {
				fxEvents++
			}
		}
		if fxEvents == 0 {
			t.Error("at DEBUG, fx logged no event")
		}
	})
}
