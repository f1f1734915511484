package memory

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/webhook"
)

// AddAnswer implements market.Store under the store's mutex, which is the
// pool's lock.
func (s *Store) AddAnswer(_ context.Context, poolID int64, decide func(*market.AnswerState) (*market.AnswerEffects, error)) (*market.AnswerEffects, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pools[poolID]
	if !ok {
		return nil, market.ErrPoolNotFound
	}
	ids := slices.Sorted(slices.Values(s.marketIDs[poolID]))
	if len(ids) == 0 {
		return nil, market.ErrPoolNotFound
	}
	escrow := account.EscrowAccount(ids[0])
	st := &market.AnswerState{Escrow: s.balance(escrow), Treasury: s.balance(account.Treasury),
		EventName: s.events[p.EventID].Name, Followers: s.followersOf(p.EventID), MarketID: s.seq["market"] + 1, Now: s.now()}
	inPool := map[int64]bool{}
	for _, id := range ids {
		st.Markets = append(st.Markets, s.market(id))
		inPool[id] = true
	}
	for k, id := range s.open {
		if inPool[k.market] {
			c := *s.positions[id]
			st.Positions = append(st.Positions, &c)
		}
	}
	slices.SortFunc(st.Positions, func(a, b *market.Position) int { return cmpID(a.ID, b.ID) })
	eff, err := decide(st)
	if err != nil {
		return nil, err
	}
	if err := s.check(eff.Postings); err != nil {
		return nil, err
	}
	// The decision took the next id.
	s.next("market")
	nm := *eff.Market
	nm.Price = 0
	nm.Name, nm.NameRu = strings.Clone(nm.Name), strings.Clone(nm.NameRu)
	s.markets[nm.ID] = &nm
	s.marketIDs[poolID] = append(s.marketIDs[poolID], nm.ID)
	for _, m := range eff.Markets {
		c := *m
		c.Price = 0
		c.WinningOutcome, c.ResolvedAt = clonePtr(m.WinningOutcome), clonePtr(m.ResolvedAt)
		s.markets[c.ID] = &c
	}
	// Positions: a changed one may have moved to another market and side
	// (a NO on Other became a YES), so its old open key goes first.
	for _, np := range eff.Positions {
		if np.ID == 0 {
			continue
		}
		old := s.positions[np.ID]
		if k := (openKey{old.UserID, old.MarketID, old.Side}); s.open[k] == old.ID {
			delete(s.open, k)
		}
	}
	for _, np := range eff.Positions {
		if np.ID == 0 {
			np.ID = s.next("position")
			s.byUser[np.UserID] = append(s.byUser[np.UserID], np.ID)
		}
		c := *np
		c.ClosedAt, c.WonSide = clonePtr(np.ClosedAt), clonePtr(np.WonSide)
		s.positions[c.ID] = &c
		if c.Open() {
			s.open[openKey{c.UserID, c.MarketID, c.Side}] = c.ID
		}
	}
	prices := eff.Split.Pool.Prices()
	for i, m := range append(slices.Clone(eff.Markets), eff.Market) {
		if i < len(prices) {
			s.prices[m.ID] = append(s.prices[m.ID], market.PricePoint{MarketID: m.ID, At: st.Now, YesProbability: prices[i]})
		}
	}
	if err := s.post(eff.Postings); err != nil {
		return nil, err // checked above: cannot happen
	}
	for i := range eff.Notifications {
		eff.Notifications[i].ID = s.addNotification(eff.Notifications[i]).ID
	}
	s.logChanges(market.AnswerChanges(eff)...)
	s.queueAnswerWebhooks(nm)
	return eff, nil
}

// queueAnswerWebhooks queues a market.answer_added for each partner with
// a webhook whose users hold open positions in the pool of new market nm.
// Callers hold s.mu.
func (s *Store) queueAnswerWebhooks(nm market.Market) {
	if s.wh == nil || len(s.wh.hooks) == 0 {
		return
	}
	inPool := map[int64]bool{}
	for _, id := range s.marketIDs[nm.PoolID] {
		inPool[id] = true
	}
	partners := map[int64]bool{}
	for k := range s.open {
		if !inPool[k.market] {
			continue
		}
		if u, ok := s.users[k.user]; ok && u.u.PartnerID != 0 {
			if _, hooked := s.wh.hooks[u.u.PartnerID]; hooked {
				partners[u.u.PartnerID] = true
			}
		}
	}
	now := s.now()
	for _, id := range slices.Sorted(maps.Keys(partners)) {
		d := webhook.Delivery{PartnerID: id, Type: webhook.AnswerAdded, MarketID: nm.ID, EventID: nm.EventID,
			CreatedAt: nm.CreatedAt, Status: webhook.Pending, NextAttemptAt: now, ExpiresAt: now.Add(webhook.DefaultWindow)}
		s.addDelivery(&d)
	}
}

func cmpID(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
