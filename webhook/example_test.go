package webhook_test

import (
	"fmt"
	"time"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/webhook"
)

// A delivery's body, and the signature a receiver checks it with.
func Example() {
	d := &webhook.Delivery{ID: 42, Type: webhook.BetSettled, MarketID: 7, ExternalUserID: "user-1",
		Side: market.Yes, Shares: 1500, PayoutKopecks: 1500, WonSide: market.WonSideYes,
		CreatedAt: time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)}
	body := webhook.Body(d)
	fmt.Println(string(body))

	at := time.Unix(1_800_000_000, 0)
	header := webhook.Sign("whsec_example", at, body)
	fmt.Println(webhook.Verify("whsec_example", header, body, at.Add(time.Minute), 5*time.Minute))
	fmt.Println(webhook.Verify("whsec_example", header, body, at.Add(time.Hour), 5*time.Minute))
	// Output:
	// {"id":42,"type":"bet.settled","created_at":"2027-01-15T08:00:00Z","data":{"external_user_id":"user-1","market_id":7,"side":"yes","shares":1500,"payout_kopecks":1500,"won_side":"yes"}}
	// <nil>
	// webhook: invalid signature
}
