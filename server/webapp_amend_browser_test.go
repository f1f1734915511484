package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestAmendEventInBrowser: on the event page its creator edits the names
// and rules before the first trade and adds amendments, which a visitor
// reads in both languages, dated; after a trade the edit form is gone
// and a holder is notified. It needs what TestWebAppInBrowser needs, and
// skips without it.
func TestAmendEventInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base)
	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	ev := h.createEvent(t, creator.token, twoPoolEvent("Cup final"))
	h.activate(t, creator.token, ev.ID, true)

	type flowResult struct {
		EditShown    bool   `json:"edit_shown"`
		Item         string `json:"item"`
		Dated        string `json:"dated"`
		Notification string `json:"notification"`
	}
	t.Run("before the first trade the creator edits the names and rules and adds an amendment a Russian reader sees in both languages", func(t *testing.T) {
		var got flowResult
		d.run(t, "amend_event", map[string]any{"creator": asBrowserUser(creator), "event": ev.ID,
			"edit": map[string]any{"name": "Cup final, replayed", "rules": "Ninety minutes and stoppage time."},
			"text": "Kick-off moved to 21:00.", "text_ru": "Начало перенесено на 21:00."}, &got)
		e, _ := h.event(t, ev.ID)
		if e.Name != "Cup final, replayed" || len(e.Pools) != 2 {
			t.Fatalf("the event after the edit: %+v", e)
		}
		r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", e.Pools[0].ID)})
		expect(t, r, http.StatusOK, "")
		if !strings.Contains(string(r.body), "Ninety minutes and stoppage time.") {
			t.Errorf("the first pool's rules are not the edited ones: %s", r.body)
		}
		if as := *e.Amendments; len(as) != 1 || as[0].Text != "Kick-off moved to 21:00." || as[0].TextRu != "Начало перенесено на 21:00." {
			t.Errorf("amendments %+v", as)
		}
		if !got.EditShown {
			t.Error("the edit form is gone before any trade")
		}
		if !strings.Contains(got.Item, "Начало перенесено на 21:00.") || !strings.Contains(got.Item, "Kick-off moved to 21:00.") || got.Dated == "" {
			t.Errorf("the Russian reader's amendment shows %q (dated %q), want both texts and a date", got.Item, got.Dated)
		}
		ev.Pools = e.Pools
	})

	t.Run("after a trade the edit form is gone, and a new amendment reaches the holder", func(t *testing.T) {
		holder := h.register(t, "holder")
		h.credit(t, holder.id, 100_000, false)
		h.buy(t, holder.token, ev.Pools[1].Markets[0].ID, "YES", 10_000)
		var got flowResult
		d.run(t, "amend_event", map[string]any{"creator": asBrowserUser(creator), "event": ev.ID, "holder": asBrowserUser(holder),
			"text": "Penalties count.", "text_ru": "Пенальти засчитываются."}, &got)
		if got.EditShown {
			t.Error("the edit form is offered after a trade")
		}
		if !strings.Contains(got.Notification, "Penalties count.") {
			t.Errorf("the holder's notification says %q", got.Notification)
		}
	})
	if ok, _, problems := h.audit(t); !ok {
		t.Errorf("audit: %v", problems)
	}
}
