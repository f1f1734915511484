package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/internal/telegramtest"
	"github.com/predictkit/predictkit/server"
)

// TestTelegramSenderResumesAfterARestart: the sender's cursor outlives
// the server. A notification made while no server runs the sender is
// sent by the next one, once, and nothing sent before the stop is sent
// again.
func TestTelegramSenderResumesAfterARestart(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			store := sc.new(t)
			api := telegramtest.New(telegramToken)
			t.Cleanup(api.Close)
			start := func() (*harness, func()) {
				cfg := testConfig(store)
				cfg.TelegramBotToken, cfg.TelegramAPIURL, cfg.TelegramWebhookSecret = telegramToken, api.URL(), telegramSecret
				h, app := startServer(t, cfg)
				api.SetWebhook("http://"+h.base+telegramHook+telegramSecret, telegramSecret)
				return h, func() {
					if err := app.Stop(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			}
			first, stopFirst := start()
			e := &telegramEnv{h: first, api: api}
			w := newWorld(t, first)
			const chat = 4001
			e.linkChat(t, w.alice, chat)
			first.buy(t, w.alice.token, w.a1.ID, "YES", 1000)
			if _, err := api.WaitSent(chat, 2, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			stopFirst()

			// No sender runs: a server built but not started makes a
			// trade.
			idle := newHarness(t, store, withConfig(func(c *server.Config) {
				c.TelegramBotToken, c.TelegramAPIURL, c.TelegramWebhookSecret = telegramToken, api.URL(), telegramSecret
			}))
			idle.buy(t, w.alice.token, w.b1.ID, "NO", 2000)
			time.Sleep(300 * time.Millisecond)
			if n := len(api.SentTo(chat)); n != 2 {
				t.Fatalf("%d messages with no sender running, want still 2", n)
			}

			second, _ := start()
			ms, err := api.WaitSent(chat, 3, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			// A later trade shows that the sender went past it.
			second.buy(t, w.alice.token, w.b1.ID, "NO", 1000)
			if ms, err = api.WaitSent(chat, 4, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			ms = api.SentTo(chat)
			if len(ms) != 4 || !strings.Contains(ms[2].Text, `"B1"`) || !strings.Contains(ms[2].Text, "NO") {
				t.Fatalf("the chat got %d messages: %v; want the link, the first trade, the trade made while stopped (once), the last", len(ms), ms)
			}
			r := second.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: w.alice.token})
			expect(t, r, http.StatusOK, "")
		})
	}
}
