package server_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestChatSessionFixation: a chat cookie that somebody else may know (one
// planted in the browser before its user signed in, one left behind after
// a logout) never reaches a signed-in user's messages. A session becomes
// a user's with a new secret, a user's session is reached only with that
// user's token (the account, not the cookie, names it), and a logout ends
// every cookie of the user's sessions.
func TestChatSessionFixation(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		history := func(c *chatClient) *response { return h.do(t, c.req(http.MethodGet, "/api/v1/chat/history", nil)) }
		send := func(c *chatClient, text string) *response {
			return h.do(t, c.req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": text}))
		}
		callOperator := func(c *chatClient) *response {
			return h.do(t, c.req(http.MethodPost, "/api/v1/chat/session/call-operator", nil))
		}
		// refused checks that c reaches no session on any route: the codes
		// of a cookie that names no session.
		refused := func(t *testing.T, c *chatClient) {
			t.Helper()
			expect(t, history(c), http.StatusUnauthorized, "unauthorized")
			expect(t, send(c, "hello?"), http.StatusNotFound, "not_found")
			expect(t, callOperator(c), http.StatusNotFound, "not_found")
		}
		historyTexts := func(t *testing.T, c *chatClient) []string {
			t.Helper()
			var out []string
			for _, m := range h.chatHistory(t, c) {
				if m.Sender == "user" {
					out = append(out, m.Text)
				}
			}
			return out
		}

		t.Run("signing in gives the anonymous session a new cookie, and the old one opens nothing", func(t *testing.T) {
			planted := &chatClient{}
			anon := h.openChat(t, planted) // the attacker's session, its cookie planted in the victim's browser
			victim := &chatClient{cookie: planted.cookie}
			h.chatSend(t, victim, "a question before signing in")
			u := h.register(t, "victim")
			victim.token = u.token
			r := h.do(t, victim.req(http.MethodPost, "/api/v1/chat/session", nil))
			expect(t, r, http.StatusOK, "")
			c := chatCookie(t, r)
			var s apiChatSession
			r.decode(t, &s)
			if s.SessionID != anon.SessionID || s.UserID == nil || *s.UserID != u.id {
				t.Fatalf("the claimed session %+v, want %s of user %d", s, anon.SessionID, u.id)
			}
			if c.Value == planted.cookie {
				t.Fatal("the cookie was not rotated: whoever planted it still holds the user's session")
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/api/v1/chat" || c.MaxAge <= 0 || len(c.Value) < 40 {
				t.Fatalf("the new cookie %+v has other attributes than the first", c)
			}
			victim.cookie = c.Value
			h.chatSend(t, victim, "my account number is 42")
			refused(t, planted)
			refused(t, &chatClient{cookie: planted.cookie, token: h.register(t, "attacker").token})
			if got := historyTexts(t, victim); !slices.Equal(got, []string{"a question before signing in", "my account number is 42"}) {
				t.Fatalf("the user's history: %v", got)
			}
		})

		t.Run("the first request after signing in claims the session, whatever its route", func(t *testing.T) {
			planted := &chatClient{}
			h.openChat(t, planted)
			u := h.register(t, "quick")
			victim := &chatClient{cookie: planted.cookie, token: u.token}
			r := send(victim, "written right after signing in")
			expect(t, r, http.StatusCreated, "")
			c := chatCookie(t, r)
			if c.Value == planted.cookie {
				t.Fatal("the cookie was not rotated")
			}
			victim.cookie = c.Value
			refused(t, planted)
			if got := historyTexts(t, victim); !slices.Equal(got, []string{"written right after signing in"}) {
				t.Fatalf("the user's history: %v", got)
			}
		})

		t.Run("a signed-in user's session is not reached with its cookie alone", func(t *testing.T) {
			u := h.register(t, "owner")
			owner := &chatClient{token: u.token}
			mine := h.openChat(t, owner)
			h.chatSend(t, owner, "private matter")
			thief := &chatClient{cookie: owner.cookie}
			refused(t, thief)
			other := h.register(t, "other")
			refused(t, &chatClient{cookie: owner.cookie, token: other.token})
			// Opening with the cookie alone is a new, anonymous session.
			s := h.openChat(t, thief)
			if s.SessionID == mine.SessionID || s.UserID != nil || thief.cookie == owner.cookie {
				t.Fatalf("the cookie alone opened %+v", s)
			}
			if got := historyTexts(t, owner); !slices.Equal(got, []string{"private matter"}) {
				t.Fatalf("the owner's history: %v", got)
			}
		})

		t.Run("after logout the session's cookie alone reads and writes nothing; signed in again the user finds their chat", func(t *testing.T) {
			u := h.register(t, "leaver")
			c := &chatClient{token: u.token}
			mine := h.openChat(t, c)
			h.chatSend(t, c, "what I said before logging out")
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/logout", token: u.token}), http.StatusOK, "")
			refused(t, &chatClient{cookie: c.cookie})
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": u.email, "password": "password-leaver"}})
			expect(t, r, http.StatusOK, "")
			var in struct {
				AccessToken string `json:"access_token"`
			}
			r.decode(t, &in)
			again := &chatClient{cookie: c.cookie, token: in.AccessToken}
			if s := h.openChat(t, again); s.SessionID != mine.SessionID {
				t.Fatalf("signed in again the user opened %+v, not their chat %s", s, mine.SessionID)
			}
			if got := historyTexts(t, again); !slices.Equal(got, []string{"what I said before logging out"}) {
				t.Fatalf("the history signed in again: %v", got)
			}
			refused(t, &chatClient{cookie: c.cookie})
			t.Run("the session stays open for the operator, whose answer still notifies the user", func(t *testing.T) {
				got := h.chatSession(t, mine.SessionID)
				if got.Closed || got.MessageCount == 0 {
					t.Fatalf("the session after logout: %+v", got)
				}
				r := h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/chat/sessions/" + mine.SessionID + "/messages", token: adminToken,
					body: map[string]any{"text": "Answering after you left"}})
				expect(t, r, http.StatusCreated, "")
				found := false
				for _, n := range h.unreadNotifications(t, in.AccessToken) {
					found = found || n.Type == "support_reply" && strings.Contains(n.Message, "Answering after you left")
				}
				if !found {
					t.Fatal("no support_reply notification")
				}
			})
		})

		t.Run("the owner with their cookie and token keeps their session", func(t *testing.T) {
			u := h.register(t, "keeper")
			c := &chatClient{token: u.token}
			first := h.openChat(t, c)
			cookie := c.cookie
			if again := h.openChat(t, c); again.SessionID != first.SessionID || c.cookie != cookie {
				t.Fatalf("%s then %s", first.SessionID, again.SessionID)
			}
			h.chatSend(t, c, "still mine")
			expect(t, callOperator(c), http.StatusOK, "")
		})
	})
}
