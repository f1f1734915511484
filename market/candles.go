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

// CandleSpans are the widths of the candles a store keeps rolled up as
// trades are written: the finest interval the API offers, and one coarse
// enough that a day's candle reads 24 rows instead of 1440.
var CandleSpans = []time.Duration{time.Minute, time.Hour}

// SpanCandle is one rolled-up candle of a market: Span is its width, one
// of CandleSpans.
type SpanCandle struct {
	MarketID int64
	Span     time.Duration
	Candle
}

// CandleBatch rolls up the price points one write records into a candle
// per market, span and interval, so that a store merges a few rows per
// write rather than one per point. The zero value is ready to use.
type CandleBatch struct {
	rows []SpanCandle
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
	for _, span := range CandleSpans {
		c.Start = FloorTime(at, span)
		// A write holds a few markets and a minute or two: a linear
		// search beats a map.
		i := slices.IndexFunc(b.rows, func(r SpanCandle) bool {
			return r.MarketID == marketID && r.Span == span && r.Start.Equal(c.Start)
		})
		if i < 0 {
			b.rows = append(b.rows, SpanCandle{MarketID: marketID, Span: span, Candle: c})
			continue
		}
		b.rows[i].Merge(c)
	}
}

// Rows returns the candles added, one per market, span and interval, in
// the order each first appeared.
func (b *CandleBatch) Rows() []SpanCandle { return b.rows }

// RollUpTrades returns the candles of the price points of tes, each
// trade's own point with its amount, the points it moved on the other
// markets of its pool without.
func RollUpTrades(tes []*TradeEffect) []SpanCandle {
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

// CandleInterval is a candle width the service answers.
type CandleInterval struct {
	Name  string
	Width time.Duration
	// Window is how far back from `to` a request without `from` reaches;
	// 0 is all time.
	Window time.Duration
	// source is the rolled-up span (one of CandleSpans) the candles are
	// built from: the widest that divides Width.
	source time.Duration
}

// CandleIntervals are the intervals the service answers.
var CandleIntervals = []CandleInterval{
	{Name: "1m", Width: time.Minute, Window: 24 * time.Hour, source: time.Minute},
	{Name: "5m", Width: 5 * time.Minute, Window: 7 * 24 * time.Hour, source: time.Minute},
	{Name: "1h", Width: time.Hour, Window: 30 * 24 * time.Hour, source: time.Hour},
	{Name: "1d", Width: 24 * time.Hour, source: time.Hour},
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
	if _, err := s.store.Market(ctx, marketID); err != nil {
		return nil, err
	}
	// The candles that start in [from, to) are made of the rolled-up
	// ones from the first start at or after from to the first at or
	// after to.
	lo, hi := ceilTime(from, iv.Width), ceilTime(to, iv.Width)
	if !lo.Before(hi) {
		return []Candle{}, nil
	}
	// A candle holds at most per rolled-up ones, so the newest MaxCandles
	// candles are made of at most MaxCandles*per of the newest rows.
	per := int(iv.Width / iv.source)
	rows, err := s.store.Candles(ctx, marketID, iv.source, lo, hi, MaxCandles*per)
	if err != nil {
		return nil, err
	}
	return groupCandles(rows, iv.Width, MaxCandles), nil
}

// groupCandles merges rows, newest first, into candles of width w, and
// returns the newest n of them, oldest first. Rows beyond those n may
// have been cut off by the store's limit, so the candle they would have
// joined is dropped rather than answered incomplete.
func groupCandles(rows []Candle, w time.Duration, n int) []Candle {
	out := make([]Candle, 0, min(len(rows), n))
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		start := FloorTime(r.Start, w)
		if k := len(out) - 1; k >= 0 && out[k].Start.Equal(start) {
			out[k].Merge(r)
			continue
		}
		c := r
		c.Start = start
		out = append(out, c)
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
