package market

import (
	"context"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
)

// The statuses of an event (Event.Status).
const (
	// StatusApproved: a creator's event, or a proposal the operator
	// approved. Only an approved event may be shown and traded.
	StatusApproved = "approved"
	// StatusProposed: a proposal awaiting the operator's decision.
	StatusProposed = "proposed"
	// StatusRejected: a proposal the operator rejected; it stays hidden
	// and untradable for good.
	StatusRejected = "rejected"
)

// ValidStatus reports whether s is an event status.
func ValidStatus(s string) bool {
	return s == StatusApproved || s == StatusProposed || s == StatusRejected
}

// The reasons of a proposal's postings.
const (
	ReasonAnte        = "proposal_ante"         // the proposer's ante, into the event's ante account
	ReasonAnteReturn  = "proposal_ante_return"  // the ante back to the proposer (approval, refunded rejection)
	ReasonAnteForfeit = "proposal_ante_forfeit" // the ante to the platform's treasury (unrefunded rejection)
)

// Notification types of proposals (social.Notification.Type).
const (
	TypeProposalApproved = social.TypeProposalApproved
	TypeProposalRejected = social.TypeProposalRejected
)

// MaxReasonLen is the longest a rejection's reason may be, in characters.
const MaxReasonLen = 1000

// ProposalRules say whether users who are not creators may propose
// events, and what a proposal holds. The zero value allows none.
type ProposalRules struct {
	On bool
	// AnteKopecks is what a proposal holds from its proposer's balance
	// (never the bonus balance) until the operator decides; 0 holds
	// nothing.
	AnteKopecks int64
}

// Proposal is what a proposed event holds beside the event.
type Proposal struct {
	// Ante is what the proposal held from its proposer, kopecks.
	Ante int64
	// Subsidies are what approval posts from the treasury: the
	// subsidies the creation would have posted, in the order of
	// Event.Pools, one per market of a binary pool (in Pool.Markets'
	// order) and one per exclusive pool (to its escrow, its lowest id's
	// market). An edit of a proposal's pools must recompute them.
	Subsidies []int64
	// DecidedAt is when the operator decided; nil while proposed.
	DecidedAt *time.Time
	// Reason is the operator's reason for a rejection.
	Reason string
	// Refunded is set when a rejection gave the ante back.
	Refunded bool
}

// ProposalOutcome is what a decision on a proposal writes (Store.DecideProposal).
type ProposalOutcome struct {
	// Status becomes the event's: StatusApproved or StatusRejected. The
	// event's markets are Unapproved unless it is StatusApproved.
	Status string
	// Active becomes the event's IsActive.
	Active   bool
	Reason   string
	Refunded bool
	At       time.Time
	// Postings: the ante's return or forfeit, and on approval the
	// subsidies. The store checks them (account.Apply) on the balances
	// it locked.
	Postings []account.Posting
	// Notification tells the proposer.
	Notification social.Notification
}

// propose creates in as proposer's proposal: built and checked as a
// creator's event would be, then stored proposed, holding the ante. The
// event is the proposer's: once approved, they may hide, show and
// resolve it as its creator. No subsidy is posted until the operator
// approves it. *input.Error; account.ErrInsufficientFunds when the
// proposer's balance (the bonus balance does not count) is below the ante.
func (s *Service) propose(ctx context.Context, proposer *account.User, in NewEvent) (*Event, error) {
	e, subsidies, escrow, err := s.buildEvent(proposer.ID, in)
	if err != nil {
		return nil, err
	}
	e.Status = StatusProposed
	e.Proposal = &Proposal{Ante: s.Proposals.AnteKopecks, Subsidies: pendingSubsidies(e, subsidies)}
	for _, p := range e.Pools {
		for _, m := range p.Markets {
			m.Unapproved = true
		}
	}
	if err := s.store.ProposeEvent(ctx, e); err != nil {
		return nil, createRefusal(err, escrow, e.Tags)
	}
	return e, nil
}

// pendingSubsidies are what a proposal keeps of the subsidies of its
// markets (subsidies, as buildEvent gives them): one per market of a
// binary pool, and one per exclusive pool (its escrow's), so that an
// answer added to an exclusive pool later changes nothing of them.
func pendingSubsidies(e *Event, subsidies []int64) []int64 {
	out := []int64{}
	i := 0
	for _, p := range e.Pools {
		if p.Exclusive {
			out = append(out, subsidies[i])
			i += len(p.Markets)
			continue
		}
		out = append(out, subsidies[i:i+len(p.Markets)]...)
		i += len(p.Markets)
	}
	return out
}

// Approve approves proposal id for the operator, in one transaction: the
// ante goes back to the proposer, the treasury posts the markets'
// subsidies, the event becomes approved and active (listed), its markets
// tradable, and the proposer is notified. The proposer's creator limits
// apply (s.Creators: the approved event counts as theirs).
// ErrEventNotFound; ErrNotProposed (approved, rejected, or a creator's
// event); ErrCreatorLimit; *input.Error when the treasury cannot escrow
// the subsidies.
func (s *Service) Approve(ctx context.Context, id int64) (*Event, error) {
	now := s.Now()
	rules := s.Creators
	var escrow int64
	e, err := s.store.DecideProposal(ctx, id, func(e *Event, load CreatorLoad) (*ProposalOutcome, error) {
		if e.Status != StatusProposed || e.Proposal == nil {
			return nil, ErrNotProposed
		}
		out := &ProposalOutcome{Status: StatusApproved, Active: true, At: now}
		var sum int64
		post := func(m *Market, sub int64) {
			if sub > 0 {
				out.Postings = append(out.Postings, account.Posting{From: account.Treasury, To: account.EscrowAccount(m.ID), Amount: sub, Reason: "subsidy", At: now})
				sum += sub
			}
		}
		subs := e.Proposal.Subsidies
		next := func() int64 {
			if len(subs) == 0 {
				return 0
			}
			v := subs[0]
			subs = subs[1:]
			return v
		}
		for _, p := range e.Pools {
			if len(p.Markets) == 0 {
				continue
			}
			if p.Exclusive {
				lead := p.Markets[0] // the pool's escrow is its lowest id's
				for _, m := range p.Markets {
					if m.ID < lead.ID {
						lead = m
					}
				}
				post(lead, next())
				continue
			}
			for _, m := range p.Markets {
				post(m, next())
			}
		}
		escrow = sum
		if rules.limited() {
			if err := rules.Check(load, sum); err != nil {
				return nil, err
			}
		}
		if a := e.Proposal.Ante; a > 0 {
			out.Postings = append(out.Postings, account.Posting{From: account.AnteAccount(e.ID), To: account.UserAccount(e.CreatorID), Amount: a, Reason: ReasonAnteReturn, At: now})
		}
		out.Notification = proposalNotification(e, TypeProposalApproved, e.Proposal.Ante, "", now)
		return out, nil
	})
	if err != nil {
		return nil, createRefusal(err, escrow, nil)
	}
	for _, p := range e.Pools {
		PricePool(p)
	}
	return e, nil
}

// Reject rejects proposal id for the operator with reason, in one
// transaction: the event becomes rejected (hidden and untradable for
// good), its ante goes back to the proposer when refund is set, to the
// platform's treasury otherwise, and the proposer is notified. Checks in
// order: *input.Error (reason), ErrEventNotFound, ErrNotProposed.
func (s *Service) Reject(ctx context.Context, id int64, reason string, refund bool) (*Event, error) {
	reason, err := checkText(input.MultilineText, "reason", reason, true, MaxReasonLen)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	e, err := s.store.DecideProposal(ctx, id, func(e *Event, _ CreatorLoad) (*ProposalOutcome, error) {
		if e.Status != StatusProposed || e.Proposal == nil {
			return nil, ErrNotProposed
		}
		out := &ProposalOutcome{Status: StatusRejected, Reason: reason, Refunded: refund, At: now}
		returned := int64(0)
		if a := e.Proposal.Ante; a > 0 {
			to, why := account.Treasury, ReasonAnteForfeit
			if refund {
				to, why, returned = account.UserAccount(e.CreatorID), ReasonAnteReturn, a
			}
			out.Postings = append(out.Postings, account.Posting{From: account.AnteAccount(e.ID), To: to, Amount: a, Reason: why, At: now})
		}
		out.Notification = proposalNotification(e, TypeProposalRejected, returned, reason, now)
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	for _, p := range e.Pools {
		PricePool(p)
	}
	return e, nil
}

// proposalNotification tells e's proposer of the decision typ: Amount is
// the ante returned, Excerpt the reason of a rejection.
func proposalNotification(e *Event, typ string, returned int64, reason string, now time.Time) social.Notification {
	return social.Notification{UserID: e.CreatorID, Type: typ, RelatedID: e.ID, RelatedType: social.RelatedEvent,
		Data: social.NotificationData{EventName: e.Name, Amount: returned, Excerpt: reason}, CreatedAt: now}
}

// EventsByStatus returns the events of status, oldest first (the
// operator's queue of proposals). *input.Error for an unknown status.
func (s *Service) EventsByStatus(ctx context.Context, status string, limit, offset int) ([]*Event, error) {
	if !ValidStatus(status) {
		return nil, input.Invalid("status", "must be proposed, approved or rejected")
	}
	if limit <= 0 {
		limit = DefaultEventsLimit
	}
	es, err := s.store.EventsByStatus(ctx, status, min(limit, MaxPageSize), max(offset, 0))
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		for _, p := range e.Pools {
			PricePool(p)
		}
	}
	return es, nil
}

// Preview checks in exactly as CreateEvent would for user (ErrForbidden,
// *input.Error, an unknown tag included) and returns the event it would
// build, with each market's subsidy in order (see buildEvent) and their
// sum, writing nothing. It does not read the creator's limits or the
// treasury's bound, which the creation checks under its lock.
func (s *Service) Preview(ctx context.Context, user *account.User, in NewEvent) (*Event, []int64, int64, error) {
	if user == nil || !user.IsCreator && !s.Proposals.On {
		return nil, nil, 0, ErrForbidden
	}
	e, subsidies, escrow, err := s.buildEvent(user.ID, in)
	if err != nil {
		return nil, nil, 0, err
	}
	if len(e.Tags) > 0 {
		tags, err := s.store.Tags(ctx)
		if err != nil {
			return nil, nil, 0, err
		}
		known := make(map[string]bool, len(tags))
		for _, t := range tags {
			known[t.Slug] = true
		}
		for _, slug := range e.Tags {
			if !known[slug] {
				return nil, nil, 0, tagRefusal(&UnknownTagError{Slug: slug}, e.Tags)
			}
		}
	}
	if !user.IsCreator {
		e.Status = StatusProposed
	}
	return e, subsidies, escrow, nil
}
