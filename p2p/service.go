package p2p

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/predictkit/predictkit/input"
)

// Service is the P2P use cases. It is safe for concurrent use.
type Service struct {
	store Store
	// Now is the clock, in microseconds (what every store keeps); tests
	// replace it.
	Now func() time.Time
}

// NewService returns a Service on store.
func NewService(store Store) *Service {
	return &Service{store: store, Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// Ad returns ad id as the public sees it: ErrNotFound unless it is
// approved (an inactive approved ad is shown, with is_active false).
func (s *Service) Ad(ctx context.Context, id int64) (*Ad, error) {
	ad, err := s.store.P2PAd(ctx, id)
	if err != nil {
		return nil, err
	}
	if ad.ModerationStatus != StatusApproved {
		return nil, ErrNotFound
	}
	return ad, nil
}

// AdForOperator returns ad id whatever its state. ErrNotFound.
func (s *Service) AdForOperator(ctx context.Context, id int64) (*Ad, error) {
	return s.store.P2PAd(ctx, id)
}

// List returns the approved ads q selects (see Query and ParseQuery).
// *input.Error for a query that breaks a rule.
func (s *Service) List(ctx context.Context, q Query) ([]*Ad, error) {
	q, err := q.Normalize()
	if err != nil {
		return nil, err
	}
	return s.store.P2PAds(ctx, q)
}

// Create publishes an ad for user n.UserID, approved and active.
// *input.Error, ErrUserNotFound.
func (s *Service) Create(ctx context.Context, n NewAd) (*Ad, error) {
	ad, err := n.check()
	if err != nil {
		return nil, err
	}
	now := s.Now()
	ad.CreatedAt, ad.UpdatedAt = now, now
	if err := s.store.CreateP2PAd(ctx, ad); err != nil {
		return nil, err
	}
	return s.store.P2PAd(ctx, ad.ID)
}

func (n NewAd) check() (*Ad, error) {
	if n.UserID <= 0 {
		return nil, ErrUserNotFound
	}
	if n.Type != TypeBuy && n.Type != TypeSell {
		return nil, input.Invalid("type", "must be buy or sell")
	}
	cur, ok := normalizeCurrency(strings.TrimSpace(n.FiatCurrency))
	if !ok {
		return nil, input.Invalid("fiat_currency", "must be a three-letter currency code")
	}
	if n.ExchangeRate < 1 || n.ExchangeRate > MaxExchangeRate {
		return nil, input.Invalid("exchange_rate", fmt.Sprintf("must be 1 to %d kopecks per unit", int64(MaxExchangeRate)))
	}
	if n.MinAmount < 1 || n.MinAmount > MaxAmount {
		return nil, input.Invalid("min_amount", fmt.Sprintf("must be 1 to %d kopecks", int64(MaxAmount)))
	}
	if n.MaxAmount < n.MinAmount || n.MaxAmount > MaxAmount {
		return nil, input.Invalid("max_amount", "must be at least min_amount and at most "+fmt.Sprint(int64(MaxAmount)))
	}
	remaining := n.MaxAmount
	if n.RemainingAmount != nil {
		remaining = *n.RemainingAmount
		if remaining < 0 || remaining > MaxAmount {
			return nil, input.Invalid("remaining_amount", fmt.Sprintf("must be 0 to %d kopecks", int64(MaxAmount)))
		}
	}
	if len(n.PaymentMethods) == 0 || len(n.PaymentMethods) > MaxPaymentMethods {
		return nil, input.Invalid("payment_methods", fmt.Sprintf("must hold 1 to %d methods", MaxPaymentMethods))
	}
	methods := make([]string, 0, len(n.PaymentMethods))
	seen := map[string]bool{}
	for _, m := range n.PaymentMethods {
		m, ok := cleanText(m, MaxPaymentMethodLen)
		if !ok || m == "" {
			return nil, input.Invalid("payment_methods", fmt.Sprintf("each must be 1 to %d characters of text", MaxPaymentMethodLen))
		}
		if seen[PaymentMethodKey(m)] {
			return nil, input.Invalid("payment_methods", "must not repeat a method")
		}
		seen[PaymentMethodKey(m)] = true
		methods = append(methods, m)
	}
	if n.PaymentDuration < 1 || n.PaymentDuration > MaxPaymentDuration {
		return nil, input.Invalid("payment_duration", fmt.Sprintf("must be 1 to %d minutes", MaxPaymentDuration))
	}
	instructions := strings.TrimSpace(n.Instructions)
	if !validLongText(instructions, MaxInstructionsLen) {
		return nil, input.Invalid("instructions", fmt.Sprintf("must be UTF-8 text of at most %d characters", MaxInstructionsLen))
	}
	return &Ad{
		UserID: n.UserID, Type: n.Type, FiatCurrency: cur, ExchangeRate: n.ExchangeRate,
		MinAmount: n.MinAmount, MaxAmount: n.MaxAmount, RemainingAmount: remaining,
		PaymentMethods: methods, PaymentDuration: n.PaymentDuration, Instructions: instructions,
		IsActive: true, ModerationStatus: StatusApproved, IsPlatformAd: n.IsPlatformAd,
	}, nil
}

// Moderate activates, deactivates, approves or rejects ad id and returns
// it. An empty Moderation returns the ad unchanged. *input.Error,
// ErrNotFound.
func (s *Service) Moderate(ctx context.Context, id int64, m Moderation) (*Ad, error) {
	if m.ModerationStatus != nil {
		switch *m.ModerationStatus {
		case StatusPending, StatusApproved, StatusRejected:
		default:
			return nil, input.Invalid("moderation_status", "must be pending, approved or rejected")
		}
	}
	if m.IsActive == nil && m.ModerationStatus == nil {
		return s.store.P2PAd(ctx, id)
	}
	return s.store.ModerateP2PAd(ctx, id, m, s.Now())
}

// Limits of a P2P record.
const MaxCompletedOrders = 1_000_000_000

// SetStats replaces user st.UserID's P2P record: completed orders, and
// the count and sum of the 1 to 5 star ratings received (at most one per
// completed order). *input.Error, ErrUserNotFound.
func (s *Service) SetStats(ctx context.Context, st UserStats) (UserStats, error) {
	switch {
	case st.UserID <= 0:
		return UserStats{}, ErrUserNotFound
	case st.CompletedOrders < 0 || st.CompletedOrders > MaxCompletedOrders:
		return UserStats{}, input.Invalid("completed_orders", fmt.Sprintf("must be 0 to %d", MaxCompletedOrders))
	case st.RatingCount < 0 || st.RatingCount > st.CompletedOrders:
		return UserStats{}, input.Invalid("rating_count", "must be 0 to completed_orders")
	case st.RatingSum < st.RatingCount || st.RatingSum > 5*st.RatingCount:
		return UserStats{}, input.Invalid("rating_sum", "must be rating_count to 5 × rating_count (ratings are 1 to 5 stars)")
	}
	if err := s.store.SetP2PStats(ctx, st); err != nil {
		return UserStats{}, err
	}
	return s.store.P2PStats(ctx, st.UserID)
}

// Stats returns user id's P2P record. ErrUserNotFound.
func (s *Service) Stats(ctx context.Context, userID int64) (UserStats, error) {
	return s.store.P2PStats(ctx, userID)
}

// validLongText accepts text of at most maxLen characters that follows
// the text rule for fields with line breaks and tabs
// (input.IsMultilineText).
func validLongText(s string, maxLen int) bool {
	return input.IsMultilineText(s) && utf8.RuneCountInString(s) <= maxLen
}
