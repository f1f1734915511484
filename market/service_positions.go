package market

import (
	"context"
	"math"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/lmsr"
)

// OpenPosition is an open position valued at the current price.
type OpenPosition struct {
	*PositionDetail
	// Value is what selling the whole position now would pay (after the
	// margin); 0 when the market maker would refuse the sale.
	Value         int64
	UnrealizedPnL int64
}

// OpenPositions returns user id's open positions, valued now.
func (s *Service) OpenPositions(ctx context.Context, userID int64) ([]OpenPosition, error) {
	ps, err := s.store.OpenPositions(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]OpenPosition, len(ps))
	pools := map[int64]*Pool{}
	for i, p := range ps {
		var v int64
		if m := p.Market; m != nil && m.Exclusive && !m.Resolved {
			pool, ok := pools[m.PoolID]
			if !ok {
				if pool, err = s.store.Pool(ctx, m.PoolID); err != nil {
					return nil, err
				}
				pools[m.PoolID] = pool
			}
			v = PoolValue(pool, m, p.Side, p.Shares)
		} else {
			v = Value(p.Market, p.Side, p.Shares)
		}
		out[i] = OpenPosition{PositionDetail: p, Value: v, UnrealizedPnL: v - p.CostBasis}
	}
	return out, nil
}

// PoolValue is Value for market m of exclusive pool p: what selling
// shares of side would pay now, priced by the whole pool.
func PoolValue(p *Pool, m *Market, side Side, shares int64) int64 {
	if m == nil || shares <= 0 || m.Resolved {
		return 0
	}
	ex, i, err := PoolPricer(p, m.ID)
	if err != nil {
		return 0
	}
	q, err := ex.SellShares(i, side, shares, m.Margin)
	if err != nil {
		return 0
	}
	return q.Payout
}

// Value is what selling shares of side on m would pay now, after the
// margin; 0 if the market is resolved or the market maker would refuse.
func Value(m *Market, side Side, shares int64) int64 {
	if m == nil || shares <= 0 || m.Resolved {
		return 0
	}
	q, err := lmsr.SellShares(m.Pricer(), side, shares, m.Margin)
	if err != nil {
		return 0
	}
	return q.Payout
}

// ClosedPage is a page of closed positions.
type ClosedPage struct {
	Positions []*PositionDetail
	HasMore   bool
}

// ClosedPositions returns a page of user id's closed positions, most
// recently closed first. limit is capped at MaxPageSize; limit <= 0 means
// ClosedInProfile.
func (s *Service) ClosedPositions(ctx context.Context, userID int64, limit, offset int) (*ClosedPage, error) {
	if limit <= 0 {
		limit = ClosedInProfile
	}
	limit = min(limit, MaxPageSize)
	offset = max(offset, 0)
	ps, err := s.store.ClosedPositions(ctx, userID, limit+1, offset)
	if err != nil {
		return nil, err
	}
	page := &ClosedPage{Positions: ps}
	if len(ps) > limit {
		page.Positions, page.HasMore = ps[:limit], true
	}
	return page, nil
}

// Stats are a user's closed-position figures for the profile.
type Stats struct {
	TotalPredictions int64
	BiggestWin       int64
}

// Stats returns user id's closed-position figures.
func (s *Service) Stats(ctx context.Context, userID int64) (Stats, error) {
	n, w, err := s.store.ClosedStats(ctx, userID)
	return Stats{TotalPredictions: n, BiggestWin: w}, err
}

// LatestTrades returns the public feed: the LatestTradesLimit most recent
// trades on markets of active events, newest first.
func (s *Service) LatestTrades(ctx context.Context) ([]*FeedTrade, error) {
	return s.store.LatestTrades(ctx, LatestTradesLimit)
}

// History returns market id's price history, oldest first: the opening
// price, then one point per trade (the most recent PriceHistoryLimit).
// ErrMarketNotFound.
func (s *Service) History(ctx context.Context, marketID int64) ([]PricePoint, error) {
	m, err := s.store.Market(ctx, marketID)
	if err != nil {
		return nil, err
	}
	pts, err := s.store.PriceHistory(ctx, marketID, PriceHistoryLimit)
	if err != nil {
		return nil, err
	}
	if len(pts) < PriceHistoryLimit {
		open := PricePoint{MarketID: m.ID, At: m.CreatedAt, QYes: m.Q0Yes, QNo: m.Q0No}
		open.YesProbability = OpeningProbability(m)
		if m.Exclusive {
			p, err := s.store.Pool(ctx, m.PoolID)
			if err != nil {
				return nil, err
			}
			for _, pm := range p.Markets {
				pm.QYes = pm.Q0Yes
			}
			if ex, i, err := PoolPricer(p, m.ID); err == nil {
				open.YesProbability = ex.Price(i)
			}
		}
		pts = append([]PricePoint{open}, pts...)
	}
	return pts, nil
}

// ChartPoint is a point of the PnL chart: cumulative realized P&L, kopecks.
type ChartPoint struct {
	At  time.Time
	PnL int64
}

// PnLChart returns user id's cumulative realized P&L: a point at
// registration with 0, then one per realization, oldest first. A hidden
// profile is account.ErrUserNotFound to everyone but its owner (viewerID 0
// is an anonymous viewer).
func (s *Service) PnLChart(ctx context.Context, viewerID, userID int64) ([]ChartPoint, error) {
	u, err := s.users.User(ctx, userID)
	if err != nil {
		return nil, err
	}
	if u.ProfileHidden && viewerID != userID {
		return nil, account.ErrUserNotFound
	}
	evs, err := s.store.PnLEvents(ctx, userID)
	if err != nil {
		return nil, err
	}
	pts := make([]ChartPoint, 0, len(evs)+1)
	pts = append(pts, ChartPoint{At: u.CreatedAt})
	var sum int64
	for _, e := range evs {
		// Realized P&L is bounded by the money a user can hold or lose,
		// which the ledger bounds; should it pass int64 still, the chart
		// stops at the end of the range instead of wrapping.
		var ok bool
		if sum, ok = account.Add(sum, e.Delta); !ok {
			sum = math.MaxInt64
			if e.Delta < 0 {
				sum = math.MinInt64
			}
		}
		pts = append(pts, ChartPoint{At: e.At, PnL: sum})
	}
	return pts, nil
}
