package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestChallengeWindowInBrowser: a holder disputes a proposed outcome on
// the event page and the operator decides it in the console's queue. It
// needs what TestWebAppInBrowser needs, and skips without it.
func TestChallengeWindowInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	cfg.ResolutionChallenge = time.Hour
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base)
	w := newWorld(t, h)
	holder := h.register(t, "holder")
	h.credit(t, holder.id, 100_000, false)
	h.buy(t, holder.token, w.a1.ID, "YES", 20_000)
	expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
	before := h.me(t, holder.token).Balance

	var got struct {
		Proposed string `json:"proposed"`
		Queued   string `json:"queued"`
		State    string `json:"state"`
	}
	reason := "The match was abandoned at half time"
	d.run(t, "dispute_proposal", map[string]any{"user": asBrowserUser(holder), "event": w.event.ID, "market_name": w.a1.Name, "reason": reason}, &got)
	if !strings.Contains(got.Queued, reason) || !strings.Contains(got.Queued, fmt.Sprintf("User %d", holder.id)) {
		t.Errorf("the console's queue showed %q", got.Queued)
	}
	m := h.market(t, w.a1.ID)
	if !m.Resolved || m.WinningOutcome == nil || *m.WinningOutcome != "NO" || m.ResolvedBy == nil || *m.ResolvedBy != "operator" {
		t.Fatalf("the market is %+v, want resolved NO by the operator", m)
	}
	if after := h.me(t, holder.token).Balance; after != before {
		t.Errorf("the holder's balance went %d -> %d: the bond should be back and the YES position lost", before, after)
	}
	if ok, _, problems := h.audit(t); !ok {
		t.Errorf("the audit fails: %v", problems)
	}
}
