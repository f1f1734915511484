package lmsr

import (
	"errors"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func TestNewExclusive(t *testing.T) {
	tests := []struct {
		name    string
		b       int64
		probs   []float64
		q       []int64
		subsidy int64
	}{
		{"three outcomes open at b·ln(π/min π), the smallest at 0", 10000, []float64{0.5, 0.3, 0.2}, []int64{9163, 4055, 0}, 16095},
		{"an even pool of four owes b·ln 4", 10000, []float64{0.25, 0.25, 0.25, 0.25}, []int64{0, 0, 0, 0}, 13863},
		{"two outcomes open as InitialQ does", 10000, []float64{0.7, 0.3}, []int64{8473, 0}, 12040},
		{"two outcomes favouring the second open on the NO side", 10000, []float64{0.3, 0.7}, []int64{0, 8473}, 12040},
		{"probabilities a little off 1 are normalised", 10000, []float64{0.333, 0.333, 0.333}, []int64{0, 0, 0}, 10987},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewExclusive(tt.b, tt.probs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Q, tt.q) || p.B != tt.b {
				t.Fatalf("opened %+v, want q = %v", p, tt.q)
			}
			if sub, err := p.SubsidyKopecks(); err != nil || sub != tt.subsidy {
				t.Fatalf("subsidy %d, %v; want %d", sub, err, tt.subsidy)
			}
		})
	}

	errTests := []struct {
		name  string
		b     int64
		probs []float64
		want  error
	}{
		{"a zero liquidity is refused", 0, []float64{0.5, 0.5}, ErrInvalidLiquidity},
		{"a liquidity above 2^53 is refused", MaxQuantity + 1, []float64{0.5, 0.5}, ErrInvalidLiquidity},
		{"a single market is not a pool", 100, []float64{1}, ErrDimension},
		{"a probability of 0 is refused", 100, []float64{0, 1}, ErrInvalidProbability},
		{"a NaN probability is refused", 100, []float64{math.NaN(), 0.5, 0.5}, ErrInvalidProbability},
		{"probabilities summing to 1.002 are refused", 100, []float64{0.5, 0.3, 0.202}, ErrInvalidProbability},
		{"probabilities summing to 0.9 are refused", 100, []float64{0.5, 0.4}, ErrInvalidProbability},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewExclusive(tt.b, tt.probs); !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestExclusiveKopeckTrades(t *testing.T) {
	open, err := NewExclusive(10000, []float64{0.5, 0.3, 0.2})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("YES on the longshot for 5000 kopecks at 3% buys outcome 2", func(t *testing.T) {
		buy, err := open.BuyForSpend(2, Yes, 5000, 0.03)
		if err != nil {
			t.Fatal(err)
		}
		if want := (Buy{Shares: 14168, Cost: 4854, Fee: 146, Charge: 5000}); buy != want {
			t.Fatalf("got %+v, want %+v", buy, want)
		}
		after := open.With(2, Yes, buy.Shares)
		if !slices.Equal(after.Q, []int64{9163, 4055, 14168}) {
			t.Fatalf("after the buy q = %v", after.Q)
		}
		if exact, _ := open.Market().BuyCost(2, float64(buy.Shares)); !(float64(buy.Cost) >= exact && float64(buy.Cost) < exact+1) {
			t.Fatalf("cost %d, the LMSR cost is %v", buy.Cost, exact)
		}
	})
	t.Run("NO on the favourite buys one share of each other outcome", func(t *testing.T) {
		buy, err := open.BuyForSpend(0, No, 5000, 0.03)
		if err != nil {
			t.Fatal(err)
		}
		after := open.With(0, No, buy.Shares)
		if !slices.Equal(after.Q, []int64{9163, 4055 + buy.Shares, buy.Shares}) {
			t.Fatalf("after %d NO shares q = %v", buy.Shares, after.Q)
		}
		exact, err := open.Market().BundleCost([]float64{0, float64(buy.Shares), float64(buy.Shares)})
		if err != nil || !(float64(buy.Cost) >= exact && float64(buy.Cost) < exact+1) {
			t.Fatalf("cost %d, the LMSR cost of the bundle is %v (%v)", buy.Cost, exact, err)
		}
		if p := after.Price(0); !(p < open.Price(0)) {
			t.Fatalf("NO on market 0 moved its price from %v to %v", open.Price(0), p)
		}
	})
	t.Run("buying and selling back the complement loses the rounding and the fee", func(t *testing.T) {
		buy, err := open.BuyShares(1, No, 6432, 0.03)
		if err != nil {
			t.Fatal(err)
		}
		sell, err := open.With(1, No, 6432).SellShares(1, No, 6432, 0.03)
		if err != nil {
			t.Fatal(err)
		}
		if !(sell.Refund < buy.Cost && sell.Payout < buy.Charge) {
			t.Fatalf("bought %+v, sold %+v", buy, sell)
		}
	})

	// One outcome near the price limit: a YES buy on market 0 hardly moves
	// the price of its complement, but pushes outcome 2 below 1e-6.
	edge := Exclusive{B: 100, Q: []int64{0, 0, -1300}}
	errTests := []struct {
		name string
		run  func() error
		want error
	}{
		{"a market index past the pool is refused", func() error { _, err := open.BuyShares(3, Yes, 1, 0); return err }, ErrDimension},
		{"a negative market index is refused", func() error { _, err := open.SellShares(-1, No, 1, 0); return err }, ErrDimension},
		{"an invalid side is refused", func() error { _, err := open.BuyForSpend(0, Side(2), 100, 0); return err }, ErrInvalidSide},
		{"zero shares is an invalid amount", func() error { _, err := open.BuyShares(0, Yes, 0, 0); return err }, ErrInvalidAmount},
		{"a zero budget is an invalid amount", func() error { _, err := open.BuyForSpend(0, No, 0, 0); return err }, ErrInvalidAmount},
		{"a budget that cannot cover a kopeck after the fee is too small", func() error { _, err := open.BuyForSpend(0, No, 1, 0.5); return err }, ErrTooSmall},
		{"a margin of 1 is refused", func() error { _, err := open.SellShares(0, Yes, 1, 1); return err }, ErrInvalidMargin},
		{"a pool of one market is refused", func() error { _, err := (Exclusive{B: 100, Q: []int64{0}}).BuyShares(0, Yes, 1, 0); return err }, ErrDimension},
		{"a pool without liquidity is refused", func() error { _, err := (Exclusive{Q: []int64{0, 0}}).BuyShares(0, Yes, 1, 0); return err }, ErrInvalidLiquidity},
		{"a quantity past 2^53 is refused", func() error {
			_, err := (Exclusive{B: 1, Q: []int64{0, MaxQuantity + 1}}).BuyShares(0, Yes, 1, 0)
			return err
		}, ErrInvalidQuantity},
		{"quantities more than 2^53 apart are refused", func() error {
			_, err := (Exclusive{B: 1, Q: []int64{-MaxQuantity, MaxQuantity, 0}}).SellShares(0, Yes, 1, 0)
			return err
		}, ErrInvalidQuantity},
		{"a budget that pushes the price past 1 − 1e-6 is refused", func() error { _, err := open.BuyForSpend(0, Yes, 1e9, 0); return err }, ErrPriceLimit},
		{"a sale that pushes the price below 1e-6 is refused", func() error { _, err := open.SellShares(2, Yes, 200000, 0); return err }, ErrPriceLimit},
		{"NO on a market at its floor is refused", func() error { _, err := edge.BuyShares(2, No, 100, 0); return err }, ErrPriceLimit},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
	// The limit is the traded market's: trades on other markets may take a
	// longshot below it, or a pool whose longshot sits at the limit would
	// refuse every YES on the other markets.
	for _, tt := range []struct {
		name  string
		i     int
		s     Side
		trade func() (int64, error) // the shares traded, negative for a sale
	}{
		{"a YES buy may take a third outcome below 1e-6", 0, Yes, func() (int64, error) {
			b, err := edge.BuyShares(0, Yes, 100, 0)
			return b.Shares, err
		}},
		{"a NO sale may take a third outcome below 1e-6", 0, No, func() (int64, error) {
			s, err := edge.SellShares(0, No, 100, 0)
			return -s.Shares, err
		}},
		{"a buy for a budget may take a third outcome below 1e-6", 1, Yes, func() (int64, error) {
			b, err := edge.BuyForSpend(1, Yes, 50, 0)
			return b.Shares, err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := tt.trade()
			if err != nil {
				t.Fatal(err)
			}
			if p := edge.With(tt.i, tt.s, n).Price(2); !(p < DefaultMinPrice) {
				t.Fatalf("outcome 2 ends at %v, not below the limit", p)
			}
		})
	}
}

func TestExclusiveWith(t *testing.T) {
	p := Exclusive{B: 100, Q: []int64{5, 7, 9}}
	tests := []struct {
		name string
		got  Exclusive
		want []int64
	}{
		{"YES adds to its own outcome", p.With(1, Yes, 3), []int64{5, 10, 9}},
		{"NO adds to every other outcome", p.With(1, No, 3), []int64{8, 7, 12}},
		{"a sale subtracts", p.With(0, No, -2), []int64{5, 5, 7}},
		{"an index out of range changes nothing", p.With(3, Yes, 3), []int64{5, 7, 9}},
		{"an invalid side changes nothing", p.With(0, Side(5), 3), []int64{5, 7, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.got.Q, tt.want) {
				t.Fatalf("q = %v, want %v", tt.got.Q, tt.want)
			}
			if !slices.Equal(p.Q, []int64{5, 7, 9}) {
				t.Fatalf("the receiver changed to %v", p.Q)
			}
		})
	}
}

func TestExclusiveBinaryViews(t *testing.T) {
	tests := []struct {
		name string
		p    Exclusive
		want []BinaryView
	}{
		{"two outcomes show each other's quantity", Exclusive{B: 10000, Q: []int64{8473, 120}}, []BinaryView{{8473, 120}, {120, 8473}}},
		{"three even outcomes show q + round(b·ln 2)", Exclusive{B: 10000, Q: []int64{50, 50, 50}}, []BinaryView{{50, 6981}, {50, 6981}, {50, 6981}}},
		{"the favourite's complement is the log-sum-exp of the others", Exclusive{B: 10000, Q: []int64{9163, 4055, 0}}, []BinaryView{{9163, 9163}, {4055, 12528}, {0, 13863}}},
		{"an outcome far behind shows the favourite's quantity", Exclusive{B: 100, Q: []int64{0, 5000, 1e6}}, []BinaryView{{0, 1000000}, {5000, 1000000}, {1000000, 5000}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.BinaryViews()
			if !slices.Equal(got, tt.want) {
				t.Fatalf("views %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("an invalid pool has no views", func(t *testing.T) {
		if v := (Exclusive{B: 1, Q: []int64{1}}).BinaryViews(); v != nil {
			t.Fatalf("views %v", v)
		}
		if err := (Exclusive{B: 1, Q: []int64{1, 2}}).BinaryViewsInto(make([]BinaryView, 1)); !errors.Is(err, ErrDimension) {
			t.Fatalf("a short dst: %v", err)
		}
	})
}

// genKopeckExclusive draws a platform pool: integer b from 100 to 1e9
// kopecks and 2 to maxN integer quantities within 5·b of each other (every
// price above about 1e-4/n) around a base of up to 1e12.
func genKopeckExclusive(t *rapid.T, maxN int) Exclusive {
	b := math.Round(math.Exp(rapid.Float64Range(math.Log(100), math.Log(1e9)).Draw(t, "lnb")))
	n := rapid.IntRange(2, maxN).Draw(t, "n")
	base := math.Round(rapid.Float64Range(0, 1e12).Draw(t, "base"))
	q := make([]int64, n)
	for i := range q {
		q[i] = int64(base + math.Round(b*rapid.Float64Range(-5, 5).Draw(t, "z")))
	}
	return Exclusive{B: int64(b), Q: q}
}

// genTrade draws a market of p and a side.
func genTrade(t *rapid.T, p Exclusive) (int, Side) {
	return rapid.IntRange(0, p.N()-1).Draw(t, "market"), genSide(t)
}

// sameErr reports whether two errors are both nil or match the same
// sentinel of the package.
func sameErr(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	for _, s := range []error{ErrInvalidLiquidity, ErrInvalidQuantity, ErrInvalidAmount, ErrInvalidProbability, ErrInvalidMargin, ErrPriceLimit, ErrTooSmall, ErrInvalidSide, ErrDimension} {
		if errors.Is(a, s) != errors.Is(b, s) {
			return false
		}
	}
	return true
}

func TestPropertyTwoOutcomePoolPricesAsBinary(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genKopeckBinary(t)
		m.MinPrice = rapid.SampledFrom([]float64{0, 1e-3, 0.01}).Draw(t, "minPrice")
		p := Exclusive{B: int64(m.B), Q: []int64{int64(m.QYes), int64(m.QNo)}, MinPrice: m.MinPrice}
		margin := genMargin(t)
		budget := rapid.Int64Range(1, int64(3*m.B)).Draw(t, "budget")
		shares := rapid.Int64Range(1, int64(3*m.B)).Draw(t, "shares")

		if got, want := p.Price(0), m.Price(Yes); got != want {
			t.Fatalf("Price(0) = %v, binary P(YES) = %v", got, want)
		}
		prices := p.Prices()
		if prices[0] != m.Price(Yes) || prices[1] != m.Price(No) {
			t.Fatalf("prices %v, binary (%v, %v)", prices, m.Price(Yes), m.Price(No))
		}
		if v := p.BinaryViews(); v[0] != (BinaryView{p.Q[0], p.Q[1]}) || v[1] != (BinaryView{p.Q[1], p.Q[0]}) {
			t.Fatalf("views %v of q = %v", v, p.Q)
		}
		subP, errP := p.SubsidyKopecks()
		subB, errB := SubsidyKopecks(m)
		if subP != subB || !sameErr(errP, errB) {
			t.Fatalf("subsidy %d (%v), binary %d (%v)", subP, errP, subB, errB)
		}
		// Market 0's YES is the binary YES and its NO (outcome 1) the
		// binary NO; market 1 is the mirror.
		for _, c := range []struct {
			i   int
			s   Side
			bin Side
		}{{0, Yes, Yes}, {0, No, No}, {1, Yes, No}, {1, No, Yes}} {
			buyP, errP := p.BuyForSpend(c.i, c.s, budget, margin)
			buyB, errB := BuyForSpend(m, c.bin, budget, margin)
			if buyP != buyB || !sameErr(errP, errB) {
				t.Fatalf("BuyForSpend(%d, %v, %d) = %+v (%v), binary %v: %+v (%v)", c.i, c.s, budget, buyP, errP, c.bin, buyB, errB)
			}
			if errP == nil {
				after := p.With(c.i, c.s, buyP.Shares)
				binAfter := m.With(c.bin, float64(buyB.Shares))
				if float64(after.Q[0]) != binAfter.QYes || float64(after.Q[1]) != binAfter.QNo {
					t.Fatalf("after the buy q = %v, binary (%v, %v)", after.Q, binAfter.QYes, binAfter.QNo)
				}
			}
			buyP, errP = p.BuyShares(c.i, c.s, shares, margin)
			buyB, errB = BuyShares(m, c.bin, shares, margin)
			if buyP != buyB || !sameErr(errP, errB) {
				t.Fatalf("BuyShares(%d, %v, %d) = %+v (%v), binary %+v (%v)", c.i, c.s, shares, buyP, errP, buyB, errB)
			}
			sellP, errP := p.SellShares(c.i, c.s, shares, margin)
			sellB, errB := SellShares(m, c.bin, shares, margin)
			if sellP != sellB || !sameErr(errP, errB) {
				t.Fatalf("SellShares(%d, %v, %d) = %+v (%v), binary %+v (%v)", c.i, c.s, shares, sellP, errP, sellB, errB)
			}
		}
	})
}

func TestPropertyTwoOutcomePoolOpensAsBinary(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.Int64Range(1, 1e12).Draw(t, "b")
		pr := rapid.Float64Range(1e-4, 1-1e-4).Draw(t, "p")
		p, err := NewExclusive(b, []float64{pr, 1 - pr})
		if err != nil {
			t.Fatal(err)
		}
		qy, qn, err := InitialQ(b, pr/(pr+(1-pr)))
		if err != nil || p.Q[0] != qy || p.Q[1] != qn {
			t.Fatalf("pool opens at %v, InitialQ at (%d, %d) %v", p.Q, qy, qn, err)
		}
	})
}

func TestPropertyExclusiveOpening(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.Int64Range(100, 1e12).Draw(t, "b")
		w := rapid.SliceOfN(rapid.Float64Range(0.01, 1), 2, 50).Draw(t, "weights")
		sum := 0.0
		for _, x := range w {
			sum += x
		}
		probs := make([]float64, len(w))
		minP := 1.0
		for i, x := range w {
			probs[i] = x / sum
			minP = min(minP, probs[i])
		}
		p, err := NewExclusive(b, probs)
		if err != nil {
			t.Fatal(err)
		}
		if lo := slices.Min(p.Q); lo != 0 {
			t.Fatalf("the smallest quantity is %d, want 0", lo)
		}
		// Each q_i is within half a share of b·ln(π_i/min π), so each
		// log-odds against the smallest outcome is within 0.5/b.
		// The reference is the least likely outcome, not the first zero
		// quantity: an outcome within 0.5/b of it also rounds to 0.
		for i, q := range p.Q {
			want := float64(b) * (math.Log(probs[i]) - math.Log(minP))
			if math.Abs(float64(q)-want) > 0.5+1e-9*math.Abs(want) {
				t.Fatalf("q[%d] = %d, b·ln(π/π_min) = %v", i, q, want)
			}
		}
		// The subsidy covers the worst case of the integer state, which is
		// within a share of b·ln(1/min π).
		subsidy, err := p.SubsidyKopecks()
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(b) * math.Log(1/minP); math.Abs(float64(subsidy)-want) > 2+1e-9*want {
			t.Fatalf("subsidy %d, b·ln(1/min π) = %v", subsidy, want)
		}
		r := newRef(float64(p.B), p.Market().Q)
		for k, q := range p.Q {
			if owed := f64(sub(r.cost(), bf(float64(q)))); float64(subsidy) < owed {
				t.Fatalf("subsidy %d below C(q0) − q0[%d] = %v", subsidy, k, owed)
			}
		}
	})
}

// exactTradeCost returns C(q') − C(q) for the trade at 320 bits: positive
// for a buy, and for a sale the refund C(q) − C(q').
func exactTradeCost(p Exclusive, i int, s Side, shares int64, sell bool) float64 {
	delta := shares
	if sell {
		delta = -shares
	}
	before := newRef(float64(p.B), p.Market().Q)
	after := newRef(float64(p.B), p.With(i, s, delta).Market().Q)
	d := f64(sub(after.cost(), before.cost()))
	if sell {
		return -d
	}
	return d
}

func TestPropertyExclusiveFavoursTheHouse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genKopeckExclusive(t, 8)
		i, s := genTrade(t, p)
		margin := genMargin(t)
		shares := rapid.Int64Range(1, 3*p.B).Draw(t, "shares")
		if buy, err := p.BuyShares(i, s, shares, margin); err == nil {
			if exact := exactTradeCost(p, i, s, shares, false); float64(buy.Cost) < exact || float64(buy.Cost) > max(exact+1+1e-9*exact, 1) {
				t.Fatalf("%d shares of %v on %d cost %d, exactly %v", shares, s, i, buy.Cost, exact)
			}
		}
		if sell, err := p.SellShares(i, s, shares, margin); err == nil {
			if exact := exactTradeCost(p, i, s, shares, true); float64(sell.Refund) > exact || float64(sell.Refund) < exact-1-1e-9*exact {
				t.Fatalf("%d shares of %v on %d refund %d, exactly %v", shares, s, i, sell.Refund, exact)
			}
		}
	})
}

func TestPropertyExclusiveBinaryViewsPriceTheirOutcome(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genKopeckExclusive(t, 50)
		views := p.BinaryViews()
		prices := p.Prices()
		b := float64(p.B)
		r := newRef(b, p.Market().Q)
		for i, v := range views {
			if v.QYes != p.Q[i] {
				t.Fatalf("view %d shows q_yes %d of %d", i, v.QYes, p.Q[i])
			}
			// QNo is b·ln Σ_{j≠i} e^{q_j/b} rounded to the nearest
			// integer; allow the float error of the reference comparison.
			exact := f64(add(r.mx, mul(r.b, bigLog(sub(r.s, r.e[i])))))
			if math.Abs(float64(v.QNo)-exact) > 0.5+1e-12*math.Abs(exact) {
				t.Fatalf("view %d shows q_no %d, b·ln Σ_{j≠i} e^{q_j/b} = %v", i, v.QNo, exact)
			}
			// The binary price of the view is the outcome's price up to the
			// rounding of q_no: half a share moves the log-odds by δ = 0.5/b,
			// and the logistic function's slope p(1−p) changes by at most a
			// factor e^δ over that step, so the price moves by at most
			// p(1−p)·δ·e^δ, and never more than 0.125/b·e^δ.
			got := Binary{B: b, QYes: float64(v.QYes), QNo: float64(v.QNo)}.Price(Yes)
			pi := prices[i]
			bound := pi * (1 - pi) * 0.5 / b * math.Exp(0.5/b)
			if d := math.Abs(got - pi); d > bound*(1+1e-9)+1e-15 {
				t.Fatalf("view %d prices %v, the outcome costs %v: off by %v, bound %v", i, got, pi, d, bound)
			}
			if relErr(p.Price(i), pi) > 1e-13 {
				t.Fatalf("Price(%d) = %v, PricesInto %v", i, p.Price(i), pi)
			}
		}
	})
}

// holdings are one trader's shares in a pool: YES and NO per market.
type holdings struct{ yes, no []int64 }

func newHoldings(n int) holdings {
	return holdings{yes: make([]int64, n), no: make([]int64, n)}
}

func (h holdings) of(i int, s Side) *int64 {
	if s == Yes {
		return &h.yes[i]
	}
	return &h.no[i]
}

// payout is what the shares pay if outcome k wins: the YES shares of
// market k and the NO shares of every other market.
func (h holdings) payout(k int) int64 {
	sum := h.yes[k]
	for i, x := range h.no {
		if i != k {
			sum += x
		}
	}
	return sum
}

// tradeRandomly makes steps random buys and sales against p for one
// trader and returns the pool after them and the net kopecks the escrow
// received (costs less refunds). It checks, after every trade, that the
// prices sum to 1 and that each quantity moved as the payout of the
// trader's shares in that outcome did.
func tradeRandomly(t *rapid.T, p Exclusive, h holdings, steps int, margin float64) (Exclusive, int64) {
	q0 := slices.Clone(p.Q)
	paid0 := make([]int64, p.N())
	for k := range paid0 {
		paid0[k] = h.payout(k)
	}
	cash := int64(0)
	prices := make([]float64, p.N())
	for range steps {
		i, s := genTrade(t, p)
		held := h.of(i, s)
		switch action := rapid.IntRange(0, 2).Draw(t, "action"); {
		case action == 0 && *held > 0:
			n := rapid.Int64Range(1, *held).Draw(t, "sell shares")
			sell, err := p.SellShares(i, s, n, margin)
			if err != nil {
				continue
			}
			cash -= sell.Refund
			*held -= n
			p = p.With(i, s, -n)
		case action == 1:
			n := rapid.Int64Range(1, 2*p.B).Draw(t, "buy shares")
			buy, err := p.BuyShares(i, s, n, margin)
			if err != nil {
				continue
			}
			cash += buy.Cost
			*held += n
			p = p.With(i, s, n)
		default:
			budget := rapid.Int64Range(1, 2*p.B).Draw(t, "budget")
			buy, err := p.BuyForSpend(i, s, budget, margin)
			if err != nil {
				continue
			}
			cash += buy.Cost
			*held += buy.Shares
			p = p.With(i, s, buy.Shares)
		}
		if err := p.PricesInto(prices); err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, x := range prices {
			sum += x
		}
		if math.Abs(sum-1) > 1e-14*float64(p.N()) {
			t.Fatalf("prices %v sum to %v", prices, sum)
		}
		for k := range p.Q {
			if p.Q[k]-q0[k] != h.payout(k)-paid0[k] {
				t.Fatalf("q[%d] moved by %d, the shares' payout by %d", k, p.Q[k]-q0[k], h.payout(k)-paid0[k])
			}
		}
	}
	return p, cash
}

func TestPropertyExclusiveEscrowCoversTheWinner(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.Int64Range(100, 1e8).Draw(t, "b")
		w := rapid.SliceOfN(rapid.Float64Range(0.05, 1), 2, 12).Draw(t, "weights")
		sum := 0.0
		for _, x := range w {
			sum += x
		}
		for i := range w {
			w[i] /= sum
		}
		p, err := NewExclusive(b, w)
		if err != nil {
			t.Fatal(err)
		}
		escrow, err := p.SubsidyKopecks()
		if err != nil {
			t.Fatal(err)
		}
		margin := genMargin(t)
		// The shares of many traders add up as one trader's do, so one
		// trader's holdings stand for all of them.
		h := newHoldings(p.N())
		for range rapid.IntRange(1, 8).Draw(t, "rounds") {
			var cash int64
			p, cash = tradeRandomly(t, p, h, 5, margin)
			escrow += cash
			for k := range p.Q {
				if pay := h.payout(k); pay > escrow {
					t.Fatalf("if outcome %d wins the pool pays %d from an escrow of %d", k, pay, escrow)
				}
			}
		}
	})
}

func TestPropertyExclusiveNoArbitrage(t *testing.T) {
	t.Run("no sequence of trades pays more in every outcome than it cost", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			p := genKopeckExclusive(t, 10)
			h := newHoldings(p.N())
			_, cash := tradeRandomly(t, p, h, rapid.IntRange(1, 20).Draw(t, "steps"), genMargin(t))
			least := h.payout(0)
			for k := range p.Q {
				least = min(least, h.payout(k))
			}
			if least > cash {
				t.Fatalf("paid %d net for shares that pay at least %d", cash, least)
			}
		})
	})
	t.Run("buying the same shares of every outcome costs at least what they pay", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			p := genKopeckExclusive(t, 10)
			n := rapid.Int64Range(1, 2*p.B).Draw(t, "shares")
			order := rapid.Permutation(seq(p.N())).Draw(t, "order")
			cost := int64(0)
			for _, i := range order {
				buy, err := p.BuyShares(i, Yes, n, 0)
				if err != nil {
					t.Skip(err)
				}
				cost += buy.Cost
				p = p.With(i, Yes, n)
			}
			if cost < n {
				t.Fatalf("%d shares of all %d outcomes cost %d", n, p.N(), cost)
			}
		})
	})
	t.Run("YES and NO on the same market cost at least what they pay", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			p := genKopeckExclusive(t, 10)
			i, s := genTrade(t, p)
			n := rapid.Int64Range(1, 2*p.B).Draw(t, "shares")
			first, err := p.BuyShares(i, s, n, 0)
			if err != nil {
				t.Skip(err)
			}
			second, err := p.With(i, s, n).BuyShares(i, s.Opposite(), n, 0)
			if err != nil {
				t.Skip(err)
			}
			if first.Cost+second.Cost < n {
				t.Fatalf("%d shares of both sides cost %d + %d", n, first.Cost, second.Cost)
			}
		})
	})
	t.Run("buying then selling the same shares never profits", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			p := genKopeckExclusive(t, 20)
			i, s := genTrade(t, p)
			margin := genMargin(t)
			n := rapid.Int64Range(1, 2*p.B).Draw(t, "shares")
			buy, err := p.BuyShares(i, s, n, margin)
			if err != nil {
				t.Skip(err)
			}
			sell, err := p.With(i, s, n).SellShares(i, s, n, margin)
			if err != nil {
				t.Fatalf("selling back %d shares: %v", n, err)
			}
			if sell.Refund > buy.Cost || sell.Payout > buy.Charge {
				t.Fatalf("bought %+v, sold %+v", buy, sell)
			}
		})
	})
}

func TestPropertyExclusiveBuyForSpend(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genKopeckExclusive(t, 20)
		i, s := genTrade(t, p)
		margin := genMargin(t)
		budget := rapid.Int64Range(1, 3*p.B).Draw(t, "budget")
		buy, err := p.BuyForSpend(i, s, budget, margin)
		if errors.Is(err, ErrTooSmall) || errors.Is(err, ErrPriceLimit) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if buy.Shares < 1 || buy.Charge > budget || buy.Fee != buy.Charge-buy.Cost {
			t.Fatalf("budget %d bought %+v", budget, buy)
		}
		if again, err := p.BuyShares(i, s, buy.Shares, margin); err != nil || again != buy {
			t.Fatalf("BuyShares(%d) = %+v (%v), BuyForSpend = %+v", buy.Shares, again, err, buy)
		}
		if more, err := p.BuyShares(i, s, buy.Shares+1, margin); err == nil && more.Charge <= budget {
			t.Fatalf("%d shares also fit: %+v", buy.Shares+1, more)
		}
	})
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
