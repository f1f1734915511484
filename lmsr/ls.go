package lmsr

import (
	"fmt"
	"math"
)

// LS is the liquidity-sensitive LMSR of Othman, Pennock, Reeves and
// Sandholm ("A practical liquidity-sensitive automated market maker", 2013):
// an n-outcome maker whose liquidity grows with volume,
//
//	b(q) = α·Σ_i q_i,   C(q) = b(q)·ln Σ_i e^{q_i/b(q)}.
//
// Its prices are π_i + α·H(π), where π = softmax(q/b(q)) and H is the
// entropy of π, so they sum to more than 1 (the maker's built-in
// commission):
//
//	1 ≤ Σ_i p_i = 1 + α·n·H(π) ≤ 1 + α·n·ln n.
//
// α = v/(n·ln n) caps that commission at v (see AlphaForCommission). The
// maker is defined on q ≥ 0 with Σq > 0, so markets open at a small positive
// q rather than at 0. Like Market, LS is a value type and never writes Q.
//
// LS is for research: it has no price limit and no kopeck-level helpers.
type LS struct {
	Alpha float64
	Q     []float64
}

// AlphaForCommission returns the α for which the prices of an n-outcome LS
// market sum to at most 1 + v: α = v/(n·ln n).
func AlphaForCommission(v float64, n int) float64 {
	return v / (float64(n) * math.Log(float64(n)))
}

// Validate reports whether m is a usable LS market: α positive and finite,
// at least two outcomes, quantities in [0, MaxQuantity] with a positive sum.
func (m LS) Validate() error {
	if !(m.Alpha > 0 && m.Alpha <= MaxQuantity) {
		return fmt.Errorf("%w: alpha = %v, want 0 < alpha <= 2^53", ErrInvalidLiquidity, m.Alpha)
	}
	if len(m.Q) < 2 {
		return fmt.Errorf("%w: %d outcomes, want at least 2", ErrDimension, len(m.Q))
	}
	sum := 0.0
	for i, q := range m.Q {
		if !(q >= 0 && q <= MaxQuantity) {
			return fmt.Errorf("%w: q[%d] = %v, want 0 <= q <= 2^53", ErrInvalidQuantity, i, q)
		}
		sum += q
	}
	if !(m.Alpha*sum > 0) {
		return fmt.Errorf("%w: b(q) = α·Σq = 0; LS needs a positive opening quantity", ErrInvalidQuantity)
	}
	return nil
}

// Liquidity returns b(q) = α·Σ q_i (0 for an invalid state).
func (m LS) Liquidity() float64 {
	if m.Validate() != nil {
		return 0
	}
	return m.liquidity(-1, 0)
}

func (m LS) liquidity(i int, qi float64) float64 {
	sum := 0.0
	for j, q := range m.Q {
		if j == i {
			q = qi
		}
		sum += q
	}
	return m.Alpha * sum
}

// cost evaluates C at Q with Q[i] replaced by qi (i < 0: no replacement).
func (m LS) cost(i int, qi float64) float64 {
	b := m.liquidity(i, qi)
	mx := math.Inf(-1)
	for j, q := range m.Q {
		if j == i {
			q = qi
		}
		mx = max(mx, q)
	}
	s := 0.0
	for j, q := range m.Q {
		if j == i {
			q = qi
		}
		s += math.Exp((q - mx) / b)
	}
	return mx + b*math.Log(s)
}

// Cost returns C(q) = b(q)·ln Σ e^{q_i/b(q)} (0 for an invalid state).
func (m LS) Cost() float64 {
	if m.Validate() != nil {
		return 0
	}
	return m.cost(-1, 0)
}

// PricesInto writes the instantaneous prices ∂C/∂q_i = π_i + α·H(π) into
// dst[:n] without allocating.
func (m LS) PricesInto(dst []float64) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if len(dst) < len(m.Q) {
		return fmt.Errorf("%w: dst holds %d prices, market has %d", ErrDimension, len(dst), len(m.Q))
	}
	h := m.softmaxInto(dst)
	for j := range m.Q {
		dst[j] += m.Alpha * h
	}
	return nil
}

// softmaxInto writes π = softmax(q/b(q)) into dst and returns H(π).
func (m LS) softmaxInto(dst []float64) float64 {
	b := m.liquidity(-1, 0)
	mx := math.Inf(-1)
	for _, q := range m.Q {
		mx = max(mx, q)
	}
	s := 0.0
	for j, q := range m.Q {
		dst[j] = math.Exp((q - mx) / b)
		s += dst[j]
	}
	// H(π) = ln S − Σ π_j·(q_j − mx)/b, which avoids taking ln π_j of
	// underflowed terms.
	lnS := math.Log(s)
	h := lnS
	for j, q := range m.Q {
		dst[j] /= s
		h -= dst[j] * (q - mx) / b
	}
	return max(h, 0)
}

// PriceSum returns Σ_i p_i = 1 + α·n·H(π), in [1, MaxPriceSum()]
// (0 for an invalid state). It needs no buffer: H is accumulated on the fly.
func (m LS) PriceSum() float64 {
	if m.Validate() != nil {
		return 0
	}
	b := m.liquidity(-1, 0)
	mx := math.Inf(-1)
	for _, q := range m.Q {
		mx = max(mx, q)
	}
	s, t := 0.0, 0.0
	for _, q := range m.Q {
		e := math.Exp((q - mx) / b)
		s += e
		t += e * (q - mx) / b
	}
	h := max(math.Log(s)-t/s, 0)
	return 1 + m.Alpha*float64(len(m.Q))*h
}

// MaxPriceSum returns the bound 1 + α·n·ln n on the sum of prices, reached
// when all quantities are equal.
func (m LS) MaxPriceSum() float64 {
	n := float64(len(m.Q))
	return 1 + m.Alpha*n*math.Log(n)
}

// WorstCaseLoss returns C(q) − min_i q_i, which bounds the maker's loss from
// this state on: C(q) ≥ max_i q_i holds for LS as for LMSR.
func (m LS) WorstCaseLoss() float64 {
	if m.Validate() != nil {
		return 0
	}
	mn := math.Inf(1)
	for _, q := range m.Q {
		mn = min(mn, q)
	}
	return m.cost(-1, 0) - mn
}

// BuyCost returns C(q + Δ·e_i) − C(q). b changes with the trade, so there
// is no log1p closed form; the difference is taken directly and its
// absolute error is a few ulps of C(q).
func (m LS) BuyCost(i int, delta float64) (float64, error) {
	if err := m.checkTrade(i, delta); err != nil {
		return 0, err
	}
	if !(m.Q[i]+delta <= MaxQuantity) {
		return 0, fmt.Errorf("%w: q[%d] + %v above 2^53", ErrInvalidQuantity, i, delta)
	}
	if delta == 0 {
		return 0, nil
	}
	return max(m.cost(i, m.Q[i]+delta)-m.cost(-1, 0), 0), nil
}

// SellRefund returns C(q) − C(q − Δ·e_i). The quantity may not go below 0.
func (m LS) SellRefund(i int, delta float64) (float64, error) {
	if err := m.checkTrade(i, delta); err != nil {
		return 0, err
	}
	if !(m.Q[i]-delta >= 0) || !(m.liquidity(i, m.Q[i]-delta) > 0) {
		return 0, fmt.Errorf("%w: q[%d] − %v leaves the domain q ≥ 0, Σq > 0", ErrInvalidQuantity, i, delta)
	}
	if delta == 0 {
		return 0, nil
	}
	return max(m.cost(-1, 0)-m.cost(i, m.Q[i]-delta), 0), nil
}

func (m LS) checkTrade(i int, delta float64) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if i < 0 || i >= len(m.Q) {
		return fmt.Errorf("%w: outcome %d of %d", ErrDimension, i, len(m.Q))
	}
	if !(delta >= 0 && delta <= MaxQuantity) {
		return fmt.Errorf("%w: trade size %v, want 0 <= delta <= 2^53", ErrInvalidQuantity, delta)
	}
	return nil
}
