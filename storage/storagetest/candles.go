package storagetest

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// candleT0 is a Sunday, 10:00 UTC: the trades of the candle tests happen
// at chosen times around it (the decision's clock is theirs to set), in
// a trading window that opened long before.
var candleT0 = time.Date(2024, 3, 10, 10, 0, 0, 0, time.UTC)

// candleMarkets creates an active event with one pool of a market per
// probability, open for trading since 2020, and returns its markets and,
// for an exclusive pool, their ids ascending (Request.Pool).
func (e *env) candleMarkets(exclusive bool, probs ...float64) ([]*market.Market, []int64) {
	e.t.Helper()
	live, finish := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Now().Add(48*time.Hour)
	np := market.NewPool{Name: "Candles", B: 100_000, Margin: 0.02, LiveAt: &live, FinishAt: &finish, Exclusive: exclusive}
	for i, p := range probs {
		np.Markets = append(np.Markets, market.NewMarket{Name: "Outcome " + itoa(i), Probability: p})
	}
	c := e.creator()
	ev, err := e.markets.CreateEvent(e.ctx, c, market.NewEvent{Name: "Candles", Pools: []market.NewPool{np}})
	if err != nil {
		e.t.Fatalf("create event: %v", err)
	}
	ms := ev.Pools[0].Markets
	var pool []int64
	if exclusive {
		for _, m := range ms {
			pool = append(pool, m.ID)
		}
		slices.Sort(pool)
	}
	return ms, pool
}

// tradeAt executes reqs on market m in one write whose clock reads at,
// and returns their trades; every request must be accepted.
func (e *env) tradeAt(m *market.Market, pool []int64, at time.Time, reqs ...market.Request) []*market.Trade {
	e.t.Helper()
	for i := range reqs {
		reqs[i].Pool = pool
	}
	eff, err := e.stores.Markets.Exec(e.ctx, market.LockFor(m.ID, reqs), func(st *market.State) (*market.Effects, error) {
		st.Now = at
		return market.DecideTrades(st, reqs)
	})
	if err != nil {
		e.t.Fatalf("trade at %s: %v", at, err)
	}
	var out []*market.Trade
	for i, r := range eff.Results {
		if r.Err != nil {
			e.t.Fatalf("trade at %s, request %d: %v", at, i, r.Err)
		}
		out = append(out, r.Trade)
	}
	return out
}

func buyReq(u *account.User, side market.Side, amount int64) market.Request {
	return market.Request{UserID: u.ID, Side: side, Action: market.ActionBuy, Amount: amount}
}

func sellReq(u *account.User, side market.Side, shares int64) market.Request {
	return market.Request{UserID: u.ID, Side: side, Action: market.ActionSell, Shares: shares}
}

// candles asks the service for market id's candles.
func (e *env) candles(id int64, interval string, from, to time.Time) []market.Candle {
	e.t.Helper()
	cs, err := e.markets.Candles(e.ctx, id, market.CandleQuery{Interval: interval, From: &from, To: &to})
	if err != nil {
		e.t.Fatalf("candles %s of market %d: %v", interval, id, err)
	}
	return cs
}

// referenceCandles builds market id's candles of width w that start in
// [from, to) the slow way, from its whole price history and trade log:
// what the rolled-up candles must agree with.
func (e *env) referenceCandles(id int64, w time.Duration, from, to time.Time) []market.Candle {
	e.t.Helper()
	pts, err := e.stores.Markets.PriceHistory(e.ctx, id, math.MaxInt32)
	if err != nil {
		e.t.Fatal(err)
	}
	trades, err := e.stores.Markets.Trades(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	amounts := map[int64]int64{}
	for _, tr := range trades {
		amounts[tr.ID] = tr.Amount
	}
	// By time, and in the order recorded among points of one time.
	slices.SortStableFunc(pts, func(a, b market.PricePoint) int { return a.At.Compare(b.At) })
	byStart := map[time.Time]*market.Candle{}
	var starts []time.Time
	for _, p := range pts {
		s := market.FloorTime(p.At, w)
		if s.Before(from) || !s.Before(to) {
			continue
		}
		if have := byStart[s]; have != nil {
			have.High, have.Low = max(have.High, p.YesProbability), min(have.Low, p.YesProbability)
			have.Close = p.YesProbability
		} else {
			byStart[s] = &market.Candle{Start: s, Open: p.YesProbability, High: p.YesProbability, Low: p.YesProbability, Close: p.YesProbability}
			starts = append(starts, s)
		}
		if a, ok := amounts[p.TradeID]; ok {
			byStart[s].Volume += a
			byStart[s].Trades++
		}
	}
	slices.SortFunc(starts, time.Time.Compare)
	if len(starts) > market.MaxCandles {
		starts = starts[len(starts)-market.MaxCandles:]
	}
	out := []market.Candle{}
	for _, s := range starts {
		out = append(out, *byStart[s])
	}
	return out
}

// sameCandles fails unless got and want hold the same candles.
func sameCandles(t *testing.T, what string, got, want []market.Candle) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d candles, want %d:\n got %+v\nwant %+v", what, len(got), len(want), got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.Start.Equal(w.Start) || g.Start.Location() != time.UTC || g.Open != w.Open || g.High != w.High ||
			g.Low != w.Low || g.Close != w.Close || g.Volume != w.Volume || g.Trades != w.Trades {
			t.Fatalf("%s: candle %d is %+v, want %+v", what, i, g, w)
		}
	}
}

func testCandles(t *testing.T, newStores func(*testing.T) Stores) {
	all := func() (time.Time, time.Time) { return time.Unix(0, 0), time.Now().Add(time.Hour) }

	t.Run("a market without trades has no candles", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		from, to := all()
		for _, iv := range market.CandleIntervals {
			if cs := e.candles(ms[0].ID, iv.Name, from, to); cs == nil || len(cs) != 0 {
				t.Fatalf("%s: %+v, want an empty list", iv.Name, cs)
			}
		}
	})

	t.Run("each interval's candle holds its first, highest, lowest and last price and its trades' amounts", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		m := ms[0]
		u := e.user("trader", 1_000_000_000, 0)
		// 10:00:05 up, 10:00:40 up more, 10:01:10 down (a sale), 10:07:00
		// down (a NO buy) and, in one write at 11:30, up then down.
		var trades []*market.Trade
		trades = append(trades, e.tradeAt(m, nil, candleT0.Add(5*time.Second), buyReq(u, market.Yes, 20_000))...)
		trades = append(trades, e.tradeAt(m, nil, candleT0.Add(40*time.Second), buyReq(u, market.Yes, 10_000))...)
		trades = append(trades, e.tradeAt(m, nil, candleT0.Add(70*time.Second), sellReq(u, market.Yes, trades[0].Shares/2))...)
		trades = append(trades, e.tradeAt(m, nil, candleT0.Add(7*time.Minute), buyReq(u, market.No, 5_000))...)
		trades = append(trades, e.tradeAt(m, nil, candleT0.Add(90*time.Minute), buyReq(u, market.Yes, 30_000), buyReq(u, market.No, 40_000))...)
		p := func(i int) float64 { return trades[i].PriceAfter }
		a := func(i int) int64 { return trades[i].Amount }
		if !(p(1) > p(0) && p(2) < p(1) && p(3) < p(2) && p(3) < p(0) && p(4) > p(3) && p(5) < p(4)) {
			t.Fatalf("the trades did not move the price as the test means: %v %v %v %v %v %v", p(0), p(1), p(2), p(3), p(4), p(5))
		}
		candle := func(start time.Time, o, h, l, c float64, vol, n int64) market.Candle {
			return market.Candle{Start: start, Open: o, High: h, Low: l, Close: c, Volume: vol, Trades: n}
		}
		from, to := candleT0.Add(-24*time.Hour), candleT0.Add(24*time.Hour)
		for _, c := range []struct {
			interval string
			want     []market.Candle
		}{
			{"1m", []market.Candle{
				candle(candleT0, p(0), p(1), p(0), p(1), a(0)+a(1), 2),
				candle(candleT0.Add(time.Minute), p(2), p(2), p(2), p(2), a(2), 1),
				candle(candleT0.Add(7*time.Minute), p(3), p(3), p(3), p(3), a(3), 1),
				candle(candleT0.Add(90*time.Minute), p(4), p(4), p(5), p(5), a(4)+a(5), 2),
			}},
			{"5m", []market.Candle{
				candle(candleT0, p(0), p(1), min(p(0), p(2)), p(2), a(0)+a(1)+a(2), 3),
				candle(candleT0.Add(5*time.Minute), p(3), p(3), p(3), p(3), a(3), 1),
				candle(candleT0.Add(90*time.Minute), p(4), p(4), p(5), p(5), a(4)+a(5), 2),
			}},
			{"1h", []market.Candle{
				candle(candleT0, p(0), p(1), p(3), p(3), a(0)+a(1)+a(2)+a(3), 4),
				candle(candleT0.Add(time.Hour), p(4), p(4), p(5), p(5), a(4)+a(5), 2),
			}},
			{"1d", []market.Candle{
				candle(candleT0.Add(-10*time.Hour), p(0), max(p(1), p(4)), min(p(3), p(5)), p(5), a(0)+a(1)+a(2)+a(3)+a(4)+a(5), 6),
			}},
		} {
			sameCandles(t, c.interval, e.candles(m.ID, c.interval, from, to), c.want)
		}
	})

	t.Run("intervals start on multiples of their width since the Unix epoch, days at midnight UTC", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		u := e.user("trader", 1_000_000_000, 0)
		midnight := time.Date(2024, 3, 11, 0, 0, 0, 0, time.UTC)
		// In another zone, so that nothing depends on the times' zone.
		msk := time.FixedZone("MSK", 3*60*60)
		for _, at := range []time.Time{midnight.Add(-30 * time.Second).In(msk), midnight.Add(30 * time.Second).In(msk)} {
			e.tradeAt(ms[0], nil, at, buyReq(u, market.Yes, 10_000))
		}
		from, to := midnight.AddDate(0, 0, -3), midnight.AddDate(0, 0, 3)
		for _, c := range []struct {
			interval string
			starts   []time.Time
		}{
			{"1m", []time.Time{midnight.Add(-time.Minute), midnight}},
			{"5m", []time.Time{midnight.Add(-5 * time.Minute), midnight}},
			{"1h", []time.Time{midnight.Add(-time.Hour), midnight}},
			{"1d", []time.Time{midnight.AddDate(0, 0, -1), midnight}},
		} {
			cs := e.candles(ms[0].ID, c.interval, from, to)
			var got []time.Time
			for _, cd := range cs {
				if cd.Start.Location() != time.UTC {
					t.Fatalf("%s: start %s is not in UTC", c.interval, cd.Start)
				}
				got = append(got, cd.Start)
			}
			if !slices.EqualFunc(got, c.starts, time.Time.Equal) {
				t.Fatalf("%s: starts %v, want %v", c.interval, got, c.starts)
			}
		}
	})

	t.Run("the window takes the candles that start at from or later and before to", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		u := e.user("trader", 1_000_000_000, 0)
		for i := range 6 { // one trade at 10:00:30, 10:01:30 ... 10:05:30
			e.tradeAt(ms[0], nil, candleT0.Add(time.Duration(i)*time.Minute+30*time.Second), buyReq(u, market.Yes, 1_000))
		}
		minute := func(i int) time.Time { return candleT0.Add(time.Duration(i) * time.Minute) }
		for _, c := range []struct {
			name     string
			from, to time.Time
			want     []time.Time
		}{
			{"aligned from and to", minute(1), minute(4), []time.Time{minute(1), minute(2), minute(3)}},
			{"a from inside an interval leaves that interval out", minute(1).Add(time.Second), minute(4), []time.Time{minute(2), minute(3)}},
			{"a to inside an interval keeps that interval", minute(1), minute(4).Add(time.Second), []time.Time{minute(1), minute(2), minute(3), minute(4)}},
			{"a window inside one interval holds none", minute(2).Add(time.Second), minute(2).Add(50 * time.Second), nil},
			{"a window before every trade holds none", minute(-60), minute(0), nil},
		} {
			cs := e.candles(ms[0].ID, "1m", c.from, c.to)
			var got []time.Time
			for _, cd := range cs {
				got = append(got, cd.Start)
			}
			if !slices.EqualFunc(got, c.want, time.Time.Equal) {
				t.Errorf("%s: starts %v, want %v", c.name, got, c.want)
			}
		}
		// 5m over 10:01..10:06 is the candle of 10:05 alone: that of 10:00
		// starts before from.
		if cs := e.candles(ms[0].ID, "5m", minute(1), minute(6)); len(cs) != 1 || !cs[0].Start.Equal(minute(5)) || cs[0].Trades != 1 {
			t.Fatalf("5m over 10:01..10:06: %+v", cs)
		}
	})

	t.Run("a trade on one market of an exclusive pool moves the others' prices but not their volume", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, pool := e.candleMarkets(true, 0.5, 0.3, 0.2)
		u := e.user("trader", 1_000_000_000, 0)
		first := e.tradeAt(ms[0], pool, candleT0.Add(10*time.Second), buyReq(u, market.Yes, 20_000))[0]
		second := e.tradeAt(ms[1], pool, candleT0.Add(20*time.Second), buyReq(u, market.Yes, 5_000))[0]
		from, to := candleT0.Add(-time.Hour), candleT0.Add(time.Hour)
		got := map[int64][]market.Candle{}
		for _, m := range ms {
			got[m.ID] = e.candles(m.ID, "1m", from, to)
			if len(got[m.ID]) != 1 {
				t.Fatalf("market %d: %+v, want one candle", m.ID, got[m.ID])
			}
		}
		if c := got[ms[0].ID][0]; c.Trades != 1 || c.Volume != first.Amount || c.Open != first.PriceAfter {
			t.Fatalf("traded market: %+v, want its own trade of %d kopecks opening at %v", c, first.Amount, first.PriceAfter)
		}
		if c := got[ms[1].ID][0]; c.Trades != 1 || c.Volume != second.Amount || c.Close != second.PriceAfter {
			t.Fatalf("market traded second: %+v, want its own trade of %d kopecks closing at %v", c, second.Amount, second.PriceAfter)
		}
		third := got[ms[2].ID][0]
		if third.Trades != 0 || third.Volume != 0 {
			t.Fatalf("untraded market: %+v, want no trades and no volume", third)
		}
		// Both trades pushed the third outcome down: it opened at the
		// first's price and closed at the second's.
		if !(third.Open > third.Close && third.High == third.Open && third.Low == third.Close) {
			t.Fatalf("untraded market's prices: %+v", third)
		}
		if p, err := e.markets.Market(e.ctx, ms[2].ID); err != nil || math.Abs(p.Price-third.Close) > 1e-12 {
			t.Fatalf("untraded market closes at %v, its price is %v (%v)", third.Close, p.Price, err)
		}
		for _, m := range ms {
			sameCandles(t, "market "+itoa(int(m.ID)), got[m.ID], e.referenceCandles(m.ID, time.Minute, from, to))
		}
	})

	t.Run("candles agree with the price history and the trade log over every interval and window", func(t *testing.T) {
		e := newEnv(t, newStores)
		plain, _ := e.candleMarkets(false, 0.5, 0.7)
		excl, pool := e.candleMarkets(true, 0.4, 0.35, 0.25)
		users := []*account.User{e.user("a", 1_000_000_000, 0), e.user("b", 1_000_000_000, 0)}
		held := map[[3]int64]int64{} // user, market, side → shares
		at := candleT0
		// A fixed walk: steps of seconds to hours, writes of one to three
		// trades, buys and sales of both sides, and once a clock that
		// steps back.
		steps := []time.Duration{7 * time.Second, 50 * time.Second, 3 * time.Minute, 11 * time.Second, 47 * time.Minute, 2 * time.Hour, 30 * time.Second, 13 * time.Hour}
		var m *market.Market
		var pl []int64
		for i := range 80 {
			if i == 40 {
				// Back 90 seconds, on the market of the trade before:
				// into a minute before its newest candle.
				at = at.Add(-90 * time.Second)
			} else {
				at = at.Add(steps[i%len(steps)])
				ms := plain
				pl = nil
				if i%3 == 2 {
					ms, pl = excl, pool
				}
				m = ms[i%len(ms)]
			}
			var reqs []market.Request
			for j := range 1 + i%3 {
				u := users[(i+j)%2]
				side := market.Side((i / 2 % 2) ^ (j % 2))
				k := [3]int64{u.ID, m.ID, int64(side)}
				if held[k] > 10 && (i+j)%4 == 3 {
					reqs = append(reqs, sellReq(u, side, held[k]/3))
					held[k] -= held[k] / 3
					continue
				}
				reqs = append(reqs, buyReq(u, side, int64(1_000+(i*j*7919)%40_000)))
			}
			for _, tr := range e.tradeAt(m, pl, at, reqs...) {
				if tr.Action == market.ActionBuy {
					held[[3]int64{tr.UserID, m.ID, int64(tr.Side)}] += tr.Shares
				}
			}
		}
		windows := []struct {
			name     string
			from, to time.Time
		}{
			{"all time", time.Unix(0, 0), at.Add(24 * time.Hour)},
			{"an unaligned window", candleT0.Add(17*time.Hour + 23*time.Minute + 17*time.Second), candleT0.Add(2*24*time.Hour + 5*time.Hour + 1*time.Minute + 5*time.Second)},
		}
		for _, m := range append(slices.Clone(plain), excl...) {
			for _, iv := range market.CandleIntervals {
				for _, w := range windows {
					want := e.referenceCandles(m.ID, iv.Width, w.from, w.to)
					sameCandles(t, "market "+itoa(int(m.ID))+", "+iv.Name+", "+w.name, e.candles(m.ID, iv.Name, w.from, w.to), want)
				}
			}
		}
	})

	t.Run("first and last go by time, then by the order prices of one time were recorded in", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		u := e.user("trader", 1_000_000_000, 0)
		at := candleT0.Add(30 * time.Second)
		// Two writes of one time, then one stamped earlier by a clock
		// that stepped back: the second of the same time closes, the
		// earlier-stamped one opens.
		a := e.tradeAt(ms[0], nil, at, buyReq(u, market.Yes, 10_000))[0]
		b := e.tradeAt(ms[0], nil, at, buyReq(u, market.No, 30_000))[0]
		c := e.tradeAt(ms[0], nil, at.Add(-20*time.Second), buyReq(u, market.Yes, 1_000))[0]
		for _, iv := range market.CandleIntervals {
			cs := e.candles(ms[0].ID, iv.Name, candleT0.Add(-24*time.Hour), candleT0.Add(24*time.Hour))
			if len(cs) != 1 || cs[0].Open != c.PriceAfter || cs[0].Close != b.PriceAfter || cs[0].High != a.PriceAfter || cs[0].Trades != 3 {
				t.Fatalf("%s: %+v, want open %v (the earliest), close %v (the later of one time), high %v", iv.Name, cs, c.PriceAfter, b.PriceAfter, a.PriceAfter)
			}
		}
	})

	t.Run("a store answers its rolled-up candles newest first, at most the limit", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		u := e.user("trader", 1_000_000_000, 0)
		for i := range 5 {
			e.tradeAt(ms[0], nil, candleT0.Add(time.Duration(i)*time.Hour), buyReq(u, market.Yes, 1_000))
		}
		// Hourly trades: one candle each in every interval but 1d.
		for _, iv := range market.CandleIntervals[:3] {
			got, err := e.stores.Markets.Candles(e.ctx, ms[0].ID, iv.Width, candleT0.Add(time.Hour), candleT0.Add(4*time.Hour), 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || !got[0].Start.Equal(candleT0.Add(3*time.Hour)) || !got[1].Start.Equal(candleT0.Add(2*time.Hour)) || got[0].Trades != 1 {
				t.Fatalf("%s: %+v, want the candles of 13:00 and 12:00", iv.Name, got)
			}
		}
		if got, err := e.stores.Markets.Candles(e.ctx, ms[0].ID+1000, time.Minute, time.Unix(0, 0), candleT0.Add(24*time.Hour), 10); err != nil || len(got) != 0 {
			t.Fatalf("a market that does not exist: %+v, %v", got, err)
		}
	})

	t.Run("a window with more candles than the cap answers the newest", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms, _ := e.candleMarkets(false, 0.5)
		u := e.user("trader", 1_000_000_000, 0)
		// MaxCandles+2 one-minute candles, one trade each, in one write
		// whose trades the test stamps a minute apart (a store records the
		// times a decision gives): one transaction instead of 1502.
		n := market.MaxCandles + 2
		reqs := make([]market.Request, n)
		for i := range reqs {
			reqs[i] = buyReq(u, market.Side(i%2), 1_000)
		}
		eff, err := e.stores.Markets.Exec(e.ctx, market.LockFor(ms[0].ID, reqs), func(st *market.State) (*market.Effects, error) {
			st.Now = candleT0
			eff, err := market.DecideTrades(st, reqs)
			if err != nil {
				return nil, err
			}
			for i, te := range eff.Trades {
				at := candleT0.Add(time.Duration(i) * time.Minute)
				te.Trade.CreatedAt, te.Price.At = at, at
			}
			return eff, nil
		})
		if err != nil || len(eff.Trades) != n {
			t.Fatalf("%d trades of %d: %v", len(eff.Trades), n, err)
		}
		from, to := candleT0, candleT0.Add(time.Duration(n)*time.Minute)
		cs := e.candles(ms[0].ID, "1m", from, to)
		if len(cs) != market.MaxCandles {
			t.Fatalf("%d candles, want %d", len(cs), market.MaxCandles)
		}
		if !cs[0].Start.Equal(candleT0.Add(2*time.Minute)) || !cs[len(cs)-1].Start.Equal(to.Add(-time.Minute)) {
			t.Fatalf("candles from %s to %s, want from %s to %s", cs[0].Start, cs[len(cs)-1].Start, candleT0.Add(2*time.Minute), to.Add(-time.Minute))
		}
		sameCandles(t, "1m", cs, e.referenceCandles(ms[0].ID, time.Minute, from, to))
		// 5m: the newest 1500 five-minute candles would reach back before
		// the first trade, so all 301 come back whole.
		sameCandles(t, "5m", e.candles(ms[0].ID, "5m", from, to), e.referenceCandles(ms[0].ID, 5*time.Minute, from, to))
	})
}
