package market

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
)

// propose records the creator's close of market m with settlement st as
// a proposal that becomes final after s.Challenge (see Proposal).
// ErrResolved when m (or its pool) is resolved or proposed already;
// *input.Error for NO on a market of an exclusive pool, as a close.
func (s *Service) propose(ctx context.Context, m *Market, st Settlement, creator int64) error {
	if m.Exclusive && !st.Void && st.Won != Yes {
		return input.Invalid("won_side", "a market of an exclusive pool resolves with YES, which resolves every other market of the pool NO, or VOID, which voids the pool")
	}
	now := s.Now()
	p := &Proposal{MarketID: m.ID, Outcome: st.outcome(), By: creator, ChallengeUntil: now.Add(s.Challenge).Truncate(time.Microsecond), CreatedAt: now}
	return s.store.Propose(ctx, p, ProposalNotes)
}

// ProposalNotes are the resolution_proposed notifications of proposal p
// to holders.
func ProposalNotes(p *Proposal, holders []int64) []social.Notification {
	ns := make([]social.Notification, 0, len(holders))
	for _, u := range holders {
		ns = append(ns, social.Notification{UserID: u, Type: social.TypeResolutionProposed, RelatedID: p.EventID, RelatedType: social.RelatedEvent, CreatedAt: p.CreatedAt,
			Data: social.NotificationData{MarketName: p.MarketName, Won: p.Outcome, Until: p.ChallengeUntil.UTC().Format(time.RFC3339)}})
	}
	return ns
}

// ProposalOf returns the proposal that covers market id, done or not;
// nil when there is none.
func (s *Service) ProposalOf(ctx context.Context, id int64) (*Proposal, error) {
	return s.store.ProposalOf(ctx, id)
}

// Dispute challenges the proposal that covers market marketID for user
// userID, holding s.DisputeBond from the user's balance until the
// operator decides. Checks in order: *input.Error (reason empty or
// longer than MaxDisputeReasonLen), ErrMarketNotFound, ErrNoProposal
// (none, or settled), ErrChallengeOver, ErrNotHolder,
// ErrAlreadyDisputed, account.ErrInsufficientFunds.
func (s *Service) Dispute(ctx context.Context, userID, marketID int64, reason string) (*Dispute, error) {
	r, err := checkText(input.MultilineText, "reason", reason, true, MaxDisputeReasonLen)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.Market(ctx, marketID); err != nil {
		return nil, err
	}
	now := s.Now()
	d := &Dispute{MarketID: marketID, UserID: userID, Reason: r, Bond: s.bond(), CreatedAt: now}
	err = s.store.AddDispute(ctx, d, func(c DisputeCheck) error {
		switch p := c.Proposal; {
		case p == nil || p.Done:
			return ErrNoProposal
		case c.Claimed || !now.Before(p.ChallengeUntil):
			return ErrChallengeOver
		case !c.Holder:
			return ErrNotHolder
		case c.Repeat:
			return ErrAlreadyDisputed
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// bond is the configured dispute bond.
func (s *Service) bond() int64 {
	if s.DisputeBond > 0 {
		return s.DisputeBond
	}
	return 0
}

// DisputedProposals is the operator's queue: disputed proposals waiting
// for a decision, with their disputes.
func (s *Service) DisputedProposals(ctx context.Context) ([]*Proposal, error) {
	return s.store.DisputedProposals(ctx)
}

// SettleDue claims up to limit due proposals for lease and ends each: an
// undisputed one past its deadline settles with its proposed outcome
// (once: a settled market answers ErrResolved, which is fine), then the
// bonds of any disputes are returned or kept. It returns how many it
// ended; a proposal it fails on stays claimed until the lease passes,
// and the next call after that takes it again.
func (s *Service) SettleDue(ctx context.Context, lease time.Duration, limit int) (int, error) {
	ps, err := s.store.ClaimProposals(ctx, s.Now(), lease, limit)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, p := range ps {
		if err := s.endProposal(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("proposal of market %d: %w", p.MarketID, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// endProposal settles claimed proposal p if its market is not resolved
// (an undisputed proposal past its deadline) and finishes it.
func (s *Service) endProposal(ctx context.Context, p *Proposal) error {
	m, err := s.store.Market(ctx, p.MarketID)
	if err != nil {
		return err
	}
	if !m.Resolved && !p.Disputed {
		st, err := ParseSettlement(p.Outcome, ResolvedByCreator)
		if err != nil {
			return err
		}
		if err := s.settle(ctx, m, st); err != nil && !errors.Is(err, ErrResolved) {
			return err
		}
	}
	return s.store.FinishProposal(ctx, p.MarketID, DecideBonds)
}

// finishProposalOf finishes the proposal that covers market id, if any,
// after the operator resolved it. An error here leaves the proposal to
// the worker (SettleDue claims proposals of resolved markets), so it is
// not the operator's: the resolution stands.
func (s *Service) finishProposalOf(ctx context.Context, id int64) error {
	p, err := s.store.ProposalOf(ctx, id)
	if err != nil || p == nil || p.Done {
		return nil
	}
	_ = s.store.FinishProposal(ctx, p.MarketID, DecideBonds)
	return nil
}
