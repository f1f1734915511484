package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/server"
)

// apiAmendment is an amendment as the API answers it.
type apiAmendment struct {
	ID        int64  `json:"id"`
	EventID   int64  `json:"event_id"`
	Text      string `json:"text"`
	TextRu    string `json:"text_ru"`
	CreatedAt string `json:"created_at"`
}

// apiAmendedEvent is an event view with what an edit changes;
// Amendments is a pointer so that a view without the field fails.
type apiAmendedEvent struct {
	apiEvent
	NameRu     string          `json:"name_ru"`
	Tags       []string        `json:"tags"`
	Amendments *[]apiAmendment `json:"amendments"`
}

func eventPath(id int64) string      { return fmt.Sprintf("/api/v1/events/%d", id) }
func amendmentsPath(id int64) string { return fmt.Sprintf("/api/v1/events/%d/amendments", id) }

func (h *harness) event(t *testing.T, id int64) (apiAmendedEvent, string) {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: eventPath(id)})
	expect(t, r, http.StatusOK, "")
	var e apiAmendedEvent
	r.decode(t, &e)
	if e.Amendments == nil {
		t.Fatalf("the event view has no amendments: %s", r)
	}
	return e, string(r.body)
}

func (h *harness) balanceOf(t *testing.T, ref account.Ref) int64 {
	t.Helper()
	v, err := h.store.Balance(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// escrowsOf is what the escrows of e's markets hold together.
func (h *harness) escrowsOf(t *testing.T, e apiEvent) int64 {
	t.Helper()
	var sum int64
	for _, p := range e.Pools {
		for _, m := range p.Markets {
			sum += h.balanceOf(t, account.EscrowAccount(m.ID))
		}
	}
	return sum
}

func (h *harness) mustAudit(t *testing.T) int64 {
	t.Helper()
	ok, postings, problems := h.audit(t)
	if !ok {
		t.Fatalf("audit: %v", problems)
	}
	return postings
}

// threeWay is a pools list of one exclusive pool of three markets.
func threeWay(b int64) []any {
	return []any{map[string]any{"name": "Winner", "name_ru": "Победитель", "rules": "Ninety minutes.\nExtra time does not count.", "margin": 0.02,
		"lmsr_b_kopecks": b, "exclusive": true, "markets": []any{
			map[string]any{"name": "Home", "probability": 0.45}, map[string]any{"name": "Draw", "probability": 0.25},
			map[string]any{"name": "Away", "probability": 0.3}}}}
}

// TestEditEvent: an event's creator edits it before its first trade,
// the money of replaced pools moves exactly, and every refusal changes
// nothing.
func TestEditEvent(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		other := h.register(t, "other")
		h.makeCreator(t, other.id)
		expect(t, h.putTag(t, "football", map[string]any{"name": "Football"}), http.StatusOK, "")

		t.Run("the creator renames the event and re-opens its pools: the old escrows go back to the treasury, the new subsidies out", func(t *testing.T) {
			treasury, old := h.balanceOf(t, account.Treasury), h.escrowsOf(t, w.event)
			r := h.do(t, req{method: http.MethodPatch, path: eventPath(w.event.ID), token: w.creator.token,
				body: map[string]any{"name": "Cup final", "tags": []string{"football"}, "pools": threeWay(500_000)}})
			expect(t, r, http.StatusOK, "")
			var got apiAmendedEvent
			r.decode(t, &got)
			read, _ := h.event(t, w.event.ID)
			for _, e := range []apiAmendedEvent{got, read} {
				if e.Name != "Cup final" || e.NameRu != "World cup (ru)" || len(e.Tags) != 1 || !e.IsActive || len(e.Pools) != 1 ||
					len(e.Pools[0].Markets) != 3 || *e.Pools[0].Exclusive != true || e.Pools[0].Metadata.LMSRBKopecks != 500_000 {
					t.Fatalf("event after the edit: %+v", e)
				}
			}
			for _, m := range []apiMarket{w.a1, w.a2, w.b1} {
				expect(t, h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d", m.ID)}), http.StatusNotFound, "market_not_found")
				if b := h.balanceOf(t, account.EscrowAccount(m.ID)); b != 0 {
					t.Fatalf("the replaced market %d's escrow holds %d", m.ID, b)
				}
			}
			fresh := h.escrowsOf(t, got.apiEvent)
			if fresh <= 0 {
				t.Fatalf("the new pool escrows %d", fresh)
			}
			if tr := h.balanceOf(t, account.Treasury); tr != treasury+old-fresh {
				t.Fatalf("treasury %d, want %d + %d (back) - %d (out)", tr, treasury, old, fresh)
			}
			h.mustAudit(t)
			w.event = got.apiEvent
		})

		t.Run("fields left out are kept, markets too", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPatch, path: eventPath(w.event.ID), token: w.creator.token, body: map[string]any{"name_ru": "Финал кубка"}})
			expect(t, r, http.StatusOK, "")
			e, _ := h.event(t, w.event.ID)
			if e.Name != "Cup final" || e.NameRu != "Финал кубка" || len(e.Tags) != 1 || e.Pools[0].Markets[0].ID != w.event.Pools[0].Markets[0].ID {
				t.Fatalf("event: %+v", e)
			}
		})

		refused := func(t *testing.T, id int64, token string, body any, status int, code string) {
			t.Helper()
			_, before := h.event(t, w.event.ID)
			postings := h.mustAudit(t)
			r := h.do(t, req{method: http.MethodPatch, path: eventPath(id), token: token, body: body})
			expect(t, r, status, code)
			if _, after := h.event(t, w.event.ID); after != before {
				t.Fatalf("a refused edit changed the event:\n%s\n%s", before, after)
			}
			if p := h.mustAudit(t); p != postings {
				t.Fatalf("a refused edit posted %d postings", p-postings)
			}
		}
		t.Run("refusals are clear 4xx answers that change nothing", func(t *testing.T) {
			badPool := func(edit func(p map[string]any)) map[string]any {
				ps := threeWay(100_000)
				edit(ps[0].(map[string]any))
				return map[string]any{"pools": ps}
			}
			for _, tc := range []struct {
				name   string
				path   string
				token  string
				body   any
				status int
				code   string
			}{
				{"without a token", "", "", map[string]any{"name": "x"}, 401, "unauthorized"},
				{"by a user who is not the creator", "", w.alice.token, map[string]any{"name": "x"}, 403, "forbidden"},
				{"by another creator", "", other.token, map[string]any{"name": "x"}, 403, "forbidden"},
				{"of an unknown event", "/api/v1/events/999999999", w.creator.token, map[string]any{"name": "x"}, 404, "event_not_found"},
				{"of an id that is not one", "/api/v1/events/abc", w.creator.token, map[string]any{"name": "x"}, 400, "invalid_id"},
				{"naming an unknown tag", "", w.creator.token, map[string]any{"tags": []string{"nosuchtag"}}, 400, "invalid_request"},
				{"with a bad slug", "", w.creator.token, map[string]any{"tags": []string{"Bad Slug"}}, 400, "invalid_request"},
				{"with an empty name", "", w.creator.token, map[string]any{"name": "  "}, 400, "invalid_request"},
				{"with a control character in the name", "", w.creator.token, map[string]any{"name": "a\u0007b"}, 400, "invalid_request"},
				{"with no field", "", w.creator.token, map[string]any{}, 400, "invalid_request"},
				{"with an unknown field", "", w.creator.token, map[string]any{"name": "x", "is_active": false}, 400, "invalid_request"},
				{"with no pools", "", w.creator.token, map[string]any{"pools": []any{}}, 400, "invalid_request"},
				{"with a probability out of range", "", w.creator.token, badPool(func(p map[string]any) {
					p["exclusive"] = false
					p["markets"].([]any)[0].(map[string]any)["probability"] = 1.5
				}), 400, "invalid_request"},
				{"with exclusive probabilities that do not sum to 1", "", w.creator.token, badPool(func(p map[string]any) {
					p["markets"].([]any)[0].(map[string]any)["probability"] = 0.9
				}), 400, "invalid_request"},
				{"with a pool without its margin", "", w.creator.token, badPool(func(p map[string]any) { delete(p, "margin") }), 400, "invalid_request"},
				{"with a window that ends before it starts", "", w.creator.token, badPool(func(p map[string]any) {
					p["live_at"], p["finish_at"] = "2030-01-02T00:00:00Z", "2030-01-01T00:00:00Z"
				}), 400, "invalid_request"},
				{"with a b out of range", "", w.creator.token, badPool(func(p map[string]any) { p["lmsr_b_kopecks"] = 1 }), 400, "invalid_request"},
			} {
				t.Run("an edit "+tc.name+" is "+fmt.Sprint(tc.status)+" "+tc.code, func(t *testing.T) {
					path := tc.path
					id := w.event.ID
					if path != "" {
						id = 999999999
					}
					if tc.code == "invalid_id" {
						r := h.do(t, req{method: http.MethodPatch, path: path, token: tc.token, body: tc.body})
						expect(t, r, tc.status, tc.code)
						return
					}
					refused(t, id, tc.token, tc.body, tc.status, tc.code)
				})
			}
		})

		t.Run("after the first trade an edit is 409 event_traded and changes nothing", func(t *testing.T) {
			h.buy(t, w.alice.token, w.event.Pools[0].Markets[2].ID, "YES", 5_000)
			refused(t, w.event.ID, w.creator.token, map[string]any{"name": "Changed"}, 409, "event_traded")
			refused(t, w.event.ID, w.creator.token, map[string]any{"pools": threeWay(100_000)}, 409, "event_traded")
		})

		t.Run("after a partner's bet an edit is 409 event_traded", func(t *testing.T) {
			ev := h.createEvent(t, w.creator.token, twoPoolEvent("Partnered"))
			p := h.createPartner(t, "Bookie", 1_000_000)
			h.partnerBet(t, p.Key, map[string]any{"external_user_id": "u1", "market_id": ev.Pools[1].Markets[0].ID, "side": "no",
				"amount_kopecks": 2_000, "client_bet_id": "amend-1"})
			r := h.do(t, req{method: http.MethodPatch, path: eventPath(ev.ID), token: w.creator.token, body: map[string]any{"name": "Changed"}})
			expect(t, r, http.StatusConflict, "event_traded")
		})

		t.Run("with a resolved market an edit is 409 event_resolved", func(t *testing.T) {
			ev := h.createEvent(t, w.creator.token, twoPoolEvent("Resolved"))
			m := ev.Pools[1].Markets[0]
			expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(ev.ID, ev.Pools[1].ID, m.ID), token: w.creator.token,
				body: map[string]any{"won_side": "NO"}}), http.StatusOK, "")
			r := h.do(t, req{method: http.MethodPatch, path: eventPath(ev.ID), token: w.creator.token, body: map[string]any{"name": "Changed"}})
			expect(t, r, http.StatusConflict, "event_resolved")
			h.mustAudit(t)
		})
	})
}

// TestEditEventCreatorLimit: the new pools' subsidy counts against the
// creator's limit in place of the old.
func TestEditEventCreatorLimit(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.CreatorMaxSubsidyKopecks = 200_000 }))
			c := h.register(t, "creator")
			h.makeCreator(t, c.id)
			ev := h.createEvent(t, c.token, map[string]any{"name": "Small", "pools": threeWay(100_000)})
			treasury := h.balanceOf(t, account.Treasury)
			r := h.do(t, req{method: http.MethodPatch, path: eventPath(ev.ID), token: c.token, body: map[string]any{"pools": threeWay(1_000_000)}})
			expect(t, r, http.StatusConflict, "creator_limit")
			if tr := h.balanceOf(t, account.Treasury); tr != treasury {
				t.Fatalf("a refused edit moved the treasury from %d to %d", treasury, tr)
			}
			// The same size again fits: the old subsidy is not counted twice.
			r = h.do(t, req{method: http.MethodPatch, path: eventPath(ev.ID), token: c.token, body: map[string]any{"pools": threeWay(110_000)}})
			expect(t, r, http.StatusOK, "")
			h.mustAudit(t)
		})
	}
}

// TestAmendments: the creator adds amendments, before and after the first
// trade; the event views carry them oldest first; holders are told, in
// their language; refusals change nothing.
func TestAmendments(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		amend := func(t *testing.T, token string, id int64, body any) *response {
			t.Helper()
			return h.do(t, req{method: http.MethodPost, path: amendmentsPath(id), token: token, body: body})
		}
		var first apiAmendment
		t.Run("before the first trade the creator's amendment is 201 and shown with the event", func(t *testing.T) {
			r := amend(t, w.creator.token, w.event.ID, map[string]any{"text": " Kick-off moved to 21:00. "})
			expect(t, r, http.StatusCreated, "")
			r.decode(t, &first)
			if first.ID == 0 || first.EventID != w.event.ID || first.Text != "Kick-off moved to 21:00." || first.TextRu != "" || first.CreatedAt == "" {
				t.Fatalf("amendment %+v", first)
			}
			e, _ := h.event(t, w.event.ID)
			if as := *e.Amendments; len(as) != 1 || as[0] != first {
				t.Fatalf("amendments %+v", as)
			}
		})

		t.Run("after trades, holders of open positions are told in their language, once each", func(t *testing.T) {
			h.setProfile(t, w.alice.token, map[string]any{"language": "ru"})
			h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
			h.buy(t, w.alice.token, w.b1.ID, "NO", 10_000)
			tr := h.buy(t, w.bob.token, w.a2.ID, "YES", 10_000)
			h.sell(t, w.bob.token, w.a2.ID, "YES", tr.Shares)
			r := amend(t, w.creator.token, w.event.ID, map[string]any{"text": "Extra time counts.\nPenalties do not.", "text_ru": "Дополнительное время засчитывается."})
			expect(t, r, http.StatusCreated, "")
			var second apiAmendment
			r.decode(t, &second)
			e, _ := h.event(t, w.event.ID)
			if as := *e.Amendments; len(as) != 2 || as[0] != first || as[1] != second {
				t.Fatalf("amendments %+v, want the first then %+v", as, second)
			}
			lr := h.do(t, req{method: http.MethodGet, path: "/api/v1/events"})
			expect(t, lr, http.StatusOK, "")
			var list struct {
				Events []apiAmendedEvent `json:"events"`
			}
			lr.decode(t, &list)
			if len(list.Events) != 1 || list.Events[0].Amendments == nil || len(*list.Events[0].Amendments) != 2 {
				t.Fatalf("the feed: %+v", list.Events)
			}
			amended := func(u apiUser) []apiNotification {
				var out []apiNotification
				for _, n := range h.allNotifications(t, u.token, "") {
					if n.Type == "event_amended" {
						out = append(out, n)
					}
				}
				return out
			}
			ns := amended(w.alice)
			if len(ns) != 1 || ns[0].RelatedID != w.event.ID || ns[0].RelatedType != "event" || ns[0].Title != "Уточнение условий" ||
				!strings.Contains(ns[0].Message, "Дополнительное время засчитывается.") || !strings.Contains(ns[0].Message, "World cup (ru)") {
				t.Fatalf("alice's notifications: %+v", ns)
			}
			if ns := amended(w.bob); len(ns) != 0 {
				t.Fatalf("bob sold out but was told: %+v", ns)
			}
			if ns := amended(w.creator); len(ns) != 0 {
				t.Fatalf("the creator holds nothing but was told: %+v", ns)
			}
			h.mustAudit(t)
		})

		t.Run("a holder reading in English gets the English text", func(t *testing.T) {
			carol := h.register(t, "carol")
			h.credit(t, carol.id, 50_000, false)
			h.buy(t, carol.token, w.a1.ID, "NO", 5_000)
			expect(t, amend(t, w.creator.token, w.event.ID, map[string]any{"text": "Third note", "text_ru": "Третье"}), http.StatusCreated, "")
			ns := h.allNotifications(t, carol.token, "")
			if len(ns) == 0 || ns[0].Type != "event_amended" || ns[0].Title != "Event amended" || !strings.Contains(ns[0].Message, "Third note") ||
				!strings.Contains(ns[0].Message, "World cup") {
				t.Fatalf("carol's notifications: %+v", ns)
			}
		})

		t.Run("refusals are clear 4xx answers that change nothing", func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				path   string
				token  string
				body   any
				status int
				code   string
			}{
				{"without a token", "", "", map[string]any{"text": "x"}, 401, "unauthorized"},
				{"by a user who is not the creator", "", w.alice.token, map[string]any{"text": "x"}, 403, "forbidden"},
				{"of an unknown event", amendmentsPath(999999999), w.creator.token, map[string]any{"text": "x"}, 404, "event_not_found"},
				{"of an id that is not one", "/api/v1/events/x/amendments", w.creator.token, map[string]any{"text": "x"}, 400, "invalid_id"},
				{"with an empty text", "", w.creator.token, map[string]any{"text": ""}, 400, "invalid_request"},
				{"with a blank text", "", w.creator.token, map[string]any{"text": " \n "}, 400, "invalid_request"},
				{"without a text", "", w.creator.token, map[string]any{"text_ru": "только"}, 400, "invalid_request"},
				{"with a text too long", "", w.creator.token, map[string]any{"text": strings.Repeat("a", 2001)}, 400, "invalid_request"},
				{"with a Russian text too long", "", w.creator.token, map[string]any{"text": "a", "text_ru": strings.Repeat("я", 2001)}, 400, "invalid_request"},
				{"with a control character", "", w.creator.token, map[string]any{"text": "a\u0000b"}, 400, "invalid_request"},
				{"with an unknown field", "", w.creator.token, map[string]any{"text": "a", "title": "b"}, 400, "invalid_request"},
				{"with a text that is not a string", "", w.creator.token, map[string]any{"text": 5}, 400, "invalid_request"},
			} {
				t.Run("an amendment "+tc.name+" is "+fmt.Sprint(tc.status)+" "+tc.code, func(t *testing.T) {
					_, before := h.event(t, w.event.ID)
					path := tc.path
					if path == "" {
						path = amendmentsPath(w.event.ID)
					}
					expect(t, h.do(t, req{method: http.MethodPost, path: path, token: tc.token, body: tc.body}), tc.status, tc.code)
					if _, after := h.event(t, w.event.ID); after != before {
						t.Fatalf("a refused amendment changed the event:\n%s\n%s", before, after)
					}
				})
			}
		})

		t.Run("a 2000-character text in each language is taken", func(t *testing.T) {
			r := amend(t, w.creator.token, w.event.ID, map[string]any{"text": strings.Repeat("a", 2000), "text_ru": strings.Repeat("я", 2000)})
			expect(t, r, http.StatusCreated, "")
		})
	})
}
