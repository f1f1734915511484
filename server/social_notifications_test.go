package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNotificationsThroughHTTP: trades, settlements and replies produce
// exactly the expected notifications, in the reader's language, and only
// their owner reads and marks them.
func TestNotificationsThroughHTTP(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		t.Run("notifications need a token", func(t *testing.T) {
			for _, r := range []req{
				{method: "GET", path: "/api/v1/notifications/unread"},
				{method: "GET", path: "/api/v1/notifications/unread", token: "nope"},
				{method: "GET", path: "/api/v1/notifications"},
				{method: "POST", path: "/api/v1/notifications/1/read"},
				{method: "POST", path: "/api/v1/notifications/read-all", token: "nope"},
			} {
				expect(t, h.do(t, r), http.StatusUnauthorized, "unauthorized")
			}
		})
		if ns := h.unread(t, w.alice.token); len(ns) != 0 {
			t.Fatalf("a new user has notifications: %+v", ns)
		}
		buy := h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
		t.Run("a buy makes one trade_executed notification, in English", func(t *testing.T) {
			ns := h.unread(t, w.alice.token)
			if len(ns) != 1 {
				t.Fatalf("%d notifications, want 1: %+v", len(ns), ns)
			}
			n := ns[0]
			want := fmt.Sprintf(`Bought %s YES shares of "A1" for %d.%02d RUB`, groupDigits(buy.Shares), buy.CostKopecks/100, buy.CostKopecks%100)
			if n.Type != "trade_executed" || n.UserID != w.alice.id || n.Title != "Trade executed" || n.Message != want ||
				n.Read || n.RelatedType != "event" || n.RelatedID != w.event.ID {
				t.Fatalf("notification %+v, want message %q", n, want)
			}
			if _, err := time.Parse(time.RFC3339, n.CreatedAt); err != nil {
				t.Fatalf("created_at %q: %v", n.CreatedAt, err)
			}
			if ns := h.unread(t, w.bob.token); len(ns) != 0 {
				t.Fatalf("bob, who did not trade, has %+v", ns)
			}
		})
		t.Run("the same notification reads in Russian once the profile says ru", func(t *testing.T) {
			h.setProfile(t, w.alice.token, map[string]any{"language": "ru"})
			ns := h.unread(t, w.alice.token)
			if len(ns) != 1 || ns[0].Title != "Сделка исполнена" || !strings.HasPrefix(ns[0].Message, "Куплено ") || !strings.Contains(ns[0].Message, "«ДА»") {
				t.Fatalf("in Russian: %+v", ns)
			}
			h.setProfile(t, w.alice.token, map[string]any{"language": "en"})
		})
		t.Run("a refused trade notifies no one", func(t *testing.T) {
			r := h.do(t, req{method: "POST", path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: w.bob.token,
				body: map[string]any{"side": "NO", "amount_kopecks": 600_000}})
			expect(t, r, http.StatusBadRequest, "insufficient_funds")
			if ns := h.unread(t, w.bob.token); len(ns) != 0 {
				t.Fatalf("a refused trade notified: %+v", ns)
			}
		})
		bobBuy := h.buy(t, w.bob.token, w.a1.ID, "NO", 5_000)
		t.Run("closing a market notifies each holder once with their payout", func(t *testing.T) {
			expect(t, h.do(t, req{method: "POST", path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token,
				body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
			for _, c := range []struct {
				name   string
				u      apiUser
				payout int64
			}{{"alice, who won", w.alice, buy.Shares}, {"bob, who lost", w.bob, 0}} {
				t.Run(c.name, func(t *testing.T) {
					ns := h.unread(t, c.u.token)
					if len(ns) != 2 || ns[0].Type != "market_resolved" || ns[1].Type != "trade_executed" {
						t.Fatalf("notifications %+v, want market_resolved then trade_executed", ns)
					}
					want := fmt.Sprintf(`"A1" resolved YES. Your payout: %d.%02d RUB`, c.payout/100, c.payout%100)
					if n := ns[0]; n.Title != "Market resolved" || n.Message != want || n.RelatedType != "event" || n.RelatedID != w.event.ID {
						t.Fatalf("market_resolved = %+v, want %q", n, want)
					}
				})
			}
			if ns := h.unread(t, w.creator.token); len(ns) != 0 {
				t.Fatalf("the creator, who held nothing, got %+v", ns)
			}
			_ = bobBuy
		})
		t.Run("a reply notifies the parent's author only", func(t *testing.T) {
			c := h.postComment(t, w.alice.token, w.event.ID, "called it", 0)
			h.postComment(t, w.alice.token, w.event.ID, "talking to myself", c.ID)
			if ns := h.unread(t, w.alice.token); len(ns) != 2 {
				t.Fatalf("a self-reply notified: %+v", ns)
			}
			reply := h.postComment(t, w.bob.token, w.event.ID, "lucky guess", c.ID)
			ns := h.unread(t, w.alice.token)
			if len(ns) != 3 {
				t.Fatalf("%d notifications, want 3: %+v", len(ns), ns)
			}
			n := ns[0]
			if n.Type != "comment_reply" || n.Title != "New reply" || n.Message != "bob replied to your comment: lucky guess" ||
				n.RelatedType != "comment" || n.RelatedID != c.ID || n.UserID != w.alice.id {
				t.Fatalf("comment_reply = %+v", n)
			}
			for _, u := range []apiUser{w.bob, w.creator} {
				for _, n := range h.unread(t, u.token) {
					if n.Type == "comment_reply" {
						t.Fatalf("user %d was notified of reply %d: %+v", u.id, reply.ID, n)
					}
				}
			}
			h.setProfile(t, w.alice.token, map[string]any{"language": "ru"})
			if ns := h.unread(t, w.alice.token); ns[0].Title != "Новый ответ" || ns[0].Message != "bob ответил(а) на ваш комментарий: lucky guess" {
				t.Fatalf("in Russian: %+v", ns[0])
			}
			h.setProfile(t, w.alice.token, map[string]any{"language": "en"})
		})
		t.Run("only the owner marks a notification read", func(t *testing.T) {
			ns := h.unread(t, w.alice.token)
			target := ns[len(ns)-1] // the trade
			readPath := fmt.Sprintf("/api/v1/notifications/%d/read", target.ID)
			cases := []struct {
				name   string
				r      req
				status int
				code   string
			}{
				{"bob marking alice's notification is 404 not_found", req{method: "POST", path: readPath, token: w.bob.token}, 404, "not_found"},
				{"an unknown notification is 404 not_found", req{method: "POST", path: "/api/v1/notifications/987654321/read", token: w.alice.token}, 404, "not_found"},
				{"a non-integer id is 404 not_found", req{method: "POST", path: "/api/v1/notifications/x/read", token: w.alice.token}, 404, "not_found"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					expect(t, h.do(t, c.r), c.status, c.code)
				})
			}
			if got := h.unread(t, w.alice.token); len(got) != len(ns) {
				t.Fatalf("a refused mark changed alice's unread: %d, were %d", len(got), len(ns))
			}
			for range 2 { // marking twice is fine
				r := h.do(t, req{method: "POST", path: readPath, token: w.alice.token})
				expect(t, r, http.StatusOK, "")
				if string(r.body) != `{"status":"ok"}` {
					t.Fatalf("answered %s", r)
				}
			}
			got := h.unread(t, w.alice.token)
			if len(got) != len(ns)-1 || slices.ContainsFunc(got, func(n apiNotification) bool { return n.ID == target.ID }) {
				t.Fatalf("unread after marking: %+v", got)
			}
			all := h.allNotifications(t, w.alice.token, "")
			if len(all) != len(ns) || !all[len(all)-1].Read || all[0].Read {
				t.Fatalf("all = %+v", all)
			}
		})
		t.Run("read-all marks every notification of the caller only", func(t *testing.T) {
			before := len(h.unread(t, w.alice.token))
			bobBefore := len(h.unread(t, w.bob.token))
			r := h.do(t, req{method: "POST", path: "/api/v1/notifications/read-all", token: w.alice.token})
			expect(t, r, http.StatusOK, "")
			var out struct {
				Status string `json:"status"`
				Marked int64  `json:"marked"`
			}
			r.decode(t, &out)
			if out.Status != "ok" || out.Marked != int64(before) {
				t.Fatalf("answered %s, want %d marked", r, before)
			}
			if ns := h.unread(t, w.alice.token); len(ns) != 0 {
				t.Fatalf("unread after read-all: %+v", ns)
			}
			if n := len(h.unread(t, w.bob.token)); n != bobBefore {
				t.Fatalf("bob's unread went from %d to %d", bobBefore, n)
			}
			r = h.do(t, req{method: "POST", path: "/api/v1/notifications/read-all", token: w.alice.token})
			r.decode(t, &out)
			if out.Marked != 0 {
				t.Fatalf("a second read-all marked %d", out.Marked)
			}
		})
		t.Run("all notifications page newest first", func(t *testing.T) {
			all := h.allNotifications(t, w.alice.token, "")
			if len(all) != 3 {
				t.Fatalf("%d notifications, want 3 (a trade, a resolution, a reply)", len(all))
			}
			for _, c := range []struct {
				query string
				want  []apiNotification
			}{
				{"?limit=2", all[:2]},
				{"?limit=2&offset=2", all[2:]},
				{"?limit=abc&offset=-1", all},
				{"?offset=3", nil},
			} {
				got := h.allNotifications(t, w.alice.token, c.query)
				if len(got) != len(c.want) || len(got) > 0 && got[0].ID != c.want[0].ID {
					t.Fatalf("%s: got %+v, want %+v", c.query, got, c.want)
				}
			}
			for i := 1; i < len(all); i++ {
				if all[i-1].CreatedAt < all[i].CreatedAt {
					t.Fatalf("not newest first: %+v", all)
				}
			}
		})
	})
}

// groupDigits writes n with thousands separated by commas, as the English
// notifications do.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
