package lmsr

import (
	"math"
	"math/big"
	"testing"
)

// The reference is evaluated with 320-bit (≈96 decimal digit) big.Float
// arithmetic and its own exp and log, written here from their series so that
// it shares no code, and no float64 rounding, with the implementation.
const refPrec = 320

func newF() *big.Float               { return new(big.Float).SetPrec(refPrec) }
func bf(x float64) *big.Float        { return newF().SetFloat64(x) }
func f64(x *big.Float) float64       { v, _ := x.Float64(); return v }
func add(x, y *big.Float) *big.Float { return newF().Add(x, y) }
func sub(x, y *big.Float) *big.Float { return newF().Sub(x, y) }
func mul(x, y *big.Float) *big.Float { return newF().Mul(x, y) }
func quo(x, y *big.Float) *big.Float { return newF().Quo(x, y) }

// negligible reports whether term no longer changes sum at refPrec.
func negligible(term, sum *big.Float) bool {
	return term.Sign() == 0 || (sum.Sign() != 0 && term.MantExp(nil) < sum.MantExp(nil)-refPrec-8)
}

// bigExp returns e^x: x is scaled by 2^−k below 2^−10, the Taylor series is
// summed, and the result squared k times.
func bigExp(x *big.Float) *big.Float {
	if x.Sign() == 0 {
		return bf(1)
	}
	k := max(x.MantExp(nil)+10, 0)
	r := newF().SetMantExp(x, -k)
	sum, term := bf(1), bf(1)
	for i := 1; ; i++ {
		term = quo(mul(term, r), bf(float64(i)))
		sum = add(sum, term)
		if negligible(term, sum) {
			break
		}
	}
	for range k {
		sum = mul(sum, sum)
	}
	return sum
}

// bigExpm1 returns e^x − 1, by its own series for small x (no cancellation).
func bigExpm1(x *big.Float) *big.Float {
	if f := math.Abs(f64(x)); f >= 0.5 {
		return sub(bigExp(x), bf(1))
	}
	sum, term := newF(), bf(1)
	for i := 1; ; i++ {
		term = quo(mul(term, x), bf(float64(i)))
		sum = add(sum, term)
		if negligible(term, sum) {
			return sum
		}
	}
}

// atanh2 returns 2·atanh(t) = ln((1+t)/(1−t)) by its series, for |t| ≤ 1/3.
func atanh2(t *big.Float) *big.Float {
	t2 := mul(t, t)
	sum, pow := newF(), newF().Set(t)
	for k := 0; ; k++ {
		term := quo(pow, bf(float64(2*k+1)))
		sum = add(sum, term)
		if negligible(term, sum) {
			break
		}
		pow = mul(pow, t2)
	}
	return mul(sum, bf(2))
}

// bigLog returns ln y for y > 0: y = m·2^e with m in [0.5, 1), and
// ln m = 2·atanh((m−1)/(m+1)).
func bigLog(y *big.Float) *big.Float {
	m := newF()
	e := y.MantExp(m)
	lnm := atanh2(quo(sub(m, bf(1)), add(m, bf(1))))
	ln2 := atanh2(quo(bf(1), bf(3))) // ln 2 = 2·atanh(1/3)
	return add(lnm, mul(bf(float64(e)), ln2))
}

// bigLog1p returns ln(1+y) without forming 1+y when y is small.
func bigLog1p(y *big.Float) *big.Float {
	if f := math.Abs(f64(y)); f < 0.5 {
		return atanh2(quo(y, add(bf(2), y)))
	}
	return bigLog(add(bf(1), y))
}

// refState holds e_j = e^{(q_j − max q)/b} and S = Σ e_j for a state.
type refState struct {
	b, mx *big.Float
	e     []*big.Float
	s     *big.Float
}

func newRef(b float64, q []float64) refState {
	mx := math.Inf(-1)
	for _, x := range q {
		mx = math.Max(mx, x)
	}
	r := refState{b: bf(b), mx: bf(mx), s: newF()}
	for _, x := range q {
		// x − mx is exact at 320 bits; the division rounds at 320 bits.
		e := bigExp(quo(sub(bf(x), r.mx), r.b))
		r.e = append(r.e, e)
		r.s = add(r.s, e)
	}
	return r
}

func (r refState) cost() *big.Float       { return add(r.mx, mul(r.b, bigLog(r.s))) }
func (r refState) price(i int) *big.Float { return quo(r.e[i], r.s) }
func (r refState) rest(i int) *big.Float  { return quo(sub(r.s, r.e[i]), r.s) } // 1 − p_i, no cancellation: S − e_i sums the others

// buy is b·ln(1 + p·(e^{Δ/b} − 1)).
func (r refState) buy(i int, d float64) *big.Float {
	return mul(r.b, bigLog1p(mul(r.price(i), bigExpm1(quo(bf(d), r.b)))))
}

// sell is −b·ln((1 − p) + p·e^{−Δ/b}).
func (r refState) sell(i int, d float64) *big.Float {
	x := add(r.rest(i), mul(r.price(i), bigExp(quo(bf(-d), r.b))))
	return newF().Neg(mul(r.b, bigLog(x)))
}

// shares is b·ln(1 + (e^{M/b} − 1)/p).
func (r refState) shares(i int, m float64) *big.Float {
	return mul(r.b, bigLog1p(quo(bigExpm1(quo(bf(m), r.b)), r.price(i))))
}

// bundle is b·ln(Σ p_j·e^{Δ_j/b}).
func (r refState) bundle(d []float64) *big.Float {
	y := newF()
	for j := range d {
		y = add(y, mul(r.price(j), bigExpm1(quo(bf(d[j]), r.b))))
	}
	return mul(r.b, bigLog1p(y))
}

func TestReferenceAgreesWithDefinition(t *testing.T) {
	// The closed forms of the reference against C(q') − C(q), both at 320
	// bits: a check of the reference itself.
	b, q := 137.5, []float64{10, -40, 250}
	r := newRef(b, q)
	for _, tt := range []struct {
		name string
		got  *big.Float
		q2   []float64
		neg  bool
	}{
		{"the buy closed form is the cost difference", r.buy(1, 33), []float64{10, -7, 250}, false},
		{"the sell closed form is the cost difference", r.sell(2, 500), []float64{10, -40, -250}, true},
		{"the bundle closed form is the cost difference", r.bundle([]float64{5, -6, 7}), []float64{15, -46, 257}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := sub(newRef(b, tt.q2).cost(), r.cost())
			if tt.neg {
				want.Neg(want)
			}
			diff := f64(sub(tt.got, want))
			if math.Abs(diff) > 1e-60 {
				t.Fatalf("closed form %v, definition %v", f64(tt.got), f64(want))
			}
		})
	}
	if e := f64(bigExp(bf(1))); e != math.E {
		t.Fatalf("bigExp(1) = %v", e)
	}
	if l := f64(bigLog(bf(10))); l != math.Ln10 {
		t.Fatalf("bigLog(10) = %v", l)
	}
}

// accuracyCases are states and trades from the everyday to the extremes.
// MinPrice is set to the smallest float so that the extremes are priced
// rather than refused; a zero trade size skips that operation.
var accuracyCases = []struct {
	name             string
	b                float64
	q                []float64
	i                int
	buy, sell, spend float64
}{
	{"an even platform market buying one share", 10000, []float64{0, 0}, 0, 1, 1, 1},
	{"an even market with b = 1e12 buying one share (Δ/b = 1e-12)", 1e12, []float64{0, 0}, 0, 1, 1, 1},
	{"a market opened at 70% trading a fraction of b", 10000, []float64{8473, 0}, 0, 5000, 5000, 2000},
	{"b = 1 with quantities near 1e15", 1, []float64{1e15, 1e15 + 3}, 0, 2, 2, 2},
	{"b = 1e12 with quantities near 1e15", 1e12, []float64{1e15, 9.99e14}, 1, 1e9, 1e9, 1e9},
	{"a price near the 1e-6 limit", 100, []float64{0, 1381}, 0, 10, 0, 0.001},
	{"a price near 1 − 1e-6, sold down (the log-sum-exp refund)", 100, []float64{1381, 0}, 0, 0, 1000, 0},
	{"a price of 1 − 2e-9 sold past the other side", 10, []float64{200, 0}, 0, 0, 150, 0},
	{"a price of e^-700 bought up to e^-20 (the log-domain buy)", 1, []float64{0, 700}, 0, 680, 0, 1},
	{"a price of e^-705 with a one-kopeck spend (the large branch)", 1, []float64{0, 705}, 0, 0, 0, 1},
	{"a spend of 705·b (the large-M/b branch)", 1, []float64{0, 0}, 0, 0, 0, 705},
	{"an even market selling one share on b = 1e6", 1e6, []float64{0, 0}, 1, 0, 1, 0},
	{"ten outcomes buying a quarter of b", 1000, []float64{0, 137.5, 275, 412.5, 550, 687.5, 825, 962.5, 1100, 1237.5}, 3, 250, 250, 250},
	{"ten outcomes with the favourite sold", 1000, []float64{0, 137.5, 275, 412.5, 550, 687.5, 825, 962.5, 1100, 5000}, 9, 100, 3000, 100},
	{"three outcomes with a fractional b", 0.37, []float64{1.5, -2.25, 0.125}, 2, 0.01, 0.9, 0.05},
}

func TestAccuracyAgainstHighPrecision(t *testing.T) {
	const tol = 1e-9
	worst := 0.0
	check := func(t *testing.T, what string, got float64, err error, want *big.Float) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		w := f64(want)
		e := relErr(got, w)
		worst = math.Max(worst, e)
		if e > tol {
			t.Errorf("%s = %v, reference %v, relative error %.2g", what, got, w, e)
		}
	}
	for _, tt := range accuracyCases {
		t.Run(tt.name, func(t *testing.T) {
			r := newRef(tt.b, tt.q)
			m := Market{B: tt.b, Q: tt.q, MinPrice: 5e-324}
			check(t, "Market.Cost", m.Cost(), nil, r.cost())
			check(t, "Market.Price", m.Price(tt.i), nil, r.price(tt.i))
			check(t, "Market.WorstCaseLoss", m.WorstCaseLoss(), nil, sub(r.cost(), bf(minOf(tt.q))))
			if tt.buy > 0 {
				got, err := m.BuyCost(tt.i, tt.buy)
				check(t, "Market.BuyCost", got, err, r.buy(tt.i, tt.buy))
			}
			if tt.sell > 0 {
				got, err := m.SellRefund(tt.i, tt.sell)
				check(t, "Market.SellRefund", got, err, r.sell(tt.i, tt.sell))
			}
			if tt.spend > 0 {
				got, err := m.SharesForSpend(tt.i, tt.spend)
				check(t, "Market.SharesForSpend", got, err, r.shares(tt.i, tt.spend))
			}
			if tt.buy > 0 && tt.sell > 0 {
				d := make([]float64, len(tt.q))
				d[tt.i] = tt.buy
				d[(tt.i+1)%len(d)] = -tt.sell
				// A bundle's legs may cancel to far below the size of
				// each leg, and no float64 formula can do better than a
				// few ulps of the legs; so the error is measured against
				// them.
				got, err := m.BundleCost(d)
				if err != nil {
					t.Errorf("Market.BundleCost: %v", err)
				} else if want, scale := f64(r.bundle(d)), f64(r.buy(tt.i, tt.buy))+f64(r.sell((tt.i+1)%len(d), tt.sell)); math.Abs(got-want) > tol*scale {
					t.Errorf("Market.BundleCost = %v, reference %v, legs %v", got, want, scale)
				}
			}
			if len(tt.q) != 2 {
				return
			}
			bm := Binary{B: tt.b, QYes: tt.q[0], QNo: tt.q[1], MinPrice: 5e-324}
			s := Side(tt.i)
			check(t, "Binary.Cost", bm.Cost(), nil, r.cost())
			check(t, "Binary.Price", bm.Price(s), nil, r.price(tt.i))
			check(t, "Binary.Price of the other side", bm.Price(s.Opposite()), nil, r.price(1-tt.i))
			check(t, "Binary.WorstCaseLoss", bm.WorstCaseLoss(), nil, sub(r.cost(), bf(minOf(tt.q))))
			if tt.buy > 0 {
				got, err := bm.BuyCost(s, tt.buy)
				check(t, "Binary.BuyCost", got, err, r.buy(tt.i, tt.buy))
			}
			if tt.sell > 0 {
				got, err := bm.SellRefund(s, tt.sell)
				check(t, "Binary.SellRefund", got, err, r.sell(tt.i, tt.sell))
			}
			if tt.spend > 0 {
				got, err := bm.SharesForSpend(s, tt.spend)
				check(t, "Binary.SharesForSpend", got, err, r.shares(tt.i, tt.spend))
			}
		})
	}
	t.Logf("largest relative error: %.3g", worst)
}

func minOf(q []float64) float64 {
	m := math.Inf(1)
	for _, x := range q {
		m = math.Min(m, x)
	}
	return m
}
