package market_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

func TestFloorTime(t *testing.T) {
	msk := time.FixedZone("MSK", 3*60*60)
	for _, c := range []struct {
		name string
		t    time.Time
		d    time.Duration
		want time.Time
	}{
		{"a time on a boundary is its own start", time.Date(2024, 3, 10, 10, 5, 0, 0, time.UTC), 5 * time.Minute, time.Date(2024, 3, 10, 10, 5, 0, 0, time.UTC)},
		{"a time inside an interval goes back to its start", time.Date(2024, 3, 10, 10, 9, 59, 999_999_000, time.UTC), 5 * time.Minute, time.Date(2024, 3, 10, 10, 5, 0, 0, time.UTC)},
		{"a day starts at midnight UTC whatever the time's zone", time.Date(2024, 3, 11, 1, 0, 0, 0, msk), 24 * time.Hour, time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)},
		{"an hour starts on the hour in UTC", time.Date(2024, 3, 11, 1, 30, 0, 0, msk), time.Hour, time.Date(2024, 3, 10, 22, 0, 0, 0, time.UTC)},
		{"a time before the epoch goes back, not toward the epoch", time.Unix(-90, 0), time.Minute, time.Unix(-120, 0).UTC()},
		{"the epoch is a boundary of every width", time.Unix(0, 0), 24 * time.Hour, time.Unix(0, 0).UTC()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := market.FloorTime(c.t, c.d)
			if !got.Equal(c.want) || got.Location() != time.UTC {
				t.Fatalf("FloorTime(%s, %s) = %s, want %s", c.t, c.d, got, c.want)
			}
		})
	}
}

// candleStore is a market store with one market, id 1, whose rolled-up
// candles are rows (oldest first, per interval width); it records the
// Candles calls.
type candleStore struct {
	market.Store
	rows  map[time.Duration][]market.Candle
	calls []candleCall
}

type candleCall struct {
	width    time.Duration
	from, to time.Time
	limit    int
}

func (s *candleStore) Market(_ context.Context, id int64) (*market.Market, error) {
	if id != 1 {
		return nil, market.ErrMarketNotFound
	}
	return &market.Market{ID: 1}, nil
}

func (s *candleStore) Candles(_ context.Context, _ int64, width time.Duration, from, to time.Time, limit int) ([]market.Candle, error) {
	s.calls = append(s.calls, candleCall{width, from, to, limit})
	var out []market.Candle
	rows := s.rows[width]
	for i := len(rows) - 1; i >= 0 && len(out) < limit; i-- {
		if !rows[i].Start.Before(from) && rows[i].Start.Before(to) {
			out = append(out, rows[i])
		}
	}
	return out, nil
}

func TestCandlesQuery(t *testing.T) {
	now := time.Date(2024, 3, 10, 10, 7, 30, 0, time.UTC)
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	for _, c := range []struct {
		name     string
		market   int64
		q        market.CandleQuery
		wantErr  error
		wantCall candleCall
	}{
		{"an unknown interval is invalid", 1, market.CandleQuery{Interval: "2m"}, input.ErrInvalid, candleCall{}},
		{"no interval is invalid", 1, market.CandleQuery{}, input.ErrInvalid, candleCall{}},
		{"from equal to to is invalid", 1, market.CandleQuery{Interval: "1m", From: at("2024-03-10T09:00:00Z"), To: at("2024-03-10T09:00:00Z")}, input.ErrInvalid, candleCall{}},
		{"from after to is invalid", 1, market.CandleQuery{Interval: "1m", From: at("2024-03-10T09:00:01Z"), To: at("2024-03-10T09:00:00Z")}, input.ErrInvalid, candleCall{}},
		{"a from after now with no to is invalid", 1, market.CandleQuery{Interval: "1h", From: at("2024-03-10T11:00:00Z")}, input.ErrInvalid, candleCall{}},
		{"a bad query is reported before an unknown market", 2, market.CandleQuery{Interval: "1w"}, input.ErrInvalid, candleCall{}},
		{"an unknown market is not found", 2, market.CandleQuery{Interval: "1m"}, market.ErrMarketNotFound, candleCall{}},
		{"1m reads the last 24 hours by default", 1, market.CandleQuery{Interval: "1m"}, nil,
			candleCall{time.Minute, now.Add(-24 * time.Hour), now, market.MaxCandles}},
		{"5m reads the last 7 days by default", 1, market.CandleQuery{Interval: "5m"}, nil,
			candleCall{5 * time.Minute, now.AddDate(0, 0, -7), now, market.MaxCandles}},
		{"1h reads the last 30 days by default", 1, market.CandleQuery{Interval: "1h"}, nil,
			candleCall{time.Hour, now.AddDate(0, 0, -30), now, market.MaxCandles}},
		{"1d reads all time by default", 1, market.CandleQuery{Interval: "1d"}, nil,
			candleCall{24 * time.Hour, time.Unix(0, 0), now, market.MaxCandles}},
		{"a to alone moves the default window back", 1, market.CandleQuery{Interval: "1m", To: at("2024-03-01T00:00:00Z")}, nil,
			candleCall{time.Minute, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), market.MaxCandles}},
		{"from and to in another zone are read as the instants they name", 1, market.CandleQuery{Interval: "1h", From: at("2024-03-10T03:30:00+03:00"), To: at("2024-03-10T05:00:00+03:00")}, nil,
			candleCall{time.Hour, time.Date(2024, 3, 10, 0, 30, 0, 0, time.UTC), time.Date(2024, 3, 10, 2, 0, 0, 0, time.UTC), market.MaxCandles}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := &candleStore{}
			s := market.NewService(store, nil)
			s.Now = func() time.Time { return now }
			cs, err := s.Candles(context.Background(), c.market, c.q)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("error %v, want %v", err, c.wantErr)
			}
			if c.wantErr != nil {
				if len(store.calls) != 0 {
					t.Fatalf("a refused query read the store: %+v", store.calls)
				}
				return
			}
			if cs == nil || len(store.calls) != 1 {
				t.Fatalf("candles %v after %d store calls", cs, len(store.calls))
			}
			got := store.calls[0]
			if got.width != c.wantCall.width || !got.from.Equal(c.wantCall.from) || !got.to.Equal(c.wantCall.to) || got.limit != c.wantCall.limit {
				t.Fatalf("store asked for %+v, want %+v", got, c.wantCall)
			}
		})
	}
}

func TestCandlesComeOldestFirst(t *testing.T) {
	t0 := time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC)
	rows := make([]market.Candle, 3)
	for i := range rows {
		rows[i] = market.Candle{Start: t0.Add(time.Duration(i) * time.Hour), Open: float64(i) / 10, Trades: 1}
	}
	store := &candleStore{rows: map[time.Duration][]market.Candle{time.Hour: rows}}
	s := market.NewService(store, nil)
	s.Now = func() time.Time { return t0.Add(24 * time.Hour) }
	cs, err := s.Candles(context.Background(), 1, market.CandleQuery{Interval: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || !slices.IsSortedFunc(cs, func(a, b market.Candle) int { return a.Start.Compare(b.Start) }) || !sameCandle(cs[0], rows[0]) {
		t.Fatalf("%+v, want the store's candles oldest first", cs)
	}
}

func sameCandle(a, b market.Candle) bool {
	return a.Start.Equal(b.Start) && a.Open == b.Open && a.High == b.High && a.Low == b.Low && a.Close == b.Close &&
		a.Volume == b.Volume && a.Trades == b.Trades
}

func TestCandleMerge(t *testing.T) {
	t0 := time.Date(2024, 3, 10, 10, 0, 0, 0, time.UTC)
	point := func(p float64, at time.Time) market.Candle {
		return market.Candle{Open: p, High: p, Low: p, Close: p, OpenAt: at, CloseAt: at, Volume: 1, Trades: 1}
	}
	for _, c := range []struct {
		name        string
		first, then market.Candle
		open, close float64
	}{
		{"a later price closes", point(0.4, t0), point(0.6, t0.Add(time.Second)), 0.4, 0.6},
		{"of two prices of one time the one recorded second closes", point(0.4, t0), point(0.6, t0), 0.4, 0.6},
		{"a price stamped earlier, recorded after, opens", point(0.4, t0), point(0.6, t0.Add(-time.Second)), 0.6, 0.4},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.first
			got.Merge(c.then)
			if got.Open != c.open || got.Close != c.close || got.High != 0.6 || got.Low != 0.4 || got.Volume != 2 || got.Trades != 2 {
				t.Fatalf("%+v, want open %v, close %v", got, c.open, c.close)
			}
		})
	}
}

func TestCandleBatch(t *testing.T) {
	t0 := time.Date(2024, 3, 10, 10, 0, 0, 0, time.UTC)
	var b market.CandleBatch
	b.Add(1, t0.Add(10*time.Second), 0.5, 100, true)
	b.Add(2, t0.Add(10*time.Second), 0.3, 0, false) // moved by market 1's trade
	b.Add(1, t0.Add(70*time.Second), 0.6, 50, true)
	b.Add(1, t0.Add(80*time.Second), 0.4, 25, true)
	type key struct {
		market int64
		width  time.Duration
		start  time.Time
	}
	got := map[key]market.Candle{}
	for _, r := range b.Rows() {
		k := key{r.MarketID, r.Width, r.Start}
		if _, dup := got[k]; dup {
			t.Fatalf("two rows for %+v", k)
		}
		got[k] = r.Candle
	}
	if len(got) != 4+4+1 { // market 1: two minutes, and one each of 5m, 1h, 1d; market 2: one of each
		t.Fatalf("%d rows: %+v", len(got), b.Rows())
	}
	for _, c := range []struct {
		name string
		k    key
		want market.Candle
	}{
		{"the first minute holds the first trade", key{1, time.Minute, t0}, market.Candle{Open: 0.5, High: 0.5, Low: 0.5, Close: 0.5, Volume: 100, Trades: 1}},
		{"the second minute holds two trades", key{1, time.Minute, t0.Add(time.Minute)}, market.Candle{Open: 0.6, High: 0.6, Low: 0.4, Close: 0.4, Volume: 75, Trades: 2}},
		{"the day holds all three", key{1, 24 * time.Hour, t0.Add(-10 * time.Hour)}, market.Candle{Open: 0.5, High: 0.6, Low: 0.4, Close: 0.4, Volume: 175, Trades: 3}},
		{"a point moved by another market's trade has no volume", key{2, time.Hour, t0}, market.Candle{Open: 0.3, High: 0.3, Low: 0.3, Close: 0.3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, ok := got[c.k]
			c.want.Start = c.k.start
			if !ok || !sameCandle(g, c.want) {
				t.Fatalf("%+v (%v), want %+v", g, ok, c.want)
			}
		})
	}
}
