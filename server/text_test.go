package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// TestTextFieldsRefuseControlCharacters: every text field follows one
// rule, on both stores: UTF-8 without control characters (NUL, the other
// C0 and C1 controls, DEL), except line breaks and tabs where a field
// documents them. A refusal is a 400 that names the field, with the
// route's code, and stores nothing.
func TestTextFieldsRefuseControlCharacters(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		p := h.createPartner(t, "Bookie", 1_000_000)
		h.partnerBet(t, p.Key, map[string]any{"external_user_id": "u-1", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 10_000, "client_bet_id": "b-1"})
		chat := &chatClient{token: w.alice.token}
		h.openChat(t, chat)

		event := func(change func(e map[string]any, pool, market map[string]any)) map[string]any {
			e := twoPoolEvent("Text")
			pool := e["pools"].([]any)[0].(map[string]any)
			change(e, pool, pool["markets"].([]any)[0].(map[string]any))
			return e
		}
		ad := func(field string, v any) map[string]any {
			b := map[string]any{"user_id": w.alice.id, "type": "sell", "fiat_currency": "RUB", "exchange_rate": 100, "min_amount": 1000,
				"max_amount": 50_000, "payment_methods": []string{"SBP"}, "payment_duration": 15, "instructions": "pay"}
			b[field] = v
			return b
		}
		bets := 0
		bet := func(field, v string) map[string]any {
			bets++
			b := map[string]any{"external_user_id": "u-1", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 1000, "client_bet_id": fmt.Sprintf("text-%d", bets)}
			b[field] = v
			return b
		}
		post := func(path, token string, body any) req {
			return req{method: http.MethodPost, path: path, token: token, body: body}
		}
		cases := []struct {
			name        string
			req         req
			code, field string
		}{
			{"a NUL in the login e-mail", post("/api/v1/auth/login", "", map[string]any{"email": w.alice.email + "\x00", "password": "password-alice"}), "invalid_request", "email"},
			{"a NUL in the registration name", post("/api/v1/auth/register", "", map[string]any{"email": "nul@x.co", "password": "password-nul", "name": "A\x00"}), "invalid_request", "name"},
			{"a C1 control in the registration name", post("/api/v1/auth/register", "", map[string]any{"email": "c1@x.co", "password": "password-c1", "name": "A\u0085B"}), "invalid_request", "name"},
			{"a NUL in the avatar URL", req{method: http.MethodPatch, path: "/api/v1/auth/me", token: w.alice.token, body: map[string]any{"avatar_url": "https://x.example/\x00.png"}}, "invalid_request", "avatar_url"},
			{"a NUL in an event's name", post("/api/v1/events", w.creator.token, event(func(e, _, _ map[string]any) { e["name"] = "E\x00" })), "invalid_request", "name"},
			{"an escape sequence in an event's name_ru", post("/api/v1/events", w.creator.token, event(func(e, _, _ map[string]any) { e["name_ru"] = "\x1b[31mE" })), "invalid_request", "name_ru"},
			{"a line break in an event's name", post("/api/v1/events", w.creator.token, event(func(e, _, _ map[string]any) { e["name"] = "one\ntwo" })), "invalid_request", "name"},
			{"a NUL in a pool's name", post("/api/v1/events", w.creator.token, event(func(_, p, _ map[string]any) { p["name"] = "\x00" })), "invalid_request", "pools[0].name"},
			{"a NUL in a pool's name_ru", post("/api/v1/events", w.creator.token, event(func(_, p, _ map[string]any) { p["name_ru"] = "П\x00" })), "invalid_request", "pools[0].name_ru"},
			{"a NUL in a pool's rules", post("/api/v1/events", w.creator.token, event(func(_, p, _ map[string]any) { p["rules"] = "line\n\x00" })), "invalid_request", "pools[0].rules"},
			{"a DEL in a pool's rules_ru", post("/api/v1/events", w.creator.token, event(func(_, p, _ map[string]any) { p["rules_ru"] = "x\x7f" })), "invalid_request", "pools[0].rules_ru"},
			{"a NUL in a market's name", post("/api/v1/events", w.creator.token, event(func(_, _, m map[string]any) { m["name"] = "M\x00" })), "invalid_request", "pools[0].markets[0].name"},
			{"a NUL in a market's name_ru", post("/api/v1/events", w.creator.token, event(func(_, _, m map[string]any) { m["name_ru"] = "М\x00" })), "invalid_request", "pools[0].markets[0].name_ru"},
			{"a NUL in a market's yes_name", post("/api/v1/events", w.creator.token, event(func(_, _, m map[string]any) { m["yes_name"] = "Y\x00" })), "invalid_request", "pools[0].markets[0].yes_name"},
			{"a NUL in a market's no_name", post("/api/v1/events", w.creator.token, event(func(_, _, m map[string]any) { m["no_name"] = "N\x00" })), "invalid_request", "pools[0].markets[0].no_name"},
			{"a NUL in a partner's name", post("/api/v1/admin/partners", adminToken, map[string]any{"name": "P\x00"}), "invalid_request", "name"},
			{"a NUL in a bet's external_user_id", betReq(p.Key, bet("external_user_id", "u\x00")), "BAD_PARAMS", "external_user_id"},
			{"a tab in a bet's external_user_id", betReq(p.Key, bet("external_user_id", "u\t1")), "BAD_PARAMS", "external_user_id"},
			{"a NUL in a sell's external_user_id", sellReq(p.Key, map[string]any{"external_user_id": "u-1\x00", "market_id": w.a1.ID, "side": "yes", "shares": 1, "client_bet_id": "s-1"}), "BAD_PARAMS", "external_user_id"},
			{"a NUL in the state's external_user_id", req{method: http.MethodGet, path: "/api/v1/partner/users/u-1%00", header: map[string]string{server.HeaderPartnerKey: p.Key}}, "BAD_PARAMS", "external_user_id"},
			{"a control character in a comment", post(commentsPath(w.event.ID), w.alice.token, map[string]any{"content": "hi\x01"}), "invalid_request", "content"},
			{"a C1 control in a chat message", chat.req(http.MethodPost, "/api/v1/chat/messages", map[string]any{"text": "h\u0085i"}), "invalid_request", "text"},
			{"a C1 control in a P2P ad's instructions", post("/api/v1/admin/p2p/ads", adminToken, ad("instructions", "pay\u009b")), "invalid_request", "instructions"},
			{"a NUL in a P2P ad's payment method", post("/api/v1/admin/p2p/ads", adminToken, ad("payment_methods", []string{"SBP\x00"})), "invalid_request", "payment_methods"},
		}
		for _, c := range cases {
			t.Run(c.name+" is a 400 that names "+c.field, func(t *testing.T) {
				r := h.do(t, c.req)
				expect(t, r, http.StatusBadRequest, c.code)
				if d := r.errorDetail(t); !strings.HasPrefix(d, c.field+": ") {
					t.Errorf("detail %q does not name %s", d, c.field)
				}
			})
		}

		t.Run("an operator's chat path with a session id that is not UTF-8 is a 400 that names session_id", func(t *testing.T) {
			for _, path := range []string{"/api/v1/admin/chat/sessions/cs_\xff/messages", "/api/v1/admin/chat/sessions/cs_\xed\xa0\x80/close"} {
				method := http.MethodGet
				if strings.HasSuffix(path, "/close") {
					method = http.MethodPost
				}
				r := h.doRawPath(t, method, path, strings.Replace(strings.Replace(path, "cs_\xff", "x", 1), "cs_\xed\xa0\x80", "x", 1),
					map[string]string{"Authorization": "Bearer " + adminToken})
				expect(t, r, http.StatusBadRequest, "invalid_request")
				if d := r.errorDetail(t); !strings.HasPrefix(d, "session_id: ") {
					t.Errorf("%s: detail %q does not name session_id", path, d)
				}
			}
		})

		t.Run("nothing refused was stored", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/events"})
			expect(t, r, http.StatusOK, "")
			if n := strings.Count(string(r.body), `"id":`); strings.Contains(string(r.body), `\u0000`) || n == 0 {
				t.Errorf("events: %s", r)
			}
			if got := h.partnerState(t, p.Key, "u-1"); !got.Exists {
				t.Errorf("u-1 lost its sub-account: %+v", got)
			}
			me := h.me(t, w.alice.token)
			if me.AvatarURL != nil {
				t.Errorf("the avatar became %q", *me.AvatarURL)
			}
		})

		t.Run("line breaks and tabs pass where the field documents them", func(t *testing.T) {
			e := h.createEvent(t, w.creator.token, event(func(_, p, _ map[string]any) { p["rules"] = "one\ntwo\r\n\tthree" }))
			if e.ID == 0 {
				t.Fatal("no event")
			}
			c := h.postComment(t, w.alice.token, w.event.ID, "line one\n\tline two", 0)
			if c.Content != "line one\n\tline two" {
				t.Errorf("comment %q", c.Content)
			}
			sent := h.chatSend(t, chat, "line one\nline two")
			if sent.Text != "line one\nline two" {
				t.Errorf("chat %q", sent.Text)
			}
			r := h.do(t, post("/api/v1/admin/p2p/ads", adminToken, ad("instructions", "pay\nthen\twait")))
			expect(t, r, http.StatusCreated, "")
		})

		t.Run("bidirectional marks and other format characters are text", func(t *testing.T) {
			name := fmt.Sprintf("\u202Eright to left %d \u2066x\u2069", w.event.ID)
			e := h.createEvent(t, w.creator.token, event(func(e, _, _ map[string]any) { e["name"] = name }))
			if e.Name != name {
				t.Errorf("name %q, want %q", e.Name, name)
			}
		})
	})
}
