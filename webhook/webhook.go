// Package webhook tells partners, over HTTP, what happened to their
// users' money: a settled position (bet.settled) and a resolved market
// (market.resolved), each a signed POST to the URL the operator set for
// the partner.
//
// Deliveries are rows of a durable queue that the stores fill from the
// change log in the transaction that moves the dispatcher's cursor, so a
// crash neither loses nor repeats one; a Sender claims the due rows (a
// lease, so that several server instances send side by side) and sends
// each at least once, retrying with exponential backoff and full jitter
// for Window (24 h) before marking it failed. Each partner has its own
// bounded set of workers: a slow or dead endpoint delays only its own
// partner.
//
// Destinations are checked by a Guard: public addresses only, unless the
// operator lists a host, address or range, and the check is made on the
// address actually dialled, at every delivery.
package webhook

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/market"
)

// Types of deliveries.
const (
	// BetSettled tells of one sub-account position that a resolution (or
	// a void) closed.
	BetSettled = "bet.settled"
	// MarketResolved tells of a market resolved or voided in which the
	// partner's users held positions.
	MarketResolved = "market.resolved"
	// AnswerAdded tells of an answer added to an exclusive pool in which
	// the partner's users hold positions: their holdings on the pool's
	// Other market were rewritten (docs/answer-split.md). MarketID is the
	// new market.
	AnswerAdded = "market.answer_added"
)

// Status of a delivery.
const (
	// Pending deliveries wait for their next attempt (or are being sent).
	Pending = "pending"
	// Delivered deliveries were answered 2xx.
	Delivered = "delivered"
	// Failed deliveries were not answered 2xx within the window, or their
	// webhook was removed.
	Failed = "failed"
)

// Hook is a partner's webhook: where deliveries go and the secret that
// signs them.
type Hook struct {
	PartnerID int64
	URL       string
	// Secret signs the deliveries. It is stored as is: the server must
	// read it to sign.
	Secret    string
	CreatedAt time.Time
}

// Delivery is one message for a partner and how sending it went.
type Delivery struct {
	ID        int64
	PartnerID int64
	Type      string
	// What the message tells: the market, how it resolved (a
	// market.WonSide constant), and for BetSettled the position.
	MarketID       int64
	EventID        int64
	WonSide        int
	PositionID     int64 // 0 for MarketResolved
	ExternalUserID string
	Side           market.Side
	Shares         int64
	PayoutKopecks  int64
	// CreatedAt is when what it tells of happened (the resolution).
	CreatedAt time.Time

	Status        string
	Attempts      int
	NextAttemptAt time.Time
	// ExpiresAt is when retrying stops: Window after the delivery was
	// queued, or after the operator's redelivery.
	ExpiresAt      time.Time
	LastAttemptAt  *time.Time
	LastStatusCode int // 0 when no answer came
	LastError      string
	LastLatency    time.Duration
	DeliveredAt    *time.Time

	// URL and Secret are the partner's webhook at the time of a claim
	// (ClaimDeliveries); empty elsewhere.
	URL, Secret string
}

// Attempt is the outcome of sending a claimed delivery.
type Attempt struct {
	ID int64
	// Attempts is the delivery's count as the claim left it: an outcome
	// is recorded only while nobody claimed the delivery since.
	Attempts   int
	At         time.Time
	StatusCode int
	Error      string
	Latency    time.Duration
	// Status is Delivered, Pending (then NextAttemptAt) or Failed.
	Status        string
	NextAttemptAt time.Time
}

// Page is a page of a partner's delivery log, newest first.
type Page struct {
	Deliveries []*Delivery
	// Next is the cursor of the next page, 0 on the last.
	Next int64
}

// Queue describes the deliveries waiting to be sent.
type Queue struct {
	// Pending counts deliveries not yet delivered nor failed; Due those
	// of them whose next attempt has come.
	Pending, Due int64
	// OldestDue is the earliest next attempt of a due delivery (zero for
	// none): how far behind the senders are.
	OldestDue time.Time
}

// Store is what webhooks need from storage. Implementations:
// storage/memory, storage/postgres.
type Store interface {
	// SetWebhook sets (or replaces) partner h.PartnerID's webhook and
	// sets h.CreatedAt. partner.ErrNotFound for an unknown partner.
	SetWebhook(ctx context.Context, h *Hook) error
	// Webhook returns partner id's webhook, or ErrNoWebhook.
	Webhook(ctx context.Context, partnerID int64) (*Hook, error)
	// DeleteWebhook removes partner id's webhook and marks its pending
	// deliveries failed; ErrNoWebhook when it has none.
	DeleteWebhook(ctx context.Context, partnerID int64, now time.Time) error
	// DispatchWebhooks queues the deliveries of at most limit change-log
	// entries after the dispatcher's cursor and moves the cursor past
	// them, in one transaction; it returns how many entries it read. The
	// deliveries are due at now and retried until now+window. A
	// store that queues deliveries in the settlement's own transaction
	// (storage/memory) reads none.
	DispatchWebhooks(ctx context.Context, now time.Time, limit int, window time.Duration) (int, error)
	// DuePartners returns the partners with a delivery due at now.
	DuePartners(ctx context.Context, now time.Time) ([]int64, error)
	// ClaimDeliveries takes at most n of partner id's deliveries due at
	// now, oldest due first, skipping any another claim holds: each gets
	// its next attempt moved to leaseUntil and one more attempt, and comes
	// with the webhook's URL and secret. A claimer that dies leaves them
	// due again at leaseUntil.
	ClaimDeliveries(ctx context.Context, partnerID int64, now, leaseUntil time.Time, n int) ([]*Delivery, error)
	// RecordAttempt records the outcome of a claimed delivery, unless it
	// was claimed again since (then it does nothing).
	RecordAttempt(ctx context.Context, a Attempt) error
	// Deliveries returns partner id's deliveries with an id below before
	// (0: from the newest), newest first, at most limit.
	Deliveries(ctx context.Context, partnerID, before int64, limit int) ([]*Delivery, error)
	// Redeliver makes delivery id of partner partnerID due at now again,
	// retried until expires; ErrDeliveryNotFound.
	Redeliver(ctx context.Context, partnerID, id int64, now, expires time.Time) error
	// WebhookQueue describes the queue at now.
	WebhookQueue(ctx context.Context, now time.Time) (Queue, error)
}

// Message is the JSON body of a delivery, byte for byte what is signed.
type message struct {
	ID        int64           `json:"id"`
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

type betSettledData struct {
	ExternalUserID string `json:"external_user_id"`
	MarketID       int64  `json:"market_id"`
	Side           string `json:"side"`
	Shares         int64  `json:"shares"`
	PayoutKopecks  int64  `json:"payout_kopecks"`
	WonSide        string `json:"won_side"`
}

type answerAddedData struct {
	MarketID int64 `json:"market_id"`
	EventID  int64 `json:"event_id"`
}

type marketResolvedData struct {
	MarketID int64  `json:"market_id"`
	EventID  int64  `json:"event_id"`
	WonSide  string `json:"won_side"`
}

// WonSideName is how a delivery names an outcome: "yes", "no" or "void",
// as the partner API names sides.
func WonSideName(won int) string {
	switch won {
	case market.WonSideYes:
		return "yes"
	case market.WonSideNo:
		return "no"
	case market.WonSideVoid:
		return "void"
	}
	return strconv.Itoa(won)
}

func sideName(s market.Side) string {
	if s == market.Yes {
		return "yes"
	}
	return "no"
}

// Body returns the JSON body of delivery d: the same bytes at every
// attempt.
func Body(d *Delivery) []byte {
	var data any
	switch d.Type {
	case BetSettled:
		data = betSettledData{ExternalUserID: d.ExternalUserID, MarketID: d.MarketID, Side: sideName(d.Side),
			Shares: d.Shares, PayoutKopecks: d.PayoutKopecks, WonSide: WonSideName(d.WonSide)}
	case AnswerAdded:
		data = answerAddedData{MarketID: d.MarketID, EventID: d.EventID}
	default:
		data = marketResolvedData{MarketID: d.MarketID, EventID: d.EventID, WonSide: WonSideName(d.WonSide)}
	}
	raw, _ := json.Marshal(data) // plain structs: cannot fail
	body, _ := json.Marshal(message{ID: d.ID, Type: d.Type, CreatedAt: d.CreatedAt.UTC().Format(time.RFC3339Nano), Data: raw})
	return body
}
