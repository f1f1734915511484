package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTelegramInBrowser: on the profile page, "Link Telegram" opens the
// bot's deep link in a new tab and the section waits; when the fake Bot
// API delivers "/start <token>" to the webhook, as Telegram does when
// the user presses Start, the section shows "Linked" by itself and the
// bot greets the chat. The notifications toggle turns them off and on;
// "Unlink Telegram" unlinks. axe-core finds nothing in either state and
// theme. A server without a bot shows no Telegram section. It needs what
// TestWebAppInBrowser needs, and skips without it.
func TestTelegramInBrowser(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			e := startTelegramWeb(t, sc.new(t))
			d := startWebDriver(t, "http://"+e.h.base, "AXE_CORE="+axeCore())
			u := e.h.register(t, "tina")
			const chat = 3001
			var got struct {
				Href            string               `json:"href"`
				Target          string               `json:"target"`
				Tab             string               `json:"tab"`
				Waiting         string               `json:"waiting"`
				Delivered       struct{ Status int } `json:"delivered"`
				Linked          string               `json:"linked"`
				ToggleInitially bool                 `json:"toggle_initially"`
				AfterOff        telegramFlags        `json:"after_off"`
				AfterOn         telegramFlags        `json:"after_on"`
				Unlinked        string               `json:"unlinked"`
				AfterUnlink     telegramFlags        `json:"after_unlink"`
				Axe             []string             `json:"axe"`
			}
			d.run(t, "telegram", map[string]any{"user": asBrowserUser(u), "fake": e.api.URL(), "chat": chat}, &got)
			if !strings.HasPrefix(got.Href, "https://t.me/predictkit_test_bot?start=") || got.Target != "_blank" || !strings.HasPrefix(got.Tab, "https://t.me/") {
				t.Errorf("the link %q (target %q) opened %q", got.Href, got.Target, got.Tab)
			}
			if got.Delivered.Status != http.StatusOK {
				t.Errorf("the webhook answered the /start %d", got.Delivered.Status)
			}
			if ms, err := e.api.WaitSent(chat, 1, 5*time.Second); err != nil || !strings.Contains(ms[0].Text, "tina is linked") {
				t.Errorf("the chat got %v (%v)", ms, err)
			}
			if !got.ToggleInitially || got.AfterOff != (telegramFlags{true, false}) || got.AfterOn != (telegramFlags{true, true}) {
				t.Errorf("the toggle: on at first %v, then %+v, then %+v", got.ToggleInitially, got.AfterOff, got.AfterOn)
			}
			if got.AfterUnlink != (telegramFlags{}) {
				t.Errorf("after the unlink: %+v", got.AfterUnlink)
			}
			if got.Axe == nil {
				t.Log("no axe-core: the pages were not checked (PREDICTKIT_AXE_CORE)")
			}
			for _, v := range got.Axe {
				t.Errorf("axe-core: %s", v)
			}
		})
	}
	t.Run("a server without a bot shows no Telegram section", func(t *testing.T) {
		cfg := testConfig(memoryStore())
		cfg.Web = true
		h, _ := startServer(t, cfg)
		d := startWebDriver(t, "http://"+h.base)
		u := h.register(t, "nobot")
		var got struct {
			Hidden bool   `json:"hidden"`
			Text   string `json:"text"`
		}
		d.run(t, "telegram_off", map[string]any{"user": asBrowserUser(u)}, &got)
		if !got.Hidden || strings.Contains(got.Text, "Link Telegram") {
			t.Errorf("the profile without a bot: section hidden %v, page %q", got.Hidden, got.Text)
		}
	})
}

type telegramFlags struct {
	Verified      bool `json:"verified"`
	Notifications bool `json:"notifications"`
}
