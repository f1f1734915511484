package sim

import (
	"fmt"
	"math"

	"github.com/predictkit/predictkit/lmsr"
)

// lsMaker is the liquidity-sensitive LMSR (lmsr.LS) in whole shares and
// kopecks. lmsr has no kopeck helpers for it, so it rounds as the server
// rounds the other makers: a buy's cost is lmsr.RoundUp of the LMSR cost,
// at least 1 kopeck, charged lmsr.ChargeForCost; a sale's refund is
// lmsr.RoundDown of the LMSR refund, paid lmsr.PayoutForRefund. It sells
// YES only: NO on one outcome would be a bundle of all the others, which
// lmsr.LS does not price.
type lsMaker struct {
	ledger
	m  lmsr.LS
	q0 float64   // every outcome's opening quantity
	pr []float64 // scratch prices for QuoteBuy
}

// newLS opens every outcome at the same integer quantity q0 with
// α·N·q0 ≈ b, so that the maker starts with the liquidity, and the
// subsidy b·ln N, of an LMSR of liquidity b.
func newLS(b int64, n int, margin, commission float64) (*lsMaker, error) {
	alpha := lmsr.AlphaForCommission(commission, n)
	q0 := math.Max(1, math.Round(float64(b)/(alpha*float64(n))))
	if q0 > lmsr.MaxQuantity/float64(4*n) {
		return nil, fmt.Errorf("%w: b = %d is too large for the LS maker", ErrConfig, b)
	}
	q := make([]float64, n)
	for i := range q {
		q[i] = q0
	}
	m := lmsr.LS{Alpha: alpha, Q: q}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	sub, err := lmsr.RoundUp(m.WorstCaseLoss())
	if err != nil {
		return nil, err
	}
	return &lsMaker{ledger: ledger{margin: margin, subsidy: sub}, m: m, q0: q0}, nil
}

func (d *lsMaker) Kind() Kind  { return LS }
func (d *lsMaker) N() int      { return len(d.m.Q) }
func (d *lsMaker) HasNo() bool { return false }

func (d *lsMaker) PricesInto(dst []float64) error { return d.m.PricesInto(dst) }

func (d *lsMaker) Liquidity(int) float64 { return d.m.Liquidity() }

// cost is the kopeck cost of a buy of k shares of outcome i.
func (d *lsMaker) cost(i int, k int64) (int64, error) {
	c, err := d.m.BuyCost(i, float64(k))
	if err != nil {
		return 0, err
	}
	r, err := lmsr.RoundUp(c)
	return max(r, 1), err
}

func (d *lsMaker) QuoteShares(i int, s lmsr.Side, shares int64) (Trade, error) {
	if s != lmsr.Yes {
		return Trade{}, ErrNoSide
	}
	if shares <= 0 {
		return Trade{}, fmt.Errorf("%w: %d shares", lmsr.ErrInvalidAmount, shares)
	}
	c, err := d.cost(i, shares)
	if err != nil {
		return Trade{}, err
	}
	charge, err := lmsr.ChargeForCost(c, d.margin)
	if err != nil {
		return Trade{}, err
	}
	return Trade{Outcome: i, Side: s, Shares: shares, Cost: c, Fee: charge - c, Cash: charge}, nil
}

// QuoteBuy finds the most shares whose charge fits in budget: the largest
// cost C with ChargeForCost(C) <= budget, then the most shares costing at
// most C, by doubling and bisection (the cost grows with the shares).
func (d *lsMaker) QuoteBuy(i int, s lmsr.Side, budget int64) (Trade, error) {
	if s != lmsr.Yes {
		return Trade{}, ErrNoSide
	}
	if budget <= 0 || budget > lmsr.MaxQuantity {
		return Trade{}, fmt.Errorf("%w: budget %d", lmsr.ErrInvalidAmount, budget)
	}
	maxCost, err := maxCostFor(budget, d.margin)
	if err != nil {
		return Trade{}, err
	}
	if maxCost < 1 {
		return Trade{}, lmsr.ErrTooSmall
	}
	fits := func(k int64) (bool, error) {
		c, err := d.cost(i, k)
		return c <= maxCost, err
	}
	if ok, err := fits(1); err != nil || !ok {
		if err == nil {
			err = lmsr.ErrTooSmall
		}
		return Trade{}, err
	}
	// maxCost/price is about the shares the budget buys: start there and
	// double while it fits. A longshot's price may be tiny (or 0 after
	// underflow), so the search is capped where q_i would leave 2^53.
	if d.pr == nil {
		d.pr = make([]float64, d.N())
	}
	if err := d.PricesInto(d.pr); err != nil {
		return Trade{}, err
	}
	limit := int64(lmsr.MaxQuantity - d.m.Q[i])
	lo, hi := int64(1), limit
	if g := float64(maxCost)/d.pr[i] + 1; g < float64(limit) {
		hi = max(2, int64(g))
	}
	for lo < hi {
		ok, err := fits(hi)
		if err != nil {
			return Trade{}, err
		}
		if !ok {
			break
		}
		lo, hi = hi, min(hi*2, limit)
	}
	if lo == hi {
		// Every share up to the limit fits.
		hi = lo + 1
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := fits(mid)
		if err != nil {
			return Trade{}, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	t, err := d.QuoteShares(i, s, lo)
	t.Budget = budget
	return t, err
}

// maxCostFor is the largest integer cost C with ChargeForCost(C, margin)
// <= budget.
func maxCostFor(budget int64, margin float64) (int64, error) {
	c := int64(float64(budget) / (1 + margin))
	for {
		ch, err := lmsr.ChargeForCost(c+1, margin)
		if err != nil {
			return 0, err
		}
		if ch > budget {
			break
		}
		c++
	}
	for c > 0 {
		ch, err := lmsr.ChargeForCost(c, margin)
		if err != nil {
			return 0, err
		}
		if ch <= budget {
			break
		}
		c--
	}
	return c, nil
}

func (d *lsMaker) QuoteSell(i int, s lmsr.Side, shares int64) (Trade, error) {
	if s != lmsr.Yes {
		return Trade{}, ErrNoSide
	}
	if shares <= 0 {
		return Trade{}, fmt.Errorf("%w: %d shares", lmsr.ErrInvalidAmount, shares)
	}
	refund, err := d.m.SellRefund(i, float64(shares))
	if err != nil {
		return Trade{}, err
	}
	r, err := lmsr.RoundDown(refund)
	if err != nil {
		return Trade{}, err
	}
	r = max(r, 0)
	payout, err := lmsr.PayoutForRefund(r, d.margin)
	if err != nil {
		return Trade{}, err
	}
	return Trade{Outcome: i, Side: s, Sell: true, Shares: shares, Cost: r, Fee: r - payout, Cash: payout}, nil
}

func (d *lsMaker) Apply(t Trade) {
	d.m.Q[t.Outcome] += float64(signed(t))
	d.book(t)
}

func (d *lsMaker) Payout(w int) int64 { return int64(d.m.Q[w] - d.q0) }
