package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// smallEvent is an event of one market of b = 1000 at p = 0.5: a subsidy
// of b·ln 2, about 693 kopecks.
func smallEvent(name string) map[string]any {
	return map[string]any{"name": name, "pools": []any{map[string]any{"name": "P", "margin": 0, "lmsr_b_kopecks": 1000,
		"markets": []any{map[string]any{"name": "M", "probability": 0.5}}}}}
}

// refusedCreation posts an event that must be refused with 409
// creator_limit, and checks that it moved no money and created nothing.
func (h *harness) refusedCreation(t *testing.T, token string, body any, detail ...string) {
	t.Helper()
	ok, before, _ := h.audit(t)
	if !ok {
		t.Fatal("the audit fails before the refused creation")
	}
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: token, body: body})
	expect(t, r, http.StatusConflict, "creator_limit")
	var e struct{ Detail string }
	r.decode(t, &e)
	for _, d := range detail {
		if !strings.Contains(e.Detail, d) {
			t.Errorf("detail %q does not say %q", e.Detail, d)
		}
	}
	ok, after, problems := h.audit(t)
	if !ok || after != before {
		t.Fatalf("after the refused creation the audit says ok = %v (%v) and %d postings, before %d", ok, problems, after, before)
	}
}

func (h *harness) resolve(t *testing.T, marketID int64, side string) {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/markets/%d/resolve", marketID), token: adminToken,
		body: map[string]any{"won_side": side}})
	expect(t, r, http.StatusOK, "")
}

func TestCreatorLimits(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			t.Run("a creator at the limit of open events gets 409 creator_limit until one is resolved, and other creators do not", func(t *testing.T) {
				h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.CreatorMaxOpenEvents = 2 }))
				c, other := h.register(t, "creator"), h.register(t, "other")
				h.makeCreator(t, c.id)
				h.makeCreator(t, other.id)
				first := h.createEvent(t, c.token, smallEvent("First"))
				h.activate(t, c.token, first.ID, true)
				h.createEvent(t, c.token, smallEvent("Hidden, still open"))
				h.refusedCreation(t, c.token, smallEvent("Third"), "open_events", "at most 2 open events and has 2")
				h.createEvent(t, other.token, smallEvent("Another creator's"))

				h.resolve(t, first.Pools[0].Markets[0].ID, "YES")
				h.createEvent(t, c.token, smallEvent("Third, once the first is resolved"))
				h.refusedCreation(t, c.token, smallEvent("Fourth"), "open_events")
			})

			t.Run("a creator whose events would pass the subsidy limit gets 409 creator_limit", func(t *testing.T) {
				h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.CreatorMaxSubsidyKopecks = 1000 }))
				c := h.register(t, "creator")
				h.makeCreator(t, c.id)
				h.createEvent(t, c.token, smallEvent("693 kopecks of subsidy"))
				h.refusedCreation(t, c.token, smallEvent("Another 693"), "subsidy_kopecks", "at most 1000 kopecks")
				h.refusedCreation(t, c.token, twoPoolEvent("Much more"), "subsidy_kopecks")
			})
		})
	}
}

func TestCreatorsTradingOwnEvents(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			t.Run("when forbidden, a creator's buy and sell on their own event are 403, by token or API key, and nothing else is", func(t *testing.T) {
				h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.CreatorsMayTradeOwn = false }))
				w := newWorld(t, h)
				h.credit(t, w.creator.id, 100_000, false)
				key := h.createKey(t, w.creator.token, "bot", "trade")
				ok, before, _ := h.audit(t)
				for _, token := range []string{w.creator.token, key.Key} {
					for _, r := range []req{
						{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: token, body: map[string]any{"side": "YES", "amount_kopecks": 1000}},
						{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/sell", w.b1.ID), token: token, body: map[string]any{"side": "NO", "shares": 10}},
					} {
						expect(t, h.do(t, r), http.StatusForbidden, "forbidden")
					}
				}
				if ok2, after, _ := h.audit(t); !ok || !ok2 || after != before {
					t.Fatalf("the refused trades changed the ledger: %d postings, before %d", after, before)
				}
				// Others trade on the creator's event; the creator on others'.
				h.buy(t, w.alice.token, w.a1.ID, "YES", 1000)
				other := h.register(t, "other")
				h.makeCreator(t, other.id)
				ev := h.createEvent(t, other.token, smallEvent("Someone else's"))
				h.activate(t, other.token, ev.ID, true)
				tr := h.buy(t, w.creator.token, ev.Pools[0].Markets[0].ID, "NO", 1000)
				h.sell(t, key.Key, ev.Pools[0].Markets[0].ID, "NO", tr.Shares)
			})

			t.Run("by default a creator trades on their own event", func(t *testing.T) {
				h := newHarness(t, sc.new(t))
				w := newWorld(t, h)
				h.credit(t, w.creator.id, 100_000, false)
				tr := h.buy(t, w.creator.token, w.a1.ID, "YES", 1000)
				h.sell(t, w.creator.token, w.a1.ID, "YES", tr.Shares)
			})
		})
	}
}
