package server_test

import (
	"net/http"
	"slices"
	"testing"
)

// TestChatBelongsToTheAccount: a signed-in user's support chat is theirs
// on every device where they are signed in (history and the operator's
// answers included), while anonymous sessions work as before and a
// visitor's anonymous chat is attached to the account they sign in to.
func TestChatBelongsToTheAccount(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		open := func(t *testing.T, c *chatClient) apiChatSession {
			t.Helper()
			r := h.do(t, c.req(http.MethodPost, "/api/v1/chat/session", nil))
			expect(t, r, http.StatusOK, "")
			var s apiChatSession
			r.decode(t, &s)
			return s
		}
		texts := func(t *testing.T, c *chatClient) []string {
			t.Helper()
			var out []string
			for _, m := range h.chatHistory(t, c) {
				out = append(out, m.Sender+": "+m.Text)
			}
			return out
		}
		reply := func(t *testing.T, session, text string) {
			t.Helper()
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/chat/sessions/" + session + "/messages", token: adminToken,
				body: map[string]any{"text": text}}), http.StatusCreated, "")
		}

		t.Run("a second browser of the same user opens the same chat and reads the operator's answer", func(t *testing.T) {
			u := h.register(t, "twodevices")
			laptop := &chatClient{token: u.token, lang: "en"}
			s := h.openChat(t, laptop)
			h.chatSend(t, laptop, "My withdrawal is stuck")
			expect(t, h.do(t, laptop.req(http.MethodPost, "/api/v1/chat/session/call-operator", nil)), http.StatusOK, "")
			reply(t, s.SessionID, "Checking it now")
			phone := &chatClient{token: u.token} // no cookie: another browser
			if got := open(t, phone); got.SessionID != s.SessionID || !got.Escalated {
				t.Fatalf("the phone opened %+v, want the escalated %s", got, s.SessionID)
			}
			want := []string{"user: My withdrawal is stuck"}
			if got := texts(t, phone); len(got) < 3 || got[0] != want[0] || got[len(got)-1] != "support: Checking it now" {
				t.Fatalf("the phone's history: %v", got)
			}
			h.chatSend(t, phone, "Thanks, from my phone")
			if got := texts(t, laptop); got[len(got)-1] != "user: Thanks, from my phone" {
				t.Fatalf("the laptop's history: %v", got)
			}
		})

		t.Run("without a chat yet, a signed-in browser's first request is 401 or 404 until it opens one", func(t *testing.T) {
			u := h.register(t, "nochat")
			c := &chatClient{token: u.token}
			expect(t, h.do(t, c.req(http.MethodGet, "/api/v1/chat/history", nil)), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, c.req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": "hi"})), http.StatusNotFound, "not_found")
			s := h.openChat(t, c)
			if s.UserID == nil || *s.UserID != u.id {
				t.Fatalf("the new session %+v", s)
			}
		})

		t.Run("an anonymous chat is attached when the account has none, and left to the browser when it has one", func(t *testing.T) {
			u := h.register(t, "attach")
			visitor := &chatClient{}
			anon := h.openChat(t, visitor)
			h.chatSend(t, visitor, "asked before signing in")
			visitor.token = u.token
			if got := h.openChat(t, visitor); got.SessionID != anon.SessionID || got.UserID == nil || *got.UserID != u.id {
				t.Fatalf("signing in attached %+v, want %s", got, anon.SessionID)
			}
			other := &chatClient{token: u.token}
			if got := texts(t, other); got[0] != "user: asked before signing in" {
				t.Fatalf("another browser of the account reads %v", got)
			}

			// A second anonymous chat, in another browser, meets an account
			// that has an open chat: the account's wins, the anonymous one
			// stays that browser's.
			second := &chatClient{}
			h.openChat(t, second)
			h.chatSend(t, second, "a second anonymous question")
			anonCookie := second.cookie
			second.token = u.token
			if got := open(t, second); got.SessionID != anon.SessionID {
				t.Fatalf("signed in, the second browser opened %+v, want the account's %s", got, anon.SessionID)
			}
			if got := texts(t, second); slices.Contains(got, "user: a second anonymous question") {
				t.Fatalf("the anonymous question joined the account's chat: %v", got)
			}
			if got := texts(t, &chatClient{cookie: anonCookie}); got[0] != "user: a second anonymous question" {
				t.Fatalf("signed out, the browser's anonymous chat: %v", got)
			}
		})

		t.Run("anonymous sessions stay apart from each other and from accounts", func(t *testing.T) {
			a, b := &chatClient{}, &chatClient{}
			sa, sb := h.openChat(t, a), h.openChat(t, b)
			if sa.SessionID == sb.SessionID || sa.UserID != nil || sb.UserID != nil {
				t.Fatalf("%+v %+v", sa, sb)
			}
			h.chatSend(t, a, "only a")
			if got := texts(t, b); slices.Contains(got, "user: only a") {
				t.Fatalf("b reads a: %v", got)
			}
		})

		t.Run("a closed chat stays readable on every device, and the next open starts a new one", func(t *testing.T) {
			u := h.register(t, "closer")
			c := &chatClient{token: u.token}
			s := h.openChat(t, c)
			h.chatSend(t, c, "bye")
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/chat/sessions/" + s.SessionID + "/close", token: adminToken}), http.StatusOK, "")
			phone := &chatClient{token: u.token}
			if got := texts(t, phone); got[0] != "user: bye" {
				t.Fatalf("the closed chat on the phone: %v", got)
			}
			expect(t, h.do(t, phone.req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": "hi"})), http.StatusNotFound, "not_found")
			if got := open(t, phone); got.SessionID == s.SessionID || got.Closed {
				t.Fatalf("reopening gave %+v", got)
			}
			if got := h.chatHistory(t, c); len(got) != 0 {
				t.Fatalf("the laptop sees the new chat's history: %v", got)
			}
		})
	})
}
