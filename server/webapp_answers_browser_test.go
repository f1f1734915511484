package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestAddAnswerInBrowser: the event page labels a pool's Other answer,
// its creator adds an answer with the page's form (a probability above
// Other's is refused with the server's reason), and a holder of a NO on
// Other watching the page sees the answer appear and the holding become
// YES on the other answers. It needs what TestWebAppInBrowser needs, and
// skips without it.
func TestAddAnswerInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	ev := h.createEvent(t, creator.token, otherEvent())
	h.activate(t, creator.token, ev.ID, true)
	pool := ev.Pools[0]
	holder := h.register(t, "holder")
	h.credit(t, holder.id, 100_000, false)
	no := h.buy(t, holder.token, pool.Markets[2].ID, "NO", 3000)

	var got struct {
		OtherTag string `json:"other_tag"`
		Refused  string `json:"refused"`
		Added    string `json:"added"`
		Held     string `json:"held"`
		// Axe is axe-core's violations on the creator's page with the
		// form; nil without it.
		Axe []string `json:"axe"`
	}
	d.run(t, "add_answer", map[string]any{"creator": asBrowserUser(creator), "holder": asBrowserUser(holder), "event": ev.ID,
		"other_name": "Other", "first_name": "Ann", "name": "Cid", "name_ru": "Сид", "percent": "5"}, &got)
	if !strings.Contains(got.OtherTag, "Other") {
		t.Errorf("the Other answer's label is %q", got.OtherTag)
	}
	if !strings.Contains(got.Refused, "below the Other answer") {
		t.Errorf("the refusal showed %q, want the server's reason", got.Refused)
	}
	if !strings.Contains(got.Added, "Cid") {
		t.Errorf("the confirmation is %q", got.Added)
	}
	if want := fmt.Sprintf("%d,%03d YES", no.Shares/1000, no.Shares%1000); !strings.Contains(got.Held, want) {
		t.Errorf("the holder's Ann card shows %q, want the %s shares of the NO on Other", got.Held, want)
	}
	if got.Axe == nil {
		t.Log("no axe-core: the form was not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range got.Axe {
		t.Errorf("the event page with the Add an answer form: %s", v)
	}
	r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", pool.ID)})
	expect(t, r, http.StatusOK, "")
	var p apiPool
	r.decode(t, &p)
	if len(p.Markets) != 4 || p.Markets[3].Name != "Cid" {
		t.Fatalf("the pool has %d markets after the browser's answer: %+v", len(p.Markets), p.Markets)
	}
	if ok, _, problems := h.audit(t); !ok {
		t.Errorf("the audit fails after the browser's answer: %v", problems)
	}
}
