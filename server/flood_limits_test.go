package server_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// floodHarness is a server on the default configuration whose rate limits
// run on clk, behind a proxy at app.Test's peer address so that
// X-Forwarded-For names the client.
func floodHarness(t *testing.T, clk *clock, f func(*server.Config)) *harness {
	return newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
		c.Now = clk.Now
		c.TrustedProxies = []string{"0.0.0.0"}
		if f != nil {
			f(c)
		}
	}))
}

// fromAddr sends r as the client at address ip.
func fromAddr(ip string, r req) req {
	if r.header == nil {
		r.header = map[string]string{}
	}
	r.header["X-Forwarded-For"] = ip
	return r
}

// tally counts a flood's answers: those with status ok, and the 429s,
// each of which must carry a Retry-After of at least one second.
type tally struct{ ok, limited int }

func (c *tally) add(t *testing.T, r *response, ok int) {
	t.Helper()
	switch {
	case r.status == ok:
		c.ok++
	case r.status == http.StatusTooManyRequests && r.errorCode() == "rate_limited":
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("a 429 without a Retry-After: %v", r.header)
		}
		c.limited++
	default:
		t.Fatalf("got %s, want %d or 429 rate_limited", r, ok)
	}
}

// TestFloodsAreStoppedByDefault: floods from one client (300 chat
// sessions, messages and escalations, 100 comments), sent at one
// instant of the limits' clock, on the default configuration. Each is cut
// to its default budget; the rest is 429 with Retry-After and does
// nothing.
func TestFloodsAreStoppedByDefault(t *testing.T) {
	t.Run("300 chat sessions from one address: 60 are opened", func(t *testing.T) {
		h := floodHarness(t, newClock(), nil)
		var n tally
		for range 300 {
			n.add(t, h.do(t, fromAddr("203.0.113.9", req{method: http.MethodPost, path: "/api/v1/chat/session"})), http.StatusOK)
		}
		if n.ok != 60 {
			t.Fatalf("%d of 300 sessions opened, want 60", n.ok)
		}
		if got := len(h.chatSessionsAll(t)); got != 60 {
			t.Fatalf("the operator lists %d sessions, want 60", got)
		}
	})

	t.Run("300 messages of 4000 characters in one session: 20 are stored", func(t *testing.T) {
		h := floodHarness(t, newClock(), nil)
		c := &chatClient{}
		r := h.do(t, fromAddr("203.0.113.9", c.req(http.MethodPost, "/api/v1/chat/session", nil)))
		expect(t, r, http.StatusOK, "")
		c.cookie = chatCookie(t, r).Value
		text := strings.Repeat("ы", 4000)
		var n tally
		for range 300 {
			n.add(t, h.do(t, fromAddr("203.0.113.9", c.req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": text}))), http.StatusCreated)
		}
		if n.ok != 20 {
			t.Fatalf("%d of 300 messages stored, want 20", n.ok)
		}
	})

	t.Run("300 calls for an operator from one address, each from a session of its own: 10 reach the webhook", func(t *testing.T) {
		hook := newWebhook(t)
		h := floodHarness(t, newClock(), func(c *server.Config) { c.ChatWebhookURL = hook.srv.URL })
		var n tally
		for i := range 300 {
			c := &chatClient{}
			// The sessions come from many addresses, so that only the calls' budget counts.
			r := h.do(t, fromAddr(fmt.Sprintf("198.51.%d.%d", i/200, i%200+1), c.req(http.MethodPost, "/api/v1/chat/session", nil)))
			expect(t, r, http.StatusOK, "")
			c.cookie = chatCookie(t, r).Value
			n.add(t, h.do(t, fromAddr("203.0.113.9", c.req(http.MethodPost, "/api/v1/chat/session/call-operator", nil))), http.StatusOK)
		}
		if n.ok != 10 || len(hook.received()) != 10 {
			t.Fatalf("%d of 300 calls answered, %d webhook calls; want 10 and 10", n.ok, len(hook.received()))
		}
	})

	t.Run("100 comments in a row from one user: 20 are posted", func(t *testing.T) {
		h := floodHarness(t, newClock(), nil)
		w := newWorld(t, h)
		var n tally
		for i := range 100 {
			n.add(t, h.do(t, req{method: http.MethodPost, path: commentsPath(w.event.ID), token: w.alice.token,
				body: map[string]any{"content": fmt.Sprint("comment ", i)}}), http.StatusCreated)
		}
		if n.ok != 20 {
			t.Fatalf("%d of 100 comments posted, want 20", n.ok)
		}
		if got := len(h.comments(t, commentsPath(w.event.ID)+"?limit=100", "")); got != 20 {
			t.Fatalf("%d comments stored, want 20", got)
		}
	})

	t.Run("100 reactions in a row from one user: 60 are taken", func(t *testing.T) {
		h := floodHarness(t, newClock(), nil)
		w := newWorld(t, h)
		cm := h.postComment(t, w.bob.token, w.event.ID, "react to me", 0)
		var n tally
		for i := range 100 {
			reaction := []string{"like", "none"}[i%2]
			n.add(t, h.do(t, req{method: http.MethodPut, path: fmt.Sprintf("/api/v1/comments/%d/reaction", cm.ID), token: w.alice.token,
				body: map[string]any{"reaction": reaction}}), http.StatusOK)
		}
		if n.ok != 60 {
			t.Fatalf("%d of 100 reactions taken, want 60", n.ok)
		}
	})
}

// TestClientsAreGroupedByTheir64: every limit keyed by the client's
// address counts an IPv6 client by its /64 (the block one subscriber
// gets, and picks addresses from at will), an IPv4 client by its address,
// and an IPv4-mapped IPv6 address as the IPv4 address.
func TestClientsAreGroupedByTheir64(t *testing.T) {
	login := func(ip string) req {
		return fromAddr(ip, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": "nobody@test.predictkit", "password": "password-x"}})
	}
	h := floodHarness(t, newClock(), func(c *server.Config) { c.RateLogin = server.Rate{N: 1, Per: time.Hour} })
	expect(t, h.do(t, login("2001:db8:1:2::1")), http.StatusUnauthorized, "invalid_credentials")
	t.Run("another address of the same /64 shares the budget", func(t *testing.T) {
		expectLimited(t, h.do(t, login("2001:db8:1:2:ffff:ffff:ffff:fffe")), "3600")
		expectLimited(t, h.do(t, login("[2001:db8:1:2:a::b]:443")), "3600")
	})
	t.Run("the next /64 has a budget of its own", func(t *testing.T) {
		expect(t, h.do(t, login("2001:db8:1:3::1")), http.StatusUnauthorized, "invalid_credentials")
	})
	t.Run("IPv4 clients are counted by their address, mapped or not", func(t *testing.T) {
		expect(t, h.do(t, login("198.51.100.1")), http.StatusUnauthorized, "invalid_credentials")
		expectLimited(t, h.do(t, login("::ffff:198.51.100.1")), "3600")
		expect(t, h.do(t, login("198.51.100.2")), http.StatusUnauthorized, "invalid_credentials")
	})
	t.Run("chat sessions are counted by /64 too", func(t *testing.T) {
		h := floodHarness(t, newClock(), func(c *server.Config) {})
		for i := range 300 {
			r := h.do(t, fromAddr(fmt.Sprintf("2001:db8:7:7:%x::1", i), req{method: http.MethodPost, path: "/api/v1/chat/session"}))
			if r.status == http.StatusTooManyRequests {
				return
			}
			expect(t, r, http.StatusOK, "")
		}
		t.Fatal("300 sessions from one /64, each from another address, were all opened")
	})
}

// chatSessionsAll is every session of the operator's list.
func (h *harness) chatSessionsAll(t *testing.T) []apiChatSession {
	t.Helper()
	var all []apiChatSession
	for off := 0; ; off += 100 {
		r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/admin/chat/sessions?limit=100&offset=%d", off), token: adminToken})
		expect(t, r, http.StatusOK, "")
		var out struct {
			Sessions []apiChatSession `json:"sessions"`
		}
		r.decode(t, &out)
		all = append(all, out.Sessions...)
		if len(out.Sessions) < 100 {
			return all
		}
	}
}
