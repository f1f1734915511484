package server_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/mailer/mailtest"
	"github.com/predictkit/predictkit/server"
)

func changePassword(token, current, next string) req {
	return req{method: http.MethodPost, path: "/api/v1/auth/password", token: token,
		body: map[string]any{"current_password": current, "new_password": next}}
}

func resetRequest(email string) req {
	return req{method: http.MethodPost, path: "/api/v1/auth/password/reset-request", body: map[string]any{"email": email}}
}

func resetPassword(token, next string) req {
	return req{method: http.MethodPost, path: "/api/v1/auth/password/reset", body: map[string]any{"token": token, "new_password": next}}
}

// login signs u in with password and returns the new access token, or ""
// when the server refuses.
func (h *harness) login(t *testing.T, email, password string) string {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": password}})
	if r.status == http.StatusUnauthorized {
		return ""
	}
	expect(t, r, http.StatusOK, "")
	var out struct {
		AccessToken string `json:"access_token"`
	}
	r.decode(t, &out)
	return out.AccessToken
}

// signedIn reports whether token still authenticates.
func (h *harness) signedIn(t *testing.T, token string) bool {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: token})
	if r.status == http.StatusUnauthorized {
		return false
	}
	expect(t, r, http.StatusOK, "")
	return true
}

// apiReset is the operator's reset token.
type apiReset struct {
	UserID    int64     `json:"user_id"`
	Email     string    `json:"email"`
	Token     string    `json:"token"`
	Link      *string   `json:"link"`
	ExpiresAt time.Time `json:"expires_at"`
}

func (h *harness) adminReset(t *testing.T, id int64) apiReset {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/users/%d/password-reset", id), token: adminToken})
	expect(t, r, http.StatusCreated, "")
	var out apiReset
	r.decode(t, &out)
	return out
}

func TestChangePassword(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		t.Run("a change keeps the caller's token, revokes the user's others and nobody else's, and the new password signs in", func(t *testing.T) {
			ann, bob := h.register(t, "ann"), h.register(t, "bob")
			other := h.login(t, ann.email, "password-ann")
			r := h.do(t, changePassword(ann.token, "password-ann", "a much better password"))
			expect(t, r, http.StatusOK, "")
			if string(r.body) != `{"status":"ok"}` {
				t.Fatalf("answered %s", r.body)
			}
			if !h.signedIn(t, ann.token) || h.signedIn(t, other) || !h.signedIn(t, bob.token) {
				t.Fatal("want the caller's token kept, the other revoked, another user's kept")
			}
			if h.login(t, ann.email, "password-ann") != "" || h.login(t, ann.email, "a much better password") == "" {
				t.Fatal("the old password still signs in, or the new one does not")
			}
		})
		t.Run("refusals change nothing", func(t *testing.T) {
			cy := h.register(t, "cy")
			other := h.login(t, cy.email, "password-cy")
			cases := []struct {
				name   string
				r      req
				status int
				code   string
				detail string
			}{
				{"no token is 401 unauthorized", changePassword("", "password-cy", "new password 1"), 401, "unauthorized", ""},
				{"an unknown token is 401 unauthorized", changePassword("nope", "password-cy", "new password 1"), 401, "unauthorized", ""},
				{"a wrong current password is 401 invalid_credentials", changePassword(cy.token, "password-cz", "new password 1"), 401, "invalid_credentials", ""},
				{"a new password under 8 characters is 400", changePassword(cy.token, "password-cy", "short"), 400, "invalid_request", "new_password: must be 8 to 72 bytes"},
				{"a new password over 72 bytes is 400", changePassword(cy.token, "password-cy", strings.Repeat("й", 37)), 400, "invalid_request", "new_password: must be 8 to 72 bytes"},
				{"a weak password is refused before the current one is checked", changePassword(cy.token, "wrong", "short"), 400, "invalid_request", ""},
				{"a body that is not JSON is 400", req{method: http.MethodPost, path: "/api/v1/auth/password", token: cy.token, body: "{"}, 400, "invalid_request", ""},
				{"a missing field is 400", req{method: http.MethodPost, path: "/api/v1/auth/password", token: cy.token, body: map[string]any{"new_password": "new password 1"}}, 400, "invalid_request", ""},
				{"an unknown field is 400", req{method: http.MethodPost, path: "/api/v1/auth/password", token: cy.token, body: map[string]any{"current_password": "password-cy", "new_password": "new password 1", "x": 1}}, 400, "invalid_request", ""},
				{"a number for a password is 400", req{method: http.MethodPost, path: "/api/v1/auth/password", token: cy.token, body: map[string]any{"current_password": "password-cy", "new_password": 12345678}}, 400, "invalid_request", ""},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					r := h.do(t, c.r)
					expect(t, r, c.status, c.code)
					if c.detail != "" && !strings.Contains(string(r.body), c.detail) {
						t.Fatalf("answered %s, want the detail %q", r.body, c.detail)
					}
				})
			}
			if !h.signedIn(t, cy.token) || !h.signedIn(t, other) || h.login(t, cy.email, "password-cy") == "" {
				t.Fatal("a refused change revoked a token or changed the password")
			}
		})
	})
}

func TestPasswordReset(t *testing.T) {
	eachStore(t, func(t *testing.T, h0 *harness) {
		clk := &clock{now: time.Now().UTC().Truncate(time.Microsecond)}
		h := newHarness(t, h0.store, withConfig(func(c *server.Config) { c.PublicURL = "https://app.example.com/" }),
			withFx(fx.Decorate(func(s *account.Service) *account.Service { s.Now = clk.Now; return s })))

		t.Run("an operator's token resets the password once and signs the user out everywhere", func(t *testing.T) {
			dee := h.register(t, "dee")
			other := h.login(t, dee.email, "password-dee")
			rt := h.adminReset(t, dee.id)
			if rt.UserID != dee.id || rt.Email != dee.email || rt.Token == "" || rt.Link == nil ||
				*rt.Link != "https://app.example.com/reset-password?token="+url.QueryEscape(rt.Token) || !rt.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
				t.Fatalf("the operator got %+v", rt)
			}
			r := h.do(t, resetPassword(rt.Token, "brand new password"))
			expect(t, r, http.StatusOK, "")
			if string(r.body) != `{"status":"ok"}` {
				t.Fatalf("answered %s", r.body)
			}
			if h.signedIn(t, dee.token) || h.signedIn(t, other) {
				t.Fatal("a token survived the reset")
			}
			if h.login(t, dee.email, "password-dee") != "" || h.login(t, dee.email, "brand new password") == "" {
				t.Fatal("the reset did not replace the password")
			}
			expect(t, h.do(t, resetPassword(rt.Token, "another password")), http.StatusBadRequest, "invalid_token")
		})
		t.Run("unknown, expired and malformed tokens and weak passwords are 400 and change nothing", func(t *testing.T) {
			eve := h.register(t, "eve")
			rt := h.adminReset(t, eve.id)
			for _, c := range []struct {
				name string
				r    req
				code string
			}{
				{"an unknown token", resetPassword("not-a-token", "brand new password"), "invalid_token"},
				{"an empty token", resetPassword("", "brand new password"), "invalid_request"},
				{"a token too long to be one", resetPassword(strings.Repeat("x", 500), "brand new password"), "invalid_token"},
				{"a short password with a good token", resetPassword(rt.Token, "short"), "invalid_request"},
				{"a password over 72 bytes with a good token", resetPassword(rt.Token, strings.Repeat("x", 73)), "invalid_request"},
				{"a body that is not JSON", req{method: http.MethodPost, path: "/api/v1/auth/password/reset", body: "[]"}, "invalid_request"},
				{"a missing password", req{method: http.MethodPost, path: "/api/v1/auth/password/reset", body: map[string]any{"token": rt.Token}}, "invalid_request"},
				{"an unknown field", req{method: http.MethodPost, path: "/api/v1/auth/password/reset", body: map[string]any{"token": rt.Token, "new_password": "brand new password", "email": eve.email}}, "invalid_request"},
			} {
				t.Run(c.name, func(t *testing.T) { expect(t, h.do(t, c.r), http.StatusBadRequest, c.code) })
			}
			if !h.signedIn(t, eve.token) {
				t.Fatal("a refused reset signed the user out")
			}
			clk.advance(time.Hour)
			expect(t, h.do(t, resetPassword(rt.Token, "brand new password")), http.StatusBadRequest, "invalid_token")
			if !h.signedIn(t, eve.token) || h.login(t, eve.email, "password-eve") == "" {
				t.Fatal("an expired token changed something")
			}
		})
		t.Run("of two concurrent uses of one token exactly one wins", func(t *testing.T) {
			fay := h.register(t, "fay")
			rt := h.adminReset(t, fay.id)
			var wg sync.WaitGroup
			got := make([]*response, 4)
			for i := range got {
				wg.Go(func() { got[i] = h.do(t, resetPassword(rt.Token, fmt.Sprintf("new password %d", i))) })
			}
			wg.Wait()
			wins := 0
			for _, r := range got {
				switch {
				case r.status == http.StatusOK:
					wins++
				case r.status != http.StatusBadRequest || r.errorCode() != "invalid_token":
					t.Fatalf("a use answered %s", r)
				}
			}
			if wins != 1 {
				t.Fatalf("%d uses won, want 1", wins)
			}
		})
		t.Run("the operator's route refuses what it should", func(t *testing.T) {
			path := "/api/v1/admin/users/%s/password-reset"
			expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf(path, "1"), token: "wrong-token-wrong-token"}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf(path, "999999"), token: adminToken}), http.StatusNotFound, "user_not_found")
			expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf(path, "x"), token: adminToken}), http.StatusBadRequest, "invalid_id")
			plain := newHarness(t, h0.store)
			gus := plain.register(t, "gus")
			if rt := plain.adminReset(t, gus.id); rt.Link != nil {
				t.Fatalf("without a public URL the link is %q, want null", *rt.Link)
			}
		})
	})
}

func TestPasswordResetRequest(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		t.Run("a known and an unknown e-mail get the same answer", func(t *testing.T) {
			hal := h.register(t, "hal")
			known, unknown := h.do(t, resetRequest(hal.email)), h.do(t, resetRequest("nobody-at-all@test.predictkit"))
			expect(t, known, http.StatusAccepted, "")
			if string(known.body) != `{"status":"accepted"}` || string(unknown.body) != string(known.body) || unknown.status != known.status {
				t.Fatalf("known: %s, unknown: %s", known, unknown)
			}
			for _, hd := range []http.Header{known.header, unknown.header} {
				hd.Del("X-Request-Id")
				hd.Del("Date")
			}
			if fmt.Sprint(known.header) != fmt.Sprint(unknown.header) {
				t.Fatalf("the headers differ:\n%v\n%v", known.header, unknown.header)
			}
		})
		t.Run("malformed requests are 400", func(t *testing.T) {
			for _, c := range []struct {
				name string
				body any
			}{
				{"no e-mail", map[string]any{}},
				{"an e-mail that is no address", map[string]any{"email": "not an address"}},
				{"a display name", map[string]any{"email": "Hal <hal@test.predictkit>"}},
				{"a number", map[string]any{"email": 5}},
				{"not JSON", "email=x"},
				{"an unknown field", map[string]any{"email": "hal@test.predictkit", "name": "Hal"}},
			} {
				t.Run(c.name, func(t *testing.T) {
					expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/password/reset-request", body: c.body}), http.StatusBadRequest, "invalid_request")
				})
			}
		})
	})
	t.Run("requests are limited per address and per e-mail, whatever its case", func(t *testing.T) {
		clk := newClock()
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
			c.Now = clk.Now
			c.TrustedProxies = []string{"0.0.0.0"}
			c.RatePasswordReset = server.Rate{N: 3, Per: time.Minute}
			c.RatePasswordResetEmail = server.Rate{N: 2, Per: time.Hour}
		}))
		from := func(ip, email string) req {
			r := resetRequest(email)
			r.header = map[string]string{"X-Forwarded-For": ip}
			return r
		}
		expect(t, h.do(t, from("203.0.113.1", "ivy@test.predictkit")), http.StatusAccepted, "")
		expect(t, h.do(t, from("203.0.113.2", "IVY@test.predictkit")), http.StatusAccepted, "")
		expectLimited(t, h.do(t, from("203.0.113.3", " Ivy@Test.Predictkit ")), "1800")
		// The refusal per e-mail spent nothing of the address's budget.
		expect(t, h.do(t, from("203.0.113.3", "jo@test.predictkit")), http.StatusAccepted, "")
		expect(t, h.do(t, from("203.0.113.3", "kim@test.predictkit")), http.StatusAccepted, "")
		expect(t, h.do(t, from("203.0.113.3", "lee@test.predictkit")), http.StatusAccepted, "")
		expectLimited(t, h.do(t, from("203.0.113.3", "max@test.predictkit")), "20")
		clk.advance(20 * time.Second)
		expect(t, h.do(t, from("203.0.113.3", "max@test.predictkit")), http.StatusAccepted, "")
	})
	t.Run("change and reset are limited per address like logins", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
			c.TrustedProxies = []string{"0.0.0.0"}
			c.RateLogin = server.Rate{N: 1, Per: time.Hour}
		}))
		for _, r := range []req{changePassword("nope", "a", "b"), resetPassword("nope", "brand new password")} {
			r.header = map[string]string{"X-Forwarded-For": "203.0.113.9"}
			h.do(t, r)
			expect(t, h.do(t, r), http.StatusTooManyRequests, "rate_limited")
		}
	})
}

func TestPasswordResetWithoutSMTP(t *testing.T) {
	eachStore(t, func(t *testing.T, h0 *harness) {
		var logs syncBuffer
		h := newHarness(t, h0.store, withConfig(func(c *server.Config) {
			c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}))
		kit := h.register(t, "kit")
		expect(t, h.do(t, resetRequest("nobody-here@test.predictkit")), http.StatusAccepted, "")
		expect(t, h.do(t, resetRequest(kit.email)), http.StatusAccepted, "")
		want := fmt.Sprintf("user_id=%d", kit.id)
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), "no mail can be sent"); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no log says the mail could not be sent:\n%s", logs.String())
			}
		}
		var line string
		for l := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(l, "no mail can be sent") {
				line = l
			}
		}
		if !strings.Contains(line, want) || !strings.Contains(line, "PREDICTKIT_SMTP_URL") || strings.Count(logs.String(), "no mail can be sent") != 1 {
			t.Fatalf("the log should name the user (%s) and the setting, once:\n%s", want, logs.String())
		}
		if !h.signedIn(t, kit.token) || h.login(t, kit.email, "password-kit") == "" {
			t.Fatal("a reset request changed the account")
		}
	})
}

// tokenInLink finds the reset token in a mail's link.
var tokenInLink = regexp.MustCompile(`https://app\.example\.com/reset-password\?token=(\S+)`)

// TestPasswordResetByMail runs the whole reset through a real SMTP
// server in this process: the request, the mail, its link, the reset.
func TestPasswordResetByMail(t *testing.T) {
	eachStore(t, func(t *testing.T, h0 *harness) {
		smtp, err := mailtest.Start()
		if err != nil {
			t.Fatal(err)
		}
		defer smtp.Close()
		h := newHarness(t, h0.store, withConfig(func(c *server.Config) {
			c.SMTPURL = smtp.URL("noreply@predictkit.test")
			c.PublicURL = "https://app.example.com"
		}))
		lou := h.register(t, "lou")
		other := h.login(t, lou.email, "password-lou")
		expect(t, h.do(t, resetRequest("nobody-here@test.predictkit")), http.StatusAccepted, "")
		expect(t, h.do(t, resetRequest(strings.ToUpper(lou.email))), http.StatusAccepted, "")
		m, err := smtp.Next(20 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if m.From != "noreply@predictkit.test" || len(m.To) != 1 || m.To[0] != lou.email || m.Header.Get("Subject") != "Reset your predictkit password" {
			t.Fatalf("the mail went from %s to %v, subject %q", m.From, m.To, m.Header.Get("Subject"))
		}
		found := tokenInLink.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no link in the mail:\n%s", m.Text)
		}
		tok, err := url.QueryUnescape(found[1])
		if err != nil {
			t.Fatal(err)
		}
		expect(t, h.do(t, resetPassword(tok, "mailed new password")), http.StatusOK, "")
		if h.signedIn(t, lou.token) || h.signedIn(t, other) {
			t.Fatal("a token survived the reset")
		}
		if h.login(t, lou.email, "mailed new password") == "" {
			t.Fatal("the new password does not sign in")
		}
		expect(t, h.do(t, resetPassword(tok, "mailed new password 2")), http.StatusBadRequest, "invalid_token")
		select {
		case m := <-smtp.Mail():
			t.Fatalf("a second mail went to %v (the unknown e-mail must get none)", m.To)
		default:
		}
	})
}

// TestPasswordChangeAcrossServers runs two servers on one database, each
// trusting a looked-up token for an hour, and checks that a password
// changed through one signs the user's other tokens out of the other at
// once, while the caller's token keeps working there.
func TestPasswordChangeAcrossServers(t *testing.T) {
	if postgresURL == nil {
		t.Skip("no PostgreSQL test helper")
	}
	cfg := testConfig(nil)
	cfg.Store, cfg.DatabaseURL, cfg.AuthCache = nil, postgresURL(t), time.Hour
	a, _ := startServer(t, cfg)
	b, _ := startServer(t, cfg)
	for deadline := time.Now().Add(20 * time.Second); mustMetric(t, b.scrape(t), "predictkit_auth_cache_on", nil) != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("server B's auth cache never came on")
		}
	}
	mo := a.register(t, "mo")
	other := b.login(t, mo.email, "password-mo")
	if !b.signedIn(t, other) || !b.signedIn(t, mo.token) { // both now cached on B
		t.Fatal("the tokens do not work on B")
	}
	expect(t, a.do(t, changePassword(mo.token, "password-mo", "changed on server A")), http.StatusOK, "")
	for deadline := time.Now().Add(20 * time.Second); b.signedIn(t, other); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("server B still accepts the revoked token after 20 s (its cache trusts a token for an hour)")
		}
	}
	if !b.signedIn(t, mo.token) {
		t.Fatal("the caller's token no longer works on B")
	}
}
