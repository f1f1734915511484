package memory

// The trade log's reads: the public feed of latest trades, a market's
// price history and trades, and a user's trades.

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// LatestTrades implements market.Store.
func (s *Store) LatestTrades(_ context.Context, limit int) ([]*market.FeedTrade, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*market.FeedTrade{}
	for i := len(s.trades) - 1; i >= 0 && len(out) < limit; i-- {
		t := s.trades[i]
		m := s.markets[t.MarketID]
		ev := s.events[m.EventID]
		if !ev.IsActive {
			continue
		}
		u := s.users[t.UserID].u
		ft := &market.FeedTrade{Trade: *t, TraderName: u.DisplayName(), EventName: ev.Name, MarketName: m.Name}
		if !u.ProfileHidden {
			ft.TraderAvatar = cloneStr(u.AvatarURL)
		}
		out = append(out, ft)
	}
	return out, nil
}

// PriceHistory implements market.Store.
func (s *Store) PriceHistory(_ context.Context, marketID int64, limit int) ([]market.PricePoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pts := s.prices[marketID]
	if len(pts) > limit {
		pts = pts[len(pts)-limit:]
	}
	return slices.Clone(pts), nil
}

// Trades implements market.Store.
func (s *Store) Trades(_ context.Context, marketID int64) ([]*market.Trade, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*market.Trade{}
	for _, t := range s.tradesOf[marketID] {
		c := *t
		out = append(out, &c)
	}
	return out, nil
}

// TradesAfter implements market.Store: a binary search in the market's
// trades, which are kept in id order, then one step per trade returned.
func (s *Store) TradesAfter(_ context.Context, marketID, after int64, limit int) ([]*market.Trade, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.tradesOf[marketID]
	i, found := slices.BinarySearchFunc(ts, after, func(t *market.Trade, id int64) int { return cmp.Compare(t.ID, id) })
	if found {
		i++
	}
	out := []*market.Trade{}
	for ; i < len(ts) && len(out) < limit; i++ {
		c := *ts[i]
		out = append(out, &c)
	}
	return out, nil
}

// UserTrades implements market.Store: a binary search in the user's
// trades, which are kept in id order, then one step per trade returned.
func (s *Store) UserTrades(_ context.Context, userID, before int64, limit int) ([]*market.Trade, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.tradesBy[userID]
	end := len(ts)
	if before > 0 {
		end, _ = slices.BinarySearchFunc(ts, before, func(t *market.Trade, id int64) int { return cmp.Compare(t.ID, id) })
	}
	out := []*market.Trade{}
	for i := end - 1; i >= 0 && len(out) < limit; i-- {
		c := *ts[i]
		out = append(out, &c)
	}
	return out, nil
}

// Escrows implements market.Store.
func (s *Store) Escrows(context.Context) ([]market.EscrowState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Sorted(maps.Keys(s.markets))
	out := make([]market.EscrowState, 0, len(ids))
	for _, id := range ids {
		out = append(out, market.EscrowState{Market: *s.market(id), Balance: s.balance(account.EscrowAccount(id))})
	}
	return out, nil
}
