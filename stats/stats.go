// Package stats is the platform's statistics: per UTC day, the trading
// volume, fees, trades, active traders, new users, deposits, withdrawals
// and open interest, and an overview with totals and today's top markets.
//
// The figures are kept as aggregates by the stores (a change-log
// consumer on PostgreSQL, the writes themselves in memory), so that a
// year of days is read from a few hundred rows, never from the trades.
// The Service reads them, validates the ranges it is asked for, and fills
// the days on which nothing happened.
package stats

import (
	"context"
	"errors"
	"time"

	"github.com/predictkit/predictkit/input"
)

// DateLayout is how a day is written in the API: 2026-12-01.
const DateLayout = time.DateOnly

// The bounds of a range of days.
const (
	// MaxDays is the most days one Daily call covers: a leap year.
	MaxDays = 366
	// DefaultDays is the range Daily covers when given no bounds: the last
	// 30 days, today included.
	DefaultDays = 30
	// TopMarkets is how many markets the overview ranks.
	TopMarkets = 10
)

// ErrForbidden: the caller may not read the statistics (not a stats
// viewer, not the operator).
var ErrForbidden = errors.New("stats: forbidden")

// Day is one UTC day's figures. Money is in kopecks.
type Day struct {
	// Date is the day's midnight, UTC.
	Date time.Time
	// Volume is the sum of the day's trades' cost (buys and sells).
	Volume int64
	// Fees is the sum of the day's trades' fees.
	Fees int64
	// Trades is how many trades were made.
	Trades int64
	// ActiveTraders is how many distinct users traded.
	ActiveTraders int64
	// NewUsers is how many users registered (partner sub-accounts are not
	// registrations).
	NewUsers int64
	// Deposits is the kopecks of the deposits credited.
	Deposits int64
	// Withdrawals is the kopecks of the withdrawals paid.
	Withdrawals int64
	// OpenInterest is the traders' money in unresolved markets at the end
	// of the day: the buys' cost (net of their fees) less the sells'
	// payouts, a market's leaving it when the market resolves or is voided.
	OpenInterest int64
}

// Totals are the figures of all time; OpenInterest is the current one.
type Totals struct {
	Volume, Fees, Trades int64
	// Traders is how many distinct users ever traded.
	Traders int64
	// Users is how many users registered (no partner sub-accounts).
	Users                 int64
	Deposits, Withdrawals int64
	OpenInterest          int64
}

// TopMarket is a market's figures of one day.
type TopMarket struct {
	MarketID, EventID     int64
	EventName, MarketName string
	Volume, Trades        int64
}

// Overview is the statistics' summary.
type Overview struct {
	AsOf   time.Time
	Totals Totals
	Today  Day
	// TopMarkets are the markets with the most volume today, most first,
	// at most TopMarkets of them.
	TopMarkets []TopMarket
}

// Store is where the aggregates are read.
type Store interface {
	// StatsDays returns the days from from to to (inclusive, UTC
	// midnights) on which something was counted, in order, each with its
	// end-of-day open interest, and the open interest at the end of the
	// day before from.
	StatsDays(ctx context.Context, from, to time.Time) (openBefore int64, days []Day, err error)
	// StatsTotals returns the figures of all time.
	StatsTotals(ctx context.Context) (Totals, error)
	// StatsTopMarkets returns the markets with the most volume on day,
	// most first (ties by market id), at most limit of them.
	StatsTopMarkets(ctx context.Context, day time.Time, limit int) ([]TopMarket, error)
}

// Applier is a store whose aggregates follow the change log: each call
// applies the entries after its cursor, up to about limit of them, and
// moves the cursor in the same transaction.
type Applier interface {
	ApplyStats(ctx context.Context, limit int) (int, error)
}

// Service reads the statistics.
type Service struct {
	store Store
	// Now is the clock whose UTC day is today (default time.Now).
	Now func() time.Time
}

// NewService returns a Service reading store.
func NewService(store Store) *Service {
	return &Service{store: store, Now: time.Now}
}

// DayOf is the UTC day of t, as its midnight.
func DayOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// ParseRange reads a range of days as the API takes them: from and to
// are YYYY-MM-DD (UTC days, inclusive). An empty to is today, an empty
// from DefaultDays days ending with to. A bad date, a from after to or a
// range of more than MaxDays days is an *input.Error.
func ParseRange(from, to string, today time.Time) (start, end time.Time, err error) {
	end = DayOf(today)
	if to != "" {
		if end, err = parseDay("to", to); err != nil {
			return
		}
	}
	start = end.AddDate(0, 0, -(DefaultDays - 1))
	if from != "" {
		if start, err = parseDay("from", from); err != nil {
			return
		}
	}
	switch {
	case start.After(end):
		err = &input.Error{Field: "from", Reason: "must not be after to"}
	case Days(start, end) > MaxDays:
		err = &input.Error{Field: "to", Reason: "the range must not be over 366 days"}
	}
	return
}

func parseDay(field, s string) (time.Time, error) {
	t, err := time.Parse(DateLayout, s)
	if err != nil || t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, &input.Error{Field: field, Reason: "must be a date YYYY-MM-DD"}
	}
	return t, nil
}

// Days is how many days from..to covers, both included.
func Days(from, to time.Time) int {
	return int(DayOf(to).Sub(DayOf(from)).Hours()/24) + 1
}

// Daily returns every day of the range from..to (see ParseRange), zeros
// where nothing happened and the open interest carried forward.
func (s *Service) Daily(ctx context.Context, from, to string) ([]Day, error) {
	start, end, err := ParseRange(from, to, s.Now())
	if err != nil {
		return nil, err
	}
	return s.days(ctx, start, end)
}

func (s *Service) days(ctx context.Context, start, end time.Time) ([]Day, error) {
	open, got, err := s.store.StatsDays(ctx, start, end)
	if err != nil {
		return nil, err
	}
	return Fill(start, end, open, got), nil
}

// Fill returns every day of start..end: the days of got (in order) where
// there is one, else a day of zeros whose open interest is the one
// before it (openBefore for the first).
func Fill(start, end time.Time, openBefore int64, got []Day) []Day {
	out := make([]Day, 0, Days(start, end))
	i := 0
	for d := DayOf(start); !d.After(end); d = d.AddDate(0, 0, 1) {
		for i < len(got) && got[i].Date.Before(d) {
			i++
		}
		if i < len(got) && got[i].Date.Equal(d) {
			day := got[i]
			day.Date = d
			out = append(out, day)
			openBefore = day.OpenInterest
			continue
		}
		out = append(out, Day{Date: d, OpenInterest: openBefore})
	}
	return out
}

// Overview returns the totals, today's figures and today's top markets.
func (s *Service) Overview(ctx context.Context) (Overview, error) {
	now := s.Now()
	today := DayOf(now)
	totals, err := s.store.StatsTotals(ctx)
	if err != nil {
		return Overview{}, err
	}
	days, err := s.days(ctx, today, today)
	if err != nil {
		return Overview{}, err
	}
	top, err := s.store.StatsTopMarkets(ctx, today, TopMarkets)
	if err != nil {
		return Overview{}, err
	}
	if top == nil {
		top = []TopMarket{}
	}
	return Overview{AsOf: now.UTC(), Totals: totals, Today: days[0], TopMarkets: top}, nil
}
