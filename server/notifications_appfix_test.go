package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestNotificationsSpeakTheReadersLanguage: a Russian reader's
// notifications name markets by their Russian names, and each
// notification carries the app's link to what it is about (a reply's
// goes to the comment on the event's page).
func TestNotificationsSpeakTheReadersLanguage(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		creator, ivan := h.register(t, "creator"), h.register(t, "ivan")
		h.makeCreator(t, creator.id)
		h.credit(t, ivan.id, 100_000, false)
		ev := h.createEvent(t, creator.token, map[string]any{
			"name": "Cup final", "name_ru": "Финал кубка",
			"pools": []any{map[string]any{"name": "Winner", "name_ru": "Победитель", "margin": 0.03, "lmsr_b_kopecks": 100_000,
				"markets": []any{map[string]any{"name": "Northside FC", "name_ru": "Нортсайд", "probability": 0.5, "yes_name": "Wins", "no_name": "Does not win"}}}},
		})
		h.activate(t, creator.token, ev.ID, true)
		m := ev.Pools[0].Markets[0]
		h.setProfile(t, ivan.token, map[string]any{"language": "ru"})
		h.buy(t, ivan.token, m.ID, "YES", 5_000)

		t.Run("a trade's notification names the market in Russian and links to the event", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications", token: ivan.token})
			expect(t, r, http.StatusOK, "")
			var out struct {
				Notifications []struct {
					Type, Title, Message, Link string
				} `json:"notifications"`
			}
			r.decode(t, &out)
			n := out.Notifications[0]
			if n.Type != "trade_executed" || !strings.Contains(n.Message, "«Нортсайд»") || strings.Contains(n.Message, "Northside") {
				t.Fatalf("the Russian notification: %+v", n)
			}
			if n.Link != fmt.Sprintf("/events/%d", ev.ID) {
				t.Fatalf("link %q", n.Link)
			}
		})

		t.Run("a settlement's notification names the market in Russian", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodPost, token: creator.token,
				path: fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", ev.ID, ev.Pools[0].ID, m.ID), body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
			ns := h.unread(t, ivan.token)
			if ns[0].Type != "market_resolved" || !strings.Contains(ns[0].Message, "«Нортсайд»") {
				t.Fatalf("the settlement: %+v", ns[0])
			}
		})

		t.Run("a reply's notification links to the reader's comment on the event page", func(t *testing.T) {
			c := h.postComment(t, ivan.token, ev.ID, "Нортсайд возьмёт", 0)
			h.postComment(t, creator.token, ev.ID, "посмотрим", c.ID)
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications", token: ivan.token})
			expect(t, r, http.StatusOK, "")
			var out struct {
				Notifications []struct {
					Type, Link string
				} `json:"notifications"`
			}
			r.decode(t, &out)
			if n := out.Notifications[0]; n.Type != "comment_reply" || n.Link != fmt.Sprintf("/events/%d#comment-%d", ev.ID, c.ID) {
				t.Fatalf("the reply's notification: %+v", n)
			}
		})
	})
}
