package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// EditEvent implements market.Store. The store's one lock serializes it
// with every trade: a trade either ran before (and edit.Decide sees it)
// or finds the replaced markets gone.
func (s *Store) EditEvent(_ context.Context, edit market.EventEdit) (*market.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev, ok := s.events[edit.EventID]
	if !ok {
		return nil, market.ErrEventNotFound
	}
	cur := s.event(edit.EventID)
	traded := false
	var old []int64 // the event's markets, ascending
	for _, p := range cur.Pools {
		for _, m := range p.Markets {
			old = append(old, m.ID)
			traded = traded || len(s.tradesOf[m.ID]) > 0
		}
	}
	slices.Sort(old)
	if err := edit.Decide(cur, traded); err != nil {
		return nil, err
	}
	if edit.Tags != nil {
		if err := s.unknownTag(*edit.Tags); err != nil {
			return nil, err
		}
	}
	if edit.Pools != nil {
		if err := s.replacePools(ev, old, edit); err != nil {
			return nil, err
		}
	}
	if edit.Name != nil {
		ev.Name = strings.Clone(*edit.Name)
	}
	if edit.NameRu != nil {
		ev.NameRu = strings.Clone(*edit.NameRu)
	}
	if edit.Tags != nil {
		ev.Tags = cloneStrings(*edit.Tags)
	}
	return s.event(edit.EventID), nil
}

// replacePools replaces the pools of event ev, whose markets are old, by
// edit.Pools (see market.Store.EditEvent); the caller holds s.mu. Every
// check runs before anything is written.
func (s *Store) replacePools(ev *market.Event, old []int64, edit market.EventEdit) error {
	n := 0
	for _, p := range edit.Pools {
		n += len(p.Markets)
	}
	if len(edit.Subsidies) != n {
		return fmt.Errorf("memory: edit event: %d subsidies for %d markets", len(edit.Subsidies), n)
	}
	now := s.now()
	var ps []account.Posting
	for _, id := range old {
		if b := s.balance(account.EscrowAccount(id)); b > 0 {
			ps = append(ps, account.Posting{From: account.EscrowAccount(id), To: account.Treasury, Amount: b, Reason: market.ReasonSubsidyRefund, At: now})
		}
	}
	if edit.Check != nil {
		// The creator's load without this event: its pools left out.
		saved := s.poolIDs[ev.ID]
		delete(s.poolIDs, ev.ID)
		load := s.creatorLoad(ev.CreatorID)
		s.poolIDs[ev.ID] = saved
		if err := edit.Check(load); err != nil {
			return err
		}
	}
	// Ids first, as PostgreSQL takes them from its sequences.
	i := 0
	for _, p := range edit.Pools {
		p.ID, p.EventID = s.next("pool"), ev.ID
		for _, m := range p.Markets {
			m.ID, m.PoolID, m.EventID, m.CreatedAt = s.next("market"), p.ID, ev.ID, now
			if sub := edit.Subsidies[i]; sub > 0 {
				ps = append(ps, account.Posting{From: account.Treasury, To: account.EscrowAccount(m.ID), Amount: sub, Reason: "subsidy", At: now})
			} else if sub < 0 {
				return fmt.Errorf("memory: edit event: negative subsidy %d: %w", sub, account.ErrInvalidAmount)
			}
			i++
		}
	}
	if err := s.check(ps); err != nil {
		return err
	}
	for _, pid := range s.poolIDs[ev.ID] {
		for _, mid := range s.marketIDs[pid] {
			delete(s.markets, mid)
		}
		delete(s.marketIDs, pid)
		delete(s.pools, pid)
	}
	s.poolIDs[ev.ID] = nil
	for _, p := range edit.Pools {
		pc := *p
		pc.Name, pc.NameRu, pc.Rules, pc.RulesRu = strings.Clone(p.Name), strings.Clone(p.NameRu), strings.Clone(p.Rules), strings.Clone(p.RulesRu)
		pc.Markets, pc.WonSide = nil, nil
		s.pools[p.ID] = &pc
		s.poolIDs[ev.ID] = append(s.poolIDs[ev.ID], p.ID)
		for _, m := range p.Markets {
			mc := *m
			mc.Name, mc.NameRu, mc.YesName, mc.NoName = strings.Clone(m.Name), strings.Clone(m.NameRu), strings.Clone(m.YesName), strings.Clone(m.NoName)
			s.markets[m.ID] = &mc
			s.marketIDs[p.ID] = append(s.marketIDs[p.ID], m.ID)
		}
	}
	return s.post(ps) // checked above: cannot fail
}

// AddAmendment implements market.Store.
func (s *Store) AddAmendment(_ context.Context, a *market.Amendment, note social.Notification) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.events[a.EventID]; !ok {
		return market.ErrEventNotFound
	}
	a.ID = s.next("amendment")
	a.CreatedAt = a.CreatedAt.UTC()
	if s.amends == nil {
		s.amends = map[int64][]market.Amendment{}
	}
	kept := *a
	kept.Text, kept.TextRu = strings.Clone(a.Text), strings.Clone(a.TextRu)
	s.amends[a.EventID] = append(s.amends[a.EventID], kept)

	// Every holder of an open position on an unresolved market of the
	// event and every follower of the event, once, in ascending id.
	holders := map[int64]bool{}
	for k := range s.open {
		if m := s.markets[k.market]; m != nil && m.EventID == a.EventID && !m.Resolved {
			holders[k.user] = true
		}
	}
	for _, u := range s.followersOf(a.EventID) { // told once, holder or not
		holders[u] = true
	}
	d := &note.Data
	d.EventNameRu, d.ExcerptRu = strings.Clone(d.EventNameRu), strings.Clone(d.ExcerptRu)
	for _, u := range slices.Sorted(maps.Keys(holders)) {
		n := note
		n.UserID, n.CreatedAt = u, a.CreatedAt
		s.logChanges(social.NotificationChange(s.addNotification(n)))
	}
	return nil
}
