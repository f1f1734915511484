package lmsr

import (
	"fmt"
	"math"
)

// Holding is a position in an exclusive pool: Shares shares of side Side of
// market Market. YES on market i pays Shares kopecks if outcome i wins; NO
// on market i pays Shares kopecks if any other outcome wins.
type Holding struct {
	Market int
	Side   Side
	Shares int64
}

// Payout returns what h pays, in kopecks, if outcome k wins.
func (h Holding) Payout(k int) int64 {
	if (h.Side == Yes) == (k == h.Market) {
		return h.Shares
	}
	return 0
}

// check validates h as a holding of an n-outcome pool.
func (h Holding) check(n int) error {
	switch {
	case h.Market < 0 || h.Market >= n:
		return fmt.Errorf("%w: holding of market %d of %d", ErrDimension, h.Market, n)
	case !h.Side.valid():
		return fmt.Errorf("%w: %v", ErrInvalidSide, h.Side)
	case h.Shares < 0 || h.Shares > MaxQuantity:
		return fmt.Errorf("%w: %d shares, want 0 to 2^53", ErrInvalidQuantity, h.Shares)
	}
	return nil
}

// Claims returns what the holdings pay together in each outcome of an
// n-outcome pool: claims[k] = Σ_h h.Payout(k), the amount the pool owes if
// outcome k wins. On the platform claims[k] = q_k − q0_k.
func Claims(n int, holdings []Holding) ([]int64, error) {
	if n < 2 {
		return nil, fmt.Errorf("%w: %d outcomes, want at least 2", ErrDimension, n)
	}
	claims := make([]int64, n)
	var no int64 // NO shares pay in every outcome but their market's
	for _, h := range holdings {
		if err := h.check(n); err != nil {
			return nil, err
		}
		if h.Side == Yes {
			claims[h.Market] += h.Shares
		} else {
			no += h.Shares
			claims[h.Market] -= h.Shares
		}
	}
	for k := range claims {
		claims[k] += no
	}
	return claims, nil
}

// RequiredEscrow returns the least escrow, in kopecks, with which the pool
// p covers the claims (claims[k], what its positions pay if outcome k
// wins) after any sequence of trades from p on:
//
//	ceil(C(q) + max_k (claims_k − q_k))
//
// Trades from q to q' bring in at least C(q') − C(q) (costs round up,
// refunds down) and raise claims_k by q'_k − q_k; since q'_k ≤ C(q'), an
// escrow E keeps covering outcome k whatever the trades when E − C(q) ≥
// claims_k − q_k. For a pool whose claims are q − q0 it is
// ceil(C(q) − min_k q0_k), and at the opening state the subsidy
// (SubsidyKopecks). The rounding is up, in the platform's favour.
func RequiredEscrow(p Exclusive, claims []int64) (int64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if len(claims) != len(p.Q) {
		return 0, fmt.Errorf("%w: %d claims for %d outcomes", ErrDimension, len(claims), len(p.Q))
	}
	for k, c := range claims {
		if c < 0 || c > MaxQuantity {
			return 0, fmt.Errorf("%w: claims[%d] = %d, want 0 to 2^53", ErrInvalidQuantity, k, c)
		}
	}
	if hi, lo := p.spread(); hi-lo > MaxQuantity {
		return 0, fmt.Errorf("%w: quantities %d apart, want at most 2^53", ErrInvalidQuantity, hi-lo)
	}
	// C(q) = mx + b·log1p(s) with s the sum of the non-top terms relative
	// to the largest quantity; the integer part stays exact.
	top := 0
	worst := claims[0] - p.Q[0]
	for k, q := range p.Q {
		if q > p.Q[top] {
			top = k
		}
		worst = max(worst, claims[k]-q)
	}
	mx := p.Q[top]
	b := float64(p.B)
	s := 0.0
	for k, q := range p.Q {
		if k != top {
			s += math.Exp(float64(q-mx) / b)
		}
	}
	frac, err := RoundUp(b * math.Log1p(s))
	if err != nil {
		return 0, err
	}
	return mx + worst + frac, nil
}

// Split is an exclusive pool after a new answer has taken part of its
// Other outcome's probability (SplitOther).
type Split struct {
	// Pool is the pool after the split: n+1 outcomes, the new answer last.
	Pool Exclusive
	// Other and New are the indices of the Other outcome (unchanged) and of
	// the new answer (n, the old number of outcomes).
	Other, New int
	// From maps each outcome after the split to the outcome before it that
	// it was part of: From[k] = k, except From[New] = Other.
	From []int
	// Claims is what the positions pay in each outcome after the split, as
	// mapped by MapHolding: the old claims, with Other's claim in New too.
	Claims []int64
	// Q0 is Pool.Q − Claims, the opening quantities that keep the
	// platform's rule "outcome k pays q_k − q0_k": unchanged for every
	// market but Other, whose q0 moves with its q, and the new market's.
	Q0 []int64
	// EscrowBefore and Escrow are RequiredEscrow before and after the
	// split. The escrow must hold Escrow after it; the difference, the new
	// answer's subsidy, is most of the time positive.
	EscrowBefore, Escrow int64
}

// TopUp returns what an escrow holding balance kopecks needs added to
// cover the pool after the split: max(0, s.Escrow − balance).
func (s Split) TopUp(balance int64) int64 { return max(0, s.Escrow-balance) }

// MapHolding returns the holdings of the pool after the split that pay, in
// every outcome, what h paid before it, Other's old outcome being "the new
// answer or Other":
//
//   - YES or NO on a market other than Other: h itself (a NO on market i
//     now also pays if the new answer wins, as it paid when Other won);
//   - YES on Other: YES on Other and YES on the new answer, h.Shares each;
//   - NO on Other: YES on every market before the split but Other,
//     h.Shares each (the pool has no single position that pays in every
//     outcome but Other and the new answer; for a pool of two markets it is
//     one YES).
//
// h is a holding of the pool before the split.
func (s Split) MapHolding(h Holding) ([]Holding, error) {
	n := s.New
	if err := h.check(n); err != nil {
		return nil, err
	}
	switch {
	case h.Market != s.Other:
		return []Holding{h}, nil
	case h.Side == Yes:
		return []Holding{h, {Market: s.New, Side: Yes, Shares: h.Shares}}, nil
	}
	out := make([]Holding, 0, n-1)
	for i := range n {
		if i != s.Other {
			out = append(out, Holding{Market: i, Side: Yes, Shares: h.Shares})
		}
	}
	return out, nil
}

// SplitOther adds an answer to the exclusive pool p, taking its probability
// pNew out of outcome other ("Other"): 0 < pNew < p_other, otherwise
// ErrInvalidProbability. claims[k] is what the pool's positions pay if
// outcome k wins (Claims; on the platform q_k − q0_k).
//
// The new answer is outcome n, appended; Other keeps its index. Their
// quantities are
//
//	q_new   = q_other + b·ln(r),   q_other' = q_other + b·ln(1 − r),   r = pNew/p_other
//
// so e^{q_new/b} + e^{q_other'/b} = e^{q_other/b}: the sum Σ e^{q/b}, hence
// C(q) and every other price, is unchanged, and the two parts have prices
// pNew and p_other − pNew. In integer shares the larger part is rounded
// down and the smaller takes what is left of e^{q_other/b}, rounded down
// too, so that, the rounding being in the platform's favour,
//
//	0 ≤ C(q) − C(q') < 1 + RoundingGuard·|d|
//
// shares, d being the offset of the part rounded last from q_other (the
// guard adds about 0.02 share at b = 1e9 and r = 1e-9): every other price
// rises by a factor of at most e^{(C(q) − C(q'))/b}, and the new answer's
// price is within about p_other/b of pNew. No claim changes (see MapHolding); the maker's
// worst case grows, and the result's Escrow is what the escrow must hold
// afterwards.
func SplitOther(p Exclusive, claims []int64, other int, pNew float64) (Split, error) {
	if err := p.check(other); err != nil {
		return Split{}, err
	}
	before, err := RequiredEscrow(p, claims)
	if err != nil {
		return Split{}, err
	}
	po := p.Price(other)
	r := pNew / po
	if !(pNew > 0 && pNew < po) || !(r > 0 && r < 1) {
		return Split{}, fmt.Errorf("%w: new answer at %v, want in (0, %v), Other's probability", ErrInvalidProbability, pNew, po)
	}
	b := float64(p.B)
	var dNew, dOther int64 // offsets from q_other
	if r >= 0.5 {
		if dNew, err = RoundDown(b * math.Log(r)); err == nil {
			dOther, err = RoundDown(b * log1mexp(-float64(dNew)/b))
		}
	} else {
		if dOther, err = RoundDown(b * math.Log1p(-r)); err == nil {
			dNew, err = RoundDown(b * log1mexp(-float64(dOther)/b))
		}
	}
	if err != nil {
		return Split{}, err
	}
	n := len(p.Q)
	qo := p.Q[other]
	for _, d := range []int64{dNew, dOther} {
		if qo+d < -MaxQuantity {
			return Split{}, fmt.Errorf("%w: the split takes a quantity below −2^53", ErrInvalidQuantity)
		}
	}
	q := make([]int64, n+1)
	copy(q, p.Q)
	q[other], q[n] = qo+dOther, qo+dNew
	after := Exclusive{B: p.B, Q: q, MinPrice: p.MinPrice}

	from := make([]int, n+1)
	c := make([]int64, n+1)
	q0 := make([]int64, n+1)
	for k := range from {
		from[k] = k
	}
	from[n] = other
	copy(c, claims)
	c[n] = claims[other]
	for k := range q0 {
		q0[k] = q[k] - c[k]
	}
	escrow, err := RequiredEscrow(after, c)
	if err != nil {
		return Split{}, err
	}
	return Split{
		Pool: after, Other: other, New: n, From: from,
		Claims: c, Q0: q0, EscrowBefore: before, Escrow: escrow,
	}, nil
}
