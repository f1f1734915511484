package server_test

import (
	"strings"
	"testing"
)

// TestCreateFirstEventInBrowser: on a fresh install the feed says how to
// start, and the operator's console creates and shows the first event.
// It needs what TestWebAppInBrowser needs, and skips without it.
func TestCreateFirstEventInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)

	var got struct {
		ConsoleHref string `json:"console_href"`
		DocsHref    string `json:"docs_href"`
		Refused     string `json:"refused"`
		Created     string `json:"created"`
		// Axe is axe-core's violations on the empty feed; nil without it.
		Axe []string `json:"axe"`
	}
	d.run(t, "create_event", map[string]any{"creator": asBrowserUser(creator), "event": twoPoolEvent("First event")}, &got)
	if got.ConsoleHref != "/admin" {
		t.Errorf("the empty feed's console link is %q, want /admin", got.ConsoleHref)
	}
	if got.DocsHref != "/docs#/events/createEvent" {
		t.Errorf("the creator's link is %q, want the API reference's createEvent", got.DocsHref)
	}
	if !strings.Contains(got.Refused, "unknown field") {
		t.Errorf("the refused event showed %q, want the server's reason", got.Refused)
	}
	if !strings.Contains(got.Created, "3 market(s)") {
		t.Errorf("the created event's status is %q, want its 3 markets", got.Created)
	}
	if got.Axe == nil {
		t.Log("no axe-core: the empty feed was not checked (PREDICTKIT_AXE_CORE)")
	}
	for _, v := range got.Axe {
		t.Errorf("the empty feed: %s", v)
	}
	if ok, _, problems := h.audit(t); !ok {
		t.Errorf("the audit fails after the console's event: %v", problems)
	}
}
