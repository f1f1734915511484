package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// demoWebApp is a server with the demo data and the web app, as `go run
// ./cmd/predictkit` serves it, with a browser driver, and the demo's
// pages the flows visit.
type demoWebApp struct {
	h *harness
	d *webDriver
	// cup is the event whose exclusive pool asks "Who lifts the cup?",
	// resolved the event of the market its creator resolved.
	cup, resolved apiEvent
	// maria is the demo trader with the busiest profile, creator the
	// demo's creator.
	maria, creator browserUser
}

// startDemoWebApp starts a demoWebApp, or skips as TestWebAppInBrowser
// does without Chromium, Node.js or playwright-core.
func startDemoWebApp(t *testing.T) *demoWebApp {
	t.Helper()
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.Demo = true
	cfg.Web = true
	cfg.StreamPing = time.Second
	// Deposit addresses, for the Deposit page (its nodes lead nowhere:
	// the page lists no deposits).
	withWallets(&cfg)
	h, _ := startServer(t, cfg)
	a := &demoWebApp{h: h, d: startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())}
	var feed struct {
		Events []apiEvent `json:"events"`
	}
	h.do(t, req{method: http.MethodGet, path: "/api/v1/events?status=all&limit=100"}).decode(t, &feed)
	for _, e := range feed.Events {
		for _, p := range e.Pools {
			if p.Exclusive != nil && *p.Exclusive && p.Name == "Who lifts the cup?" {
				a.cup = e
			}
			for _, m := range p.Markets {
				if m.WinningOutcome != nil && *m.WinningOutcome != "VOID" {
					a.resolved = e
				}
			}
		}
	}
	if a.cup.ID == 0 || a.resolved.ID == 0 {
		t.Fatalf("the demo has no cup (%d) or no resolved event (%d)", a.cup.ID, a.resolved.ID)
	}
	a.maria = browserUser{Name: "Maria Ivanova", Email: server.DemoMariaEmail, Password: server.DemoPassword}
	a.maria.ID = h.me(t, h.login(t, a.maria.Email, a.maria.Password)).ID
	a.creator = browserUser{Name: "Demo Creator", Email: server.DemoCreatorEmail, Password: server.DemoPassword}
	return a
}

// screenshotDir is PREDICTKIT_SCREENSHOTS/sub, made, as an absolute path
// (a relative PREDICTKIT_SCREENSHOTS is taken from server/, where go test
// runs), or "" when the variable is unset.
func screenshotDir(t *testing.T, sub string) string {
	t.Helper()
	dir := os.Getenv("PREDICTKIT_SCREENSHOTS")
	if dir == "" {
		return ""
	}
	dir, err := filepath.Abs(filepath.Join(dir, sub))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestWebAppFromDemo drives the web app over the demo data, which looks
// like a platform a visitor would browse: it measures the first load of
// every main page against the byte budget, runs axe-core on every main
// page with that data and, with PREDICTKIT_SCREENSHOTS=<dir>, saves the
// README's screenshots. It skips like TestWebAppInBrowser.
func TestWebAppFromDemo(t *testing.T) {
	a := startDemoWebApp(t)

	t.Run("the first load of every main page stays within the byte budget, and within PREDICTKIT_WEBAPP_READY_MS of time when set", func(t *testing.T) {
		type page struct {
			Name string `json:"name"`
			Path string `json:"path"`
			// Who signs in first: "" (a visitor), "user" or "operator".
			Who string `json:"who,omitempty"`
		}
		pages := []page{
			{"feed", "/", ""},
			{"event (exclusive pool)", fmt.Sprintf("/events/%d", a.cup.ID), ""},
			{"event (two pools)", "/events/1", ""},
			{"event (resolved)", fmt.Sprintf("/events/%d", a.resolved.ID), ""},
			{"leaderboard", "/leaderboard", ""},
			{"P2P board", "/p2p", ""},
			{"support chat", "/chat", ""},
			{"log in", "/login", ""},
			{"register", "/register", ""},
			{"profile", "/profile", "user"},
			{"notifications", "/notifications", "user"},
			{"deposit", "/deposit", "user"},
			{"new event", "/events/new", "user"},
			{"operator console", "/admin/users", "operator"},
		}
		var got []struct {
			pageMeasure
			Name string `json:"name"`
		}
		a.d.run(t, "perf", map[string]any{"pages": pages, "user": a.maria, "warm": true}, &got)
		if len(got) != len(pages) {
			t.Fatalf("measured %d pages of %d: %+v", len(got), len(pages), got)
		}
		var table strings.Builder
		for _, m := range got {
			fmt.Fprintf(&table, "| %s `%s` | %s | %d | %.0f ms | %.0f ms |\n", m.Name, m.Path, thousands(m.Bytes), m.Requests, m.ReadyMS, m.LoadMS)
			if m.Bytes > webBudget || m.Bytes == 0 {
				t.Errorf("%s: the first load transferred %d bytes, the budget is %d", m.Path, m.Bytes, webBudget)
			}
			if limit := readyLimit(t); limit > 0 && m.ReadyMS > limit {
				t.Errorf("%s: ready after %.0f ms, the limit is %.0f ms", m.Path, m.ReadyMS, limit)
			}
		}
		t.Logf("first loads (bytes compressed, requests, ready, load event):\n%s", table.String())
		if p := os.Getenv("PREDICTKIT_WEBAPP_REPORT"); p != "" {
			b, _ := json.MarshalIndent(map[string]any{"budget_bytes": webBudget, "pages": got}, "", "  ")
			if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("every main page over the demo data, the console's included, has no axe-core violation in either theme", func(t *testing.T) {
		if axeCore() == "" {
			t.Skip("no axe-core (see TestWebAppInBrowser)")
		}
		a.h.createPartner(t, "Demo partner", 10_000)                                                        // a partner's page to check
		expect(t, a.h.do(t, req{method: http.MethodPost, path: "/api/v1/chat/session"}), http.StatusOK, "") // and a chat session's
		var got []axeResult
		a.d.run(t, "axe", map[string]any{"user": a.maria, "event": a.cup.ID}, &got)
		if len(got) < 2*20 {
			t.Errorf("axe checked only %d pages and themes", len(got))
		}
		for _, r := range got {
			for _, v := range r.Violations {
				t.Errorf("%s (%s theme): %s (%s): %s at %v", r.Page, r.Theme, v.ID, v.Impact, v.Help, v.Targets)
			}
		}
	})

	t.Run("screenshots of the main pages in both themes are saved when PREDICTKIT_SCREENSHOTS names a directory", func(t *testing.T) {
		dir := screenshotDir(t, "")
		if dir == "" {
			t.Skip("PREDICTKIT_SCREENSHOTS is not set")
		}
		var got []string
		a.d.run(t, "screenshots", map[string]any{"dir": dir, "user": a.maria, "event": a.cup.ID, "event_name": a.cup.Name}, &got)
		for _, f := range got {
			st, err := os.Stat(f)
			if err != nil || st.Size() == 0 {
				t.Errorf("screenshot %s: %v", f, err)
			}
		}
		t.Logf("saved %v", got)
	})
}

// readyLimit is PREDICTKIT_WEBAPP_READY_MS, the most milliseconds a
// first load may take to the app's ready mark, or 0 (times are only
// logged): on a quiet machine, 1000 checks the app is interactive within
// a second on localhost; a machine shared with other tests cannot promise
// it.
func readyLimit(t *testing.T) float64 {
	v := os.Getenv("PREDICTKIT_WEBAPP_READY_MS")
	if v == "" {
		return 0
	}
	var ms float64
	if _, err := fmt.Sscan(v, &ms); err != nil || ms <= 0 {
		t.Fatalf("PREDICTKIT_WEBAPP_READY_MS=%q is not a positive number of milliseconds", v)
	}
	return ms
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
