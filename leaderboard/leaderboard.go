// Package leaderboard ranks traders by realized profit or by volume, over
// all time or the last 30 or 7 days.
//
// The board is a maintained aggregate, never a scan of the trades per
// request: the stores keep per-user, per-day buckets of realized PnL,
// volume and number of trades. The memory store updates them as it
// trades; PostgreSQL updates them from the change log, outside the
// trade's transaction (Consumer), so the board trails the trades by the
// time the consumer takes to catch up, usually milliseconds.
//
// What counts (see docs/leaderboard.md):
//   - pnl is the realized profit and loss, the sum of the user's
//     realizations as the PnL chart adds them: a sale realizes its payout
//     less the cost basis it removed, a settlement its payout (a void its
//     refund) less the basis left;
//   - volume is the LMSR cost of the user's buys plus the LMSR refund of
//     their sales, fees not included, as a market's volume counts them;
//   - trades is the number of the user's buys and sales.
//
// A period counts what happened on its UTC days: "7d" is today and the
// six days before, "30d" today and the 29 before. Partner sub-accounts
// are not ranked.
package leaderboard

import (
	"context"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/input"
)

// Period is the span a board covers.
type Period string

// The periods.
const (
	AllTime Period = "all"
	Month   Period = "30d"
	Week    Period = "7d"
)

// Days is how many UTC days, today included, p covers; 0 for all time.
func (p Period) Days() int {
	switch p {
	case Month:
		return 30
	case Week:
		return 7
	}
	return 0
}

// By is what a board ranks by.
type By string

// The rankings.
const (
	ByPnL    By = "pnl"
	ByVolume By = "volume"
)

// The limits of a board's length.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// Query asks for a board.
type Query struct {
	Period Period
	By     By
	Limit  int
	// Today is the UTC day the period ends with (midnight).
	Today time.Time
}

// Since is the first day q counts, and false for all time.
func (q Query) Since() (time.Time, bool) {
	d := q.Period.Days()
	if d == 0 {
		return time.Time{}, false
	}
	return q.Today.AddDate(0, 0, 1-d), true
}

// Row is a trader on a board, as a store returns it: the figures of the
// period and the trader's profile.
type Row struct {
	UserID    int64
	Name      string
	AvatarURL *string
	// Hidden: the trader's profile is hidden.
	Hidden bool
	// Level is the trader's level (package growth).
	Level               int
	PnL, Volume, Trades int64
}

// Entry is a ranked line of a board, as the public sees it: a hidden
// profile has no UserID (0), the name "Anonymous" and no avatar.
type Entry struct {
	Rank                int
	UserID              int64
	Name                string
	AvatarURL           *string
	Level               int
	PnL, Volume, Trades int64
}

// Store keeps the board's buckets (storage/memory, storage/postgres).
type Store interface {
	// Leaderboard returns the first q.Limit traders of q.Period with
	// anything in it, by q.By descending, ties by user id ascending.
	Leaderboard(ctx context.Context, q Query) ([]Row, error)
	// LeaderboardTotals returns user userID's all-time figures (PnL,
	// Volume and Trades; zero for a user who never traded), as the
	// all-time board counts them. The profile's fields are not set.
	LeaderboardTotals(ctx context.Context, userID int64) (Row, error)
}

// Service answers boards.
type Service struct {
	store Store
	// Now is the clock; the period ends with its UTC day.
	Now func() time.Time
}

// NewService returns a Service on store.
func NewService(store Store) *Service {
	return &Service{store: store, Now: time.Now}
}

// Parse reads a board's query parameters as the API takes them: period
// (all, 30d, 7d; default all), by (pnl, volume; default pnl) and limit (1
// to MaxLimit; default DefaultLimit). An empty value is the default;
// anything else that is not valid is an *input.Error.
func Parse(period, by, limit string) (Query, error) {
	q := Query{Period: AllTime, By: ByPnL, Limit: DefaultLimit}
	switch p := Period(period); p {
	case "":
	case AllTime, Month, Week:
		q.Period = p
	default:
		return Query{}, input.Invalid("period", "must be all, 30d or 7d")
	}
	switch b := By(by); b {
	case "":
	case ByPnL, ByVolume:
		q.By = b
	default:
		return Query{}, input.Invalid("by", "must be pnl or volume")
	}
	if limit != "" {
		n, err := strconv.ParseInt(limit, 10, 64)
		if err != nil {
			return Query{}, input.Invalid("limit", "must be an integer from 1 to "+strconv.Itoa(MaxLimit))
		}
		if err := input.InRange("limit", n, 1, MaxLimit); err != nil {
			return Query{}, err
		}
		q.Limit = int(n)
	}
	return q, nil
}

// Day is the UTC day of t, at midnight: the bucket t counts in.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Top returns the board q asks for (Parse), its period ending today.
func (s *Service) Top(ctx context.Context, q Query) ([]Entry, error) {
	if q.Period.Days() == 0 && q.Period != AllTime {
		return nil, input.Invalid("period", "must be all, 30d or 7d")
	}
	if q.By != ByPnL && q.By != ByVolume {
		return nil, input.Invalid("by", "must be pnl or volume")
	}
	if err := input.InRange("limit", int64(q.Limit), 1, MaxLimit); err != nil {
		return nil, err
	}
	q.Today = Day(s.Now())
	rows, err := s.store.Leaderboard(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		e := Entry{Rank: i + 1, UserID: r.UserID, Name: r.Name, AvatarURL: r.AvatarURL, Level: r.Level, PnL: r.PnL, Volume: r.Volume, Trades: r.Trades}
		if r.Hidden {
			e.UserID, e.Name, e.AvatarURL = 0, "Anonymous", nil
		}
		out[i] = e
	}
	return out, nil
}

// Totals returns user userID's all-time figures as the board counts them
// (the public profile's volume, docs/people-and-following.md). On a store
// whose board follows the change log they trail the trades as the board
// does.
func (s *Service) Totals(ctx context.Context, userID int64) (Row, error) {
	r, err := s.store.LeaderboardTotals(ctx, userID)
	r.UserID = userID
	return r, err
}
