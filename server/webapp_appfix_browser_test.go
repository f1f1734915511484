package server_test

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestAppFaultsInBrowser: the faults a user of the web app met, each
// fixed and checked in the browser (testdata/webapp/appfix.js).
// It needs what TestWebAppInBrowser needs, and skips without it.
func TestAppFaultsInBrowser(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.Web = true
	h, _ := startServer(t, cfg)
	d := startWebDriver(t, "http://"+h.base, "AXE_CORE="+axeCore())
	creator := h.register(t, "creator")
	h.makeCreator(t, creator.id)
	ev := h.createEvent(t, creator.token, map[string]any{
		"name": "Cup final", "name_ru": "Финал кубка",
		"pools": []any{
			map[string]any{"name": "Winner", "name_ru": "Победитель", "margin": 0.03, "lmsr_b_kopecks": 100_000, "rules": "The winner of the final.", "rules_ru": "Победитель финала.",
				"markets": []any{
					map[string]any{"name": "Northside FC", "name_ru": "Нортсайд", "probability": 0.55, "yes_name": "Wins", "no_name": "Does not win"},
					map[string]any{"name": "Southbay United", "name_ru": "Саутбэй Юнайтед", "probability": 0.45, "yes_name": "Wins", "no_name": "Does not win"},
				}},
		},
	})
	h.activate(t, creator.token, ev.ID, true)
	north, south := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]

	t.Run("the support chat of a signed-in user shows the operator's answer in both of their browsers", func(t *testing.T) {
		u := h.register(t, "chatter")
		var got struct{ Laptop, Phone string }
		d.run(t, "appfix", map[string]any{"part": "chat", "user": asBrowserUser(u), "question": "Where is my money?", "answer": "Maria here: it is on its way."}, &got)
		for name, text := range map[string]string{"laptop": got.Laptop, "phone": got.Phone} {
			if !strings.Contains(text, "Where is my money?") || !strings.Contains(text, "Maria here: it is on its way.") {
				t.Errorf("the %s's chat: %q", name, text)
			}
		}
	})

	t.Run("a reply notification opens the event at the comment, highlighted", func(t *testing.T) {
		u := h.register(t, "reader")
		c := h.postComment(t, u.token, ev.ID, "The hosts take it", 0)
		for i := range 3 { // other comments around it
			h.postComment(t, creator.token, ev.ID, fmt.Sprintf("filler %d", i), 0)
		}
		h.postComment(t, creator.token, ev.ID, "We will see", c.ID)
		var got struct {
			InView, Focused bool
			Text            string
		}
		d.run(t, "appfix", map[string]any{"part": "reply", "user": asBrowserUser(u), "event": ev.ID, "comment": c.ID}, &got)
		if !got.InView || !got.Focused || !strings.Contains(got.Text, "The hosts take it") || !strings.Contains(got.Text, "We will see") {
			t.Errorf("the comment the link points at: %+v", got)
		}
	})

	t.Run("in Russian no English string of the app shows, and names are Russian", func(t *testing.T) {
		u := h.register(t, "ivan")
		h.credit(t, u.id, 100_000, false)
		h.setProfile(t, u.token, map[string]any{"language": "ru"})
		h.buy(t, u.token, north.ID, "YES", 5_000)
		var got struct {
			Leaks         []string
			Event         string
			Notifications string
		}
		d.run(t, "appfix", map[string]any{"part": "russian", "user": asBrowserUser(u), "event": ev.ID, "event_name_ru": "Финал кубка"}, &got)
		for _, l := range got.Leaks {
			t.Errorf("English in the Russian app: %s", l)
		}
		for _, want := range []string{"Нортсайд", "ДА: Выиграет", "НЕТ: Не выиграет"} {
			if !strings.Contains(got.Event, want) {
				t.Errorf("the event page lacks %q: %q", want, got.Event)
			}
		}
		for _, english := range []string{"Northside", "Wins", "Does not win"} {
			if strings.Contains(got.Event, english) || strings.Contains(got.Notifications, english) {
				t.Errorf("the Russian pages show %q", english)
			}
		}
		if !strings.Contains(got.Notifications, "«Нортсайд»") {
			t.Errorf("the notifications: %q", got.Notifications)
		}
	})

	t.Run("a resolved market reads as resolved and a voided one as refunded", func(t *testing.T) {
		e2 := h.createEvent(t, creator.token, twoPoolEvent("Season"))
		h.activate(t, creator.token, e2.ID, true)
		won, voided := e2.Pools[0].Markets[0], e2.Pools[1].Markets[0]
		u := h.register(t, "holder")
		h.credit(t, u.id, 100_000, false)
		yes := h.buy(t, u.token, won.ID, "YES", 10_000)
		h.buy(t, u.token, voided.ID, "NO", 4_000)
		for _, c := range []struct {
			pool, market int64
			side         string
		}{{e2.Pools[0].ID, won.ID, "YES"}, {e2.Pools[1].ID, voided.ID, "VOID"}} {
			expect(t, h.do(t, req{method: http.MethodPost, token: creator.token, path: fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", e2.ID, c.pool, c.market),
				body: map[string]any{"won_side": c.side}}), http.StatusOK, "")
		}
		var got struct {
			Won, Voided struct {
				Text    string
				Buttons int
			}
		}
		d.run(t, "appfix", map[string]any{"part": "resolved", "user": asBrowserUser(u), "event": e2.ID, "won": won.Name, "voided": voided.Name}, &got)
		payout := fmt.Sprintf("Your payout: ₽%s", rubles(yes.Shares))
		for _, want := range []string{"Resolved: YES", "YES 100.0%", "NO 0.0%", payout} {
			if !strings.Contains(got.Won.Text, want) {
				t.Errorf("the resolved market lacks %q: %q", want, got.Won.Text)
			}
		}
		if !strings.Contains(got.Voided.Text, "Voided — your stake was refunded: ₽40.00") {
			t.Errorf("the voided market: %q", got.Voided.Text)
		}
		if got.Won.Buttons != 0 || got.Voided.Buttons != 0 || strings.Contains(got.Won.Text, "Buy") {
			t.Errorf("resolved markets still offer trading: %+v", got)
		}
	})

	t.Run("a user with no money is pointed to the support chat on the profile and in the trade form", func(t *testing.T) {
		u := h.register(t, "broke")
		var got struct{ Profile, Href, Trade string }
		d.run(t, "appfix", map[string]any{"part": "money", "user": asBrowserUser(u), "event": ev.ID}, &got)
		if !strings.Contains(got.Profile, "balance is 0") || got.Href != "/chat" || !strings.Contains(got.Trade, "support chat") {
			t.Errorf("the notices: %+v", got)
		}
	})

	t.Run("the PnL chart ticks on round amounts", func(t *testing.T) {
		u := h.register(t, "ticker")
		h.credit(t, u.id, 100_000, false)
		tr := h.buy(t, u.token, south.ID, "YES", 37_300)
		h.sell(t, u.token, south.ID, "YES", tr.Shares/3)
		var got struct{ Labels []string }
		d.run(t, "appfix", map[string]any{"part": "ticks", "user": asBrowserUser(u)}, &got)
		if len(got.Labels) < 2 {
			t.Fatalf("the axis labels: %v", got.Labels)
		}
		var steps []int64
		prev := int64(math.MinInt64)
		for _, l := range got.Labels {
			k := kopecksOf(t, l)
			if prev != math.MinInt64 {
				steps = append(steps, k-prev)
			}
			prev = k
		}
		for _, s := range steps {
			if s != steps[0] || !roundStep(s) {
				t.Fatalf("the ticks %v step by %v kopecks, not one round step", got.Labels, steps)
			}
		}
	})

	t.Run("on a phone nothing is wider than the screen and positions are cards", func(t *testing.T) {
		u := h.register(t, "phone")
		h.credit(t, u.id, 100_000, false)
		h.buy(t, u.token, north.ID, "NO", 2_000)
		type measure struct {
			Width, Scroll int
			Wide          []string
		}
		var got struct {
			Profile, Event measure
			Cells          struct{ Display, Label string }
		}
		d.run(t, "appfix", map[string]any{"part": "narrow", "user": asBrowserUser(u), "event": ev.ID}, &got)
		for name, m := range map[string]measure{"profile": got.Profile, "event": got.Event} {
			if m.Width != 390 || m.Scroll > m.Width || len(m.Wide) > 0 {
				t.Errorf("the %s page at 390 px: %+v", name, m)
			}
		}
		if got.Cells.Display != "block" || got.Cells.Label == "" {
			t.Errorf("a positions row is not a card with labelled cells: %+v", got.Cells)
		}
	})

	t.Run("the operator console has its own layout, axe-clean in both themes", func(t *testing.T) {
		type look struct {
			AppHeader, Bar, Sidebar string
			MainWidth               float64
			Axe                     []string
			Back                    bool
		}
		var got struct{ Light, Dark look }
		d.run(t, "appfix", map[string]any{"part": "console"}, &got)
		for name, l := range map[string]look{"light": got.Light, "dark": got.Dark} {
			if l.AppHeader != "none" || l.Bar == "" || l.Bar == "none" || strings.Count(l.Sidebar, "px") != 2 || l.MainWidth < 1200 || !l.Back {
				t.Errorf("the %s console: %+v", name, l)
			}
			if l.Axe == nil {
				t.Log("no axe-core: the console was not checked (PREDICTKIT_AXE_CORE)")
			}
			for _, v := range l.Axe {
				t.Errorf("the %s console: %s", name, v)
			}
		}
	})
}

// rubles is kopecks k as the app's English money shows the number: 1,234.56.
func rubles(k int64) string {
	whole := strconv.FormatInt(k/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("%s.%02d", whole, k%100)
}

// kopecksOf reads an English money label ("₽1,234.50", "-₽2.00") as kopecks.
func kopecksOf(t *testing.T, label string) int64 {
	t.Helper()
	neg := strings.ContainsAny(label, "-−")
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, label)
	k, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || !strings.Contains(label, ".") {
		t.Fatalf("the label %q is no amount", label)
	}
	if neg {
		k = -k
	}
	return k
}

// roundStep reports whether k is 1, 2 or 5 × 10^n.
func roundStep(k int64) bool {
	for k >= 10 && k%10 == 0 {
		k /= 10
	}
	return k == 1 || k == 2 || k == 5
}
