package jetstream_test

import (
	"context"
	"log"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
	"github.com/predictkit/predictkit/storage/postgres"
)

// Every instance runs the relay (the PostgreSQL store's Exclusive lets
// one publish at a time) and follows the stream instead of the database.
// (Not run by go test: it needs a database and a NATS server.)
func ExampleNewRelay() {
	ctx := context.Background()
	store, err := postgres.New(ctx, "postgres://postgres@127.0.0.1:5432/predictkit?sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = store.WatchChanges(ctx, func(error) {}) }() // wakes the relay's reads

	// The nodes of a NATS cluster (or one server). The connection moves
	// to another node when its own dies; it must not keep publishes
	// meanwhile (see NewRelay).
	nc, err := nats.Connect("nats://n1:4222,nats://n2:4222,nats://n3:4222",
		nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond), nats.ReconnectBufSize(-1))
	if err != nil {
		log.Fatal(err)
	}
	js, err := natsjs.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	relay, err := jetstream.NewRelay(js, store, jetstream.Options{
		MaxAge:   24 * time.Hour, // the change log's retention
		Replicas: 3,              // the stream survives the loss of a node
		OnError:  func(err error) { log.Print(err) },
	})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = relay.Run(ctx) }()

	feed := jetstream.NewFeed(js, jetstream.FeedOptions{OnError: func(err error) { log.Print(err) }})
	err = feed.Follow(ctx, 0, func(es []changelog.Entry) error {
		for _, e := range es {
			log.Println(e.Seq, e.Type, string(e.Data))
		}
		return nil
	})
	log.Print(err)
}
