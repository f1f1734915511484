package lmsr

import (
	"fmt"
	"math"
	"strconv"
)

// Side is one of the two outcomes of a binary market.
type Side uint8

// The two sides of a binary market.
const (
	Yes Side = 0
	No  Side = 1
)

// String returns "YES" or "NO"; any other value prints as Side(n).
func (s Side) String() string {
	switch s {
	case Yes:
		return "YES"
	case No:
		return "NO"
	}
	return "Side(" + strconv.Itoa(int(s)) + ")"
}

// Opposite returns the other side: No for Yes and Yes for No.
func (s Side) Opposite() Side { return s ^ 1 }

func (s Side) valid() bool { return s <= No }

// Binary is the state of a two-outcome LMSR market: liquidity B and the
// outstanding quantities QYes and QNo, all in the same unit (kopecks; one
// share pays one kopeck). It is a value type: every method works on a copy
// and none mutates the receiver.
//
// MinPrice is the price limit of the market: no trade may push a price
// below MinPrice or above 1 − MinPrice. The zero value means
// DefaultMinPrice.
//
// Methods without an error result (Cost, Price, Q, WorstCaseLoss) return 0
// for a state that fails Validate rather than NaN; check Validate first when
// the state comes from outside.
type Binary struct {
	B, QYes, QNo float64
	MinPrice     float64
}

// Validate reports whether m is a usable market: B in (0, MaxQuantity],
// quantities finite within ±MaxQuantity and MinPrice in [0, 0.5).
func (m Binary) Validate() error {
	if !validB(m.B) {
		return fmt.Errorf("%w: b = %v, want 0 < b <= 2^53", ErrInvalidLiquidity, m.B)
	}
	if !finiteQ(m.QYes) || !finiteQ(m.QNo) {
		return fmt.Errorf("%w: q = (%v, %v), want finite within ±2^53", ErrInvalidQuantity, m.QYes, m.QNo)
	}
	if !validMinPrice(m.MinPrice) {
		return fmt.Errorf("%w: MinPrice = %v, want [0, 0.5)", ErrInvalidProbability, m.MinPrice)
	}
	return nil
}

// ok is Validate without the error value, for the hot paths.
func (m Binary) ok() bool {
	return validB(m.B) && finiteQ(m.QYes) && finiteQ(m.QNo) && validMinPrice(m.MinPrice)
}

// Q returns the outstanding quantity of side s (0 for an invalid side).
func (m Binary) Q(s Side) float64 {
	switch s {
	case Yes:
		return m.QYes
	case No:
		return m.QNo
	}
	return 0
}

// With returns a copy of m with delta (which may be negative) added to the
// quantity of side s. It does not validate; an invalid side returns m.
func (m Binary) With(s Side, delta float64) Binary {
	switch s {
	case Yes:
		m.QYes += delta
	case No:
		m.QNo += delta
	}
	return m
}

// diff returns q_s − q_other, the only thing prices and trade costs of a
// binary market depend on (besides b).
func (m Binary) diff(s Side) float64 {
	if s == Yes {
		return m.QYes - m.QNo
	}
	return m.QNo - m.QYes
}

// Cost returns C(q) = b·ln(e^{qYes/b} + e^{qNo/b}), computed as
// max(q) + b·log1p(e^{−|qYes−qNo|/b}) so that it never overflows.
func (m Binary) Cost() float64 {
	if !m.ok() {
		return 0
	}
	return max(m.QYes, m.QNo) + m.B*math.Log1p(math.Exp(-math.Abs(m.QYes-m.QNo)/m.B))
}

// Price returns the instantaneous price of side s, the logistic function
// 1/(1 + e^{(q_other − q_s)/b}). Price(Yes) + Price(No) = 1 up to rounding;
// the smaller of the two is accurate to a few ulps even far in the tail.
// It returns 0 for an invalid state or side.
func (m Binary) Price(s Side) float64 {
	if !m.ok() || !s.valid() {
		return 0
	}
	return sigmoid(m.diff(s) / m.B)
}

// WorstCaseLoss returns the most the market maker can lose from this state
// on: max_i (C(q) − q_i) = C(q) − min(qYes, qNo). For a market opened at
// probability π it is b·ln(1/min π), the subsidy the platform escrows.
func (m Binary) WorstCaseLoss() float64 {
	if !m.ok() {
		return 0
	}
	return bSoftplus(m.B, math.Abs(m.QYes-m.QNo))
}

// checkTrade validates the state, the side and a trade size.
func (m Binary) checkTrade(s Side, delta float64) error {
	if !m.ok() {
		return m.Validate()
	}
	if !s.valid() {
		return fmt.Errorf("%w: %v", ErrInvalidSide, s)
	}
	if !(delta >= 0 && delta <= MaxQuantity) {
		return fmt.Errorf("%w: trade size %v, want 0 <= delta <= 2^53", ErrInvalidQuantity, delta)
	}
	return nil
}

// BuyCost returns the cost C(q + Δ·e_s) − C(q) of buying delta shares of
// side s, by the closed form b·log1p(p_s·expm1(Δ/b)), which never subtracts
// two large costs. It refuses (ErrPriceLimit) a trade after which the price
// of s would exceed 1 − MinPrice.
func (m Binary) BuyCost(s Side, delta float64) (float64, error) {
	if err := m.checkTrade(s, delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, nil
	}
	a := m.diff(s)
	if !finiteQ(m.Q(s) + delta) {
		return 0, fmt.Errorf("%w: q_%v + %v leaves ±2^53", ErrInvalidQuantity, s, delta)
	}
	// The other side's price is the small one near the limit; testing its
	// log-odds rather than p_s > 1−MinPrice keeps full precision.
	if -(a+delta)/m.B < minLogit(m.MinPrice) {
		return 0, ErrPriceLimit
	}
	if c, ok := buyCostDirect(m.B, sigmoid(a/m.B), delta); ok {
		return c, nil
	}
	return buyCostLog(m.B, -bSoftplus(m.B, -a), delta), nil
}

// SellRefund returns the refund C(q) − C(q − Δ·e_s) for selling delta
// shares of side s, by the closed form −b·log1p(−p_s·(1 − e^{−Δ/b})),
// switching to a log-sum-exp of the two remaining terms when that argument
// approaches −1. It refuses (ErrPriceLimit) a trade after which the price
// of s would fall below MinPrice.
func (m Binary) SellRefund(s Side, delta float64) (float64, error) {
	if err := m.checkTrade(s, delta); err != nil {
		return 0, err
	}
	if delta == 0 {
		return 0, nil
	}
	if !finiteQ(m.Q(s) - delta) {
		return 0, fmt.Errorf("%w: q_%v − %v leaves ±2^53", ErrInvalidQuantity, s, delta)
	}
	a := m.diff(s)
	if (a-delta)/m.B < minLogit(m.MinPrice) {
		return 0, ErrPriceLimit
	}
	return sellRefund2(m.B, a, delta), nil
}

// sellRefund2 is the binary refund for q_s − q_o = a.
func sellRefund2(b, a, delta float64) float64 {
	p := sigmoid(a / b)
	if y := p * -math.Expm1(-delta/b); y <= 0.5 {
		return -b * math.Log1p(-y)
	}
	// 1 − y = (1 − p) + p·e^{−Δ/b} nearly cancels in floating point, so take
	// the log of the two terms instead: refund = −b·ln((1−p) + p·e^{−Δ/b}).
	// y > 0.5 implies p > 1/2, hence a > 0, which the form below assumes.
	return min(a, delta) + b*math.Log1p(math.Exp(-a/b)) - b*math.Log1p(math.Exp(-math.Abs(delta-a)/b))
}

// SharesForSpend returns how many shares of side s a net spend (fee
// excluded) buys: the Δ with BuyCost(s, Δ) = spend, in closed form
// b·ln(1 + (e^{M/b} − 1)/p_s), with a separate branch for large M/b or tiny
// p_s where that would overflow. It refuses (ErrPriceLimit) a spend that
// would push the price of s above 1 − MinPrice.
func (m Binary) SharesForSpend(s Side, spend float64) (float64, error) {
	if err := m.checkTrade(s, spend); err != nil {
		return 0, err
	}
	if spend == 0 {
		return 0, nil
	}
	a := m.diff(s)
	delta, ok := sharesDirect(m.B, sigmoid(a/m.B), spend)
	if !ok {
		delta = sharesLog(m.B, -bSoftplus(m.B, -a), spend)
	}
	// Every share costs less than 1, so Δ ≥ M; this also maps the
	// degenerate underflow cases to the house's side.
	if !(delta >= spend) {
		delta = spend
	}
	if -(a+delta)/m.B < minLogit(m.MinPrice) {
		return 0, ErrPriceLimit
	}
	if !finiteQ(m.Q(s) + delta) {
		return 0, fmt.Errorf("%w: spend %v buys %v shares, leaving ±2^53", ErrInvalidQuantity, spend, delta)
	}
	return delta, nil
}

// InitialQ returns the integer quantities that open a binary market of
// liquidity b kopecks at probability pYes. Mathematically q_i = b·ln π_i;
// by shift invariance only the difference matters, so it returns
// qYes − qNo = round(b·ln(pYes/(1−pYes))) with the smaller of the two
// set to 0 (both non-negative).
func InitialQ(b int64, pYes float64) (qYes, qNo int64, err error) {
	if b <= 0 || b > MaxQuantity {
		return 0, 0, fmt.Errorf("%w: b = %d, want 0 < b <= 2^53", ErrInvalidLiquidity, b)
	}
	if !(pYes > 0 && pYes < 1) {
		return 0, 0, fmt.Errorf("%w: pYes = %v, want (0, 1)", ErrInvalidProbability, pYes)
	}
	// ln p − log1p(−p) keeps full precision for p near 0 and near 1.
	d := math.Round(float64(b) * (math.Log(pYes) - math.Log1p(-pYes)))
	if !finiteQ(d) {
		return 0, 0, fmt.Errorf("%w: b·logit(pYes) = %v leaves ±2^53", ErrInvalidQuantity, d)
	}
	if d >= 0 {
		return int64(d), 0, nil
	}
	return 0, int64(-d), nil
}
