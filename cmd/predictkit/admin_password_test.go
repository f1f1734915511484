package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// printedToken is the token reset-password prints under its heading.
var printedToken = regexp.MustCompile(`(?m)^Reset token .*:\n(\S+)$`)

func TestAdminResetPassword(t *testing.T) {
	base := adminServerWith(t, func(c *server.Config) { c.PublicURL = "https://app.example.com" })
	register := func(t *testing.T, email string) string {
		t.Helper()
		status, out, _ := api(t, base, http.MethodPost, "/api/v1/auth/register", "", map[string]any{"email": email, "password": "old password", "name": "Nell"}, nil)
		if status != http.StatusCreated {
			t.Fatalf("register: %d %v", status, out)
		}
		return out["access_token"].(string)
	}
	reset := func(t *testing.T, token, password string) int {
		t.Helper()
		status, _, _ := api(t, base, http.MethodPost, "/api/v1/auth/password/reset", "", map[string]any{"token": token, "new_password": password}, nil)
		return status
	}
	login := func(t *testing.T, email, password string) int {
		t.Helper()
		status, _, _ := api(t, base, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": password}, nil)
		return status
	}

	t.Run("an e-mail, in any case, gets a token and a link that reset the password", func(t *testing.T) {
		old := register(t, "nell@example.com")
		register(t, "xnell@example.com") // the search matches it too; the command keeps the exact one
		out := mustAdmin(t, base, "reset-password", "NELL@example.com")
		contains(t, "reset-password", out, "USER", "EMAIL", "EXPIRES_AT", "nell@example.com", "Reset token", "https://app.example.com/reset-password?token=")
		m := printedToken.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no token printed:\n%s", out)
		}
		if !strings.Contains(out, "token="+url.QueryEscape(m[1])) {
			t.Fatalf("the link does not carry the token:\n%s", out)
		}
		if s := reset(t, m[1], "operator's new password"); s != http.StatusOK {
			t.Fatalf("reset answered %d", s)
		}
		if s, _, _ := api(t, base, http.MethodGet, "/api/v1/auth/me", old, nil, nil); s != http.StatusUnauthorized {
			t.Fatalf("the old token answered %d after the reset", s)
		}
		if login(t, "nell@example.com", "operator's new password") != http.StatusOK {
			t.Fatal("the new password does not sign in")
		}
		if s := reset(t, m[1], "again and again"); s != http.StatusBadRequest {
			t.Fatalf("a second use answered %d", s)
		}
	})
	t.Run("a user id works too, and -json prints the server's answer", func(t *testing.T) {
		register(t, "olly@example.com")
		users := mustAdmin(t, base, "users", "-query", "olly@example.com", "-json")
		var page struct {
			Users []struct {
				ID int64 `json:"id"`
			} `json:"users"`
		}
		if err := json.Unmarshal([]byte(users), &page); err != nil || len(page.Users) != 1 {
			t.Fatalf("users: %v\n%s", err, users)
		}
		out := mustAdmin(t, base, "reset-password", "-json", itoa(page.Users[0].ID))
		var r struct {
			Token string `json:"token"`
			Link  string `json:"link"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Token == "" || r.Link == "" {
			t.Fatalf("-json printed %s (%v)", out, err)
		}
		if s := reset(t, r.Token, "olly's new password"); s != http.StatusOK {
			t.Fatalf("reset answered %d", s)
		}
	})
	t.Run("without a public URL it says there is no link", func(t *testing.T) {
		plain := adminServer(t)
		if s, _, _ := api(t, plain, http.MethodPost, "/api/v1/auth/register", "", map[string]any{"email": "pip@example.com", "password": "old password", "name": "Pip"}, nil); s != http.StatusCreated {
			t.Fatal(s)
		}
		contains(t, "reset-password", mustAdmin(t, plain, "reset-password", "pip@example.com"), "Reset token", "No link", "PREDICTKIT_PUBLIC_URL")
	})
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"no operand is a usage error", []string{"reset-password"}, 2, []string{"e-mail or user id"}},
		{"two operands are a usage error", []string{"reset-password", "a@example.com", "b@example.com"}, 2, []string{"unexpected arguments"}},
		{"an operand that is neither is a usage error", []string{"reset-password", "nobody"}, 2, []string{"neither a user id nor an e-mail"}},
		{"an unknown e-mail exits 1", []string{"reset-password", "nobody@example.com"}, 1, []string{"no user has the e-mail nobody@example.com"}},
		{"an unknown id is the server's 404", []string{"reset-password", "987654"}, 1, []string{"404 user_not_found"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := admin(t, base, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			contains(t, strings.Join(c.args, " "), stderr, c.wants...)
		})
	}
}
