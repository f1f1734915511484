package telegram

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
)

// Recipient is a user whose notifications go to a chat.
type Recipient struct {
	ChatID   int64
	Language string
}

// ResolutionSource is what a store reads to find a resolution's
// notifications: the settlement wrote each holder (and follower) a
// market_resolved notification at the resolution's time, and the log
// tells of it by one market_resolved entry, not one per holder.
type ResolutionSource interface {
	// SettlementNotifications returns the market_resolved notifications
	// of event eventID made at at, of users.
	SettlementNotifications(ctx context.Context, eventID int64, at time.Time, users []int64) ([]*social.Notification, error)
}

// ResolutionDeliveries are the deliveries a market_resolved entry e owes
// the recipients: the notification of each recipient that the market's
// settlement wrote, as the notification entry it would have had (with
// e's Seq), in user id order. marketName is the market's name, which the
// notifications of an exclusive pool's resolution (all made at once, one
// per market) are told apart by. Stores call it from DeliverTelegram.
func ResolutionDeliveries(ctx context.Context, e changelog.Entry, to map[int64]Recipient, src ResolutionSource, marketName func(ctx context.Context, id int64) (string, error)) ([]Delivery, error) {
	if e.Type != changelog.MarketResolved || e.UserID != 0 || len(to) == 0 {
		return nil, nil
	}
	var d struct {
		MarketID       int64  `json:"market_id"`
		EventID        int64  `json:"event_id"`
		WinningOutcome string `json:"winning_outcome"`
		ResolvedAt     string `json:"resolved_at"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return nil, fmt.Errorf("telegram: entry %d: %w", e.Seq, err)
	}
	at, err := time.Parse(time.RFC3339Nano, d.ResolvedAt)
	if err != nil {
		return nil, fmt.Errorf("telegram: entry %d: resolved_at: %w", e.Seq, err)
	}
	name, err := marketName(ctx, d.MarketID)
	if err != nil {
		return nil, err
	}
	users := make([]int64, 0, len(to))
	for u := range to {
		users = append(users, u)
	}
	slices.Sort(users)
	ns, err := src.SettlementNotifications(ctx, d.EventID, at, users)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	var out []Delivery
	for _, n := range ns {
		r, ok := to[n.UserID]
		if !ok || seen[n.UserID] || n.Data.MarketName != name || n.Data.Won != d.WinningOutcome {
			continue
		}
		seen[n.UserID] = true
		ne := social.NotificationChange(n)
		ne.Seq = e.Seq
		out = append(out, Delivery{Entry: ne, ChatID: r.ChatID, Language: r.Language})
	}
	slices.SortFunc(out, func(a, b Delivery) int { return cmp.Compare(a.Entry.UserID, b.Entry.UserID) })
	return out, nil
}
