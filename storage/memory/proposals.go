package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// The challenge window's proposals and disputes (market.ProposalStore).

// proposalRec is a proposal with what only the store keeps.
type proposalRec struct {
	p        market.Proposal // Disputes left nil
	disputes []market.Dispute
	// claimed is when a worker's claim ends; zero when never claimed.
	claimed time.Time
}

// proposals holds the proposals by the market the creator closed, made
// on first use.
type proposals struct {
	byMarket map[int64]*proposalRec
	byPool   map[int64]int64 // exclusive pool → the market of its proposal
}

func (s *Store) props() *proposals {
	if s.prop == nil {
		s.prop = &proposals{byMarket: map[int64]*proposalRec{}, byPool: map[int64]int64{}}
	}
	return s.prop
}

// covering is the proposal that covers market m, or nil. Callers hold
// s.mu.
func (s *Store) covering(m *market.Market) *proposalRec {
	ps := s.props()
	if r := ps.byMarket[m.ID]; r != nil {
		return r
	}
	if m.Exclusive {
		if id, ok := ps.byPool[m.PoolID]; ok {
			return ps.byMarket[id]
		}
	}
	return nil
}

// scope is the markets a proposal on m covers: m, or its exclusive
// pool's, ascending.
func (s *Store) scope(m *market.Market) []int64 {
	if !m.Exclusive {
		return []int64{m.ID}
	}
	return slices.Sorted(slices.Values(s.marketIDs[m.PoolID]))
}

func cloneProposal(r *proposalRec) *market.Proposal {
	p := r.p
	p.Outcome, p.Final, p.MarketName = strings.Clone(p.Outcome), strings.Clone(p.Final), strings.Clone(p.MarketName)
	return &p
}

// Propose implements market.ProposalStore.
func (s *Store) Propose(_ context.Context, p *market.Proposal, notes func(*market.Proposal, []int64) []social.Notification) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.markets[p.MarketID]
	if !ok {
		return market.ErrMarketNotFound
	}
	ids := s.scope(m)
	for _, id := range ids {
		if s.markets[id].Resolved {
			return market.ErrResolved
		}
	}
	if s.covering(m) != nil {
		return market.ErrResolved
	}
	p.PoolID, p.EventID, p.Exclusive, p.MarketName = m.PoolID, m.EventID, m.Exclusive, strings.Clone(m.Name)
	if p.CreatedAt.IsZero() {
		p.CreatedAt = s.now()
	}
	p.Outcome = strings.Clone(p.Outcome)
	p.Disputed, p.Done, p.Final, p.Disputes = false, false, "", nil
	held := map[int64]bool{}
	for _, id := range ids {
		c := *s.markets[id]
		c.Paused = true
		s.markets[id] = &c
		for k := range s.open {
			if k.market == id {
				held[k.user] = true
			}
		}
	}
	ps := s.props()
	ps.byMarket[p.MarketID] = &proposalRec{p: *p}
	if m.Exclusive {
		ps.byPool[m.PoolID] = p.MarketID
	}
	holders := slices.Sorted(func(yield func(int64) bool) {
		for u := range held {
			if !yield(u) {
				return
			}
		}
	})
	for _, n := range notes(p, holders) {
		s.logChanges(social.NotificationChange(s.addNotification(n)))
	}
	return nil
}

// ProposalOf implements market.ProposalStore.
func (s *Store) ProposalOf(_ context.Context, marketID int64) (*market.Proposal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.markets[marketID]
	if !ok {
		return nil, nil
	}
	if r := s.covering(m); r != nil {
		return cloneProposal(r), nil
	}
	return nil, nil
}

// AddDispute implements market.ProposalStore.
func (s *Store) AddDispute(_ context.Context, d *market.Dispute, check func(market.DisputeCheck) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.markets[d.MarketID]
	if !ok {
		return market.ErrMarketNotFound
	}
	c := market.DisputeCheck{}
	r := s.covering(m)
	if r != nil {
		c.Proposal = cloneProposal(r)
		c.Claimed = !r.claimed.IsZero()
		for _, id := range s.scope(m) {
			for k := range s.open {
				if k.market == id && k.user == d.UserID {
					c.Holder = true
				}
			}
		}
		for _, x := range r.disputes {
			c.Repeat = c.Repeat || x.UserID == d.UserID
		}
	}
	if err := check(c); err != nil {
		return err
	}
	d.MarketID = r.p.MarketID
	if d.CreatedAt.IsZero() {
		d.CreatedAt = s.now()
	}
	if d.Bond > 0 {
		ps := []account.Posting{{From: account.UserAccount(d.UserID), To: market.BondAccount(r.p.MarketID), Amount: d.Bond, Reason: "dispute_bond", At: d.CreatedAt}}
		before := s.balancesOf(ps)
		if err := s.post(ps); err != nil {
			return err
		}
		s.logChanges(account.BalanceChanges(before, ps, "", d.CreatedAt)...)
	}
	x := *d
	x.Reason = strings.Clone(d.Reason)
	r.disputes = append(r.disputes, x)
	r.p.Disputed = true
	return nil
}

// ClaimProposals implements market.ProposalStore.
func (s *Store) ClaimProposals(_ context.Context, now time.Time, lease time.Duration, limit int) ([]*market.Proposal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []*proposalRec
	for _, r := range s.props().byMarket {
		if r.p.Done || r.claimed.After(now) {
			continue
		}
		resolved := s.markets[r.p.MarketID].Resolved
		if resolved || !r.p.Disputed && !r.p.ChallengeUntil.After(now) {
			due = append(due, r)
		}
	}
	slices.SortFunc(due, func(a, b *proposalRec) int {
		return cmp.Or(a.p.ChallengeUntil.Compare(b.p.ChallengeUntil), cmp.Compare(a.p.MarketID, b.p.MarketID))
	})
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]*market.Proposal, len(due))
	for i, r := range due {
		r.claimed = now.Add(lease)
		out[i] = cloneProposal(r)
	}
	return out, nil
}

// FinishProposal implements market.ProposalStore.
func (s *Store) FinishProposal(_ context.Context, marketID int64, decide func(*market.Proposal, []market.Dispute, string, time.Time) ([]account.Posting, []social.Notification, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.props().byMarket[marketID]
	if r == nil || r.p.Done {
		return nil
	}
	m := s.markets[marketID]
	if !m.Resolved {
		return market.ErrNotResolved
	}
	final := m.Outcome()
	ps, ns, err := decide(cloneProposal(r), slices.Clone(r.disputes), final, s.now())
	if err != nil {
		return err
	}
	before := s.balancesOf(ps)
	if err := s.post(ps); err != nil {
		return err
	}
	s.logChanges(account.BalanceChanges(before, ps, "", s.now())...)
	for _, n := range ns {
		s.logChanges(social.NotificationChange(s.addNotification(n)))
	}
	r.p.Done, r.p.Final = true, final
	return nil
}

// DisputedProposals implements market.ProposalStore.
func (s *Store) DisputedProposals(context.Context) ([]*market.Proposal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*market.Proposal
	for _, r := range s.props().byMarket {
		if r.p.Disputed && !r.p.Done {
			p := cloneProposal(r)
			for _, d := range r.disputes {
				d.Reason = strings.Clone(d.Reason)
				p.Disputes = append(p.Disputes, d)
			}
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *market.Proposal) int {
		return cmp.Or(a.ChallengeUntil.Compare(b.ChallengeUntil), cmp.Compare(a.MarketID, b.MarketID))
	})
	return out, nil
}
