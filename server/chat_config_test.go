package server_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

func TestChatConfig(t *testing.T) {
	t.Run("the chat variables are read", func(t *testing.T) {
		t.Setenv("PREDICTKIT_CHAT_FAQ", "/etc/predictkit/faq.json")
		t.Setenv("PREDICTKIT_CHAT_WEBHOOK_URL", "https://desk.example.com/hooks/chat")
		t.Setenv("PREDICTKIT_CHAT_WEBHOOK_TIMEOUT", "2s")
		c, err := server.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if c.ChatFAQ != "/etc/predictkit/faq.json" || c.ChatWebhookURL != "https://desk.example.com/hooks/chat" || c.ChatWebhookTimeout != 2*time.Second {
			t.Fatalf("config %+v", c)
		}
	})
	t.Run("the webhook timeout defaults to 5s", func(t *testing.T) {
		if d := server.DefaultConfig().ChatWebhookTimeout; d != 5*time.Second {
			t.Fatalf("default %v", d)
		}
	})
	t.Run("serve -h lists the chat settings", func(t *testing.T) {
		var out bytes.Buffer
		server.PrintSettings(&out)
		for _, want := range []string{"-chat-faq", "PREDICTKIT_CHAT_FAQ", "PREDICTKIT_CHAT_WEBHOOK_URL", "PREDICTKIT_CHAT_WEBHOOK_TIMEOUT", "5s"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("usage lacks %s", want)
			}
		}
	})
	t.Run("a webhook URL that is not http or https is refused", func(t *testing.T) {
		for _, u := range []string{"ftp://desk.example.com", "desk.example.com/hook", "http://"} {
			cfg := testConfig(memoryStore())
			cfg.ChatWebhookURL = u
			if err := server.New(cfg).Err(); err == nil {
				t.Errorf("%q was accepted", u)
			}
		}
	})
	t.Run("a FAQ file that is missing or broken stops the server from building", func(t *testing.T) {
		broken := filepath.Join(t.TempDir(), "faq.json")
		if err := os.WriteFile(broken, []byte(`{"entries":[{"keywords":["x"],"answer":{"ru":"только по-русски"}}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{filepath.Join(t.TempDir(), "missing.json"), broken} {
			cfg := testConfig(memoryStore())
			cfg.ChatFAQ = path
			if _, err := server.Build(cfg); err == nil {
				t.Errorf("%s was accepted", path)
			}
		}
	})
	t.Run("a FAQ file answers the chat", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "faq.json")
		if err := os.WriteFile(path, []byte(`{"entries":[{"keywords":["opening hours"],"answer":{"en":"We answer 9 to 21 Moscow time.","ru":"Мы отвечаем с 9 до 21 по Москве."}}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.ChatFAQ = path }))
		c := &chatClient{}
		h.openChat(t, c)
		if m := h.chatSend(t, c, "What are your opening hours?"); m.Reply == nil || m.Reply.Text != "We answer 9 to 21 Moscow time." {
			t.Fatalf("reply %+v", m.Reply)
		}
	})
}
