package telegram_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/internal/telegramtest"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/telegram"
)

// A user asks for a link, opens it in Telegram, and the update Telegram
// delivers links the chat; the bot says so in the chat.
func Example() {
	ctx := context.Background()
	api := telegramtest.New("123:secret") // the Bot API; https://api.telegram.org in production
	defer api.Close()

	store := memory.New()
	accounts := account.NewService(store)
	u, _, _ := accounts.Register(ctx, account.Registration{Email: "ann@example.com", Password: "password123", Name: "Ann"})

	bot, _ := telegram.NewBot("123:secret", api.URL(), nil)
	svc := telegram.NewService(store, bot)

	link, _ := svc.Link(ctx, u.ID)
	fmt.Println(strings.SplitN(link.URL, "?", 2)[0])

	// Telegram turns the link into "/start <token>" from the user's chat.
	q, _ := url.Parse(link.URL)
	update := api.Start(42, "en", "/start "+q.Query().Get("start"))
	fmt.Println(svc.HandleUpdate(ctx, &update))
	// The same token again is refused, and the chat is told.
	again := api.Start(42, "en", "/start "+q.Query().Get("start"))
	fmt.Println(svc.HandleUpdate(ctx, &again))

	u, _ = store.User(ctx, u.ID)
	fmt.Println(u.TelegramVerified, u.TelegramNotifications)
	for _, m := range api.SentTo(42) {
		fmt.Println(m.Text)
	}
	// Output:
	// https://t.me/predictkit_test_bot
	// <nil>
	// telegram: invalid link token
	// true true
	// Your predictkit account Ann is linked to this chat. Notifications will come here; turn them off or unlink on your profile page.
	// This link is unknown, used or expired. Open your profile page and press Link Telegram again.
}
