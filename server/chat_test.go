package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// The chat API's shapes, as the tests read them.

type apiChatMessage struct {
	ID        int64  `json:"id"`
	Sender    string `json:"sender"`
	Text      string `json:"text"`
	CreatedAt int64  `json:"created_at"`
}

type apiChatSent struct {
	apiChatMessage
	Reply         *apiChatMessage `json:"reply"`
	OfferOperator bool            `json:"offer_operator"`
}

type apiChatSession struct {
	SessionID     string `json:"session_id"`
	UserID        *int64 `json:"user_id"`
	Language      string `json:"language"`
	Escalated     bool   `json:"escalated"`
	EscalatedAt   *int64 `json:"escalated_at"`
	Closed        bool   `json:"closed"`
	CreatedAt     int64  `json:"created_at"`
	LastMessageAt int64  `json:"last_message_at"`
	MessageCount  int64  `json:"message_count"`
}

type apiChatNotification struct {
	Type        string `json:"type"`
	Message     string `json:"message"`
	RelatedID   int64  `json:"related_id"`
	RelatedType string `json:"related_type"`
}

// chatClient is one browser: its cookie and, optionally, a signed-in
// user's token.
type chatClient struct {
	cookie string // the chat_session_id value
	token  string
	lang   string
}

func (c *chatClient) req(method, path string, body any) req {
	r := req{method: method, path: path, body: body, token: c.token, header: map[string]string{}}
	if c.cookie != "" {
		r.header["Cookie"] = server.ChatCookie + "=" + c.cookie
	}
	if c.lang != "" {
		r.header["Accept-Language"] = c.lang
	}
	return r
}

// chatCookie is the chat_session_id cookie an answer sets.
func chatCookie(t *testing.T, r *response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == server.ChatCookie {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", server.ChatCookie, r.header)
	return nil
}

// open opens (or resumes) the client's session and keeps its cookie.
func (h *harness) openChat(t *testing.T, c *chatClient) apiChatSession {
	t.Helper()
	r := h.do(t, c.req(http.MethodPost, "/api/v1/chat/session", nil))
	expect(t, r, http.StatusOK, "")
	c.cookie = chatCookie(t, r).Value
	var s apiChatSession
	r.decode(t, &s)
	return s
}

func (h *harness) chatSend(t *testing.T, c *chatClient, text string) apiChatSent {
	t.Helper()
	r := h.do(t, c.req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": text}))
	expect(t, r, http.StatusCreated, "")
	var m apiChatSent
	r.decode(t, &m)
	return m
}

func (h *harness) chatHistory(t *testing.T, c *chatClient) []apiChatMessage {
	t.Helper()
	r := h.do(t, c.req(http.MethodGet, "/api/v1/chat/history", nil))
	expect(t, r, http.StatusOK, "")
	var out struct {
		Messages []apiChatMessage `json:"messages"`
	}
	r.decode(t, &out)
	return out.Messages
}

func (h *harness) chatSessions(t *testing.T) []apiChatSession {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/chat/sessions", token: adminToken})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Sessions []apiChatSession `json:"sessions"`
	}
	r.decode(t, &out)
	return out.Sessions
}

func (h *harness) chatSession(t *testing.T, id string) apiChatSession {
	t.Helper()
	for _, s := range h.chatSessions(t) {
		if s.SessionID == id {
			return s
		}
	}
	t.Fatalf("session %s is not in the operator's list", id)
	return apiChatSession{}
}

func (h *harness) unreadNotifications(t *testing.T, token string) []apiChatNotification {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications/unread", token: token})
	expect(t, r, http.StatusOK, "")
	var ns []apiChatNotification
	r.decode(t, &ns)
	return ns
}

func texts(ms []apiChatMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Sender+": "+m.Text)
	}
	return out
}

func TestChatSessionCookie(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		t.Run("opening a session sets an HttpOnly, SameSite=Lax cookie whose value is not the public id", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/chat/session"})
			expect(t, r, http.StatusOK, "")
			c := chatCookie(t, r)
			var s apiChatSession
			r.decode(t, &s)
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/api/v1/chat" || c.MaxAge <= 0 || len(c.Value) < 40 {
				t.Fatalf("cookie %+v", c)
			}
			if s.SessionID == "" || strings.Contains(c.Value, s.SessionID) || strings.Contains(string(r.body), c.Value) {
				t.Fatalf("the body %s reveals the cookie %s", r.body, c.Value)
			}
			if s.UserID != nil || s.Language != "en" || s.Escalated || s.MessageCount != 0 || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("session %s", r)
			}
		})
		t.Run("the cookie of an open session returns the same session", func(t *testing.T) {
			c := &chatClient{}
			first := h.openChat(t, c)
			cookie := c.cookie
			again := h.openChat(t, c)
			if again.SessionID != first.SessionID || c.cookie != cookie {
				t.Fatalf("%s then %s", first.SessionID, again.SessionID)
			}
		})
		t.Run("an unknown cookie gets a new session", func(t *testing.T) {
			c := &chatClient{cookie: "made-up"}
			h.openChat(t, c)
			if c.cookie == "made-up" {
				t.Fatal("the made-up cookie was kept")
			}
		})
		t.Run("a Bearer token links the session to its user, who is answered in their language", func(t *testing.T) {
			u := h.register(t, "ivan")
			expect(t, h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: u.token, body: map[string]any{"language": "ru"}}), http.StatusOK, "")
			c := &chatClient{token: u.token}
			s := h.openChat(t, c)
			if s.UserID == nil || *s.UserID != u.id || s.Language != "ru" {
				t.Fatalf("session %+v", s)
			}
			m := h.chatSend(t, c, "как пополнить баланс?")
			if m.Reply == nil || !strings.Contains(m.Reply.Text, "пополнения") || m.OfferOperator {
				t.Fatalf("reply %+v", m.Reply)
			}
		})
		t.Run("an anonymous session takes its language from Accept-Language or the body", func(t *testing.T) {
			ru := &chatClient{lang: "ru-RU,ru;q=0.9,en;q=0.5"}
			if s := h.openChat(t, ru); s.Language != "ru" {
				t.Fatalf("language %s", s.Language)
			}
			m := h.chatSend(t, ru, "совсем непонятный вопрос")
			if m.Reply == nil || !m.OfferOperator || !strings.Contains(m.Reply.Text, "Позвать оператора") {
				t.Fatalf("reply %+v", m)
			}
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/chat/session", body: map[string]any{"language": "ru"}})
			var s apiChatSession
			r.decode(t, &s)
			if s.Language != "ru" {
				t.Fatalf("language %s", s.Language)
			}
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/chat/session", body: map[string]any{"language": "de"}}), http.StatusBadRequest, "invalid_request")
		})
	})
	t.Run("with PREDICTKIT_COOKIE_SECURE the cookie is Secure", func(t *testing.T) {
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.CookieSecure = true }))
		r := h.do(t, req{method: http.MethodPost, path: "/api/v1/chat/session"})
		if c := chatCookie(t, r); !c.Secure {
			t.Fatalf("cookie %+v", c)
		}
	})
}

func TestChatHistory(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		a, b := &chatClient{}, &chatClient{}
		h.openChat(t, a)
		h.openChat(t, b)
		sentA := h.chatSend(t, a, "How do I deposit?")
		h.chatSend(t, b, "What fee do you charge?")
		h.chatSend(t, a, "  and how are prices set?  ")
		t.Run("each cookie sees only its own session's messages, in order", func(t *testing.T) {
			ha, hb := h.chatHistory(t, a), h.chatHistory(t, b)
			if len(ha) != 4 || len(hb) != 2 {
				t.Fatalf("a: %v\nb: %v", texts(ha), texts(hb))
			}
			if ha[0].Text != "How do I deposit?" || ha[0].Sender != "user" || ha[1].Sender != "support" || !strings.Contains(ha[1].Text, "deposit") ||
				ha[2].Text != "and how are prices set?" || !strings.Contains(ha[3].Text, "LMSR") {
				t.Fatalf("a: %v", texts(ha))
			}
			for _, m := range hb {
				if strings.Contains(m.Text, "deposit") || strings.Contains(m.Text, "prices") {
					t.Fatalf("b sees a's message: %v", texts(hb))
				}
			}
			if ha[0].ID != sentA.ID || ha[0].CreatedAt != sentA.CreatedAt || ha[0].CreatedAt < 1_600_000_000_000 {
				t.Fatalf("created_at is not Unix milliseconds: %+v", ha[0])
			}
		})
		t.Run("no cookie is 401 unauthorized", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/chat/history"})
			expect(t, r, http.StatusUnauthorized, "unauthorized")
		})
		t.Run("an unknown cookie is 401 unauthorized", func(t *testing.T) {
			expect(t, h.do(t, (&chatClient{cookie: "guess"}).req(http.MethodGet, "/api/v1/chat/history", nil)), http.StatusUnauthorized, "unauthorized")
		})
		t.Run("the public session id is not a cookie", func(t *testing.T) {
			s := h.chatSessions(t)[0]
			expect(t, h.do(t, (&chatClient{cookie: s.SessionID}).req(http.MethodGet, "/api/v1/chat/history", nil)), http.StatusUnauthorized, "unauthorized")
		})
		t.Run("another signed-in user with the cookie does not read the session", func(t *testing.T) {
			ann, bob := h.register(t, "ann"), h.register(t, "bob")
			c := &chatClient{token: ann.token}
			h.openChat(t, c)
			h.chatSend(t, c, "my secret question")
			expect(t, h.do(t, (&chatClient{cookie: c.cookie, token: bob.token}).req(http.MethodGet, "/api/v1/chat/history", nil)), http.StatusUnauthorized, "unauthorized")
		})
	})
}

func TestChatMessages(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		c := &chatClient{}
		h.openChat(t, c)
		bad := []struct {
			name string
			body any
		}{
			{"an empty text", map[string]any{"text": ""}},
			{"a text of spaces", map[string]any{"text": "  \n\t "}},
			{"4001 characters", map[string]any{"text": strings.Repeat("ы", 4001)}},
			{"a NUL character", map[string]any{"text": "a\u0000b"}},
			{"no text", map[string]any{}},
			{"a number for text", map[string]any{"text": 5}},
			{"a body that is not JSON", "text=hi"},
			{"a body that is not UTF-8", "{\"text\":\"\xff\"}"},
		}
		for _, b := range bad {
			t.Run(b.name+" is 400 invalid_request", func(t *testing.T) {
				expect(t, h.do(t, c.req(http.MethodPost, "/api/v1/chat/messages", b.body)), http.StatusBadRequest, "invalid_request")
			})
		}
		t.Run("4000 characters are taken", func(t *testing.T) {
			m := h.chatSend(t, c, strings.Repeat("ы", 4000))
			if len([]rune(m.Text)) != 4000 || m.Sender != "user" {
				t.Fatalf("message of %d characters", len([]rune(m.Text)))
			}
		})
		t.Run("no session is 404 not_found", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/chat/messages", body: map[string]any{"text": "hi"}}), http.StatusNotFound, "not_found")
			expect(t, h.do(t, (&chatClient{cookie: "x"}).req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": "hi"})), http.StatusNotFound, "not_found")
		})
	})
}

// webhook is a support desk's endpoint that records what it receives and
// answers status.
type webhook struct {
	mu       sync.Mutex
	status   int
	payloads []map[string]any
	srv      *httptest.Server
}

func newWebhook(t *testing.T) *webhook {
	w := &webhook{status: http.StatusOK}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		defer w.mu.Unlock()
		var p map[string]any
		if json.Unmarshal(body, &p) == nil && r.Header.Get("Content-Type") == "application/json" {
			w.payloads = append(w.payloads, p)
		}
		rw.WriteHeader(w.status)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *webhook) answer(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status = status
}

func (w *webhook) received() []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]map[string]any(nil), w.payloads...)
}

func TestChatCallOperator(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			hook := newWebhook(t)
			h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.ChatWebhookURL = hook.srv.URL + "/escalations" }))
			call := func(c *chatClient) *response {
				return h.do(t, c.req(http.MethodPost, "/api/v1/chat/session/call-operator", nil))
			}
			t.Run("no session is 404 not_found", func(t *testing.T) {
				expect(t, call(&chatClient{}), http.StatusNotFound, "not_found")
				expect(t, call(&chatClient{cookie: "unknown"}), http.StatusNotFound, "not_found")
			})
			t.Run("a failing webhook is 500 internal_error and leaves the session unescalated; a retry succeeds", func(t *testing.T) {
				c := &chatClient{}
				s := h.openChat(t, c)
				h.chatSend(t, c, "I need a human")
				hook.answer(http.StatusInternalServerError)
				expect(t, call(c), http.StatusInternalServerError, "internal_error")
				if got := h.chatSession(t, s.SessionID); got.Escalated || got.EscalatedAt != nil {
					t.Fatalf("escalated after a failed notification: %+v", got)
				}
				hook.answer(http.StatusOK)
				r := call(c)
				expect(t, r, http.StatusOK, "")
				var out struct {
					Success bool   `json:"success"`
					Message string `json:"message"`
				}
				r.decode(t, &out)
				if !out.Success || out.Message == "" {
					t.Fatalf("answer %s", r)
				}
				if got := h.chatSession(t, s.SessionID); !got.Escalated || got.EscalatedAt == nil {
					t.Fatalf("not escalated after the retry: %+v", got)
				}
				if m := h.chatSend(t, c, "hello?"); m.Reply != nil {
					t.Fatalf("an escalated session got an automatic answer: %+v", m.Reply)
				}
			})
			t.Run("a working webhook receives the session id, the user and the last messages", func(t *testing.T) {
				u := h.register(t, "caller")
				c := &chatClient{token: u.token}
				s := h.openChat(t, c)
				h.chatSend(t, c, "payout missing")
				before := len(hook.received())
				expect(t, call(c), http.StatusOK, "")
				got := hook.received()
				if len(got) != before+1 {
					t.Fatalf("%d webhook calls, want %d", len(got), before+1)
				}
				p := got[len(got)-1]
				msgs, _ := p["last_messages"].([]any)
				if p["session_id"] != s.SessionID || p["user_id"] != float64(u.id) || p["escalated_at"] == nil || len(msgs) != 2 {
					t.Fatalf("payload %v", p)
				}
				first, _ := msgs[0].(map[string]any)
				if first["text"] != "payout missing" || first["sender"] != "user" {
					t.Fatalf("first message %v", first)
				}
				t.Run("calling again answers 200 and notifies nobody", func(t *testing.T) {
					expect(t, call(c), http.StatusOK, "")
					if n := len(hook.received()); n != before+1 {
						t.Fatalf("%d webhook calls", n)
					}
				})
			})
			t.Run("the operator's list puts the escalated sessions first", func(t *testing.T) {
				c := &chatClient{}
				h.openChat(t, c)
				h.chatSend(t, c, "latest activity, not escalated")
				list := h.chatSessions(t)
				seenPlain := false
				for _, s := range list {
					if !s.Escalated {
						seenPlain = true
					} else if seenPlain {
						t.Fatalf("an escalated session after a plain one: %+v", list)
					}
				}
				if list[0].MessageCount == 0 || !list[0].Escalated {
					t.Fatalf("first %+v", list[0])
				}
			})
			t.Run("a closed session is 404 not_found", func(t *testing.T) {
				c := &chatClient{}
				s := h.openChat(t, c)
				r := h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/chat/sessions/" + s.SessionID + "/close", token: adminToken})
				expect(t, r, http.StatusOK, "")
				var closed apiChatSession
				r.decode(t, &closed)
				if !closed.Closed {
					t.Fatalf("session %s", r)
				}
				expect(t, call(c), http.StatusNotFound, "not_found")
				expect(t, h.do(t, c.req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": "hi"})), http.StatusNotFound, "not_found")
				if len(h.chatHistory(t, c)) != 0 {
					t.Fatal("history of a closed session")
				}
				if again := h.openChat(t, c); again.SessionID == s.SessionID {
					t.Fatal("a closed session was resumed")
				}
			})
		})
	}
	t.Run("a webhook that cannot be reached is 500 internal_error", func(t *testing.T) {
		hook := newWebhook(t)
		url := hook.srv.URL
		hook.srv.Close()
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.ChatWebhookURL = url }))
		c := &chatClient{}
		h.openChat(t, c)
		expect(t, h.do(t, c.req(http.MethodPost, "/api/v1/chat/session/call-operator", nil)), http.StatusInternalServerError, "internal_error")
	})
	t.Run("without a webhook the escalation is logged and succeeds", func(t *testing.T) {
		h := newHarness(t, memoryStore())
		c := &chatClient{}
		h.openChat(t, c)
		expect(t, h.do(t, c.req(http.MethodPost, "/api/v1/chat/session/call-operator", nil)), http.StatusOK, "")
	})
}

func TestChatOperatorReply(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		u := h.register(t, "member")
		member := &chatClient{token: u.token}
		ms := h.openChat(t, member)
		h.chatSend(t, member, "where is my payout?")
		anon := &chatClient{}
		as := h.openChat(t, anon)
		h.chatSend(t, anon, "hello")
		reply := func(session, text string) *response {
			return h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/chat/sessions/" + session + "/messages", token: adminToken, body: map[string]any{"text": text}})
		}
		t.Run("an answer to an anonymous session creates no notification", func(t *testing.T) {
			expect(t, reply(as.SessionID, "Hi! How can we help?"), http.StatusCreated, "")
			if ns := h.unreadNotifications(t, u.token); len(ns) != 0 {
				t.Fatalf("notifications %+v", ns)
			}
			hist := h.chatHistory(t, anon)
			if last := hist[len(hist)-1]; last.Sender != "support" || last.Text != "Hi! How can we help?" {
				t.Fatalf("history %v", texts(hist))
			}
		})
		t.Run("an answer to a signed-in user's session creates exactly one support_reply notification", func(t *testing.T) {
			long := "Your payout was sent this morning; it can take up to an hour to show. " + strings.Repeat("More details follow. ", 10)
			r := reply(ms.SessionID, long)
			expect(t, r, http.StatusCreated, "")
			var m apiChatMessage
			r.decode(t, &m)
			if m.Sender != "support" || m.Text != strings.TrimSpace(long) {
				t.Fatalf("message %+v", m)
			}
			ns := h.unreadNotifications(t, u.token)
			if len(ns) != 1 {
				t.Fatalf("%d notifications: %+v", len(ns), ns)
			}
			n := ns[0]
			if n.Type != "support_reply" || n.RelatedType != "chat" || n.RelatedID == 0 || n.Message != string([]rune(strings.TrimSpace(long))[:140]) {
				t.Fatalf("notification %+v", n)
			}
			hist := h.chatHistory(t, member)
			if last := hist[len(hist)-1]; last.ID != m.ID {
				t.Fatalf("the user does not see the answer: %v", texts(hist))
			}
		})
		t.Run("the operator reads a session's transcript", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/chat/sessions/" + ms.SessionID + "/messages", token: adminToken})
			expect(t, r, http.StatusOK, "")
			var out struct {
				Session  apiChatSession   `json:"session"`
				Messages []apiChatMessage `json:"messages"`
			}
			r.decode(t, &out)
			if out.Session.SessionID != ms.SessionID || out.Session.UserID == nil || *out.Session.UserID != u.id || len(out.Messages) != 3 || out.Session.MessageCount != 3 {
				t.Fatalf("transcript %s", r)
			}
		})
		t.Run("operator routes refuse unknown sessions, bad bodies and missing tokens", func(t *testing.T) {
			expect(t, reply("cs_nobody", "hi"), http.StatusNotFound, "session_not_found")
			expect(t, reply(ms.SessionID, " "), http.StatusBadRequest, "invalid_request")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/chat/sessions/cs_nobody/messages", token: adminToken}), http.StatusNotFound, "session_not_found")
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/chat/sessions/cs_nobody/close", token: adminToken}), http.StatusNotFound, "session_not_found")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/chat/sessions", token: u.token}), http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/chat/sessions?limit=-1", token: adminToken}), http.StatusBadRequest, "invalid_request")
		})
	})
}
