package lmsr

import "math"

// MaxQuantity bounds every quantity (q, trade sizes, b, amounts): 2^53, the
// largest range in which float64 holds every integer exactly, so integer
// kopecks and shares survive the trip through float64 unchanged.
const MaxQuantity = 1 << 53

// DefaultMinPrice is the price limit used when MinPrice is 0: no trade may
// push a price below it or above 1 − DefaultMinPrice.
const DefaultMinPrice = 1e-6

// expSafe is the largest argument for which the "direct" closed forms are
// used: e^700 ≈ 1e304 still fits a float64 with room for a product with a
// price, so p·expm1(x) cannot overflow below it.
const expSafe = 700

// pTiny is the smallest price for which p·expm1(x) is trusted. Below it the
// price may be subnormal or zero, losing all relative precision, so the log
// domain is used instead.
const pTiny = 1e-300

// finiteQ reports whether x is a valid quantity: finite and within
// ±MaxQuantity. NaN fails every comparison, so it is rejected too.
func finiteQ(x float64) bool { return x >= -MaxQuantity && x <= MaxQuantity }

// validB reports whether b is a usable liquidity parameter.
func validB(b float64) bool { return b > 0 && b <= MaxQuantity }

// validMinPrice reports whether mp is a usable MinPrice (0 means default).
func validMinPrice(mp float64) bool { return mp >= 0 && mp < 0.5 }

func minPriceOr(mp float64) float64 {
	if mp == 0 {
		return DefaultMinPrice
	}
	return mp
}

// sigmoid returns 1/(1+e^−z) without overflow and with full relative
// precision for both tails (the small tail is computed as e^z/(1+e^z)).
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// bSoftplus returns b·ln(1+e^{u/b}) for finite u, in the units of u. It is
// written as max(u,0) + b·log1p(e^{−|u|/b}) so that it never overflows, even
// when u/b does, and stays exact in its leading term for integer u.
func bSoftplus(b, u float64) float64 {
	return max(u, 0) + b*math.Log1p(math.Exp(-math.Abs(u)/b))
}

// bLogAddExp returns b·ln(e^{u/b} + e^{v/b}) without overflow.
func bLogAddExp(b, u, v float64) float64 {
	return max(u, v) + b*math.Log1p(math.Exp(-math.Abs(u-v)/b))
}

// log1mexp returns ln(1 − e^{−x}) for x ≥ 0, choosing between the two
// formulas by the cut at ln 2 (Mächler, "Accurately computing log(1−exp(−|a|))").
func log1mexp(x float64) float64 {
	if x <= math.Ln2 {
		return math.Log(-math.Expm1(-x))
	}
	return math.Log1p(-math.Exp(-x))
}

// bLnExpm1 returns b·ln(e^{Δ/b} − 1) for Δ ≥ 0 without overflow. The Δ term
// is kept apart so that it cancels exactly against other integer terms.
func bLnExpm1(b, delta float64) float64 {
	return delta + b*log1mexp(delta/b)
}

// buyCostDirect returns the cost b·ln(1 + p·(e^{Δ/b} − 1)) of Δ shares of
// an outcome priced p, and whether the direct form applies. It does not when
// e^{Δ/b} could overflow or p may have underflowed; then buyCostLog is used.
func buyCostDirect(b, p, delta float64) (float64, bool) {
	if x := delta / b; x <= expSafe && p >= pTiny {
		return b * math.Log1p(p*math.Expm1(x)), true
	}
	return 0, false
}

// buyCostLog is buyCostDirect in the log domain, from blp = b·ln p
// (kopecks), which stays finite where p underflows: cost =
// b·softplus(ln p + ln(e^x − 1)). The kopeck-scaled form keeps Δ and the
// quantity difference inside blp as separate additions, exact for integer
// quantities.
func buyCostLog(b, blp, delta float64) float64 {
	return bSoftplus(b, blp+bLnExpm1(b, delta))
}

// sharesDirect inverts buyCostDirect: the Δ for which the cost is spend,
//
//	Δ = b·ln(1 + (e^{M/b} − 1)/p),
//
// and whether that form applies (it overflows for large M/b or tiny p).
func sharesDirect(b, p, spend float64) (float64, bool) {
	if x := spend / b; x <= expSafe && p >= pTiny {
		if y := math.Expm1(x) / p; y <= math.MaxFloat64 {
			return b * math.Log1p(y), true
		}
	}
	return 0, false
}

// sharesLog is the large-M/b branch of the inverse,
//
//	Δ = M − b·ln p + b·ln((1 − e^{−M/b}) + p·e^{−M/b}),
//
// in which every term is non-negative or a log of a sum of positives.
func sharesLog(b, blp, spend float64) float64 {
	w := -math.Expm1(-spend / b)
	return spend - blp + b*math.Log(w+math.Exp((blp-spend)/b))
}

// defaultLnMin and defaultMinLogit are ln and log-odds of DefaultMinPrice,
// precomputed so that the price-limit test of a default market costs a
// comparison rather than a logarithm.
var (
	defaultLnMin    = math.Log(DefaultMinPrice)
	defaultMinLogit = math.Log(DefaultMinPrice) - math.Log1p(-DefaultMinPrice)
)

// lnMin returns ln of the price limit mp (0 meaning the default).
func lnMin(mp float64) float64 {
	if mp == 0 || mp == DefaultMinPrice {
		return defaultLnMin
	}
	return math.Log(mp)
}

// minLogit returns ln(mp/(1 − mp)): a binary price is below mp exactly when
// its log-odds (q_s − q_other)/b are below this.
func minLogit(mp float64) float64 {
	if mp == 0 || mp == DefaultMinPrice {
		return defaultMinLogit
	}
	return math.Log(mp) - math.Log1p(-mp)
}
