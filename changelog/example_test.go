package changelog_test

import (
	"context"
	"fmt"

	"github.com/predictkit/predictkit/changelog"
)

// A reader keeps the sequence number of the last entry it handled and asks
// for what came after it.
func ExampleMemory() {
	ctx := context.Background()
	log := changelog.NewMemory()
	log.Append(changelog.Entry{Type: changelog.Trade, MarketID: 1, Data: []byte(`{"trade_id":1}`)})
	log.Append(changelog.Entry{Type: changelog.Price, MarketID: 1, Data: []byte(`{"yes_probability":0.55}`)})

	var last int64
	es, _ := log.Changes(ctx, last, 100)
	for _, e := range es {
		fmt.Println(e.Seq, e.Type, string(e.Data))
		last = e.Seq
	}
	log.Append(changelog.Entry{Type: changelog.MarketResolved, MarketID: 1})
	es, _ = log.Changes(ctx, last, 100)
	fmt.Println(len(es), es[0].Seq, es[0].Type)
	// Output:
	// 1 trade {"trade_id":1}
	// 2 price {"yes_probability":0.55}
	// 1 3 market_resolved
}
