package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// TestChatAndSocialRateLimits: each limit of the support chat, comments
// and reactions counts its own key (the client's address, the chat
// session, the user), refuses with 429 and Retry-After and does nothing,
// refills, and is off when set to off. The clock is the limits' own.
func TestChatAndSocialRateLimits(t *testing.T) {
	// only sets every chat, comment and reaction limit off but f's.
	only := func(f func(*server.Config)) func(*server.Config) {
		return func(c *server.Config) {
			c.RateChatSession, c.RateChatMessage, c.RateChatMessageSession = server.Rate{}, server.Rate{}, server.Rate{}
			c.RateChatOperator, c.RateChatOperatorSession = server.Rate{}, server.Rate{}
			c.RateComment, c.RateReaction = server.Rate{}, server.Rate{}
			f(c)
		}
	}
	open := func(t *testing.T, h *harness, ip string) *chatClient {
		t.Helper()
		c := &chatClient{}
		r := h.do(t, fromAddr(ip, c.req(http.MethodPost, "/api/v1/chat/session", nil)))
		expect(t, r, http.StatusOK, "")
		c.cookie = chatCookie(t, r).Value
		return c
	}
	send := func(h *harness, ip string, c *chatClient, text string) *response {
		return h.do(t, fromAddr(ip, c.req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": text})))
	}
	call := func(h *harness, ip string, c *chatClient) *response {
		return h.do(t, fromAddr(ip, c.req(http.MethodPost, "/api/v1/chat/session/call-operator", nil)))
	}

	t.Run("chat sessions: the fourth of 3/m from one address is 429 and opens nothing, another address opens, a token comes back every 20 s", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, only(func(c *server.Config) { c.RateChatSession = server.Rate{N: 3, Per: time.Minute} }))
		for range 3 {
			open(t, h, "203.0.113.1")
		}
		r := h.do(t, fromAddr("203.0.113.1", req{method: http.MethodPost, path: "/api/v1/chat/session"}))
		expectLimited(t, r, "20")
		if len(r.header.Values("Set-Cookie")) != 0 {
			t.Fatalf("a refused open set a cookie: %v", r.header)
		}
		if n := len(h.chatSessionsAll(t)); n != 3 {
			t.Fatalf("%d sessions, want 3", n)
		}
		open(t, h, "203.0.113.2")
		clk.advance(20 * time.Second)
		open(t, h, "203.0.113.1")
		expectLimited(t, h.do(t, fromAddr("203.0.113.1", req{method: http.MethodPost, path: "/api/v1/chat/session"})), "20")
	})

	t.Run("chat messages per session: the third of 2/m is 429 and not stored, another session of the same address writes", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, only(func(c *server.Config) { c.RateChatMessageSession = server.Rate{N: 2, Per: time.Minute} }))
		a, b := open(t, h, "203.0.113.1"), open(t, h, "203.0.113.1")
		expect(t, send(h, "203.0.113.1", a, "one"), http.StatusCreated, "")
		expect(t, send(h, "203.0.113.1", a, "two"), http.StatusCreated, "")
		expectLimited(t, send(h, "203.0.113.1", a, "three"), "30")
		expectLimited(t, send(h, "198.51.100.1", a, "three, from elsewhere"), "30")
		expect(t, send(h, "203.0.113.1", b, "b's first"), http.StatusCreated, "")
		if got := texts(h.chatHistory(t, a)); len(got) != 4 || strings.Contains(strings.Join(got, "|"), "three") {
			t.Fatalf("a's history: %v", got)
		}
		clk.advance(30 * time.Second)
		expect(t, send(h, "203.0.113.1", a, "three"), http.StatusCreated, "")
	})

	t.Run("chat messages per address: the third of 2/m is 429 whatever the session, another address writes", func(t *testing.T) {
		h := floodHarness(t, newClock(), only(func(c *server.Config) { c.RateChatMessage = server.Rate{N: 2, Per: time.Minute} }))
		a, b := open(t, h, "203.0.113.1"), open(t, h, "203.0.113.1")
		expect(t, send(h, "203.0.113.1", a, "one"), http.StatusCreated, "")
		expect(t, send(h, "203.0.113.1", b, "two"), http.StatusCreated, "")
		expectLimited(t, send(h, "203.0.113.1", a, "three"), "30")
		expectLimited(t, send(h, "203.0.113.1", &chatClient{}, "no session"), "30")
		expect(t, send(h, "198.51.100.1", a, "from elsewhere"), http.StatusCreated, "")
	})

	t.Run("calls for an operator per session and per address, each answered 429 without notifying", func(t *testing.T) {
		hook := newWebhook(t)
		h := floodHarness(t, newClock(), only(func(c *server.Config) {
			c.ChatWebhookURL = hook.srv.URL
			c.RateChatOperatorSession = server.Rate{N: 2, Per: time.Minute}
			c.RateChatOperator = server.Rate{N: 3, Per: time.Minute}
		}))
		a := open(t, h, "203.0.113.1")
		hook.answer(http.StatusBadGateway)
		expect(t, call(h, "203.0.113.1", a), http.StatusInternalServerError, "internal_error")
		expect(t, call(h, "203.0.113.1", a), http.StatusInternalServerError, "internal_error")
		hook.answer(http.StatusOK)
		expectLimited(t, call(h, "203.0.113.1", a), "30")
		if n := len(hook.received()); n != 2 {
			t.Fatalf("%d webhook calls, want the 2 that failed", n)
		}
		for _, s := range h.chatSessionsAll(t) {
			if s.Escalated {
				t.Fatalf("escalated without a notification: %+v", s)
			}
		}
		// The refused call spent none of the address's budget: one call is left.
		b := open(t, h, "203.0.113.1")
		expect(t, call(h, "203.0.113.1", b), http.StatusOK, "")
		expectLimited(t, call(h, "203.0.113.1", open(t, h, "203.0.113.1")), "20")
		expect(t, call(h, "198.51.100.1", open(t, h, "198.51.100.1")), http.StatusOK, "")
		if n := len(hook.received()); n != 4 {
			t.Fatalf("%d webhook calls, want 4", n)
		}
	})

	t.Run("comments per user: the third of 2/m is 429 and not posted, another user comments, no token is 401", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, only(func(c *server.Config) { c.RateComment = server.Rate{N: 2, Per: time.Minute} }))
		w := newWorld(t, h)
		first := h.postComment(t, w.alice.token, w.event.ID, "one", 0)
		h.postComment(t, w.alice.token, w.event.ID, "two", first.ID)
		post := func(token, content string) *response {
			return h.do(t, req{method: http.MethodPost, path: commentsPath(w.event.ID), token: token, body: map[string]any{"content": content}})
		}
		expectLimited(t, post(w.alice.token, "three"), "30")
		expectLimited(t, h.do(t, req{method: http.MethodPost, path: commentsPath(w.event.ID), token: w.alice.token,
			body: map[string]any{"content": "a reply", "parent_id": first.ID}}), "30")
		h.postComment(t, w.bob.token, w.event.ID, "bob's", 0)
		expect(t, post("", "anonymous"), http.StatusUnauthorized, "unauthorized")
		expect(t, post("not-a-token-0123456789", "forged"), http.StatusUnauthorized, "unauthorized")
		if got := h.comments(t, commentsPath(w.event.ID), ""); len(got) != 2 {
			t.Fatalf("%d top-level comments, want 2 (one, bob's)", len(got))
		}
		clk.advance(30 * time.Second)
		h.postComment(t, w.alice.token, w.event.ID, "three", 0)
	})

	t.Run("reactions per user: the third of 2/m is 429 and changes nothing, another user reacts", func(t *testing.T) {
		h := floodHarness(t, newClock(), only(func(c *server.Config) { c.RateReaction = server.Rate{N: 2, Per: time.Minute} }))
		w := newWorld(t, h)
		cm := h.postComment(t, w.bob.token, w.event.ID, "react to me", 0)
		h.react(t, w.alice.token, cm.ID, "like")
		h.react(t, w.alice.token, cm.ID, "dislike")
		react := req{method: http.MethodPut, path: fmt.Sprintf("/api/v1/comments/%d/reaction", cm.ID), token: w.alice.token, body: map[string]any{"reaction": "like"}}
		expectLimited(t, h.do(t, react), "30")
		if got := h.react(t, w.bob.token, cm.ID, "like"); got.LikesCount != 1 || got.DislikesCount != 1 {
			t.Fatalf("counts %d likes, %d dislikes; want 1 and 1", got.LikesCount, got.DislikesCount)
		}
	})

	t.Run("off: every limit set to off lets any number through", func(t *testing.T) {
		h := floodHarness(t, newClock(), only(func(*server.Config) {}))
		w := newWorld(t, h)
		c := open(t, h, "203.0.113.1")
		for i := range 150 {
			open(t, h, "203.0.113.1")
			expect(t, send(h, "203.0.113.1", c, fmt.Sprint("message ", i)), http.StatusCreated, "")
			expect(t, call(h, "203.0.113.1", c), http.StatusOK, "")
			h.postComment(t, w.alice.token, w.event.ID, fmt.Sprint("comment ", i), 0)
		}
	})
}

func TestChatAndSocialRateSettings(t *testing.T) {
	vars := map[string]func(server.Config) server.Rate{
		"PREDICTKIT_RATE_CHAT_SESSION":          func(c server.Config) server.Rate { return c.RateChatSession },
		"PREDICTKIT_RATE_CHAT_MESSAGE":          func(c server.Config) server.Rate { return c.RateChatMessage },
		"PREDICTKIT_RATE_CHAT_MESSAGE_SESSION":  func(c server.Config) server.Rate { return c.RateChatMessageSession },
		"PREDICTKIT_RATE_CHAT_OPERATOR":         func(c server.Config) server.Rate { return c.RateChatOperator },
		"PREDICTKIT_RATE_CHAT_OPERATOR_SESSION": func(c server.Config) server.Rate { return c.RateChatOperatorSession },
		"PREDICTKIT_RATE_COMMENT":               func(c server.Config) server.Rate { return c.RateComment },
		"PREDICTKIT_RATE_REACTION":              func(c server.Config) server.Rate { return c.RateReaction },
	}
	t.Run("the defaults are on", func(t *testing.T) {
		for env, get := range vars {
			if get(server.DefaultConfig()).Unlimited() {
				t.Errorf("%s is off by default", env)
			}
		}
	})
	t.Run("each variable is read, off included", func(t *testing.T) {
		for env, get := range vars {
			for v, want := range map[string]server.Rate{"7/m": {N: 7, Per: time.Minute}, "off": {}} {
				c, err := server.LoadConfig(nil, func(k string) (string, bool) { return v, k == env }, nil)
				if err != nil || get(c) != want {
					t.Errorf("%s=%s: %v, %v", env, v, get(c), err)
				}
			}
		}
	})
	t.Run("a malformed value is reported by variable and flag", func(t *testing.T) {
		for env := range vars {
			_, err := server.LoadConfig(nil, func(k string) (string, bool) { return "ten", k == env }, nil)
			flag := "-" + strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(env, "PREDICTKIT_"), "_", "-"))
			if err == nil || !strings.Contains(err.Error(), env) || !strings.Contains(err.Error(), "("+flag+")") {
				t.Errorf("%s=ten: %v", env, err)
			}
		}
	})
	t.Run("a flag overrides its variable", func(t *testing.T) {
		c, err := server.LoadConfig([]string{"-rate-comment", "4/h"}, func(k string) (string, bool) { return "9/m", k == "PREDICTKIT_RATE_COMMENT" }, nil)
		if err != nil || c.RateComment != (server.Rate{N: 4, Per: time.Hour}) {
			t.Fatalf("%v, %v", c.RateComment, err)
		}
	})
}
