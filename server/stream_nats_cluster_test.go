package server_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog/jetstream"
	"github.com/predictkit/predictkit/internal/natstest"
)

// TestStreamOverNATSCluster runs two servers on one PostgreSQL database,
// both with PREDICTKIT_STREAM_NATS_URL listing the three nodes of a NATS
// cluster and a stream of three replicas. Trades are made on one server
// and watched live on the other; the stream's leader is killed midway.
// Every trade must arrive once, in order.
func TestStreamOverNATSCluster(t *testing.T) {
	if postgresURL == nil {
		t.Skip("no PostgreSQL test helper")
	}
	dbURL := postgresURL(t)
	c := natstest.Start(t)
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.DatabaseURL = dbURL
	cfg.StreamPing = 200 * time.Millisecond
	cfg.StreamNATSURL = c.URLs()
	cfg.StreamNATSReplicas = 3
	cfg.StreamNATSName = fmt.Sprintf("cluster_%d", time.Now().UnixNano())
	a, _ := startServer(t, cfg)
	b, _ := startServer(t, cfg)
	w := newWorld(t, a)

	watch := openStream(t, b, fmt.Sprintf("topics=market:%d", w.a1.ID), nil)
	const trades = 40
	var want []int64
	for i := range trades {
		if i == trades/2 {
			stream, _ := jetstream.Names(cfg.StreamNATSName)
			c.Kill(natstest.Leader(t, natstest.Dial(t, c.URLs()), stream))
		}
		side := "YES"
		if i%2 == 1 {
			side = "NO"
		}
		want = append(want, a.buy(t, w.alice.token, w.a1.ID, side, 1_000).TradeID)
	}

	// Read the trades and their prices as they come; a failover pauses
	// them for seconds.
	var trs, prices []int64
	deadline := time.After(time.Minute)
	for len(prices) < trades {
		select {
		case m, ok := <-watch.msgs:
			if !ok {
				t.Fatalf("the stream ended after %d trades: %v", len(trs), <-watch.done)
			}
			switch m.event {
			case "trade":
				checkStreamData(t, m)
				var tr streamTrade
				m.decode(t, &tr)
				trs = append(trs, tr.TradeID)
			case "price":
				checkStreamData(t, m)
				var p streamPrice
				m.decode(t, &p)
				prices = append(prices, p.TradeID)
			}
		case <-deadline:
			t.Fatalf("%d of %d trades within a minute: %v", len(trs), trades, trs)
		}
	}
	if !slices.Equal(trs, want) || !slices.Equal(prices, want) {
		t.Fatalf("the other server's stream delivered trades %v and prices of %v, want %v: each once, in order", trs, prices, want)
	}
	watch.quiet(t, 500*time.Millisecond) // and nothing again
}
