package lmsr

import (
	"fmt"
	"math"
)

// Market is the state of an n-outcome LMSR market (n ≥ 2): liquidity B and
// the outstanding quantity Q[i] of each outcome, in one unit. Exactly one
// outcome pays 1 per share. Like Binary it is a value type: methods read Q
// and never write it, and nothing keeps a reference to it after returning.
//
// MinPrice is the price limit (0 means DefaultMinPrice): a trade is refused
// when it moves a price further below MinPrice or further above
// 1 − MinPrice. A state opened outside the band is allowed; trades that bring
// its prices back toward the band are too.
//
// Methods without an error result return 0 for a state that fails Validate.
type Market struct {
	B        float64
	Q        []float64
	MinPrice float64
}

// Validate reports whether m is a usable market: B in (0, MaxQuantity], at
// least two outcomes, every quantity finite within ±MaxQuantity, and
// MinPrice in [0, 0.5).
func (m Market) Validate() error {
	if !validB(m.B) {
		return fmt.Errorf("%w: b = %v, want 0 < b <= 2^53", ErrInvalidLiquidity, m.B)
	}
	if len(m.Q) < 2 {
		return fmt.Errorf("%w: %d outcomes, want at least 2", ErrDimension, len(m.Q))
	}
	for i, q := range m.Q {
		if !finiteQ(q) {
			return fmt.Errorf("%w: q[%d] = %v, want finite within ±2^53", ErrInvalidQuantity, i, q)
		}
	}
	if !validMinPrice(m.MinPrice) {
		return fmt.Errorf("%w: MinPrice = %v, want [0, 0.5)", ErrInvalidProbability, m.MinPrice)
	}
	return nil
}

func (m Market) ok() bool {
	if !validB(m.B) || len(m.Q) < 2 || !validMinPrice(m.MinPrice) {
		return false
	}
	for _, q := range m.Q {
		if !finiteQ(q) {
			return false
		}
	}
	return true
}

// N returns the number of outcomes.
func (m Market) N() int { return len(m.Q) }

// Clone returns a copy of m that shares no memory with it.
func (m Market) Clone() Market {
	m.Q = append([]float64(nil), m.Q...)
	return m
}

// With returns a copy of m (with its own Q) in which delta, possibly
// negative, is added to Q[i]. It does not validate; an index out of range
// returns a plain copy.
func (m Market) With(i int, delta float64) Market {
	m = m.Clone()
	if i >= 0 && i < len(m.Q) {
		m.Q[i] += delta
	}
	return m
}

// lse returns the maximum quantity mx and ln S with S = Σ e^{(q_j − mx)/b},
// so that C(q) = mx + b·ln S (the log-sum-exp trick: S is in [1, n]).
func (m Market) lse() (mx, lnS float64) {
	mx = math.Inf(-1)
	for _, q := range m.Q {
		mx = max(mx, q)
	}
	s := 0.0
	for _, q := range m.Q {
		s += math.Exp((q - mx) / m.B)
	}
	return mx, math.Log(s)
}

// scanned is one pass over a state, as seen by a trade in outcome i.
type scanned struct {
	mx, lnS  float64 // C(q) = mx + b·ln S
	mnO, mxO float64 // smallest and largest quantity of the outcomes other than i
}

// scan computes the log-sum-exp of q and the range of the quantities other
// than Q[i] (all of them for i < 0), which the price limits need.
func (m Market) scan(i int) scanned {
	st := scanned{mx: math.Inf(-1), mnO: math.Inf(1), mxO: math.Inf(-1)}
	for j, q := range m.Q {
		st.mx = max(st.mx, q)
		if j != i {
			st.mnO = min(st.mnO, q)
			st.mxO = max(st.mxO, q)
		}
	}
	s := 0.0
	for _, q := range m.Q {
		s += math.Exp((q - st.mx) / m.B)
	}
	st.lnS = math.Log(s)
	return st
}

// Cost returns C(q) = b·ln Σ e^{q_i/b}, by log-sum-exp.
func (m Market) Cost() float64 {
	if !m.ok() {
		return 0
	}
	mx, lnS := m.lse()
	return mx + m.B*lnS
}

// Price returns the instantaneous price of outcome i, e^{q_i/b}/Σ_j e^{q_j/b}
// (0 for an invalid state or index).
func (m Market) Price(i int) float64 {
	if !m.ok() || i < 0 || i >= len(m.Q) {
		return 0
	}
	mx, lnS := m.lse()
	return math.Exp((m.Q[i]-mx)/m.B - lnS)
}

// PricesInto writes the price of every outcome into dst[:N()] without
// allocating. The prices are in [0, 1] and sum to 1 up to rounding.
func (m Market) PricesInto(dst []float64) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if len(dst) < len(m.Q) {
		return fmt.Errorf("%w: dst holds %d prices, market has %d", ErrDimension, len(dst), len(m.Q))
	}
	mx := math.Inf(-1)
	for _, q := range m.Q {
		mx = max(mx, q)
	}
	s := 0.0
	for j, q := range m.Q {
		dst[j] = math.Exp((q - mx) / m.B)
		s += dst[j]
	}
	for j := range m.Q {
		dst[j] /= s
	}
	return nil
}

// Prices returns a new slice with the price of every outcome (nil for an
// invalid state). PricesInto is the allocation-free form.
func (m Market) Prices() []float64 {
	p := make([]float64, len(m.Q))
	if m.PricesInto(p) != nil {
		return nil
	}
	return p
}

// WorstCaseLoss returns the most the market maker can lose from this state
// on: C(q) − min_i q_i. For a market opened with InitialQuantities it is
// b·ln(1/min π_i).
func (m Market) WorstCaseLoss() float64 {
	if !m.ok() {
		return 0
	}
	mx, lnS := m.lse()
	mn := math.Inf(1)
	for _, q := range m.Q {
		mn = min(mn, q)
	}
	return (mx - mn) + m.B*lnS
}

func (m Market) checkTrade(i int, delta float64) error {
	if !m.ok() {
		return m.Validate()
	}
	if i < 0 || i >= len(m.Q) {
		return fmt.Errorf("%w: outcome %d of %d", ErrDimension, i, len(m.Q))
	}
	if !(delta >= 0 && delta <= MaxQuantity) {
		return fmt.Errorf("%w: trade size %v, want 0 <= delta <= 2^53", ErrInvalidQuantity, delta)
	}
	return nil
}

// BuyCost returns the cost C(q + Δ·e_i) − C(q) of delta shares of outcome i,
// by the closed form b·log1p(p_i·expm1(Δ/b)) (log domain at the extremes).
// It refuses (ErrPriceLimit) a buy that would push another outcome's price
// below MinPrice.
func (m Market) BuyCost(i int, delta float64) (float64, error) {
	if err := m.checkTrade(i, delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, nil
	}
	if !finiteQ(m.Q[i] + delta) {
		return 0, fmt.Errorf("%w: q[%d] + %v leaves ±2^53", ErrInvalidQuantity, i, delta)
	}
	b := m.B
	st := m.scan(i)
	blp := (m.Q[i] - st.mx) - b*st.lnS // b·ln p_i, finite where p_i underflows
	c, ok := buyCostDirect(b, math.Exp(blp/b), delta)
	if !ok {
		c = buyCostLog(b, blp, delta)
	}
	// The buy raises C by c, which divides every other price by e^{c/b};
	// the cheapest of them must stay at or above the limit.
	if (st.mnO-st.mx)/b-st.lnS-c/b < lnMin(m.MinPrice) {
		return 0, ErrPriceLimit
	}
	return c, nil
}

// SellRefund returns the refund C(q) − C(q − Δ·e_i) for selling delta shares
// of outcome i, by −b·log1p(−p_i·(1 − e^{−Δ/b})), switching to a
// log-sum-exp of the remaining terms when that argument nears −1. It refuses
// (ErrPriceLimit) a sale that would push p_i below MinPrice or another price
// above 1 − MinPrice.
func (m Market) SellRefund(i int, delta float64) (float64, error) {
	if err := m.checkTrade(i, delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, nil
	}
	if !finiteQ(m.Q[i] - delta) {
		return 0, fmt.Errorf("%w: q[%d] − %v leaves ±2^53", ErrInvalidQuantity, i, delta)
	}
	b := m.B
	st := m.scan(i)
	lp := (m.Q[i]-st.mx)/b - st.lnS // ln p_i
	r := m.sellRefund(i, delta, st, math.Exp(lp))
	// The sale lowers C by r: every other price is multiplied by e^{r/b},
	// and p_i by e^{(r−Δ)/b}.
	if lp+(r-delta)/b < lnMin(m.MinPrice) {
		return 0, ErrPriceLimit
	}
	if math.Exp((st.mxO-st.mx)/b-st.lnS+r/b) > 1-minPriceOr(m.MinPrice) {
		return 0, ErrPriceLimit
	}
	return r, nil
}

func (m Market) sellRefund(i int, delta float64, st scanned, p float64) float64 {
	b := m.B
	if y := p * -math.Expm1(-delta/b); y <= 0.5 {
		return -b * math.Log1p(-y)
	}
	// refund = −b·ln((1 − p_i) + p_i·e^{−Δ/b}) from the logs of the two
	// terms. b·ln(1 − p_i) = b·ln Σ_{j≠i} e^{(q_j−mx)/b} − b·ln S is
	// computed around the largest other quantity mo, so that it stays finite
	// when 1 − p_i underflows.
	mo := st.mxO
	r := 0.0
	for j, q := range m.Q {
		if j != i {
			r += math.Exp((q - mo) / b)
		}
	}
	blnR := b * math.Log(r)
	u := (mo - st.mx) + blnR - b*st.lnS      // b·ln(1 − p_i)
	v := (m.Q[i] - st.mx) - b*st.lnS - delta // b·ln p_i − Δ
	uv := ((mo - m.Q[i]) + delta) + blnR     // u − v without the large terms
	return -max(u, v) - b*math.Log1p(math.Exp(-math.Abs(uv)/b))
}

// SharesForSpend returns how many shares of outcome i a net spend buys: the
// Δ with BuyCost(i, Δ) = spend, b·ln(1 + (e^{M/b} − 1)/p_i), with the
// large-M/b branch where that overflows. It refuses (ErrPriceLimit) a spend
// that would push another price below MinPrice.
func (m Market) SharesForSpend(i int, spend float64) (float64, error) {
	if err := m.checkTrade(i, spend); err != nil {
		return 0, err
	}
	if spend == 0 {
		return 0, nil
	}
	b := m.B
	st := m.scan(i)
	blp := (m.Q[i] - st.mx) - b*st.lnS
	delta, ok := sharesDirect(b, math.Exp(blp/b), spend)
	if !ok {
		delta = sharesLog(b, blp, spend)
	}
	// Every share costs less than 1, so Δ ≥ M; this also maps the
	// degenerate underflow cases to the house's side.
	if !(delta >= spend) {
		delta = spend
	}
	if (st.mnO-st.mx)/b-st.lnS-spend/b < lnMin(m.MinPrice) {
		return 0, ErrPriceLimit
	}
	if !finiteQ(m.Q[i] + delta) {
		return 0, fmt.Errorf("%w: spend %v buys %v shares, leaving ±2^53", ErrInvalidQuantity, spend, delta)
	}
	return delta, nil
}

// BundleCost returns the net cost C(q + Δ) − C(q) of a mixed bundle: delta[i]
// shares of each outcome i, bought where positive and sold where negative. A
// negative result is a net refund. It is computed as
// b·log1p(Σ_i p_i·expm1(Δ_i/b)), or, when that would overflow or nearly
// reach log1p(−1), as (max q' − max q) + b·ln(S'/S). The bundle is refused
// (ErrPriceLimit) when it moves some price further outside
// [MinPrice, 1 − MinPrice].
func (m Market) BundleCost(delta []float64) (float64, error) {
	if !m.ok() {
		return 0, m.Validate()
	}
	if len(delta) != len(m.Q) {
		return 0, fmt.Errorf("%w: bundle of %d for %d outcomes", ErrDimension, len(delta), len(m.Q))
	}
	for j, d := range delta {
		if !finiteQ(d) || !finiteQ(m.Q[j]+d) {
			return 0, fmt.Errorf("%w: bundle[%d] = %v with q = %v", ErrInvalidQuantity, j, d, m.Q[j])
		}
	}
	b := m.B
	mx, lnS := m.lse()
	mx2 := math.Inf(-1)
	for j, q := range m.Q {
		mx2 = max(mx2, q+delta[j])
	}
	s2 := 0.0
	for j, q := range m.Q {
		s2 += math.Exp((q + delta[j] - mx2) / b)
	}
	lnS2 := math.Log(s2)

	lmp := lnMin(m.MinPrice)
	for j, q := range m.Q {
		before := (q-mx)/b - lnS
		after := (q+delta[j]-mx2)/b - lnS2
		if after < before && after < lmp {
			return 0, ErrPriceLimit
		}
		if after > before && -math.Expm1(after) < minPriceOr(m.MinPrice) {
			return 0, ErrPriceLimit
		}
	}

	y, direct := 0.0, true
	for j, q := range m.Q {
		d := delta[j]
		if d == 0 {
			continue
		}
		lp := (q-mx)/b - lnS
		x := d / b
		if x > 0 && lp+x > expSafe-100 {
			direct = false
			break
		}
		if p := math.Exp(lp); p >= pTiny && x <= expSafe {
			y += p * math.Expm1(x)
		} else if x > 0 {
			y += math.Exp(lp + bLnExpm1(b, d)/b)
		} else {
			y -= math.Exp(lp + log1mexp(-x))
		}
	}
	if direct && y > -0.5 {
		return b * math.Log1p(y), nil
	}
	return (mx2 - mx) + b*(lnS2-lnS), nil
}

// InitialQuantities returns the quantities q_i = b·ln π_i that open an
// n-outcome market of liquidity b at probabilities probs. Each π_i must be in
// (0, 1) and their sum within 1e-9 of 1; the vector is normalised so the
// opening prices equal probs/Σprobs. The market maker's worst-case loss from
// this state is b·ln(1/min π_i).
func InitialQuantities(b float64, probs []float64) ([]float64, error) {
	if !validB(b) {
		return nil, fmt.Errorf("%w: b = %v, want 0 < b <= 2^53", ErrInvalidLiquidity, b)
	}
	if len(probs) < 2 {
		return nil, fmt.Errorf("%w: %d outcomes, want at least 2", ErrDimension, len(probs))
	}
	sum := 0.0
	for i, p := range probs {
		if !(p > 0 && p < 1) {
			return nil, fmt.Errorf("%w: probs[%d] = %v, want (0, 1)", ErrInvalidProbability, i, p)
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		return nil, fmt.Errorf("%w: probabilities sum to %v, want 1", ErrInvalidProbability, sum)
	}
	lnSum := math.Log(sum)
	q := make([]float64, len(probs))
	for i, p := range probs {
		q[i] = b * (math.Log(p) - lnSum)
		if !finiteQ(q[i]) {
			return nil, fmt.Errorf("%w: b·ln π[%d] = %v leaves ±2^53", ErrInvalidQuantity, i, q[i])
		}
	}
	return q, nil
}

// MaxLoss returns b·ln(1/min_i π_i), the most the market maker can lose on a
// market of liquidity b opened at probabilities probs (validated as in
// InitialQuantities): the subsidy to escrow. For a state already trading,
// use WorstCaseLoss.
func MaxLoss(b float64, probs []float64) (float64, error) {
	if _, err := InitialQuantities(b, probs); err != nil {
		return 0, err
	}
	sum, mn := 0.0, 1.0
	for _, p := range probs {
		sum += p
		mn = min(mn, p)
	}
	// −ln(π_min/Σπ), with the sum kept for the same normalisation as
	// InitialQuantities.
	return b * (math.Log(sum) - math.Log(mn)), nil
}
