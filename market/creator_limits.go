package market

import (
	"context"
	"errors"
	"fmt"

	"github.com/predictkit/predictkit/account"
)

// CreatorRules bound what one creator may do. The zero value bounds
// nothing: no limit on open events or subsidy, and creators may trade on
// their own events.
type CreatorRules struct {
	// MaxOpenEvents is the most open events one creator may have at a
	// time (see CreatorLoad); 0 is no limit.
	MaxOpenEvents int64
	// MaxSubsidyKopecks is the most subsidy the platform's treasury may
	// have put up for the market makers of one creator's open events
	// together; 0 is no limit.
	MaxSubsidyKopecks int64
	// NoOwnTrades refuses, with ErrForbidden, a user's trade on a market
	// of an event the user created.
	NoOwnTrades bool
}

// CreatorLoad is what a creator has open, as a store reads it under the
// lock of CreateEventLimited.
type CreatorLoad struct {
	// OpenEvents counts the creator's approved events that are not fully
	// resolved: those with at least one unresolved market, hidden
	// (inactive) ones included, since their escrows still hold the
	// treasury's money. Proposals awaiting the operator and rejected ones
	// do not count: they hold no subsidy (see Service.Approve).
	OpenEvents int64
	// SubsidyKopecks is the sum of the subsidy postings (reason
	// "subsidy") from the treasury to the escrows of the markets of those
	// events.
	SubsidyKopecks int64
}

// ErrCreatorLimit: a new event would take its creator past one of the
// CreatorRules' limits. The error is a *CreatorLimitError.
var ErrCreatorLimit = errors.New("market: creator limit")

// The limits a CreatorLimitError names.
const (
	LimitOpenEvents = "open_events"
	LimitSubsidy    = "subsidy_kopecks"
)

// CreatorLimitError says which limit a new event would pass, and by how
// much.
type CreatorLimitError struct {
	// Limit is LimitOpenEvents or LimitSubsidy.
	Limit string
	// Max is the limit; Current what the creator has open now; Adding
	// what the refused event would have added (1 event, or its subsidy).
	Max, Current, Adding int64
}

func (e *CreatorLimitError) Error() string { return "market: creator limit: " + e.Detail() }

// Detail is the refusal as the creator may read it.
func (e *CreatorLimitError) Detail() string {
	if e.Limit == LimitOpenEvents {
		return fmt.Sprintf("%s: a creator may have at most %d open events and has %d", e.Limit, e.Max, e.Current)
	}
	return fmt.Sprintf("%s: a creator's open events may hold at most %d kopecks of subsidy; they hold %d and this event would add %d",
		e.Limit, e.Max, e.Current, e.Adding)
}

// Is makes a *CreatorLimitError match ErrCreatorLimit.
func (e *CreatorLimitError) Is(target error) bool { return target == ErrCreatorLimit }

// limited reports whether r bounds event creation at all.
func (r CreatorRules) limited() bool { return r.MaxOpenEvents > 0 || r.MaxSubsidyKopecks > 0 }

// Check decides whether a creator with load may open one more event that
// escrows subsidy: nil, or a *CreatorLimitError.
func (r CreatorRules) Check(load CreatorLoad, subsidy int64) error {
	if r.MaxOpenEvents > 0 && load.OpenEvents >= r.MaxOpenEvents {
		return &CreatorLimitError{Limit: LimitOpenEvents, Max: r.MaxOpenEvents, Current: load.OpenEvents, Adding: 1}
	}
	if r.MaxSubsidyKopecks > 0 {
		if total, ok := account.Add(load.SubsidyKopecks, subsidy); !ok || total > r.MaxSubsidyKopecks {
			return &CreatorLimitError{Limit: LimitSubsidy, Max: r.MaxSubsidyKopecks, Current: load.SubsidyKopecks, Adding: subsidy}
		}
	}
	return nil
}

// storeEvent stores e, under s.Creators' limits when it has any.
func (s *Service) storeEvent(ctx context.Context, e *Event, subsidies []int64, escrow int64) error {
	rules := s.Creators
	if !rules.limited() {
		return s.store.CreateEvent(ctx, e, subsidies)
	}
	return s.store.CreateEventLimited(ctx, e, subsidies, func(load CreatorLoad) error {
		return rules.Check(load, escrow)
	})
}

// checkOwnTrade refuses r when s.Creators forbids creators' trades on
// their own events and r's user created the event of market marketID.
// Partner orders are not checked: they trade for the partner's
// sub-accounts, which cannot sign in and so never create events.
func (s *Service) checkOwnTrade(ctx context.Context, marketID int64, r Request) error {
	if !s.Creators.NoOwnTrades || r.Partner != nil || r.UserID == 0 {
		return nil
	}
	creator, err := s.creatorOf(ctx, marketID)
	if err != nil {
		return err
	}
	if creator == r.UserID {
		return fmt.Errorf("%w: a creator may not trade on their own event", ErrForbidden)
	}
	return nil
}

// creatorOf returns the creator of market id's event. An event's creator
// never changes, so the answer is kept. ErrMarketNotFound.
func (s *Service) creatorOf(ctx context.Context, id int64) (int64, error) {
	if v, ok := s.creators.Load(id); ok {
		return v.(int64), nil
	}
	m, err := s.store.Market(ctx, id)
	if err != nil {
		return 0, err
	}
	e, err := s.store.Event(ctx, m.EventID)
	if err != nil {
		return 0, err
	}
	s.creators.Store(id, e.CreatorID)
	return e.CreatorID, nil
}
