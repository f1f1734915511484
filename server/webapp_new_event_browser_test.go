package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// roubles is kopecks as the app shows money in English: ₽1,234.56.
func roubles(k int64) string {
	s := fmt.Sprint(k / 100)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return fmt.Sprintf("₽%s.%02d", s, k%100)
}

// TestNewEventPageInBrowser: a creator builds an exclusive pool of three
// markets on the app's "New event" page, sees the subsidy the server will
// charge, previews, creates and publishes it, and the feed lists it;
// axe-core finds nothing on the page. It needs what TestWebAppInBrowser
// needs, and skips without it.
func TestNewEventPageInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	r := h.do(t, req{method: http.MethodPut, path: "/api/v1/admin/tags/derby", token: adminToken, body: map[string]any{"name": "Derby", "name_ru": "Дерби"}})
	expect(t, r, http.StatusOK, "")

	// What the page builds, as the server counts it.
	body := map[string]any{"name": "Browser derby", "tags": []string{"derby"}, "pools": []any{map[string]any{"name": "Who wins?", "rules": "The official result.",
		"margin": 0.02, "lmsr_b_kopecks": 300_000, "exclusive": true, "markets": []any{
			map[string]any{"name": "Ann", "probability": 0.5}, map[string]any{"name": "Bob", "probability": 0.3}, map[string]any{"name": "Cy", "probability": 0.2}}}}}
	want := h.preview(t, creator.token, body)

	var got struct {
		Subsidy string   `json:"subsidy"`
		Preview string   `json:"preview"`
		Axe     []string `json:"axe"`
	}
	d.run(t, "new_event", map[string]any{"creator": asBrowserUser(creator), "name": "Browser derby", "b_roubles": "3000", "tag": "Derby",
		"want_subsidy": roubles(want)}, &got)
	if !strings.Contains(got.Subsidy, roubles(want)) {
		t.Errorf("the page's subsidy reads %q, want the server's %s", got.Subsidy, roubles(want))
	}
	for _, s := range []string{"Browser derby", "Who wins?", "Ann", "Bob", "Cy", "50.0%", "30.0%", "20.0%", roubles(want)} {
		if !strings.Contains(got.Preview, s) {
			t.Errorf("the preview %q does not show %q", got.Preview, s)
		}
	}
	if got.Axe == nil {
		t.Log("no axe-core: the page was not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range got.Axe {
		t.Errorf("the new event page: %s", v)
	}
	if ok, _, problems := h.audit(t); !ok {
		t.Errorf("the audit fails after the page's event: %v", problems)
	}
}

// TestProposeEventInBrowser: with proposals on, a user who is not a
// creator proposes an event on the same page, which says it awaits the
// operator; the operator approves it in the console's queue, and the
// user finds the notification and has the ante back.
func TestProposeEventInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	cfg.Proposals, cfg.ProposalAnteKopecks = true, 10000
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base)
	user := h.register(t, "proposer")
	h.credit(t, user.id, 50000, false)

	var got struct {
		Ante         string `json:"ante"`
		Waiting      string `json:"waiting"`
		Notification string `json:"notification"`
	}
	d.run(t, "new_event", map[string]any{"proposer": asBrowserUser(user), "proposal_name": "Browser proposal"}, &got)
	if !strings.Contains(got.Ante, "₽100.00") {
		t.Errorf("the page's ante line reads %q, want ₽100.00", got.Ante)
	}
	if !strings.Contains(got.Waiting, "Browser proposal") {
		t.Errorf("the page says %q after the proposal", got.Waiting)
	}
	if got.Notification == "" {
		t.Error("the proposer saw no notification")
	}
	if me := h.me(t, user.token); me.Balance != 50000 {
		t.Errorf("the proposer's balance is %d after approval, want the ante back", me.Balance)
	}
	if ok, _, problems := h.audit(t); !ok {
		t.Errorf("the audit fails after the approval: %v", problems)
	}
}
