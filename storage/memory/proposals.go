package memory

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// ProposeEvent implements market.Store: the ante is checked against the
// proposer's balance before anything is written, then the event is
// created with no subsidy and the ante posted to its ante account.
func (s *Store) ProposeEvent(_ context.Context, e *market.Event) error {
	if e.Proposal == nil {
		return errors.New("memory: propose event: no proposal")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.unknownTag(e.Tags); err != nil {
		return err
	}
	ante := e.Proposal.Ante
	if ante > 0 {
		// The event's ante account is new, so only the proposer's balance
		// can refuse the posting.
		if err := s.check([]account.Posting{{From: account.UserAccount(e.CreatorID), To: account.AnteAccount(0), Amount: ante}}); err != nil {
			return err
		}
	}
	n := 0
	for _, p := range e.Pools {
		n += len(p.Markets)
	}
	e.Status = market.StatusProposed
	if err := s.createTagged(e, make([]int64, n)); err != nil {
		return err
	}
	s.events[e.ID].Proposal = cloneProposal(e.Proposal)
	if ante > 0 {
		return s.post([]account.Posting{{From: account.UserAccount(e.CreatorID), To: account.AnteAccount(e.ID), Amount: ante, Reason: market.ReasonAnte, At: e.CreatedAt}})
	}
	return nil
}

// cloneProposal is a deep copy of p (nil for nil).
func cloneProposal(p *market.Proposal) *market.Proposal {
	if p == nil {
		return nil
	}
	c := *p
	c.Subsidies = slices.Clone(p.Subsidies)
	c.DecidedAt = clonePtr(p.DecidedAt)
	c.Reason = strings.Clone(p.Reason)
	return &c
}

// DecideProposal implements market.Store: the store's one lock is the
// event's, the creator's and the markets'.
func (s *Store) DecideProposal(_ context.Context, id int64, decide func(*market.Event, market.CreatorLoad) (*market.ProposalOutcome, error)) (*market.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev, ok := s.events[id]
	if !ok {
		return nil, market.ErrEventNotFound
	}
	out, err := decide(s.event(id), s.creatorLoad(ev.CreatorID))
	if err != nil {
		return nil, err
	}
	if err := s.post(out.Postings); err != nil {
		return nil, err
	}
	ev.Status, ev.IsActive = strings.Clone(out.Status), out.Active
	p := cloneProposal(ev.Proposal)
	if p == nil {
		p = &market.Proposal{}
	}
	at := out.At
	p.DecidedAt, p.Reason, p.Refunded = &at, strings.Clone(out.Reason), out.Refunded
	ev.Proposal = p
	for _, pid := range s.poolIDs[id] {
		for _, mid := range s.marketIDs[pid] {
			s.markets[mid].Unapproved = out.Status != market.StatusApproved
		}
	}
	n := s.addNotification(out.Notification)
	s.logChanges(social.NotificationChange(n))
	return s.event(id), nil
}

// EventsByStatus implements market.Store.
func (s *Store) EventsByStatus(_ context.Context, status string, limit, offset int) ([]*market.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int64
	for id, e := range s.events {
		if e.Status == status {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	out := []*market.Event{}
	for _, id := range page(ids, limit, offset) {
		out = append(out, s.event(id))
	}
	return out, nil
}

// clonePtr is a copy of *p in a new variable (nil for nil).
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
