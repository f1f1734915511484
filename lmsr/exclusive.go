package lmsr

import (
	"fmt"
	"math"
)

// ExclusiveSumTolerance is how far from 1 the opening probabilities of an
// exclusive pool may sum: NewExclusive normalises them, so a pool whose
// markets were given 0.333, 0.333 and 0.333 opens at a third each.
const ExclusiveSumTolerance = 0.001

// Exclusive is an exclusive pool: n ≥ 2 binary markets of which exactly one
// resolves YES, priced together by one n-outcome LMSR of liquidity B. Q[i]
// is the quantity of outcome i (market i resolving YES), in integer shares
// of 1 kopeck; B is in kopecks too.
//
// A trade names a market i and a Side. YES on market i buys or sells
// outcome i; NO on market i buys or sells its complement, one share of every
// other outcome, which pays 1 kopeck exactly when market i resolves NO. The
// pool pays, if outcome k wins, Q[k] minus its opening quantity: the YES
// shares of market k plus the NO shares of every other market. The prices of
// the outcomes sum to 1 in every state, so no one can buy every outcome for
// less than it pays.
//
// Market i of the pool is a binary market whose NO quantity is the
// log-sum-exp of the others, b·ln Σ_{j≠i} e^{q_j/b}: its trades cost what the
// same trades cost on that binary market, and a two-outcome pool prices
// every trade exactly as Binary and the kopeck functions do (see
// BinaryViews).
//
// MinPrice is the price limit of each market's own trades (0 means
// DefaultMinPrice), the binary rule applied to market i's view: YES on
// market i is refused with ErrPriceLimit when it would push p_i above
// 1 − MinPrice, NO when it would push p_i below MinPrice. A trade on market
// i also lowers or raises every other price by a common factor, and may
// take a longshot below MinPrice; that is allowed, since refusing it would
// refuse every YES in a pool whose longshot sits at the limit until someone
// buys the longshot.
//
// Exclusive is a value type: its methods read Q and never write it. Its
// trades return ErrInvalidQuantity for states whose quantities lie more
// than 2^53 apart, which a pool reaches only after some 2^53 kopecks of
// trades.
type Exclusive struct {
	B        int64
	Q        []int64
	MinPrice float64
}

// BinaryView is how market i of an exclusive pool looks as a binary market:
// QYes = q_i and QNo = round(b·ln Σ_{j≠i} e^{q_j/b}), the quantity of its
// complement. The binary price 1/(1 + e^{(QNo−QYes)/b}) is the price of
// outcome i up to the rounding of QNo: half a share of log-odds, which moves
// the price by at most p_i(1−p_i)·(0.5/b)·e^{0.5/b}, about 0.125/b.
type BinaryView struct {
	QYes, QNo int64
}

// NewExclusive opens an exclusive pool of liquidity b kopecks at the
// probabilities probs, one per market, each in (0, 1) and summing to 1
// within ExclusiveSumTolerance. The quantities are the integers
// q_i = round(b·ln(π_i/min π)), the smallest being 0; only their differences
// matter, so the probabilities need not be normalised first. Two outcomes
// open as InitialQ(b, π_0/(π_0+π_1)) does.
func NewExclusive(b int64, probs []float64) (Exclusive, error) {
	if b <= 0 || b > MaxQuantity {
		return Exclusive{}, fmt.Errorf("%w: b = %d, want 0 < b <= 2^53", ErrInvalidLiquidity, b)
	}
	if len(probs) < 2 {
		return Exclusive{}, fmt.Errorf("%w: %d outcomes, want at least 2", ErrDimension, len(probs))
	}
	sum, mn := 0.0, 1.0
	for i, p := range probs {
		if !(p > 0 && p < 1) {
			return Exclusive{}, fmt.Errorf("%w: probs[%d] = %v, want (0, 1)", ErrInvalidProbability, i, p)
		}
		sum += p
		mn = min(mn, p)
	}
	if math.Abs(sum-1) > ExclusiveSumTolerance {
		return Exclusive{}, fmt.Errorf("%w: probabilities sum to %v, want 1 within %v", ErrInvalidProbability, sum, ExclusiveSumTolerance)
	}
	q := make([]int64, len(probs))
	if len(probs) == 2 {
		// The binary rounding, bit for bit, so that a two-market pool opens
		// where a binary market at the same probability does.
		qy, qn, err := InitialQ(b, probs[0]/sum)
		if err != nil {
			return Exclusive{}, err
		}
		q[0], q[1] = qy, qn
		return Exclusive{B: b, Q: q}, nil
	}
	lnMn := math.Log(mn)
	for i, p := range probs {
		x := math.Round(float64(b) * (math.Log(p) - lnMn))
		if !finiteQ(x) {
			return Exclusive{}, fmt.Errorf("%w: b·ln(π[%d]/min π) = %v leaves ±2^53", ErrInvalidQuantity, i, x)
		}
		q[i] = int64(x)
	}
	return Exclusive{B: b, Q: q}, nil
}

// Validate reports whether p is a usable pool: B in (0, MaxQuantity], at
// least two outcomes, every quantity within ±MaxQuantity, and MinPrice in
// [0, 0.5).
func (p Exclusive) Validate() error {
	if p.B <= 0 || p.B > MaxQuantity {
		return fmt.Errorf("%w: b = %d, want 0 < b <= 2^53", ErrInvalidLiquidity, p.B)
	}
	if len(p.Q) < 2 {
		return fmt.Errorf("%w: %d outcomes, want at least 2", ErrDimension, len(p.Q))
	}
	for i, q := range p.Q {
		if q < -MaxQuantity || q > MaxQuantity {
			return fmt.Errorf("%w: q[%d] = %d, want within ±2^53", ErrInvalidQuantity, i, q)
		}
	}
	if !validMinPrice(p.MinPrice) {
		return fmt.Errorf("%w: MinPrice = %v, want [0, 0.5)", ErrInvalidProbability, p.MinPrice)
	}
	return nil
}

func (p Exclusive) ok() bool {
	if p.B <= 0 || p.B > MaxQuantity || len(p.Q) < 2 || !validMinPrice(p.MinPrice) {
		return false
	}
	for _, q := range p.Q {
		if q < -MaxQuantity || q > MaxQuantity {
			return false
		}
	}
	return true
}

// N returns the number of outcomes (markets).
func (p Exclusive) N() int { return len(p.Q) }

// Clone returns a copy of p that shares no memory with it.
func (p Exclusive) Clone() Exclusive {
	p.Q = append([]int64(nil), p.Q...)
	return p
}

// With returns a copy of p (with its own Q) after delta shares of side s of
// market i change hands: positive for a buy, negative for a sale. YES adds
// delta to Q[i], NO adds it to every other quantity. It does not validate;
// an index or side out of range returns a plain copy.
func (p Exclusive) With(i int, s Side, delta int64) Exclusive {
	p = p.Clone()
	if i < 0 || i >= len(p.Q) {
		return p
	}
	switch s {
	case Yes:
		p.Q[i] += delta
	case No:
		for j := range p.Q {
			if j != i {
				p.Q[j] += delta
			}
		}
	}
	return p
}

// Market returns p as a float64 n-outcome Market, for research: its Cost,
// BundleCost and the other float functions price the pool's trades.
func (p Exclusive) Market() Market {
	q := make([]float64, len(p.Q))
	for i, x := range p.Q {
		q[i] = float64(x)
	}
	return Market{B: float64(p.B), Q: q, MinPrice: p.MinPrice}
}

// exclusiveView is market i of a pool as a binary market, with the bounds
// of the other quantities that the range checks need.
type exclusiveView struct {
	bin    Binary
	mo, mn int64 // the largest and smallest quantity other than q_i
}

// view returns market i of p as a binary market in a frame shifted by the
// largest other quantity mo: QYes = q_i − mo and QNo = b·ln Σ_{j≠i}
// e^{(q_j − mo)/b}. Since C(q) = mo + b·ln(e^{QYes/b} + e^{QNo/b}), its
// prices and trade costs are those of the pool; the shift keeps q_i − mo an
// exact integer beside a QNo of at most b·ln(n−1), and the largest other
// term, exactly 1, is kept out of the sum (log1p), so that for two outcomes
// QNo is exactly 0 and the view is the binary market (q_0, q_1) shifted by
// q_1. The caller has checked p and i.
func (p Exclusive) view(i int) exclusiveView {
	v := exclusiveView{mo: math.MinInt64, mn: math.MaxInt64}
	top := -1
	for j, q := range p.Q {
		if j == i {
			continue
		}
		if q > v.mo {
			v.mo, top = q, j
		}
		v.mn = min(v.mn, q)
	}
	b := float64(p.B)
	s := 0.0
	for j, q := range p.Q {
		if j != i && j != top {
			s += math.Exp(float64(q-v.mo) / b)
		}
	}
	v.bin = Binary{B: b, QYes: float64(p.Q[i] - v.mo), QNo: b * math.Log1p(s), MinPrice: p.MinPrice}
	return v
}

// check validates p and the market index.
func (p Exclusive) check(i int) error {
	if !p.ok() {
		return p.Validate()
	}
	if i < 0 || i >= len(p.Q) {
		return fmt.Errorf("%w: market %d of %d", ErrDimension, i, len(p.Q))
	}
	return nil
}

// Price returns the price of outcome i, the probability the pool gives
// market i resolving YES: e^{q_i/b}/Σ_j e^{q_j/b}, computed as the binary
// price of market i's view (accurate in both tails; for two outcomes the
// very float Binary.Price gives). It returns 0 for an invalid state or
// index.
func (p Exclusive) Price(i int) float64 {
	if p.check(i) != nil {
		return 0
	}
	return p.view(i).price()
}

// price is Binary.Price(Yes) of the view, which holds even where the view
// is too far from the band to be a valid Binary.
func (v exclusiveView) price() float64 {
	return sigmoid((v.bin.QYes - v.bin.QNo) / v.bin.B)
}

// PricesInto writes the price of every outcome into dst[:N()] without
// allocating. The prices sum to 1 and agree with Price up to rounding; for
// two outcomes they are Price's exactly.
func (p Exclusive) PricesInto(dst []float64) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if len(dst) < len(p.Q) {
		return fmt.Errorf("%w: dst holds %d prices, pool has %d", ErrDimension, len(dst), len(p.Q))
	}
	if len(p.Q) == 2 {
		dst[0] = p.view(0).price()
		dst[1] = p.view(1).price()
		return nil
	}
	mx := p.Q[0]
	for _, q := range p.Q {
		mx = max(mx, q)
	}
	b := float64(p.B)
	s := 0.0
	for j, q := range p.Q {
		dst[j] = math.Exp(float64(q-mx) / b)
		s += dst[j]
	}
	for j := range p.Q {
		dst[j] /= s
	}
	return nil
}

// Prices returns a new slice with the price of every outcome (nil for an
// invalid state). PricesInto is the allocation-free form.
func (p Exclusive) Prices() []float64 {
	dst := make([]float64, len(p.Q))
	if p.PricesInto(dst) != nil {
		return nil
	}
	return dst
}

// BinaryViewsInto writes the binary view of every market into dst[:N()]:
// QYes = q_i and QNo = round(b·ln Σ_{j≠i} e^{q_j/b}), in O(n): every
// complement's sum comes from one sum of all the terms, without
// cancellation. For two outcomes QNo is the other quantity exactly, so the
// views are the binary market's (q_YES, q_NO).
func (p Exclusive) BinaryViewsInto(dst []BinaryView) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if len(dst) < len(p.Q) {
		return fmt.Errorf("%w: dst holds %d views, pool has %d", ErrDimension, len(dst), len(p.Q))
	}
	// With mx the largest quantity (at index top), every complement but
	// top's is 1 + Σ_{j≠top,i} e^{(q_j−mx)/b} in units of e^{mx/b}: the
	// sum s of the non-top terms less term i. top's complement has no unit
	// term and may be far smaller than every other; it gets its own view.
	top := 0
	for j, q := range p.Q {
		if q > p.Q[top] {
			top = j
		}
	}
	mx := p.Q[top]
	b := float64(p.B)
	s := 0.0
	for j, q := range p.Q {
		if j != top {
			s += math.Exp(float64(q-mx) / b)
		}
	}
	for i, q := range p.Q {
		if i == top {
			v := p.view(i)
			dst[i] = BinaryView{QYes: q, QNo: v.mo + int64(math.Round(v.bin.QNo))}
			continue
		}
		// s − term i is the sum of the other non-top terms: a sum of
		// positives, so only rounding (not cancellation) can make it
		// negative, and then by an ulp of s.
		l := b * math.Log1p(max(s-math.Exp(float64(q-mx)/b), 0))
		dst[i] = BinaryView{QYes: q, QNo: mx + int64(math.Round(l))}
	}
	return nil
}

// BinaryViews returns a new slice with the binary view of every market
// (nil for an invalid state). BinaryViewsInto is the allocation-free form.
func (p Exclusive) BinaryViews() []BinaryView {
	dst := make([]BinaryView, len(p.Q))
	if p.BinaryViewsInto(dst) != nil {
		return nil
	}
	return dst
}

// WorstCaseLoss returns the most the pool's market maker can lose from this
// state on: C(q) − min_k q_k. For a pool opened with NewExclusive it is
// about b·ln(1/min π), the subsidy to escrow. It returns 0 for an invalid
// state.
func (p Exclusive) WorstCaseLoss() float64 {
	if !p.ok() {
		return 0
	}
	top, mn := 0, p.Q[0]
	for j, q := range p.Q {
		if q > p.Q[top] {
			top = j
		}
		mn = min(mn, q)
	}
	mx := p.Q[top]
	b := float64(p.B)
	s := 0.0
	for j, q := range p.Q {
		if j != top {
			s += math.Exp(float64(q-mx) / b)
		}
	}
	// The same operations as Binary.WorstCaseLoss for two outcomes.
	return float64(mx-mn) + b*math.Log1p(s)
}

// SubsidyKopecks is ceil(p.WorstCaseLoss()): what the platform escrows for
// the pool, so that the escrow (subsidy plus costs less refunds) covers the
// payout of whichever outcome wins after any sequence of trades. A
// two-outcome pool needs what SubsidyKopecks of its binary market does.
func (p Exclusive) SubsidyKopecks() (int64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if hi, lo := p.spread(); hi-lo > MaxQuantity {
		return 0, fmt.Errorf("%w: quantities %d apart, want at most 2^53", ErrInvalidQuantity, hi-lo)
	}
	return RoundUp(p.WorstCaseLoss())
}

// spread returns the largest and the smallest quantity.
func (p Exclusive) spread() (hi, lo int64) {
	hi, lo = p.Q[0], p.Q[0]
	for _, q := range p.Q {
		hi, lo = max(hi, q), min(lo, q)
	}
	return hi, lo
}

// prepare checks a trade on market i and returns market i's view.
func (p Exclusive) prepare(i int, s Side) (exclusiveView, error) {
	if err := p.check(i); err != nil {
		return exclusiveView{}, err
	}
	if !s.valid() {
		return exclusiveView{}, fmt.Errorf("%w: %v", ErrInvalidSide, s)
	}
	v := p.view(i)
	if err := v.bin.Validate(); err != nil {
		return exclusiveView{}, err
	}
	return v, nil
}

// after checks what the binary view cannot see: that the quantities
// after shares of side s of market i are bought (sell false) or sold stay
// within ±2^53. The view holds q_i and the others only relative to the
// largest other quantity mo, so the others' range is checked here, from
// the largest (a NO buy adds to all of them) and the smallest (a NO sale
// takes from all of them).
func (p Exclusive) after(v exclusiveView, i int, s Side, shares int64, sell bool) error {
	var q int64
	switch {
	case s == Yes && !sell:
		q = p.Q[i] + shares
	case s == Yes:
		q = p.Q[i] - shares
	case !sell:
		q = v.mo + shares
	default:
		q = v.mn - shares
	}
	if q < -MaxQuantity || q > MaxQuantity {
		return fmt.Errorf("%w: %d shares of %v on market %d take a quantity past ±2^53", ErrInvalidQuantity, shares, s, i)
	}
	return nil
}

// BuyShares prices a buy of a whole number of shares of side s of market i:
// outcome i for YES, one share of every other outcome each for NO. As
// BuyShares does for a binary market, Cost is the LMSR cost rounded up (at
// least 1 kopeck), Charge = ceil(Cost·(1+margin)) and Fee = Charge − Cost.
// After the trade the pool is p.With(i, s, shares).
func (p Exclusive) BuyShares(i int, s Side, shares int64, margin float64) (Buy, error) {
	return p.buy(i, s, func(m Binary) (Buy, error) { return BuyShares(m, s, shares, margin) })
}

// BuyForSpend returns the buy of side s of market i with the most shares
// whose Charge (fee included) fits in budget kopecks, as BuyForSpend does
// for a binary market; ErrTooSmall when not even one share fits. After the
// trade the pool is p.With(i, s, buy.Shares).
func (p Exclusive) BuyForSpend(i int, s Side, budget int64, margin float64) (Buy, error) {
	return p.buy(i, s, func(m Binary) (Buy, error) { return BuyForSpend(m, s, budget, margin) })
}

// buy prices a buy of side s of market i with price, a binary kopeck
// function applied to market i's view, and checks the pool after it.
func (p Exclusive) buy(i int, s Side, price func(Binary) (Buy, error)) (Buy, error) {
	v, err := p.prepare(i, s)
	if err != nil {
		return Buy{}, err
	}
	buy, err := price(v.bin)
	if err != nil {
		return Buy{}, err
	}
	if err := p.after(v, i, s, buy.Shares, false); err != nil {
		return Buy{}, err
	}
	return buy, nil
}

// SellShares prices a sale of shares of side s of market i back to the
// pool: Refund is the LMSR refund rounded down, Payout =
// floor(Refund·(1−margin)) and Fee = Refund − Payout, as SellShares does for
// a binary market. After the trade the pool is p.With(i, s, −shares).
func (p Exclusive) SellShares(i int, s Side, shares int64, margin float64) (Sell, error) {
	v, err := p.prepare(i, s)
	if err != nil {
		return Sell{}, err
	}
	sell, err := SellShares(v.bin, s, shares, margin)
	if err != nil {
		return Sell{}, err
	}
	if err := p.after(v, i, s, shares, true); err != nil {
		return Sell{}, err
	}
	return sell, nil
}
