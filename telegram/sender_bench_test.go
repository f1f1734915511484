package telegram_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/internal/telegramtest"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
	"github.com/predictkit/predictkit/telegram"
)

// senderStore is a store the sender's benchmark runs on.
type senderStore interface {
	telegram.Store
	account.Store
	social.NotificationStore
}

// BenchmarkSender measures the sender: each op is one notification made
// and sent to a linked chat of the local fake Bot API (the Bot API's own
// latency, tens of milliseconds in production, is not in it).
func BenchmarkSender(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchSender(b, memory.New()) })
	b.Run("postgres", func(b *testing.B) {
		if pgtest.URL(b) == "" {
			b.Skip("no PostgreSQL")
		}
		benchSender(b, pgtest.New(b))
	})
}

func benchSender(b *testing.B, store senderStore) {
	ctx := context.Background()
	api := telegramtest.New("1:bench")
	defer api.Close()
	bot, err := telegram.NewBot("1:bench", api.URL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	svc := telegram.NewService(store, bot)
	u, _, err := account.NewService(store).Register(ctx, account.Registration{Email: "bench@example.com", Password: "password123", Name: "Bench"})
	if err != nil {
		b.Fatal(err)
	}
	link, err := svc.Link(ctx, u.ID)
	if err != nil {
		b.Fatal(err)
	}
	q, _ := url.Parse(link.URL)
	up := api.Start(7, "en", "/start "+q.Query().Get("start"))
	if err := svc.HandleUpdate(ctx, &up); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Deliver(ctx, 100); err != nil { // the cursor, at the log's end
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := store.CreateNotification(ctx, &social.Notification{UserID: u.ID, Type: social.TypeSupportReply, Data: social.NotificationData{Excerpt: "hi"}}); err != nil {
			b.Fatal(err)
		}
		if i%100 == 99 || i == b.N-1 {
			for {
				n, err := svc.Deliver(ctx, 100)
				if err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					break
				}
			}
		}
	}
	b.StopTimer()
	if got := len(api.SentTo(7)); got != b.N+1 {
		b.Fatalf("%d messages, want %d", got, b.N+1)
	}
}
