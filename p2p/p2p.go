// Package p2p is predictkit's board of peer-to-peer advertisements: users
// offer to buy or sell platform balance for fiat money, and others find
// an offer through a filtered, sorted, paged list.
//
// The public side is read-only (one ad, the list). The operator creates
// ads for users and moderates them, and keeps each user's P2P record
// (completed orders, ratings) that the list shows and sorts by.
//
// Units: every amount (min_amount, max_amount, remaining_amount and the
// list's amount filter) is integer kopecks of platform balance.
// ExchangeRate is integer kopecks of platform balance per one whole unit
// of the ad's fiat currency: a USD ad at 9650 trades 96.50 RUB of balance
// for each US dollar; a RUB ad at 100 trades balance one to one.
// PaymentDuration is minutes.
//
// Only approved ads are public. The list shows active ones by default and
// inactive ones with is_active=false; pending and rejected ads are seen by
// the operator only.
package p2p

import "time"

// Ad types.
const (
	TypeBuy  = "buy"
	TypeSell = "sell"
)

// Moderation statuses. Only approved ads are public.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
)

// Sort orders of the list.
const (
	// SortNewest (the default): created_at descending, then id descending.
	SortNewest = ""
	// SortRating: the owner's average rating, highest first; ties by id.
	SortRating = "rating"
	// SortOrdersCount: the owner's completed orders, most first; ties by id.
	SortOrdersCount = "orders_count"
	// SortBestPrice: the best rate for the reader first. Sell ads by
	// exchange_rate ascending (cheapest first), buy ads by exchange_rate
	// descending (highest bid first); in a list with both types every sell
	// ad comes before every buy ad. Ties by id.
	SortBestPrice = "best_price"
)

// Ad is one advertisement with its owner.
type Ad struct {
	ID     int64
	UserID int64
	// Type is TypeBuy (the owner buys balance for fiat) or TypeSell (the
	// owner sells balance for fiat).
	Type         string
	FiatCurrency string // ISO 4217 code, upper case
	// ExchangeRate is kopecks of platform balance per 1 unit of
	// FiatCurrency.
	ExchangeRate int64
	// MinAmount and MaxAmount bound one order, RemainingAmount is what is
	// left of the ad's volume: kopecks of platform balance.
	MinAmount       int64
	MaxAmount       int64
	RemainingAmount int64
	PaymentMethods  []string
	// PaymentDuration is how long, in minutes, the buyer has to pay.
	PaymentDuration  int64
	Instructions     string
	IsActive         bool
	ModerationStatus string
	IsPlatformAd     bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// Owner is filled on read.
	Owner Owner
}

// Owner is what an ad shows of its owner. A hidden profile shows the name
// "Anonymous" and no nickname or avatar.
type Owner struct {
	ID        int64
	Name      string
	Nickname  string
	AvatarURL string
	Stats     UserStats
}

// UserStats is a user's P2P record.
type UserStats struct {
	UserID          int64
	CompletedOrders int64
	// RatingSum is the sum of the 1 to 5 star ratings the user received,
	// RatingCount how many there were (at most one per completed order).
	RatingSum   int64
	RatingCount int64
}

// AvgRating is the average rating, 0 when there is none.
func (s UserStats) AvgRating() float64 {
	if s.RatingCount == 0 {
		return 0
	}
	return float64(s.RatingSum) / float64(s.RatingCount)
}

// Query selects and orders the public list. The zero value is not the
// default list: use DefaultQuery or ParseQuery.
type Query struct {
	// Type is TypeBuy, TypeSell or "" (both).
	Type string
	// FiatCurrency, when set, is an upper-case ISO 4217 code.
	FiatCurrency string
	// Amount, when HasAmount, selects ads with MinAmount <= Amount <=
	// MaxAmount (kopecks).
	Amount    int64
	HasAmount bool
	// PaymentMethod, when set, selects ads that accept it (compared
	// case-insensitively).
	PaymentMethod string
	// MaxPaymentDuration, when HasMaxPaymentDuration, selects ads whose
	// PaymentDuration is at most that many minutes.
	MaxPaymentDuration    int64
	HasMaxPaymentDuration bool
	// IsActive selects active (true) or inactive (false) approved ads.
	IsActive bool
	// AuthorNickname, when set, selects the ads of the user with that
	// nickname (compared case-insensitively; a hidden profile matches
	// nothing).
	AuthorNickname string
	// SortBy is one of the Sort constants.
	SortBy string
	// Limit (1 to MaxLimit) and Offset page the result.
	Limit  int
	Offset int
}

// Paging of the list.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	// MaxOffset bounds Offset.
	MaxOffset = 1 << 31
)

// DefaultQuery is the list with no parameter: active ads of both types,
// newest first, the first DefaultLimit.
func DefaultQuery() Query { return Query{IsActive: true, Limit: DefaultLimit} }

// NewAd is what the operator submits to publish an ad.
type NewAd struct {
	UserID       int64
	Type         string
	FiatCurrency string
	ExchangeRate int64
	MinAmount    int64
	MaxAmount    int64
	// RemainingAmount defaults to MaxAmount when nil.
	RemainingAmount *int64
	PaymentMethods  []string
	PaymentDuration int64
	Instructions    string
	IsPlatformAd    bool
}

// Moderation changes an ad's state; nil fields are left as they are.
type Moderation struct {
	IsActive         *bool
	ModerationStatus *string
}
