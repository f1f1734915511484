package server_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

type apiCandle struct {
	T             string  `json:"t"`
	Open          float64 `json:"open"`
	High          float64 `json:"high"`
	Low           float64 `json:"low"`
	Close         float64 `json:"close"`
	VolumeKopecks int64   `json:"volume_kopecks"`
	Trades        int64   `json:"trades"`
}

func (h *harness) candles(t *testing.T, marketID int64, query string) []apiCandle {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/candles?%s", marketID, query)})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Candles []apiCandle `json:"candles"`
	}
	r.decode(t, &out)
	if out.Candles == nil {
		t.Fatalf("candles is not a list: %s", r)
	}
	return out.Candles
}

// TestCandles: the candles of a market hold its trades' prices, amounts
// and count, on aligned UTC starts, whatever the interval; trades on
// another market of an exclusive pool move the prices only.
func TestCandles(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		before := time.Now().UTC()
		trades := []apiTrade{
			h.buy(t, w.alice.token, w.a1.ID, "YES", 50_000),
			h.buy(t, w.bob.token, w.a1.ID, "NO", 20_000),
		}
		trades = append(trades, h.sell(t, w.alice.token, w.a1.ID, "YES", trades[0].Shares/2))
		var volume int64
		for _, tr := range trades {
			volume += tr.CostKopecks + tr.PayoutKopecks
		}
		last := h.market(t, w.a1.ID).YesProbability

		for _, c := range []struct {
			interval string
			width    time.Duration
		}{{"1m", time.Minute}, {"5m", 5 * time.Minute}, {"1h", time.Hour}, {"1d", 24 * time.Hour}} {
			t.Run("the "+c.interval+" candles add up to the trades", func(t *testing.T) {
				cs := h.candles(t, w.a1.ID, "interval="+c.interval)
				// The trades took well under a minute, but may straddle
				// the end of one.
				if len(cs) == 0 || len(cs) > 2 {
					t.Fatalf("%d candles: %+v", len(cs), cs)
				}
				var n, vol int64
				for _, k := range cs {
					at, err := time.Parse(time.RFC3339, k.T)
					if err != nil || !strings.HasSuffix(k.T, "Z") || !at.Equal(at.Truncate(c.width)) {
						t.Fatalf("t %q is not an RFC 3339 UTC start of a %s interval (%v)", k.T, c.width, err)
					}
					if at.Before(before.Truncate(c.width)) || at.After(time.Now()) {
						t.Fatalf("t %s is not when the trades were", k.T)
					}
					if !(k.Low <= k.Open && k.Open <= k.High && k.Low <= k.Close && k.Close <= k.High) {
						t.Fatalf("prices out of order: %+v", k)
					}
					n, vol = n+k.Trades, vol+k.VolumeKopecks
				}
				if n != 3 || vol != volume {
					t.Fatalf("%d trades of %d kopecks, want 3 of %d", n, vol, volume)
				}
				// The first candle opens at the market's opening price,
				// not at its first trade's.
				if math.Abs(cs[0].Open-w.a1.YesProbability) > 1e-9 || cs[len(cs)-1].Close != last {
					t.Fatalf("open %v, close %v; want the opening price %v and the market's %v",
						cs[0].Open, cs[len(cs)-1].Close, w.a1.YesProbability, last)
				}
				if cs[0].High < trades[0].Market.YesProbability || cs[len(cs)-1].Low > trades[1].Market.YesProbability {
					t.Fatalf("high and low miss the trades' prices: %+v", cs)
				}
			})
		}
		t.Run("a window that starts at the first candle still opens it at the opening price", func(t *testing.T) {
			from := h.candles(t, w.a1.ID, "interval=1m")[0].T
			cs := h.candles(t, w.a1.ID, "interval=1m&from="+from)
			if len(cs) == 0 || math.Abs(cs[0].Open-w.a1.YesProbability) > 1e-9 || cs[0].Low > w.a1.YesProbability {
				t.Fatalf("%+v, want an open at %v", cs, w.a1.YesProbability)
			}
		})
		t.Run("a market without trades has an empty list", func(t *testing.T) {
			if cs := h.candles(t, w.b1.ID, "interval=1d"); len(cs) != 0 {
				t.Fatalf("%+v", cs)
			}
		})
		t.Run("a window that ends before the trades holds none", func(t *testing.T) {
			to := before.Add(-time.Hour).Format(time.RFC3339)
			if cs := h.candles(t, w.a1.ID, "interval=1m&to="+to); len(cs) != 0 {
				t.Fatalf("%+v", cs)
			}
		})
		t.Run("from and to with an escaped offset select the trades' day", func(t *testing.T) {
			msk := time.FixedZone("MSK", 3*60*60)
			from := before.Truncate(24 * time.Hour).In(msk).Format(time.RFC3339)
			to := time.Now().Add(time.Minute).In(msk).Format(time.RFC3339)
			q := "interval=1d&from=" + strings.ReplaceAll(from, "+", "%2B") + "&to=" + strings.ReplaceAll(to, "+", "%2B")
			var n int64
			for _, k := range h.candles(t, w.a1.ID, q) {
				n += k.Trades
			}
			if n != 3 {
				t.Fatalf("%d trades in the day's candles, want 3", n)
			}
		})
		t.Run("a trade on another market of an exclusive pool moves the price but not the volume", func(t *testing.T) {
			ev := h.createEvent(t, w.creator.token, exclusiveEvent())
			h.activate(t, w.creator.token, ev.ID, true)
			ann, bob := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
			tr := h.buy(t, w.alice.token, ann.ID, "YES", 5_000)
			own := h.candles(t, ann.ID, "interval=1h")
			other := h.candles(t, bob.ID, "interval=1h")
			if len(own) != 1 || own[0].Trades != 1 || own[0].VolumeKopecks != tr.CostKopecks {
				t.Fatalf("traded market: %+v, want its trade of %d kopecks", own, tr.CostKopecks)
			}
			price := h.market(t, bob.ID).YesProbability
			if len(other) != 1 || other[0].Trades != 0 || other[0].VolumeKopecks != 0 || math.Abs(other[0].Close-price) > 1e-9 {
				t.Fatalf("other market: %+v, want no trades and a close at its price %v", other, price)
			}
		})
	})
}

// TestCandlesRefusals: what the candles route refuses, and in which
// order: the path id, the query, then the market.
func TestCandlesRefusals(t *testing.T) {
	h := newHarness(t, memoryStore())
	w := newWorld(t, h)
	h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
	path := func(id any, q string) string { return fmt.Sprintf("/api/v1/markets/%v/candles?%s", id, q) }
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		name   string
		path   string
		status int
		code   string
		detail string
	}{
		{"no interval is 400 invalid_request", path(w.a1.ID, ""), 400, "invalid_request", "interval"},
		{"an unknown interval is 400 invalid_request", path(w.a1.ID, "interval=2m"), 400, "invalid_request", "interval"},
		{"an interval in capitals is 400 invalid_request", path(w.a1.ID, "interval=1H"), 400, "invalid_request", "interval"},
		{"a from that is not a time is 400 invalid_request", path(w.a1.ID, "interval=1m&from=yesterday"), 400, "invalid_request", "from"},
		{"a from without a time of day is 400 invalid_request", path(w.a1.ID, "interval=1d&from=2024-03-10"), 400, "invalid_request", "from"},
		{"a Unix time is 400 invalid_request", path(w.a1.ID, "interval=1d&to=1710028800"), 400, "invalid_request", "to"},
		{"an offset whose + was not escaped is 400 invalid_request", path(w.a1.ID, "interval=1h&from=2024-03-10T00:00:00+03:00"), 400, "invalid_request", "%2B"},
		{"from equal to to is 400 invalid_request", path(w.a1.ID, "interval=1m&from=2024-03-10T00:00:00Z&to=2024-03-10T00:00:00Z"), 400, "invalid_request", "from"},
		{"from after to is 400 invalid_request", path(w.a1.ID, "interval=1m&from=2024-03-11T00:00:00Z&to=2024-03-10T00:00:00Z"), 400, "invalid_request", "from"},
		{"a from in the future without a to is 400 invalid_request", path(w.a1.ID, "interval=1h&from="+future), 400, "invalid_request", "from"},
		{"a non-integer market id is 400 invalid_id", path("abc", "interval=1m"), 400, "invalid_id", ""},
		{"an unknown market is 404 market_not_found", path(987654321, "interval=1m"), 404, "market_not_found", ""},
		{"a bad query on an unknown market is 400 invalid_request", path(987654321, "interval=1w"), 400, "invalid_request", "interval"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: c.path})
			expect(t, r, c.status, c.code)
			if c.detail != "" && !strings.Contains(string(r.body), c.detail) {
				t.Fatalf("the detail does not name %s: %s", c.detail, r)
			}
		})
	}
}
