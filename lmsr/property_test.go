package lmsr

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// The float-level properties hold to this relative tolerance; the formulas
// are accurate to ~1e-13, the rest is headroom for conditioning.
const propTol = 1e-9

func TestPropertyPricesAreProbabilities(t *testing.T) {
	t.Run("binary prices are in (0,1) and sum to 1", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genBinary(t)
			y, n := m.Price(Yes), m.Price(No)
			if !(y > 0 && y < 1 && n > 0 && n < 1) {
				t.Fatalf("prices (%v, %v) not in (0,1)", y, n)
			}
			if math.Abs(y+n-1) > 1e-15 {
				t.Fatalf("prices sum to %v", y+n)
			}
		})
	})
	t.Run("n-outcome prices are in (0,1) and sum to 1", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genMarket(t)
			p := make([]float64, m.N())
			if err := m.PricesInto(p); err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for i, x := range p {
				if !(x > 0 && x < 1) {
					t.Fatalf("price %d = %v", i, x)
				}
				if relErr(x, m.Price(i)) > 1e-14 {
					t.Fatalf("Price(%d) = %v, PricesInto gave %v", i, m.Price(i), x)
				}
				sum += x
			}
			if math.Abs(sum-1) > 1e-14 {
				t.Fatalf("prices sum to %v", sum)
			}
		})
	})
}

func TestPropertyCostIsMonotoneAndConvex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genBinary(t)
		s := genSide(t)
		d := exact(m.Q(s), genDelta(t, m.B, "delta"))
		if d == 0 {
			t.Skip("the trade is below the resolution of q")
		}
		first, err := m.BuyCost(s, d)
		if err != nil {
			t.Skip("past the price limit")
		}
		second, err := m.With(s, d).BuyCost(s, d)
		if err != nil {
			t.Skip("past the price limit")
		}
		if !(first > 0) {
			t.Fatalf("buying %v costs %v, want > 0", d, first)
		}
		// Convexity: the same Δ costs more once the price has risen.
		if second < first*(1-1e-12) {
			t.Fatalf("second Δ costs %v < first %v", second, first)
		}
		if c0 := m.Cost(); m.With(s, d).Cost() < c0-1e-15*math.Abs(c0) {
			t.Fatalf("cost fell when q rose")
		}
	})
}

func TestPropertyPathIndependence(t *testing.T) {
	t.Run("binary: cost(a) + cost(b after a) = cost(a+b)", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genBinary(t)
			s := genSide(t)
			a := exact(m.Q(s), genDelta(t, m.B, "a"))
			b := exact(m.Q(s)+a, genDelta(t, m.B, "b"))
			ab, err := m.BuyCost(s, a+b)
			if err != nil {
				t.Skip("past the price limit")
			}
			ca := mustBuy(t, m, s, a)
			cb := mustBuy(t, m.With(s, a), s, b)
			if !closeTo(ca+cb, ab, propTol, 0) {
				t.Fatalf("%v + %v = %v, cost(a+b) = %v", ca, cb, ca+cb, ab)
			}
		})
	})
	t.Run("n-outcome: a bundle costs the sum of its legs in any order", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genMarket(t)
			i := rapid.IntRange(0, m.N()-1).Draw(t, "i")
			j := rapid.IntRange(0, m.N()-1).Draw(t, "j")
			if i == j {
				t.Skip("same outcome")
			}
			a := exact(m.Q[i], genDelta(t, m.B, "a"))
			b := exact(m.Q[j], -genDelta(t, m.B, "b"))
			b = -b
			ca, err1 := m.BuyCost(i, a)
			rb, err2 := m.With(i, a).SellRefund(j, b)
			if err1 != nil || err2 != nil {
				t.Skip("past the price limit")
			}
			delta := make([]float64, m.N())
			delta[i], delta[j] = a, -b
			bundle, err := m.BundleCost(delta)
			if err != nil {
				t.Fatalf("BundleCost: %v", err)
			}
			// The legs may nearly cancel; compare on the scale of the legs.
			if math.Abs(ca-rb-bundle) > propTol*math.Max(ca, rb) {
				t.Fatalf("buy %v − sell %v = %v, bundle = %v", ca, rb, ca-rb, bundle)
			}
		})
	})
}

func TestPropertyInverseRoundTrip(t *testing.T) {
	t.Run("binary: shares(cost(Δ)) = Δ", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genBinary(t)
			s := genSide(t)
			d := genDelta(t, m.B, "delta")
			c, err := m.BuyCost(s, d)
			if err != nil {
				t.Skip("past the price limit")
			}
			got, err := m.SharesForSpend(s, c)
			if err != nil {
				// cost(Δ) is within float error of the limit.
				t.Skip(err)
			}
			if !closeTo(got, d, propTol, 0) {
				t.Fatalf("shares(cost(%v) = %v) = %v", d, c, got)
			}
		})
	})
	t.Run("n-outcome: shares(cost(Δ)) = Δ", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genMarket(t)
			i := rapid.IntRange(0, m.N()-1).Draw(t, "i")
			d := genDelta(t, m.B, "delta")
			c, err := m.BuyCost(i, d)
			if err != nil {
				t.Skip("past the price limit")
			}
			got, err := m.SharesForSpend(i, c)
			if err != nil {
				t.Skip(err)
			}
			if !closeTo(got, d, propTol, 0) {
				t.Fatalf("shares(cost(%v) = %v) = %v", d, c, got)
			}
		})
	})
}

func TestPropertyShiftInvariance(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Integer q and k, so that q + k is exact and the property is
		// about the pricer, not about float addition.
		m := genMarket(t)
		for i := range m.Q {
			m.Q[i] = math.Round(m.Q[i])
		}
		k := math.Round(rapid.Float64Range(-1e14, 1e14).Draw(t, "k"))
		shifted := m.Clone()
		for i := range shifted.Q {
			shifted.Q[i] += k
		}
		// C(q+k) = C(q) + k up to the rounding of q+k itself.
		scale := math.Abs(m.Cost()) + math.Abs(k) + m.B
		if d := math.Abs(shifted.Cost() - (m.Cost() + k)); d > 1e-14*scale {
			t.Fatalf("C(q+k) − C(q) − k = %v", d)
		}
		for i := range m.Q {
			if shifted.Price(i) != m.Price(i) {
				t.Fatalf("price %d moved from %v to %v", i, m.Price(i), shifted.Price(i))
			}
		}
	})
}

func TestPropertyMirrorSymmetry(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genBinary(t)
		mirror := Binary{B: m.B, QYes: m.QNo, QNo: m.QYes}
		if m.Price(Yes) != mirror.Price(No) || m.Cost() != mirror.Cost() {
			t.Fatalf("mirror differs: %v/%v vs %v/%v", m.Price(Yes), m.Cost(), mirror.Price(No), mirror.Cost())
		}
		d := genDelta(t, m.B, "delta")
		c1, e1 := m.BuyCost(Yes, d)
		c2, e2 := mirror.BuyCost(No, d)
		r1, f1 := m.SellRefund(No, d)
		r2, f2 := mirror.SellRefund(Yes, d)
		if c1 != c2 || (e1 == nil) != (e2 == nil) || r1 != r2 || (f1 == nil) != (f2 == nil) {
			t.Fatalf("mirrored trades differ: buy %v/%v, sell %v/%v", c1, c2, r1, r2)
		}
	})
}

func TestPropertyMarginalBracket(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genBinary(t)
		s := genSide(t)
		d := exact(m.Q(s), genDelta(t, m.B, "delta"))
		c, err := m.BuyCost(s, d)
		if err != nil {
			t.Skip("past the price limit")
		}
		before, after := m.Price(s), m.With(s, d).Price(s)
		avg := c / d
		if avg < before*(1-1e-12) || avg > after*(1+1e-12) {
			t.Fatalf("average price %v outside [%v, %v]", avg, before, after)
		}
		d = exact(m.Q(s), -d)
		r, err := m.SellRefund(s, -d)
		if err != nil {
			t.Skip("past the price limit")
		}
		low := m.With(s, d).Price(s)
		d = -d
		if avg := r / d; avg < low*(1-1e-12) || avg > before*(1+1e-12) {
			t.Fatalf("average sale price %v outside [%v, %v]", avg, low, before)
		}
	})
}

func TestPropertyInitialPrices(t *testing.T) {
	t.Run("InitialQ opens within half a share of π", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			b := rapid.Int64Range(1, 1e12).Draw(t, "b")
			p := rapid.Float64Range(1e-4, 1-1e-4).Draw(t, "p")
			qy, qn, err := InitialQ(b, p)
			if err != nil {
				t.Fatal(err)
			}
			if qy < 0 || qn < 0 || min(qy, qn) != 0 {
				t.Fatalf("q = (%d, %d), want non-negative with a zero", qy, qn)
			}
			m := Binary{B: float64(b), QYes: float64(qy), QNo: float64(qn)}
			// Rounding q moves the log-odds by at most half a share / b.
			// Price(No) is the accurate complement near 1.
			got := math.Log(m.Price(Yes)) - math.Log(m.Price(No))
			want := math.Log(p) - math.Log1p(-p)
			if math.Abs(got-want) > 0.5/float64(b)+1e-12 {
				t.Fatalf("opens at log-odds %v, want %v", got, want)
			}
		})
	})
	t.Run("InitialQuantities opens at π and owes b·ln(1/min π)", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			b := genB(t)
			w := rapid.SliceOfN(rapid.Float64Range(0.01, 1), 2, 10).Draw(t, "weights")
			sum := 0.0
			for _, x := range w {
				sum += x
			}
			probs := make([]float64, len(w))
			minP := 1.0
			for i, x := range w {
				probs[i] = x / sum
				minP = math.Min(minP, probs[i])
			}
			q, err := InitialQuantities(b, probs)
			if err != nil {
				t.Fatal(err)
			}
			m := Market{B: b, Q: q}
			for i, p := range probs {
				if relErr(m.Price(i), p) > 1e-12 {
					t.Fatalf("price %d = %v, want %v", i, m.Price(i), p)
				}
			}
			want := b * math.Log(1/minP)
			if relErr(m.WorstCaseLoss(), want) > 1e-12 {
				t.Fatalf("worst-case loss %v, want %v", m.WorstCaseLoss(), want)
			}
			if got, err := MaxLoss(b, probs); err != nil || relErr(got, want) > 1e-12 {
				t.Fatalf("MaxLoss = %v, %v; want %v", got, err, want)
			}
		})
	})
}

func TestPropertyFiniteAtExtremes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := math.Exp(rapid.Float64Range(0, math.Log(1e12)).Draw(t, "lnb"))
		m := Binary{
			B:        b,
			QYes:     rapid.Float64Range(-1e15, 1e15).Draw(t, "qYes"),
			QNo:      rapid.Float64Range(-1e15, 1e15).Draw(t, "qNo"),
			MinPrice: rapid.SampledFrom([]float64{0, 5e-324}).Draw(t, "minPrice"),
		}
		d := math.Exp(rapid.Float64Range(-5, math.Log(1e15)).Draw(t, "lnDelta"))
		vals := []float64{m.Cost(), m.Price(Yes), m.Price(No), m.WorstCaseLoss()}
		for _, s := range []Side{Yes, No} {
			c, _ := m.BuyCost(s, d)
			r, _ := m.SellRefund(s, d)
			x, _ := m.SharesForSpend(s, d)
			vals = append(vals, c, r, x)
			if buy, err := BuyShares(m, s, int64(d)+1, 0.05); err == nil && (buy.Cost < 1 || buy.Charge < buy.Cost) {
				t.Fatalf("BuyShares = %+v", buy)
			}
		}
		mk := Market{B: b, Q: []float64{m.QYes, m.QNo, (m.QYes + m.QNo) / 2}, MinPrice: m.MinPrice}
		vals = append(vals, mk.Cost(), mk.Price(0), mk.Price(2), mk.WorstCaseLoss())
		for i := range 3 {
			c, _ := mk.BuyCost(i, d)
			r, _ := mk.SellRefund(i, d)
			x, _ := mk.SharesForSpend(i, d)
			bc, _ := mk.BundleCost([]float64{d, -d, d / 2})
			vals = append(vals, c, r, x, bc)
		}
		for k, v := range vals {
			if !finite(v) || v < -1e16 {
				t.Fatalf("value %d = %v", k, v)
			}
		}
	})
}
