package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/changelog/jetstream"
)

// natsFeed connects to NATS and runs this server's change-log relay for
// as long as the server runs (with PostgreSQL, the relays of all servers
// take turns under an advisory lock, so one publishes), and returns the
// feed that follows the JetStream stream. A NATS server that cannot be
// reached at start fails the start: the operator asked for it.
func natsFeed(lc fx.Lifecycle, cfg Config, l ChangeLog, log *slog.Logger) (StreamFeed, error) {
	nc, err := nats.Connect(cfg.StreamNATSURL, natsOptions()...)
	if err != nil {
		return StreamFeed{}, fmt.Errorf("stream: cannot connect to NATS at %s: %w (check PREDICTKIT_STREAM_NATS_URL)", redactURL(cfg.StreamNATSURL), err)
	}
	js, err := natsjs.New(nc)
	if err != nil {
		nc.Close()
		return StreamFeed{}, fmt.Errorf("stream: NATS JetStream: %w", err)
	}
	name, subject := jetstream.Names(cfg.StreamNATSName)
	relay, err := jetstream.NewRelay(js, l, jetstream.Options{
		Stream:   name,
		Subject:  subject,
		MaxAge:   cfg.withDefaults().StreamRetention,
		Replicas: cfg.withDefaults().StreamNATSReplicas,
		OnError:  func(err error) { log.Warn("change log relay", "err", err) },
	})
	if err != nil {
		nc.Close()
		return StreamFeed{}, fmt.Errorf("stream: NATS relay: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Go(func() { _ = relay.Run(ctx) })
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			return nc.Drain()
		},
	})
	return StreamFeed{jetstream.NewFeed(js, jetstream.FeedOptions{
		Stream:  name,
		OnError: func(err error) { log.Warn("change log feed", "err", err) },
	})}, nil
}

// natsOptions are the change log's NATS connection options. The
// connection never gives up: when its node goes away it moves to another
// one of the list, or of the cluster (the nodes tell their clients about
// each other), trying each every 250 ms rather than every 2 s (the
// client's default), since entries wait meanwhile; it keeps no publishes
// while it reconnects (jetstream.NewRelay says why). At start one of the
// listed nodes must answer: an unreachable NATS fails the start.
func natsOptions() []nats.Option {
	return []nats.Option{
		nats.Name("predictkit"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		// Publishes fail while reconnecting, rather than wait in a
		// buffer: jetstream.NewRelay requires it.
		nats.ReconnectBufSize(-1),
	}
}

// redactURL is u without its password, for messages. u may be a
// comma-separated list of URLs (a NATS cluster's nodes): each is
// redacted.
func redactURL(u string) string {
	parts := strings.Split(u, ",")
	for i, s := range parts {
		s = strings.TrimSpace(s)
		bare := !strings.Contains(s, "://") // host:port; nats:// is implied
		if bare {
			s = "nats://" + s
		}
		p, err := url.Parse(s)
		if err != nil {
			return "the configured URL"
		}
		parts[i] = p.Redacted()
		if bare {
			parts[i] = strings.TrimPrefix(parts[i], "nats://")
		}
	}
	return strings.Join(parts, ",")
}
