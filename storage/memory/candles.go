package memory

import (
	"context"
	"slices"
	"time"

	"github.com/predictkit/predictkit/market"
)

// candleKey names a market's rolled-up candles of one interval, by its
// width.
type candleKey struct {
	market int64
	width  time.Duration
}

// rollUp merges the price points of a write's trades into the market's
// candles of every interval. The candles of a key are kept in start order;
// a write's points are nearly always in the newest candle or a new one
// after it, so a write costs O(1), and a point from a clock that stepped
// back costs a binary search and an insertion.
func (s *Store) rollUp(tes []*market.TradeEffect) {
	rows := market.RollUpTrades(tes)
	if len(rows) == 0 {
		return
	}
	if s.candles == nil {
		s.candles = map[candleKey][]market.Candle{}
	}
	for _, r := range rows {
		k := candleKey{r.MarketID, r.Width}
		cs := s.candles[k]
		if n := len(cs); n == 0 || cs[n-1].Start.Before(r.Start) {
			s.candles[k] = append(cs, r.Candle)
			continue
		}
		i, found := slices.BinarySearchFunc(cs, r.Start, func(c market.Candle, t time.Time) int { return c.Start.Compare(t) })
		if found {
			cs[i].Merge(r.Candle)
			continue
		}
		s.candles[k] = slices.Insert(cs, i, r.Candle)
	}
}

// Candles implements market.Store.
func (s *Store) Candles(_ context.Context, marketID int64, width time.Duration, from, to time.Time, limit int) ([]market.Candle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.candles[candleKey{marketID, width}]
	byStart := func(c market.Candle, t time.Time) int { return c.Start.Compare(t) }
	lo, _ := slices.BinarySearchFunc(cs, from, byStart)
	hi, _ := slices.BinarySearchFunc(cs, to, byStart)
	out := make([]market.Candle, 0, max(0, min(hi-lo, limit)))
	for i := hi - 1; i >= lo && len(out) < limit; i-- {
		out = append(out, cs[i])
	}
	return out, nil
}
