package telegram_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/internal/telegramtest"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/telegram"
)

// linked is a memory store with a user linked to chat 9 through the
// fake Bot API, and the sender's cursor at the log's end.
func linked(t *testing.T) (*memory.Store, *telegram.Service, *telegramtest.Server, int64) {
	t.Helper()
	ctx := context.Background()
	api := telegramtest.New("1:t")
	t.Cleanup(api.Close)
	store := memory.New()
	bot, err := telegram.NewBot("1:t", api.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := telegram.NewService(store, bot)
	u, _, err := account.NewService(store).Register(ctx, account.Registration{Email: "t@example.com", Password: "password123", Name: "T"})
	if err != nil {
		t.Fatal(err)
	}
	link, err := svc.Link(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.Parse(link.URL)
	up := api.Start(9, "en", "/start "+q.Query().Get("start"))
	if err := svc.HandleUpdate(ctx, &up); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Deliver(ctx, 100); err != nil {
		t.Fatal(err)
	}
	return store, svc, api, u.ID
}

func TestSenderWaitsOutTheRateLimit(t *testing.T) {
	ctx := context.Background()
	store, svc, api, user := linked(t)
	if err := store.CreateNotification(ctx, &social.Notification{UserID: user, Type: social.TypeSupportReply, Data: social.NotificationData{Excerpt: "hi"}}); err != nil {
		t.Fatal(err)
	}
	api.RateLimit(1)
	start := time.Now()
	if _, err := svc.Deliver(ctx, 100); !errors.Is(err, telegram.ErrUnavailable) {
		t.Fatalf("past the rate limit: %v, want ErrUnavailable", err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("the sender waited %v, want the second Telegram asked for", waited)
	}
	if n, err := svc.Deliver(ctx, 100); err != nil || n != 1 {
		t.Fatalf("after the wait: %d entries, %v", n, err)
	}
	if ms := api.SentTo(9); len(ms) != 2 {
		t.Fatalf("the chat got %v, want the link's greeting and the notification once", ms)
	}
}

func TestSenderStopsAtOnceWhenStopped(t *testing.T) {
	ctx := context.Background()
	store, svc, api, user := linked(t)
	for range 3 {
		if err := store.CreateNotification(ctx, &social.Notification{UserID: user, Type: social.TypeSupportReply, Data: social.NotificationData{Excerpt: "hi"}}); err != nil {
			t.Fatal(err)
		}
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if n, err := svc.Deliver(stopped, 100); !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("a stopped sender: %d entries, %v", n, err)
	}
	if n, err := svc.Deliver(ctx, 100); err != nil || n != 3 || len(api.SentTo(9)) != 4 {
		t.Fatalf("then: %d entries, %v, %d messages", n, err, len(api.SentTo(9)))
	}
}
