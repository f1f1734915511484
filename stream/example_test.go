package stream_test

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/stream"
)

// A hub over an in-memory log: a subscriber that resumes after id 0 gets
// the entries of its topic, then whatever commits next.
func ExampleHub() {
	ctx := context.Background()
	log := changelog.NewMemory()
	log.Append(changelog.Entry{Type: changelog.Trade, MarketID: 7, Data: []byte(`{"trade_id":1}`)})
	log.Append(changelog.Entry{Type: changelog.Trade, MarketID: 8, Data: []byte(`{"trade_id":2}`)})

	hub := stream.New(stream.Options{Log: log, Feed: &changelog.Poller{Log: log, Woken: log.Appended}})
	if err := hub.Start(ctx); err != nil {
		panic(err)
	}
	defer hub.Close(ctx)

	topics, _ := stream.ParseTopics("market:7")
	sub, err := hub.Open(ctx, stream.Request{Topics: topics, Resume: true, After: 0})
	if err != nil {
		panic(err)
	}
	body := sub.Reader(nil)
	defer body.Close()
	log.Append(changelog.Entry{Type: changelog.Price, MarketID: 7, Data: []byte(`{"yes_probability":0.6}`)})

	// The stream's lines; comments (": ok", ": ping") and the blank lines
	// between messages left out.
	lines := bufio.NewScanner(body)
	for n := 0; n < 2 && lines.Scan(); {
		line := lines.Text()
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		fmt.Println(line)
		if strings.HasPrefix(line, "data:") {
			n++
		}
	}
	// Output:
	// id: 1
	// event: trade
	// data: {"trade_id":1}
	// id: 3
	// event: price
	// data: {"yes_probability":0.6}
}
