package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/predictkit/predictkit/internal/telegramtest"
	"github.com/predictkit/predictkit/server"
)

const (
	telegramToken  = "123456:test-bot-token"
	telegramSecret = "test-webhook-secret-0123456789"
	telegramHook   = "/api/v1/telegram/webhook/"
)

// telegramEnv is a started server with a bot whose Bot API is a fake.
type telegramEnv struct {
	h   *harness
	api *telegramtest.Server
}

// startTelegram starts a server on store whose bot talks to a fake Bot
// API; its public URL is a made-up one (so the start sets a webhook the
// fake records), and the fake delivers to the server's real address.
func startTelegram(t *testing.T, store server.Store) *telegramEnv {
	t.Helper()
	return startTelegramWith(t, store, false)
}

// startTelegramWeb is startTelegram with the web app and no public URL
// (the browser's origin is the server's own address).
func startTelegramWeb(t *testing.T, store server.Store) *telegramEnv {
	t.Helper()
	return startTelegramWith(t, store, true)
}

func startTelegramWith(t *testing.T, store server.Store, web bool) *telegramEnv {
	t.Helper()
	api := telegramtest.New(telegramToken)
	t.Cleanup(api.Close)
	cfg := testConfig(store)
	cfg.TelegramBotToken = telegramToken
	cfg.TelegramAPIURL = api.URL()
	cfg.TelegramWebhookSecret = telegramSecret
	cfg.Web = web
	if !web {
		cfg.PublicURL = "https://predict.example"
	}
	h, _ := startServer(t, cfg)
	if !web {
		// At start the server asked getMe and set its webhook.
		deadline := time.Now().Add(10 * time.Second)
		for {
			if u, _ := api.Webhook(); u != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the server set no webhook at start")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if u, s := api.Webhook(); u != "https://predict.example"+telegramHook+telegramSecret || s != telegramSecret || api.Calls("getMe") < 1 {
			t.Fatalf("webhook %q with secret %q after %d getMe", u, s, api.Calls("getMe"))
		}
	}
	api.SetWebhook("http://"+h.base+telegramHook+telegramSecret, telegramSecret)
	return &telegramEnv{h: h, api: api}
}

// link asks for a link as u and returns the token in it.
func (e *telegramEnv) link(t *testing.T, u apiUser) string {
	t.Helper()
	r := e.h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/telegram/link", token: u.token})
	expect(t, r, http.StatusOK, "")
	var l struct {
		URL       string `json:"url"`
		ExpiresAt string `json:"expires_at"`
	}
	r.decode(t, &l)
	q, err := url.Parse(l.URL)
	if err != nil || q.Scheme+"://"+q.Host+q.Path != "https://t.me/"+telegramtest.Username || q.Query().Get("start") == "" {
		t.Fatalf("link %q", l.URL)
	}
	exp, err := time.Parse(time.RFC3339Nano, l.ExpiresAt)
	if left := time.Until(exp); err != nil || left < 14*time.Minute || left > 15*time.Minute {
		t.Fatalf("expires_at %q: %v from now", l.ExpiresAt, left)
	}
	return q.Query().Get("start")
}

// deliver has the fake deliver u to the webhook.
func (e *telegramEnv) deliver(t *testing.T, u models.Update) (int, string) {
	t.Helper()
	status, body, err := e.api.Deliver(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	return status, string(body)
}

// linkChat links u's account to chat through the whole flow.
func (e *telegramEnv) linkChat(t *testing.T, u apiUser, chat int64) {
	t.Helper()
	before := len(e.api.SentTo(chat))
	if status, body := e.deliver(t, e.api.Start(chat, "en", "/start "+e.link(t, u))); status != http.StatusOK {
		t.Fatalf("the /start answered %d %s", status, body)
	}
	if _, err := e.api.WaitSent(chat, before+1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// telegramState is the profile's Telegram fields.
func (e *telegramEnv) state(t *testing.T, u apiUser) (verified, notifications bool) {
	t.Helper()
	r := e.h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: u.token})
	expect(t, r, http.StatusOK, "")
	var v struct {
		User struct {
			Verified      bool `json:"telegram_verified"`
			Notifications bool `json:"telegram_notifications"`
		} `json:"user"`
	}
	r.decode(t, &v)
	return v.User.Verified, v.User.Notifications
}

func (e *telegramEnv) wantState(t *testing.T, u apiUser, verified, notifications bool) {
	t.Helper()
	if v, n := e.state(t, u); v != verified || n != notifications {
		t.Fatalf("%s: telegram_verified %v, telegram_notifications %v; want %v, %v", u.name, v, n, verified, notifications)
	}
}

func TestTelegramLinking(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			e := startTelegram(t, sc.new(t))
			alice := e.h.register(t, "alice")
			e.wantState(t, alice, false, false)

			t.Run("a /start with the link's token links the chat, and the bot says so", func(t *testing.T) {
				token := e.link(t, alice)
				u := e.api.Start(1001, "en", "/start "+token)
				if status, body := e.deliver(t, u); status != http.StatusOK || body != `{"ok":true}` {
					t.Fatalf("answered %d %s", status, body)
				}
				e.wantState(t, alice, true, true)
				ms := e.api.SentTo(1001)
				if len(ms) != 1 || !strings.Contains(ms[0].Text, "alice is linked to this chat") {
					t.Fatalf("the chat got %v", ms)
				}

				t.Run("the same update delivered again does nothing", func(t *testing.T) {
					if status, body := e.deliver(t, u); status != http.StatusOK {
						t.Fatalf("answered %d %s", status, body)
					}
					if n := len(e.api.SentTo(1001)); n != 1 {
						t.Fatalf("the chat got %d messages, want still 1", n)
					}
				})
				t.Run("the used token is refused, the chat is told, and nothing changes", func(t *testing.T) {
					status, body := e.deliver(t, e.api.Start(1002, "ru", "/start "+token))
					if status != http.StatusBadRequest || !strings.Contains(body, `"invalid_link_token"`) {
						t.Fatalf("answered %d %s", status, body)
					}
					ms := e.api.SentTo(1002)
					if len(ms) != 1 || !strings.Contains(ms[0].Text, "уже использована") {
						t.Fatalf("the other chat got %v, want the refusal in Russian", ms)
					}
					e.wantState(t, alice, true, true)
				})
			})

			t.Run("refusals change nothing", func(t *testing.T) {
				bob := e.h.register(t, "bob")
				token := e.link(t, bob)
				body := e.api.Start(1003, "en", "/start "+token)
				hdr := map[string]string{"X-Telegram-Bot-Api-Secret-Token": telegramSecret}
				for _, c := range []struct {
					name   string
					path   string
					header map[string]string
					body   any
					status int
					code   string
				}{
					{"a wrong secret in the path", telegramHook + "wrong-secret-0123456789", hdr, body, http.StatusForbidden, "forbidden"},
					{"no secret header", telegramHook + telegramSecret, nil, body, http.StatusForbidden, "forbidden"},
					{"a wrong secret header", telegramHook + telegramSecret, map[string]string{"X-Telegram-Bot-Api-Secret-Token": telegramSecret + "x"}, body, http.StatusForbidden, "forbidden"},
					{"a body that is not JSON", telegramHook + telegramSecret, hdr, "{", http.StatusBadRequest, "invalid_request"},
					{"a body that is not an update", telegramHook + telegramSecret, hdr, "[1]", http.StatusBadRequest, "invalid_request"},
					{"an update without an id", telegramHook + telegramSecret, hdr, `{"message":{"text":"/start x"}}`, http.StatusBadRequest, "invalid_request"},
					{"an unknown token", telegramHook + telegramSecret, hdr, e.api.Start(1003, "en", "/start nope"), http.StatusBadRequest, "invalid_link_token"},
				} {
					t.Run(c.name, func(t *testing.T) {
						r := e.h.do(t, req{method: http.MethodPost, path: c.path, header: c.header, body: c.body})
						expect(t, r, c.status, c.code)
						e.wantState(t, bob, false, false)
					})
				}
				t.Run("the token the refusals did not take still links", func(t *testing.T) {
					r := e.h.do(t, req{method: http.MethodPost, path: telegramHook + telegramSecret, header: hdr, body: body})
					expect(t, r, http.StatusOK, "")
					e.wantState(t, bob, true, true)
				})
				t.Run("a link needs a session", func(t *testing.T) {
					expect(t, e.h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/telegram/link"}), http.StatusUnauthorized, "unauthorized")
					expect(t, e.h.do(t, req{method: http.MethodDelete, path: "/api/v1/auth/telegram"}), http.StatusUnauthorized, "unauthorized")
				})
			})

			t.Run("anything else written to the bot gets a word on how to link, once", func(t *testing.T) {
				for _, text := range []string{"/start", "hello"} {
					u := e.api.Start(1004, "ru", text)
					for range 2 {
						if status, body := e.deliver(t, u); status != http.StatusOK {
							t.Fatalf("%q answered %d %s", text, status, body)
						}
					}
				}
				ms := e.api.SentTo(1004)
				if len(ms) != 2 || !strings.Contains(ms[0].Text, "Привязать Telegram") || ms[0] != ms[1] {
					t.Fatalf("the chat got %v, want the Russian hint once per message", ms)
				}
			})

			t.Run("notifications need a linked chat", func(t *testing.T) {
				carol := e.h.register(t, "carol")
				r := e.h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: carol.token,
					body: map[string]any{"name": "Carol", "telegram_notifications": true}})
				expect(t, r, http.StatusConflict, "telegram_not_linked")
				me := e.h.me(t, carol.token)
				if me.Name != "carol" {
					t.Fatalf("the refused patch renamed carol to %q", me.Name)
				}
				e.wantState(t, carol, false, false)
				r = e.h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: carol.token, body: map[string]any{"telegram_notifications": false}})
				expect(t, r, http.StatusOK, "")
			})

			t.Run("unlinking turns everything off, and may be repeated", func(t *testing.T) {
				for range 2 {
					r := e.h.do(t, req{method: http.MethodDelete, path: "/api/v1/auth/telegram", token: alice.token})
					expect(t, r, http.StatusNoContent, "")
					e.wantState(t, alice, false, false)
				}
			})
		})
	}
}

func TestTelegramWithoutABot(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		u := h.register(t, "dora")
		expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/telegram/link", token: u.token}), http.StatusServiceUnavailable, "telegram_not_configured")
		// Every webhook request is refused, whatever its secret.
		for _, secret := range []string{"", "anything-0123456789"} {
			r := h.do(t, req{method: http.MethodPost, path: telegramHook + "anything-0123456789", body: `{"update_id":1}`,
				header: map[string]string{"X-Telegram-Bot-Api-Secret-Token": secret}})
			expect(t, r, http.StatusForbidden, "forbidden")
		}
		expect(t, h.do(t, req{method: http.MethodDelete, path: "/api/v1/auth/telegram", token: u.token}), http.StatusNoContent, "")
	})
}

// waitState polls the profile until its Telegram fields are as wanted.
func (e *telegramEnv) waitState(t *testing.T, u apiUser, verified, notifications bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, n := e.state(t, u)
		if v == verified && n == notifications {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: telegram_verified %v, telegram_notifications %v; want %v, %v", u.name, v, n, verified, notifications)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTelegramNotifications(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			e := startTelegram(t, sc.new(t))
			w := newWorld(t, e.h)
			const aliceChat, bobChat = 2001, 2002
			e.linkChat(t, w.alice, aliceChat)
			e.linkChat(t, w.bob, bobChat)
			r := e.h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: w.alice.token, body: map[string]any{"language": "ru"}})
			expect(t, r, http.StatusOK, "")
			// sentinel is a trade of bob's whose message to bob's chat
			// shows that everything logged before it was handled: the
			// sender goes in log order.
			sentinel := func(t *testing.T) {
				t.Helper()
				n := len(e.api.SentTo(bobChat))
				e.h.buy(t, w.bob.token, w.b1.ID, "YES", 1000)
				if _, err := e.api.WaitSent(bobChat, n+1, 10*time.Second); err != nil {
					t.Fatal(err)
				}
			}

			t.Run("a trade's notification reaches the chat in the user's language", func(t *testing.T) {
				e.h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
				ms, err := e.api.WaitSent(aliceChat, 2, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if got := ms[1].Text; !strings.HasPrefix(got, "Сделка исполнена\nКуплено") || !strings.Contains(got, "https://predict.example/events/") {
					t.Fatalf("the chat got %q", got)
				}
				sentinel(t)
				if n := len(e.api.SentTo(aliceChat)); n != 2 {
					t.Fatalf("alice's chat got %d messages, want 2 (the link, the trade): once each", n)
				}
				if ms := e.api.SentTo(bobChat); !strings.HasPrefix(ms[len(ms)-1].Text, "Trade executed\nBought") {
					t.Fatalf("bob's chat got %q, in English", ms[len(ms)-1].Text)
				}
			})

			t.Run("a reply to a comment reaches the chat", func(t *testing.T) {
				var c struct {
					ID int64 `json:"id"`
				}
				r := e.h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/comments", w.event.ID), token: w.alice.token, body: map[string]any{"content": "YES wins"}})
				expect(t, r, http.StatusCreated, "")
				r.decode(t, &c)
				before := len(e.api.SentTo(aliceChat))
				r = e.h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/comments", w.event.ID), token: w.bob.token, body: map[string]any{"content": "no way", "parent_id": c.ID}})
				expect(t, r, http.StatusCreated, "")
				ms, err := e.api.WaitSent(aliceChat, before+1, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if got := ms[len(ms)-1].Text; !strings.HasPrefix(got, "Новый ответ\nbob ответил(а) на ваш комментарий: no way") {
					t.Fatalf("the chat got %q", got)
				}
			})

			t.Run("turned off, nothing is sent; on again, it is", func(t *testing.T) {
				r := e.h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: w.alice.token, body: map[string]any{"telegram_notifications": false}})
				expect(t, r, http.StatusOK, "")
				e.wantState(t, w.alice, true, false)
				before := len(e.api.SentTo(aliceChat))
				e.h.buy(t, w.alice.token, w.a1.ID, "YES", 1000)
				sentinel(t)
				if n := len(e.api.SentTo(aliceChat)); n != before {
					t.Fatalf("alice's chat got %d messages while off", n-before)
				}
				r = e.h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: w.alice.token, body: map[string]any{"telegram_notifications": true}})
				expect(t, r, http.StatusOK, "")
				e.h.buy(t, w.alice.token, w.a1.ID, "YES", 1000)
				if _, err := e.api.WaitSent(aliceChat, before+1, 10*time.Second); err != nil {
					t.Fatal(err)
				}
			})

			t.Run("a chat that blocked the bot has its notifications turned off", func(t *testing.T) {
				e.api.Block(aliceChat)
				before := len(e.api.SentTo(aliceChat))
				e.h.buy(t, w.alice.token, w.a1.ID, "YES", 1000)
				e.waitState(t, w.alice, true, false)
				sentinel(t)
				if n := len(e.api.SentTo(aliceChat)); n != before {
					t.Fatalf("a blocked chat got %d messages", n-before)
				}
				fams := e.h.scrape(t)
				if blocked, sent := mustMetric(t, fams, "predictkit_telegram_messages_total", map[string]string{"result": "blocked"}),
					mustMetric(t, fams, "predictkit_telegram_messages_total", map[string]string{"result": "sent"}); blocked != 1 || sent < 5 {
					t.Fatalf("predictkit_telegram_messages_total: blocked %v, sent %v", blocked, sent)
				}
			})

			t.Run("after unlinking nothing is sent", func(t *testing.T) {
				r := e.h.do(t, req{method: http.MethodDelete, path: "/api/v1/auth/telegram", token: w.bob.token})
				expect(t, r, http.StatusNoContent, "")
				e.wantState(t, w.bob, false, false)
				before := len(e.api.SentTo(bobChat))
				e.h.buy(t, w.bob.token, w.b1.ID, "YES", 1000)
				// Alice, linked again to a new chat, is the sentinel now.
				e.linkChat(t, w.alice, 2003)
				e.h.buy(t, w.alice.token, w.a1.ID, "YES", 1000)
				if _, err := e.api.WaitSent(2003, 2, 10*time.Second); err != nil {
					t.Fatal(err)
				}
				if n := len(e.api.SentTo(bobChat)); n != before {
					t.Fatalf("an unlinked chat got %d messages", n-before)
				}
			})

			t.Run("a market's resolution reaches its holder's chat", func(t *testing.T) {
				before := len(e.api.SentTo(2003))
				r := e.h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}})
				expect(t, r, http.StatusOK, "")
				ms, err := e.api.WaitSent(2003, before+1, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if got := ms[len(ms)-1].Text; !strings.HasPrefix(got, "Рынок закрыт\nРынок «A1» закрыт, победил исход «ДА». Выплата:") {
					t.Fatalf("the chat got %q", got)
				}
				sentinelAlice := func() {
					e.h.buy(t, w.alice.token, w.b1.ID, "YES", 1000)
					if _, err := e.api.WaitSent(2003, before+2, 10*time.Second); err != nil {
						t.Fatal(err)
					}
				}
				sentinelAlice()
				if ms := e.api.SentTo(2003); len(ms) != before+2 || !strings.HasPrefix(ms[before+1].Text, "Сделка исполнена") {
					t.Fatalf("after the resolution alice's chat got %d messages: %v", len(ms)-before, ms[before:])
				}
			})
		})
	}
}
