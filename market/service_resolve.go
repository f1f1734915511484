package market

import (
	"context"
	"errors"
	"fmt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
)

// Close resolves a market for the creator of its event, with the outcome
// wonSide: "YES" or "NO" (the winning side), or "VOID". Positions are
// settled exactly once (see Settlement). Checks in order:
// ErrMarketNotFound (also when the ids do not belong together),
// ErrForbidden (caller is not the event's creator), *input.Error (bad
// wonSide, or NO on a market of an exclusive pool), ErrResolved (also
// while a proposal covers the market). On a market of an exclusive pool,
// YES or VOID resolves the whole pool (see settle). With s.Challenge set
// it proposes the outcome instead (proposal.go).
func (s *Service) Close(ctx context.Context, callerID, eventID, poolID, marketID int64, wonSide string) error {
	m, err := s.store.Market(ctx, marketID)
	if err != nil {
		return err
	}
	if m.PoolID != poolID || m.EventID != eventID {
		return ErrMarketNotFound
	}
	e, err := s.store.Event(ctx, eventID)
	if errors.Is(err, ErrEventNotFound) {
		return ErrMarketNotFound
	} else if err != nil {
		return err
	}
	if e.CreatorID != callerID {
		return ErrForbidden
	}
	st, err := ParseSettlement(wonSide, ResolvedByCreator)
	if err != nil {
		return err
	}
	if s.Challenge > 0 {
		return s.proposeResolution(ctx, m, st, callerID)
	}
	// A proposal made while the window was on still stands: only its
	// deadline or the operator ends it.
	if p, err := s.store.ProposalOf(ctx, m.ID); err != nil {
		return err
	} else if p != nil && !p.Done {
		return ErrResolved
	}
	return s.settle(ctx, m, st)
}

// Resolve resolves any market for the operator, as Close does for a
// creator: for a market whose creator is gone, or to get ahead of a wrong
// resolution. The market records that the operator resolved it. Checks in
// order: *input.Error (bad wonSide), ErrMarketNotFound, *input.Error (NO
// on a market of an exclusive pool), ErrResolved.
func (s *Service) Resolve(ctx context.Context, marketID int64, wonSide string) error {
	st, err := ParseSettlement(wonSide, ResolvedByOperator)
	if err != nil {
		return err
	}
	m, err := s.store.Market(ctx, marketID)
	if err != nil {
		return err
	}
	if err := s.settle(ctx, m, st); err != nil {
		return err
	}
	return s.finishProposalOf(ctx, m.ID)
}

// settle resolves market m as st says. A market of an exclusive pool
// resolves its whole pool: YES on it resolves every other market NO, and
// VOID voids them all; NO alone names no winner and is invalid input.
func (s *Service) settle(ctx context.Context, m *Market, st Settlement) error {
	if m.Unapproved {
		return ErrNotApproved
	}
	if !m.Exclusive {
		return s.store.Settle(ctx, m.ID, st)
	}
	if !st.Void && st.Won != Yes {
		return input.Invalid("won_side", "a market of an exclusive pool resolves with YES, which resolves every other market of the pool NO, or VOID, which voids the pool")
	}
	ps := PoolSettlement{Void: st.Void, By: st.By}
	if !st.Void {
		ps.Winner = m.ID
	}
	return s.store.SettlePool(ctx, m.PoolID, ps)
}

// AuditEscrows checks that every market's escrow covers the payout of its
// larger side (or, once resolved, is empty) and returns the problems found.
// An exclusive pool has one escrow, its first market's: it must cover
// the payout of whichever market wins, the largest q_yes − q0_yes of the
// pool (see docs/exclusive-pools.md), and the escrows of its other markets
// stay empty.
func (s *Service) AuditEscrows(ctx context.Context) ([]string, error) {
	es, err := s.store.Escrows(ctx)
	if err != nil {
		return nil, err
	}
	return AuditEscrows(es), nil
}

// AuditEscrows is the audit of Service.AuditEscrows on escrow states es.
func AuditEscrows(es []EscrowState) []string {
	var problems []string
	type pool struct {
		lead, held int64
		need       int64
		resolved   bool
		escrows    []EscrowState
	}
	var pools map[int64]*pool
	var poolOrder []int64
	for _, e := range es {
		m := e.Market
		if m.Exclusive {
			if pools == nil {
				pools = map[int64]*pool{}
			}
			p := pools[m.PoolID]
			if p == nil {
				p = &pool{lead: m.ID, resolved: true}
				pools[m.PoolID] = p
				poolOrder = append(poolOrder, m.PoolID)
			}
			p.lead = min(p.lead, m.ID)
			p.held, _ = account.Add(p.held, e.Balance)
			p.need = max(p.need, m.Outstanding(Yes))
			p.resolved = p.resolved && m.Resolved
			p.escrows = append(p.escrows, e)
			continue
		}
		if m.Unapproved && e.Balance != 0 {
			problems = append(problems, fmt.Sprintf("market %d: its event is not approved but its escrow holds %d", m.ID, e.Balance))
			continue
		}
		if m.Settling {
			// Its holders are being paid, chunk by chunk, from an escrow
			// that covered them all when the settlement began; the
			// market is held to an empty escrow once it is resolved.
			continue
		}
		if m.Resolved {
			if e.Balance != 0 {
				problems = append(problems, fmt.Sprintf("market %d: resolved but escrow holds %d", m.ID, e.Balance))
			}
			continue
		}
		need := max(m.Outstanding(Yes), m.Outstanding(No))
		if e.Balance < need {
			problems = append(problems, fmt.Sprintf("market %d: escrow %d does not cover %d", m.ID, e.Balance, need))
		}
	}
	for _, id := range poolOrder {
		p := pools[id]
		for _, e := range p.escrows {
			if m := e.Market; m.ID != p.lead && e.Balance != 0 {
				problems = append(problems, fmt.Sprintf("market %d: of exclusive pool %d, whose escrow is market %d's, but its own holds %d", m.ID, id, p.lead, e.Balance))
			}
		}
		switch {
		case p.resolved && p.held != 0:
			problems = append(problems, fmt.Sprintf("exclusive pool %d: resolved but its escrow holds %d", id, p.held))
		case !p.resolved && p.held < p.need:
			problems = append(problems, fmt.Sprintf("exclusive pool %d: escrow %d does not cover %d, the payout of its largest outcome", id, p.held, p.need))
		}
	}
	return problems
}
