package market

import (
	"context"
	"slices"
	"time"

	"github.com/predictkit/predictkit/input"
)

// MaxCandles is the most candles one Candles call answers: the newest ones
// of its window. A client pages back by asking again with to set to the
// start of the oldest candle it has.
const MaxCandles = 1500

// Candle is a market's YES price over one interval: the first, highest,
// lowest and last price recorded in it, and the trades on the market
// itself in it. A trade on another market of an exclusive pool moves this
// market's price too, so it counts toward the prices but not toward
// Volume and Trades.
//
// First and last go by the prices' times, and among prices of one time by
// the order they were recorded in. Times and that order agree as long as
// every clock that stamps a market's trades runs forward; keeping the
// times makes a candle the same however it was rolled up when one does
// not (a server's clock stepping back, two servers a little apart).
type Candle struct {
	// Start is the interval's start, aligned to the Unix epoch in UTC.
	Start                  time.Time
	Open, High, Low, Close float64
	// OpenAt and CloseAt are the times of the Open and Close prices.
	OpenAt, CloseAt time.Time
	// Volume is the sum of the trades' amounts (what buyers paid, fees
	// included, and what sellers received), kopecks.
	Volume int64
	Trades int64
}

// Merge folds o, a candle of the same interval whose prices were recorded
// after c's, into c.
func (c *Candle) Merge(o Candle) {
	if o.OpenAt.Before(c.OpenAt) {
		c.Open, c.OpenAt = o.Open, o.OpenAt
	}
	if !o.CloseAt.Before(c.CloseAt) {
		c.Close, c.CloseAt = o.Close, o.CloseAt
	}
	c.High = max(c.High, o.High)
	c.Low = min(c.Low, o.Low)
	c.Volume += o.Volume
	c.Trades += o.Trades
}

// IntervalCandle is one rolled-up candle of a market: Width is its
// interval's, that of one of CandleIntervals.
type IntervalCandle struct {
	MarketID int64
	Width    time.Duration
	Candle
}

// CandleBatch rolls up the price points one write records into a candle
// per market, interval and start, so that a store merges a few rows per
// write rather than one per point. The zero value is ready to use.
type CandleBatch struct {
	rows []IntervalCandle
	// at finds a row by market, width and start (Unix microseconds):
	// a trade on an exclusive pool of 50 markets adds 200 points.
	at map[[3]int64]int
}

// Add records a price point of market marketID at time at. trade says
// the point is that of a trade on the market itself, whose amount counts
// toward the volume; a point a trade on another market of the pool moved
// has trade false and amount 0. Points are added in the order they are
// recorded.
func (b *CandleBatch) Add(marketID int64, at time.Time, price float64, amount int64, trade bool) {
	at = at.UTC()
	c := Candle{Open: price, High: price, Low: price, Close: price, OpenAt: at, CloseAt: at}
	if trade {
		c.Volume, c.Trades = amount, 1
	}
	if b.at == nil {
		b.at = map[[3]int64]int{}
	}
	for _, iv := range CandleIntervals {
		c.Start = FloorTime(at, iv.Width)
		k := [3]int64{marketID, int64(iv.Width), c.Start.UnixMicro()}
		if i, ok := b.at[k]; ok {
			b.rows[i].Merge(c)
			continue
		}
		b.at[k] = len(b.rows)
		b.rows = append(b.rows, IntervalCandle{MarketID: marketID, Width: iv.Width, Candle: c})
	}
}

// Rows returns the candles added, one per market, interval and start, in
// the order each first appeared.
func (b *CandleBatch) Rows() []IntervalCandle { return b.rows }

// RollUpTrades returns the candles of the price points of tes, each
// trade's own point with its amount, the points it moved on the other
// markets of its pool without.
func RollUpTrades(tes []*TradeEffect) []IntervalCandle {
	var b CandleBatch
	for _, te := range tes {
		b.Add(te.Price.MarketID, te.Price.At, te.Price.YesProbability, te.Trade.Amount, true)
		for _, p := range te.PoolPrices {
			b.Add(p.MarketID, p.At, p.YesProbability, 0, false)
		}
	}
	return b.Rows()
}

// FloorTime is the start of the interval of width d that holds t, with
// intervals aligned to the Unix epoch, in UTC.
func FloorTime(t time.Time, d time.Duration) time.Time {
	us, w := t.UnixMicro(), d.Microseconds()
	r := us % w
	if r < 0 {
		r += w
	}
	return time.UnixMicro(us - r).UTC()
}

// ceilTime is the start of the first interval of width d that starts at
// or after t.
func ceilTime(t time.Time, d time.Duration) time.Time {
	f := FloorTime(t, d)
	if f.Before(t) {
		return f.Add(d)
	}
	return f
}

// CandleInterval is a candle width the service answers. Stores keep
// every interval's candles rolled up as trades are written, so that a
// request reads at most MaxCandles stored candles, however many trades
// the market has: a day's candle is one row, not 1440 minutes.
type CandleInterval struct {
	Name  string
	Width time.Duration
	// Window is how far back from `to` a request without `from` reaches;
	// 0 is all time.
	Window time.Duration
}

// CandleIntervals are the intervals the service answers.
var CandleIntervals = []CandleInterval{
	{Name: "1m", Width: time.Minute, Window: 24 * time.Hour},
	{Name: "5m", Width: 5 * time.Minute, Window: 7 * 24 * time.Hour},
	{Name: "1h", Width: time.Hour, Window: 30 * 24 * time.Hour},
	{Name: "1d", Width: 24 * time.Hour},
}

// CandleQuery asks for a market's candles of one interval that start in
// [From, To). A nil To is now; a nil From is To minus the interval's
// Window (all time for 1d).
type CandleQuery struct {
	Interval string
	From, To *time.Time
}

// Candles returns market marketID's candles of q's interval, oldest
// first: only intervals in which the market's price was recorded at
// least once, each whole (a candle is in the window when its start is),
// at most the MaxCandles newest of the window. Checks in order:
// *input.Error (an unknown interval, from not before to),
// ErrMarketNotFound.
func (s *Service) Candles(ctx context.Context, marketID int64, q CandleQuery) ([]Candle, error) {
	i := slices.IndexFunc(CandleIntervals, func(iv CandleInterval) bool { return iv.Name == q.Interval })
	if i < 0 {
		return nil, input.Invalid("interval", "must be one of 1m, 5m, 1h, 1d")
	}
	iv := CandleIntervals[i]
	to := s.Now()
	if q.To != nil {
		to = q.To.UTC()
	}
	from := time.Unix(0, 0).UTC()
	switch {
	case q.From != nil:
		from = q.From.UTC()
	case iv.Window > 0:
		from = to.Add(-iv.Window)
	}
	if !from.Before(to) {
		return nil, input.Invalid("from", "must be before to")
	}
	m, err := s.store.Market(ctx, marketID)
	if err != nil {
		return nil, err
	}
	cs, err := s.store.Candles(ctx, marketID, iv.Width, from, to, MaxCandles)
	if err != nil {
		return nil, err
	}
	slices.Reverse(cs)
	if cs == nil {
		cs = []Candle{}
	}
	if len(cs) > 0 {
		// The market's first candle opens where the market opened, not at
		// its first trade's price: that trade is the candle's first move.
		first := !from.After(m.CreatedAt)
		if !first {
			before, err := s.store.Candles(ctx, marketID, iv.Width, time.Unix(0, 0).UTC(), cs[0].Start, 1)
			if err != nil {
				return nil, err
			}
			first = len(before) == 0
		}
		// A market is created before its first trade; a store whose
		// trades are recorded earlier than the market (imported history,
		// a test's clock) keeps its first trade's price.
		if first && !m.CreatedAt.After(firstPriceAt(cs[0], iv.Width)) {
			cs[0].openAt(OpeningProbability(m), m.CreatedAt)
		}
	}
	return cs, nil
}

// OpeningProbability is the YES price market m opened at: that of its
// opening quantities (for an answer of an exclusive pool, the binary
// price of its opening quantities, within 0.125/b of the pool's).
func OpeningProbability(m *Market) float64 {
	return (&Market{B: m.B, QYes: m.Q0Yes, QNo: m.Q0No}).YesProbability()
}

// firstPriceAt is when c's first price was recorded (its start when the
// store keeps no time).
func firstPriceAt(c Candle, width time.Duration) time.Time {
	if c.OpenAt.IsZero() {
		return c.Start.Add(width)
	}
	return c.OpenAt
}

// openAt makes c open at price p, recorded at at (before any of its own
// prices): the range widens to hold it.
func (c *Candle) openAt(p float64, at time.Time) {
	c.Open, c.OpenAt = p, at
	c.High, c.Low = max(c.High, p), min(c.Low, p)
}
