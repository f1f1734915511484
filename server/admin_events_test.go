package server_test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestOperatorCreatesEvents: the operator creates an event owned by a
// creator through the creator's money path, shows it, and nobody else may.
func TestOperatorCreatesEvents(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		creator, user := h.register(t, "owner"), h.register(t, "user")
		h.makeCreator(t, creator.id)
		path := func(id int64) string { return fmt.Sprintf("/api/v1/admin/users/%d/events", id) }

		t.Run("the event belongs to the creator, starts hidden, and the audit passes", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: path(creator.id), token: adminToken, body: twoPoolEvent("Operator's")})
			expect(t, r, http.StatusCreated, "")
			var e apiEvent
			r.decode(t, &e)
			if e.CreatorID != creator.id || e.IsActive || len(e.Pools) != 2 || len(e.Pools[0].Markets) != 2 {
				t.Fatalf("created %+v, want creator %d's inactive two-pool event", e, creator.id)
			}
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("the audit fails after the operator's event: %v", problems)
			}
			if feedHas(t, h, e.ID) {
				t.Fatal("a new event is in the feed before it is activated")
			}
			r = h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/events/%d/active", e.ID), token: adminToken,
				body: map[string]any{"is_active": true}})
			expect(t, r, http.StatusOK, "")
			if !feedHas(t, h, e.ID) {
				t.Fatal("the activated event is not in the feed")
			}
			h.credit(t, user.id, 100_000, false)
			h.buy(t, user.token, e.Pools[1].Markets[0].ID, "YES", 10_000)
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("the audit fails after a trade on the operator's event: %v", problems)
			}
			// The owner keeps the creator's rights over it.
			h.activate(t, creator.token, e.ID, false)
		})

		refused := []struct {
			name   string
			token  string
			path   string
			body   any
			status int
			code   string
		}{
			{"a user's token is refused", user.token, path(creator.id), twoPoolEvent("x"), http.StatusUnauthorized, "unauthorized"},
			{"a creator's own token is refused", creator.token, path(creator.id), twoPoolEvent("x"), http.StatusUnauthorized, "unauthorized"},
			{"an owner who is not a creator is a bad request", adminToken, path(user.id), twoPoolEvent("x"), http.StatusBadRequest, "invalid_request"},
			{"an unknown owner is user_not_found", adminToken, path(1 << 40), twoPoolEvent("x"), http.StatusNotFound, "user_not_found"},
			{"a body that is not JSON is a bad request", adminToken, path(creator.id), "name: x", http.StatusBadRequest, "invalid_request"},
			{"an unknown field is a bad request", adminToken, path(creator.id), map[string]any{"name": "x", "colour": "red", "pools": []any{}}, http.StatusBadRequest, "invalid_request"},
			{"a user's token may not show an event", user.token, "/api/v1/admin/events/1/active", map[string]any{"is_active": true}, http.StatusUnauthorized, "unauthorized"},
			{"showing an unknown event is event_not_found", adminToken, fmt.Sprintf("/api/v1/admin/events/%d/active", int64(1)<<40), map[string]any{"is_active": true}, http.StatusNotFound, "event_not_found"},
		}
		for _, c := range refused {
			t.Run(c.name, func(t *testing.T) {
				_, before, _ := h.audit(t)
				r := h.do(t, req{method: http.MethodPost, path: c.path, token: c.token, body: c.body})
				expect(t, r, c.status, c.code)
				if _, after, _ := h.audit(t); after != before {
					t.Fatalf("a refused request wrote %d postings", after-before)
				}
			})
		}
	})
}

// feedHas reports whether the public feed lists event id.
func feedHas(t *testing.T, h *harness, id int64) bool {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/events?limit=100"})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Events []apiEvent `json:"events"`
	}
	r.decode(t, &out)
	for _, e := range out.Events {
		if e.ID == id {
			return true
		}
	}
	return false
}

// newEventTextFields and newEventTextBody are the text fields of the
// operator's event body (POST /events's) for TestHostileTextIsNeverA5xx.
var newEventTextFields = []string{"name", "name_ru", "pools[0].name", "pools[0].name_ru", "pools[0].rules", "pools[0].rules_ru",
	"pools[0].markets[0].name", "pools[0].markets[0].name_ru", "pools[0].markets[0].yes_name", "pools[0].markets[0].no_name"}

func newEventTextBody(_ *fuzzWorld, _ int, text func(string, string) string) string {
	return fmt.Sprintf(`{"name":%s,"name_ru":%s,"pools":[{"name":%s,"name_ru":%s,"rules":%s,"rules_ru":%s,"margin":0.03,"lmsr_b_kopecks":100000,`+
		`"markets":[{"name":%s,"name_ru":%s,"yes_name":%s,"no_name":%s,"probability":0.5}]}]}`,
		text("name", "E"), text("name_ru", "Е"), text("pools[0].name", "P"), text("pools[0].name_ru", "П"),
		text("pools[0].rules", "rules, line two"), text("pools[0].rules_ru", "правила"),
		text("pools[0].markets[0].name", "M"), text("pools[0].markets[0].name_ru", "М"),
		text("pools[0].markets[0].yes_name", "Yes"), text("pools[0].markets[0].no_name", "No"))
}
