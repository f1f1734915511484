package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// axeVersion is the axe-core .ci/run installs next to playwright-core, for
// the web app's accessibility check.
const axeVersion = "4.14.1"

// webBudget is the most the first load of a page of the web app may
// transfer (index.html and everything it loads, compressed).
const webBudget = 200 * 1024

// axeCore is the path of axe-core's axe.min.js, or "": PREDICTKIT_AXE_CORE
// (the package's directory), else where .ci/run installs it.
func axeCore() string {
	dir := ciPackage("PREDICTKIT_AXE_CORE", "axe-core", axeVersion)
	p := filepath.Join(dir, "axe.min.js")
	if _, err := os.Stat(p); dir == "" || err != nil {
		return ""
	}
	return p
}

// webDriver is testdata/webapp/driver.js: one headless Chromium that runs
// the flows the test names, one at a time.
type webDriver struct {
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
}

// startWebDriver starts the driver against the server at base, or skips
// the test as TestStreamInBrowser does: without Chromium (a failure with
// PREDICTKIT_REQUIRE_CHROMIUM=1), Node.js or playwright-core.
func startWebDriver(t *testing.T, base string, env ...string) *webDriver {
	t.Helper()
	bin, node, pw := browserTools(t, "the web app")
	script, err := filepath.Abs("testdata/webapp/driver.js")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), append([]string{"PLAYWRIGHT_CORE=" + pw, "CHROMIUM=" + bin, "BASE=" + base, "ADMIN_TOKEN=" + adminToken}, env...)...)
	d := &webDriver{stderr: &lockedBuffer{}}
	cmd.Stderr = d.stderr
	if d.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.out = bufio.NewReader(stdout)
	t.Cleanup(func() {
		fmt.Fprintln(d.stdin, "quit")
		d.stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cancel()
			<-done
		}
		cancel()
		if t.Failed() || os.Getenv("PREDICTKIT_WEBAPP_DEBUG") != "" {
			t.Logf("the driver's log (end):\n%s", tail(d.stderr.String(), 8000))
		}
	})
	return d
}

// run runs flow with params in the browser and decodes its result into
// result; a flow that fails fails t with what each of its pages showed.
func (d *webDriver) run(t *testing.T, flow string, params, result any) {
	t.Helper()
	cmd, err := json.Marshal(map[string]any{"flow": flow, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(d.stdin, "%s\n", cmd); err != nil {
		t.Fatalf("%s: the driver is gone (%v); its log:\n%s", flow, err, tail(d.stderr.String(), 4000))
	}
	line, err := d.out.ReadString('\n')
	if err != nil {
		t.Fatalf("%s: the driver said nothing (%v); its log:\n%s", flow, err, tail(d.stderr.String(), 4000))
	}
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
		Pages  []struct {
			Page     string   `json:"page"`
			URL      string   `json:"url"`
			Text     string   `json:"text"`
			Problems []string `json:"problems"`
			Error    string   `json:"error"`
		} `json:"pages"`
	}
	if err := json.Unmarshal([]byte(line), &out); err != nil {
		t.Fatalf("%s: %q: %v", flow, line, err)
	}
	if out.Error != "" {
		var b strings.Builder
		for _, p := range out.Pages {
			fmt.Fprintf(&b, "--- %s at %s %s\n%s\n", p.Page, p.URL, p.Error, p.Text)
			for _, pr := range p.Problems {
				fmt.Fprintf(&b, "  problem: %s\n", pr)
			}
		}
		t.Fatalf("%s: %s\nthe pages showed:\n%s", flow, out.Error, b.String())
	}
	if result != nil {
		if err := json.Unmarshal(out.Result, result); err != nil {
			t.Fatalf("%s: result %s: %v", flow, out.Result, err)
		}
	}
}

// browserUser is a user the browser signs in as.
type browserUser struct {
	ID       int64  `json:"id,omitempty"`
	Name     string `json:"name"`
	Email    string `json:"email"`
	Password string `json:"password"`
}

func asBrowserUser(u apiUser) browserUser {
	return browserUser{ID: u.id, Name: u.name, Email: u.email, Password: "password-" + u.name}
}

// pageMeasure is what the performance flow measured of one page's first
// load.
type pageMeasure struct {
	Path     string  `json:"path"`
	Bytes    int64   `json:"bytes"`
	Requests int     `json:"requests"`
	ReadyMS  float64 `json:"ready_ms"`
	LoadMS   float64 `json:"load_ms"`
}

type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

type axeResult struct {
	Page       string         `json:"page"`
	Theme      string         `json:"theme"`
	Violations []axeViolation `json:"violations"`
}

// TestWebAppInBrowser drives the web app the server serves in headless
// Chromium: bettors, a creator and the operator, each in a browser
// context of their own, through the app's pages, found by their roles and
// accessible names, and the operator through every section of the
// console. It also runs axe-core on every main page in both themes, buys
// with the keyboard alone and measures the first load against the byte
// budget (TestWebAppFromDemo measures every page, and takes the
// screenshots, over the demo data). Each
// subtest stands alone (go test -run 'TestWebAppInBrowser/keyboard'). It skips like TestStreamInBrowser without Chromium,
// Node.js or playwright-core; the accessibility check skips without
// axe-core (which .ci/run installs).
func TestWebAppInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	cfg.StreamPing = time.Second
	cfg.WebhookAllowedHosts = "127.0.0.1" // the console sets a webhook there
	h, _ := startServer(t, cfg)
	base := "http://" + h.base
	axe := axeCore()
	d := startWebDriver(t, base, "AXE_CORE="+axe)

	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	ev := h.createEvent(t, creator.token, twoPoolEvent("Cup final"))
	h.activate(t, creator.token, ev.ID, true)
	a1, a2, b1 := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1], ev.Pools[1].Markets[0]

	t.Run("a user registers, the operator credits them, they buy YES after a quote while another browser sees the price move live, the creator resolves the market and the user sees the payout and the notification live", func(t *testing.T) {
		user := browserUser{Name: "Reggie", Email: fmt.Sprintf("reggie-%d@test.predictkit", emailSeq.Add(1)), Password: "password-reggie"}
		var got struct {
			PriceBefore   string `json:"price_before"`
			PriceAfter    string `json:"price_after"`
			BalanceBefore int64  `json:"balance_before"`
			BalanceAfter  int64  `json:"balance_after"`
			Notification  string `json:"notification"`
		}
		d.run(t, "buy_and_resolve", map[string]any{
			"user": user, "creator": asBrowserUser(creator), "event": ev.ID, "market": a1.ID, "market_name": a1.Name,
			"credit": "1000", "amount": "100",
		}, &got)
		if got.PriceBefore == got.PriceAfter {
			t.Errorf("the second browser's price stayed %q", got.PriceBefore)
		}
		token := h.login(t, user.Email, user.Password)
		if token == "" {
			t.Fatalf("the user the browser registered cannot log in")
		}
		me := h.me(t, token)
		if me.TotalBalance != got.BalanceAfter {
			t.Errorf("the profile showed %d kopecks after the payout, the API says %d", got.BalanceAfter, me.TotalBalance)
		}
		if got.BalanceAfter <= got.BalanceBefore {
			t.Errorf("the balance went from %d to %d: no payout", got.BalanceBefore, got.BalanceAfter)
		}
		m := h.market(t, a1.ID)
		if !m.Resolved || m.WinningOutcome == nil || *m.WinningOutcome != "YES" || m.ResolvedBy == nil || *m.ResolvedBy != "creator" {
			t.Errorf("the market is %+v, want resolved YES by its creator", m)
		}
		if got.Notification == "" {
			t.Error("the user saw no notification")
		}
	})

	t.Run("a user calls an operator in the support chat, the operator answers from the console's queue, and the user reads the answer", func(t *testing.T) {
		u := h.register(t, "chatter")
		var got struct {
			SessionID string `json:"session_id"`
		}
		d.run(t, "support_chat", map[string]any{
			"user": asBrowserUser(u), "message": "Where is my payout for the cup final?", "reply": "Your payout arrives within a minute.",
		}, &got)
		r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/chat/sessions/" + got.SessionID + "/messages", token: adminToken})
		expect(t, r, http.StatusOK, "")
		if !strings.Contains(string(r.body), "Your payout arrives within a minute.") {
			t.Errorf("the transcript lacks the operator's answer: %s", r.body)
		}
	})

	t.Run("the operator voids a market in the console and its holder sees it voided and refunded", func(t *testing.T) {
		holder := h.register(t, "holder")
		h.credit(t, holder.id, 100_000, false)
		tr := h.buy(t, holder.token, a2.ID, "YES", 20_000)
		var got struct {
			BalanceBefore int64  `json:"balance_before"`
			BalanceAfter  int64  `json:"balance_after"`
			State         string `json:"state"`
		}
		d.run(t, "void_market", map[string]any{"user": asBrowserUser(holder), "event": ev.ID, "market": a2.ID, "market_name": a2.Name}, &got)
		m := h.market(t, a2.ID)
		if m.WinningOutcome == nil || *m.WinningOutcome != "VOID" || m.ResolvedBy == nil || *m.ResolvedBy != "operator" {
			t.Fatalf("the market is %+v, want voided by the operator", m)
		}
		me := h.me(t, holder.token)
		if got.BalanceAfter != me.TotalBalance || got.BalanceBefore != tr.Balance+tr.BonusBalance {
			t.Errorf("the page showed %d then %d kopecks; the API says %d after the buy and %d after the void", got.BalanceBefore, got.BalanceAfter, tr.Balance+tr.BonusBalance, me.TotalBalance)
		}
		if got.BalanceAfter <= got.BalanceBefore {
			t.Errorf("no refund: %d then %d", got.BalanceBefore, got.BalanceAfter)
		}
	})

	t.Run("a user who forgot the password asks for a link, sets a new password through it, revoking the API keys, and logs in with the new one", func(t *testing.T) {
		u := h.register(t, "forgetful")
		key := h.createKey(t, u.token, "bot", "read")
		r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/users/%d/password-reset", u.id), token: adminToken})
		expect(t, r, http.StatusCreated, "")
		var reset struct {
			Token string `json:"token"`
		}
		r.decode(t, &reset)
		var got struct {
			Sent            string `json:"sent"`
			Done            string `json:"done"`
			SearchAfterOpen string `json:"search_after_open"`
		}
		d.run(t, "password_reset", map[string]any{"user": asBrowserUser(u), "token": reset.Token, "new_password": "a-new-password-1"}, &got)
		if got.SearchAfterOpen != "" {
			t.Errorf("the reset page left %q in the address", got.SearchAfterOpen)
		}
		if h.login(t, u.email, "a-new-password-1") == "" {
			t.Error("the new password does not log in")
		}
		if h.login(t, u.email, "password-forgetful") != "" {
			t.Error("the old password still logs in")
		}
		if r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: key.Key}); r.status != http.StatusUnauthorized {
			t.Errorf("the API key still works after a reset that revoked it: %s", r)
		}
		if !strings.Contains(got.Done, "API keys are revoked") {
			t.Errorf("the page said %q, not that the keys are revoked", got.Done)
		}
	})

	t.Run("the operator grants the creator role, creates and funds a partner, sets and removes its webhook, rotates its key and disables it, and reads the audit and the metrics in the console", func(t *testing.T) {
		u := h.register(t, "promoted")
		h.credit(t, u.id, 10_000, false)
		h.buy(t, u.token, b1.ID, "YES", 1_000) // a trade for the metrics to count
		var got struct {
			PartnerID int64  `json:"partner_id"`
			Key       string `json:"key"`
			NewKey    string `json:"new_key"`
			Secret    string `json:"secret"`
			Audit     string `json:"audit"`
			Trades    string `json:"trades"`
		}
		d.run(t, "admin_console", map[string]any{"user": asBrowserUser(u), "partner_name": "Acme Bets", "webhook_url": "http://127.0.0.1:9/hooks"}, &got)
		if !h.me(t, u.token).IsCreator {
			t.Error("the user is not a creator")
		}
		p := h.partner(t, got.PartnerID)
		if p.Name != "Acme Bets" || p.FloatKopecks != 50_000 || !p.Disabled {
			t.Errorf("the partner is %+v, want Acme Bets with a float of 50,000 kopecks, disabled", p)
		}
		if !strings.HasPrefix(got.Key, "pk_") || !strings.HasPrefix(got.NewKey, "pk_") || got.Key == got.NewKey || !strings.HasPrefix(got.Secret, "whsec_") {
			t.Errorf("the console showed key %q, then %q, and secret %q", got.Key, got.NewKey, got.Secret)
		}
		expect(t, h.do(t, partnerReq(http.MethodGet, statePath("someone"), got.Key, nil)), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, h.do(t, partnerReq(http.MethodGet, statePath("someone"), got.NewKey, nil)), http.StatusForbidden, "FORBIDDEN")
		expect(t, h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/admin/partners/%d/webhook", got.PartnerID), token: adminToken}), http.StatusNotFound, "")
		if got.Trades == "" || got.Trades == "—" || got.Trades == "0" {
			t.Errorf("the metrics show %q trades", got.Trades)
		}
		t.Logf("%s; %s trades", got.Audit, got.Trades)
	})

	t.Run("every main page, the console's included, has no axe-core violation in the light theme and in the dark one", func(t *testing.T) {
		if axe == "" {
			t.Skipf("no axe-core: .ci/run installs it, or: npm install --prefix \"$HOME/.cache/predictkit-ci/axe-core-%s\" axe-core@%s (or set PREDICTKIT_AXE_CORE to its directory)", axeVersion, axeVersion)
		}
		u := h.register(t, "reader")
		h.credit(t, u.id, 50_000, false)
		h.buy(t, u.token, b1.ID, "NO", 5_000)
		h.createPartner(t, "Axe partner", 10_000)                                                         // a partner's page to check
		expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/chat/session"}), http.StatusOK, "") // and a chat session's
		var got []axeResult
		d.run(t, "axe", map[string]any{"user": asBrowserUser(u), "event": ev.ID}, &got)
		if len(got) < 2*20 {
			t.Errorf("axe checked only %d pages and themes: %+v", len(got), got)
		}
		for _, r := range got {
			for _, v := range r.Violations {
				t.Errorf("%s (%s theme): %s (%s): %s at %v", r.Page, r.Theme, v.ID, v.Impact, v.Help, v.Targets)
			}
		}
		t.Logf("axe-core %s checked %d pages and themes", axeVersion, len(got))
	})

	t.Run("a buy can be made with the keyboard alone", func(t *testing.T) {
		u := h.register(t, "typist")
		h.credit(t, u.id, 50_000, false)
		var got struct {
			Presses int `json:"presses"`
		}
		d.run(t, "keyboard_buy", map[string]any{"user": asBrowserUser(u), "event": ev.ID, "market": b1.ID, "market_name": b1.Name, "amount": "50"}, &got)
		me := h.me(t, u.token)
		found := false
		for _, p := range me.Positions {
			if p.MarketID == b1.ID && p.Side == "YES" && p.Amount > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no YES position on market %d after the keyboard buy: %+v", b1.ID, me.Positions)
		}
		t.Logf("%d key presses", got.Presses)
	})

	t.Run("the first load of the feed and of an event page stays within the byte budget", func(t *testing.T) {
		var got []pageMeasure
		d.run(t, "perf", map[string]any{"paths": []string{"/", fmt.Sprintf("/events/%d", ev.ID)}}, &got)
		if len(got) != 2 {
			t.Fatalf("measured %+v", got)
		}
		for _, m := range got {
			t.Logf("%s: %d bytes in %d requests, ready after %.0f ms, load event after %.0f ms", m.Path, m.Bytes, m.Requests, m.ReadyMS, m.LoadMS)
			if m.Bytes > webBudget || m.Bytes == 0 {
				t.Errorf("%s: the first load transferred %d bytes, the budget is %d", m.Path, m.Bytes, webBudget)
			}
		}
		if p := os.Getenv("PREDICTKIT_WEBAPP_REPORT"); p != "" {
			b, _ := json.MarshalIndent(map[string]any{"budget_bytes": webBudget, "pages": got}, "", "  ")
			if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}
