package market

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
)

// An event's creator may edit it until its first trade (EditEvent), and
// may amend it, before and after, with a dated note every holder is told
// of (AddAmendment). Names and rules never change after the first trade:
// an amendment is added beside them, never in their place.

// Errors of edits.
var (
	// ErrEventTraded: the event has had a trade (on any of its markets,
	// partner bets included), so it can no longer be edited.
	ErrEventTraded = errors.New("market: event traded")
	// ErrEventResolved: a market of the event has been resolved (or
	// voided), so it can no longer be edited.
	ErrEventResolved = errors.New("market: event resolved")
)

// MaxAmendmentLen is the longest an amendment's text may be, in
// characters, in each language.
const MaxAmendmentLen = 2000

// ReasonSubsidyRefund is the reason of the postings that return a
// replaced market's escrow to the treasury.
const ReasonSubsidyRefund = "subsidy_refund"

// Amendment is a dated note its creator added to an event.
type Amendment struct {
	ID        int64
	EventID   int64
	Text      string
	TextRu    string
	CreatedAt time.Time
}

// EventPatch is what a creator changes in an event before its first
// trade. A nil field is left as it is; a field given replaces the
// event's: Tags its whole list, Pools its whole list of pools, whose
// markets open afresh from the patch (new ids, the old markets' escrows
// back to the treasury, the new subsidies escrowed).
type EventPatch struct {
	Name   *string
	NameRu *string
	Tags   *[]string
	Pools  *[]NewPool
}

// EventEdit is an edit as the service checked it, for the store to
// write (Store.EditEvent).
type EventEdit struct {
	EventID int64
	// Name and NameRu, when not nil, replace the event's names.
	Name, NameRu *string
	// Tags, when not nil, replace the event's tags; each must name a tag
	// (*UnknownTagError, and nothing is written).
	Tags *[]string
	// Pools, when not nil, replace the event's pools and markets;
	// Subsidies are the new markets' subsidies, as CreateEvent's.
	Pools     []*Pool
	Subsidies []int64
	// Decide is called with the event as locked (its markets locked as
	// trades lock them) and whether any of its markets has a trade; its
	// error refuses the edit and nothing is written.
	Decide func(e *Event, traded bool) error
	// Check, when not nil and Pools are replaced, is called with the
	// creator's load without this event (its old markets gone, its new
	// ones not yet there), after the creator's lock, as
	// CreateEventLimited calls its check; its error refuses the edit.
	Check func(CreatorLoad) error
}

// EditEvent changes event eventID of creator callerID before its first
// trade, as patch says (see EventPatch), and returns it as written.
// Checks in order: ErrEventNotFound, ErrForbidden (callerID did not
// create it), *input.Error (as CreateEvent's, and a patch that changes
// nothing), ErrEventTraded, ErrEventResolved (also while a resolution
// is proposed), ErrNotApproved (a proposal), *input.Error (a tag no
// tag has, found by the store), ErrCreatorLimit (the new pools' subsidy
// past s.Creators' limits).
func (s *Service) EditEvent(ctx context.Context, callerID, eventID int64, patch EventPatch) (*Event, error) {
	cur, err := s.store.Event(ctx, eventID)
	if err != nil {
		return nil, err
	}
	if cur.CreatorID != callerID {
		return nil, ErrForbidden
	}
	edit := EventEdit{EventID: eventID}
	if patch.Name == nil && patch.NameRu == nil && patch.Tags == nil && patch.Pools == nil {
		return nil, input.Invalid("body", "give at least one of name, name_ru, tags, pools")
	}
	if patch.Name != nil {
		v, err := text("name", *patch.Name, true, MaxNameLen)
		if err != nil {
			return nil, err
		}
		edit.Name = &v
	}
	if patch.NameRu != nil {
		v, err := text("name_ru", *patch.NameRu, false, MaxNameLen)
		if err != nil {
			return nil, err
		}
		edit.NameRu = &v
	}
	var tags []string
	if patch.Tags != nil {
		if tags, err = checkEventTags(*patch.Tags); err != nil {
			return nil, err
		}
		edit.Tags = &tags
	}
	var escrow int64
	if patch.Pools != nil {
		o, err := openPools(s.Now(), *patch.Pools)
		if err != nil {
			return nil, err
		}
		edit.Pools, edit.Subsidies, escrow = o.pools, o.subsidies, o.escrow
		if rules := s.Creators; rules.limited() {
			edit.Check = func(load CreatorLoad) error { return rules.Check(load, escrow) }
		}
	}
	edit.Decide = func(e *Event, traded bool) error {
		switch {
		case e.CreatorID != callerID:
			return ErrForbidden
		case traded:
			return ErrEventTraded
		case e.Status != StatusApproved:
			// A proposal's pools wait, unsubsidized, for the operator's
			// decision on them as proposed.
			return ErrNotApproved
		}
		for _, p := range e.Pools {
			for _, m := range p.Markets {
				// A paused market has a proposed resolution (the
				// challenge window), which names it.
				if m.Resolved || m.Paused || m.Settling {
					return ErrEventResolved
				}
			}
		}
		return nil
	}
	e, err := s.store.EditEvent(ctx, edit)
	if err != nil {
		if errors.Is(err, account.ErrBalanceLimit) {
			return nil, input.Invalid("pools", fmt.Sprintf("the platform's treasury cannot escrow another %d kopecks: its subsidies would pass their bound of %d kopecks; lower lmsr_b_kopecks or hold fewer markets", escrow, int64(account.MaxExposure)))
		}
		return nil, tagRefusal(err, tags)
	}
	for _, p := range e.Pools {
		PricePool(p)
	}
	return e, nil
}

// AddAmendment adds a dated note to event eventID (its creator's, before
// or after the first trade) and tells every user with an open position
// on a market of the event (an event_amended notification, in the same
// transaction). Checks in order: ErrEventNotFound, ErrForbidden,
// *input.Error (text required; both texts at most MaxAmendmentLen
// characters, line breaks allowed).
func (s *Service) AddAmendment(ctx context.Context, callerID, eventID int64, txt, txtRu string) (*Amendment, error) {
	e, err := s.store.Event(ctx, eventID)
	if err != nil {
		return nil, err
	}
	if e.CreatorID != callerID {
		return nil, ErrForbidden
	}
	a := &Amendment{EventID: eventID, CreatedAt: s.Now()}
	if a.Text, err = checkText(input.MultilineText, "text", txt, true, MaxAmendmentLen); err != nil {
		return nil, err
	}
	if a.TextRu, err = longText("text_ru", txtRu, MaxAmendmentLen); err != nil {
		return nil, err
	}
	note := social.Notification{Type: social.TypeEventAmended, RelatedID: eventID, RelatedType: social.RelatedEvent,
		Data: social.NotificationData{EventName: e.Name, EventNameRu: e.NameRu, Excerpt: a.Text, ExcerptRu: a.TextRu}}
	if err := s.store.AddAmendment(ctx, a, note); err != nil {
		return nil, err
	}
	return a, nil
}
