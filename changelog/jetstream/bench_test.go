package jetstream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
	"github.com/predictkit/predictkit/internal/natstest"
)

// tradeData is the size of a trade entry's data as the stores write it.
var tradeData = []byte(`{"trade_id":123456,"market_id":42,"pool_id":17,"event_id":9,"side":"YES","action":"buy","shares":1534,"amount_kopecks":10000,"yes_probability":0.5312,"created_at":"2025-03-01T12:00:00.123456789Z"}`)

// BenchmarkPublishAndFollow measures entries per second from the log,
// through a relay and NATS, to a follower on another connection: the
// time from the first append until the follower has the last entry. The
// store's own feed (no NATS) is the baseline.
func BenchmarkPublishAndFollow(b *testing.B) {
	feeds := []struct {
		name string
		feed func(b *testing.B, log *changelog.Memory) changelog.Feed
	}{
		{"store feed, no NATS", func(b *testing.B, log *changelog.Memory) changelog.Feed {
			return memLog{log}.ChangeFeed()
		}},
		{"relay and NATS feed", func(b *testing.B, log *changelog.Memory) changelog.Feed {
			js := connect(b)
			stream, subject := names(b, js)
			r, err := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
			if err != nil {
				b.Fatal(err)
			}
			run(b, r)
			// The stream exists before the clock starts.
			log.Append(changelog.Entry{Type: changelog.Trade, Data: tradeData})
			eventually(b, "the relay starts", func() bool { return r.Last() == 1 })
			return jetstream.NewFeed(connect(b), jetstream.FeedOptions{Stream: stream})
		}},
		{"relay and NATS feed, three-node cluster, 3 replicas", func(b *testing.B, log *changelog.Memory) changelog.Feed {
			c := natstest.Start(b)
			r, err := jetstream.NewRelay(natstest.Dial(b, c.URLs()), memLog{log}, jetstream.Options{Replicas: 3})
			if err != nil {
				b.Fatal(err)
			}
			run(b, r)
			log.Append(changelog.Entry{Type: changelog.Trade, Data: tradeData})
			eventually(b, "the relay starts", func() bool { return r.Last() == 1 })
			return jetstream.NewFeed(natstest.Dial(b, c.URLs()), jetstream.FeedOptions{})
		}},
	}
	for _, f := range feeds {
		b.Run(f.name, func(b *testing.B) {
			log := changelog.NewMemory()
			feed := f.feed(b, log)
			after, _ := log.ChangeBounds(context.Background())
			want := after.Last + int64(b.N)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			errEnough := errors.New("enough")
			done := make(chan error, 1)
			b.ResetTimer()
			start := time.Now()
			go func() {
				done <- feed.Follow(ctx, after.Last, func(es []changelog.Entry) error {
					if es[len(es)-1].Seq == want {
						return errEnough
					}
					return nil
				})
			}()
			// A trade writes a few entries at once.
			for n := b.N; n > 0; n -= 4 {
				es := make([]changelog.Entry, min(n, 4))
				for i := range es {
					es[i] = changelog.Entry{Type: changelog.Trade, MarketID: 42, Data: tradeData}
				}
				log.Append(es...)
			}
			if err := <-done; !errors.Is(err, errEnough) {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "entries/s")
		})
	}
}
