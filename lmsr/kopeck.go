package lmsr

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/shopspring/decimal"
)

// RoundingGuard is the relative margin by which RoundUp and RoundDown move a
// float64 value towards the house before rounding. The pricing functions are
// accurate to well under 1e-13 relative, so after the guard float error can
// never turn into a kopeck that favours the trader.
const RoundingGuard = 1e-12

// maxKopecks is the largest float64 that converts to int64 without overflow.
const maxKopecks = float64(math.MaxInt64 - 1023)

// RoundUp converts an amount the house receives (a charge, or money for
// shares) into integer kopecks: ceil(x·(1 + RoundingGuard)) for x ≥ 0.
func RoundUp(x float64) (int64, error) {
	if !(math.Abs(x) <= maxKopecks/2) {
		return 0, fmt.Errorf("%w: %v kopecks", ErrInvalidQuantity, x)
	}
	return int64(math.Ceil(x + math.Abs(x)*RoundingGuard)), nil
}

// RoundDown converts an amount the house gives (a payout, or shares for
// money) into integers: floor(x·(1 − RoundingGuard)) for x ≥ 0.
func RoundDown(x float64) (int64, error) {
	if !(math.Abs(x) <= maxKopecks/2) {
		return 0, fmt.Errorf("%w: %v kopecks", ErrInvalidQuantity, x)
	}
	return int64(math.Floor(x - math.Abs(x)*RoundingGuard)), nil
}

// decimalMargin reads margin as the shortest decimal that rounds to it, as
// num/10^k (the way decimal.NewFromFloat reads it), so that 0.03 means 3/100
// exactly rather than the binary 0.0299999999999999988898. ok is false when
// the denominator would not fit a uint64 (k > 18); callers then fall back to
// shopspring/decimal.
func decimalMargin(margin float64) (num, den uint64, ok bool) {
	if margin == 0 {
		return 0, 1, true
	}
	// Fast path for margins with up to 9 decimal places (all real ones): at
	// those k a 10^−k step is far wider than an ulp of margin, so at most one
	// k-place decimal rounds to margin, the one nearest margin·10^k, and the
	// first k that has one is the shortest representation. num/10^k is the
	// correctly rounded quotient of two exact floats, so the test is exact.
	p := 1.0
	for k := 1; k <= 9; k++ {
		p *= 10
		if n := math.Round(margin * p); n/p == margin {
			return uint64(n), uint64(p), true
		}
	}
	return decimalMarginSlow(margin)
}

// decimalMarginSlow is decimalMargin by way of strconv's shortest
// formatting, for margins with more than 9 decimal places.
func decimalMarginSlow(margin float64) (num, den uint64, ok bool) {
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], margin, 'e', -1, 64) // d.ddddde±XX
	i, digits := 0, 0
	for ; i < len(s) && s[i] != 'e'; i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			num = num*10 + uint64(c-'0')
			digits++
		}
	}
	// Exponent: "e-05", "e+00"; parsed by hand to stay allocation free.
	exp, neg := 0, false
	for _, c := range s[i+1:] {
		switch {
		case c == '-':
			neg = true
		case c >= '0' && c <= '9':
			exp = exp*10 + int(c-'0')
		}
	}
	if neg {
		exp = -exp
	}
	// value = num·10^(exp − (digits−1)); margin < 1 makes k ≥ 1.
	k := digits - 1 - exp
	if k < 0 || k > 18 {
		return 0, 0, false
	}
	den = 1
	for range k {
		den *= 10
	}
	return num, den, true
}

func checkMargin(margin float64) error {
	if !(margin >= 0 && margin < 1) {
		return fmt.Errorf("%w: %v, want 0 <= margin < 1", ErrInvalidMargin, margin)
	}
	return nil
}

// ChargeForCost returns ceil(cost·(1 + margin)) exactly: what a buyer pays
// for a trade whose LMSR cost is cost kopecks. Margin 0.03 on 100 is 103.
func ChargeForCost(cost int64, margin float64) (int64, error) {
	if err := checkMargin(margin); err != nil {
		return 0, err
	}
	if cost < 0 {
		return 0, fmt.Errorf("%w: cost %d", ErrInvalidAmount, cost)
	}
	num, den, ok := decimalMargin(margin)
	if !ok {
		d := decimal.NewFromInt(cost).Mul(decimal.NewFromInt(1).Add(decimal.NewFromFloat(margin))).Ceil()
		if !d.IsInteger() || d.GreaterThan(decimal.NewFromInt(math.MaxInt64)) {
			return 0, fmt.Errorf("%w: charge for %d overflows", ErrInvalidQuantity, cost)
		}
		return d.IntPart(), nil
	}
	// cost·(1+m) < 2^64 because cost < 2^63 and m < 1, so hi < den and
	// Div64 cannot overflow.
	hi, lo := bits.Mul64(uint64(cost), den+num)
	q, r := bits.Div64(hi, lo, den)
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return 0, fmt.Errorf("%w: charge for %d overflows", ErrInvalidQuantity, cost)
	}
	return int64(q), nil
}

// PayoutForRefund returns floor(refund·(1 − margin)) exactly: what a seller
// receives for a trade whose LMSR refund is refund kopecks.
func PayoutForRefund(refund int64, margin float64) (int64, error) {
	if err := checkMargin(margin); err != nil {
		return 0, err
	}
	if refund < 0 {
		return 0, fmt.Errorf("%w: refund %d", ErrInvalidAmount, refund)
	}
	num, den, ok := decimalMargin(margin)
	if !ok {
		d := decimal.NewFromInt(refund).Mul(decimal.NewFromInt(1).Sub(decimal.NewFromFloat(margin))).Floor()
		return d.IntPart(), nil
	}
	hi, lo := bits.Mul64(uint64(refund), den-num)
	q, _ := bits.Div64(hi, lo, den)
	return int64(q), nil
}

// maxCostForCharge returns the largest integer cost whose charge fits in
// budget: floor(budget/(1+margin)), exactly.
func maxCostForCharge(budget int64, margin float64) int64 {
	num, den, ok := decimalMargin(margin)
	if !ok {
		return decimal.NewFromInt(budget).DivRound(decimal.NewFromInt(1).Add(decimal.NewFromFloat(margin)), 24).Floor().IntPart()
	}
	hi, lo := bits.Mul64(uint64(budget), den)
	q, _ := bits.Div64(hi, lo, den+num) // budget·den < (den+num)·2^64
	return int64(q)
}

// Buy is a buy priced in integer kopecks and shares.
type Buy struct {
	Shares int64 // shares received (each pays 1 kopeck if its side wins)
	Cost   int64 // ceil(LMSR cost of Shares), kopecks, goes to the market escrow
	Fee    int64 // Charge − Cost, to the platform fee account
	Charge int64 // ceil(Cost·(1+margin)), what the buyer pays; <= budget in BuyForSpend
}

// Sell is a sale priced in integer kopecks and shares.
type Sell struct {
	Shares int64
	Refund int64 // floor(LMSR refund), kopecks, leaves the escrow
	Fee    int64 // Refund − Payout
	Payout int64 // floor(Refund·(1−margin)), what the seller receives
}

// BuyShares prices a buy of a whole number of shares of side s: Cost is the
// LMSR cost rounded up (at least 1 kopeck), Charge = ceil(Cost·(1+margin))
// and Fee = Charge − Cost.
func BuyShares(m Binary, s Side, shares int64, margin float64) (Buy, error) {
	if err := checkMargin(margin); err != nil {
		return Buy{}, err
	}
	if shares <= 0 {
		return Buy{}, fmt.Errorf("%w: %d shares", ErrInvalidAmount, shares)
	}
	cost, err := m.BuyCost(s, float64(shares))
	if err != nil {
		return Buy{}, err
	}
	c, err := RoundUp(cost)
	if err != nil {
		return Buy{}, err
	}
	// A positive number of shares always costs something, even when the
	// float cost underflowed.
	c = max(c, 1)
	charge, err := ChargeForCost(c, margin)
	if err != nil {
		return Buy{}, err
	}
	return Buy{Shares: shares, Cost: c, Fee: charge - c, Charge: charge}, nil
}

// BuyForSpend returns the buy of side s with the most shares whose Charge
// (fee included) fits in budget kopecks. The estimate is the shares bought
// by the largest integer cost C with ceil(C·(1+margin)) ≤ budget, rounded
// down; it is then checked exactly, and shrunk if rounding pushed it over.
// It returns ErrTooSmall when not even one share fits.
func BuyForSpend(m Binary, s Side, budget int64, margin float64) (Buy, error) {
	if err := checkMargin(margin); err != nil {
		return Buy{}, err
	}
	if budget <= 0 {
		return Buy{}, fmt.Errorf("%w: budget %d", ErrInvalidAmount, budget)
	}
	if budget > MaxQuantity {
		return Buy{}, fmt.Errorf("%w: budget %d above 2^53", ErrInvalidQuantity, budget)
	}
	maxCost := maxCostForCharge(budget, margin)
	if maxCost < 1 {
		return Buy{}, ErrTooSmall
	}
	x, err := m.SharesForSpend(s, float64(maxCost))
	if err != nil {
		return Buy{}, err
	}
	n, err := RoundDown(x)
	if err != nil {
		return Buy{}, err
	}
	fits := func(k int64) (Buy, bool, error) {
		b, err := BuyShares(m, s, k, margin)
		if err != nil {
			return Buy{}, false, err
		}
		return b, b.Charge <= budget, nil
	}
	if n < 1 {
		// The guard may have rounded a bare 1 down to 0; the exact check
		// below decides.
		n = 1
	}
	b, ok, err := fits(n)
	if err != nil {
		if n == 1 && x < 1 {
			return Buy{}, ErrTooSmall
		}
		return Buy{}, err
	}
	if ok {
		// n+1 shares cost more than maxCost, hence do not fit, unless x is
		// within float error of n+1 and the guard in RoundDown took a share
		// that is paid for; only then is the exact check worth making.
		if x+x*RoundingGuard >= float64(n+1) {
			if b1, ok1, err1 := fits(n + 1); err1 == nil && ok1 {
				return b1, nil
			}
		}
		return b, nil
	}
	// Rare: the rounded-up cost of n shares went over. Charge is monotone in
	// the share count, so bisect for the largest count that fits.
	lo, hi := int64(0), n // fits(lo) or lo == 0; !fits(hi)
	var best Buy
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		b, ok, err := fits(mid)
		if err != nil {
			return Buy{}, err
		}
		if ok {
			lo, best = mid, b
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return Buy{}, ErrTooSmall
	}
	return best, nil
}

// SellShares prices a sale of shares of side s: Refund is the LMSR refund
// rounded down, Payout = floor(Refund·(1−margin)) and Fee = Refund − Payout.
// A sale worth less than a kopeck has Refund 0; it is not an error.
func SellShares(m Binary, s Side, shares int64, margin float64) (Sell, error) {
	if err := checkMargin(margin); err != nil {
		return Sell{}, err
	}
	if shares <= 0 {
		return Sell{}, fmt.Errorf("%w: %d shares", ErrInvalidAmount, shares)
	}
	refund, err := m.SellRefund(s, float64(shares))
	if err != nil {
		return Sell{}, err
	}
	r, err := RoundDown(refund)
	if err != nil {
		return Sell{}, err
	}
	r = max(r, 0)
	payout, err := PayoutForRefund(r, margin)
	if err != nil {
		return Sell{}, err
	}
	return Sell{Shares: shares, Refund: r, Fee: r - payout, Payout: payout}, nil
}

// SubsidyKopecks is ceil(m.WorstCaseLoss()): what the platform escrows when
// a market opens, so that the escrow always covers the winning side.
func SubsidyKopecks(m Binary) (int64, error) {
	if err := m.Validate(); err != nil {
		return 0, err
	}
	return RoundUp(m.WorstCaseLoss())
}
