package lmsr

import (
	"math"

	"pgregory.net/rapid"
)

// relErr is |got − want| / max(|want|, tiny), the error measure of the
// accuracy requirements.
func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

// close reports whether got is within rel relative error of want, or within
// abs absolute error (for values that are legitimately near 0).
func closeTo(got, want, rel, abs float64) bool {
	return math.Abs(got-want) <= abs || relErr(got, want) <= rel
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// genB draws a liquidity log-uniformly from [1, 1e12], as an integer number
// of kopecks half of the time (the platform) and as any float otherwise.
func genB(t *rapid.T) float64 {
	b := math.Exp(rapid.Float64Range(0, math.Log(1e12)).Draw(t, "lnb"))
	if rapid.Bool().Draw(t, "integer b") {
		b = math.Max(1, math.Round(b))
	}
	return b
}

// genBinary draws a binary state whose prices are inside the default band:
// q_NO anywhere in ±1e15 and q_YES − q_NO = z·b with |z| ≤ 13 (prices
// between 2e-6 and 1 − 2e-6). Integer quantities half of the time.
func genBinary(t *rapid.T) Binary {
	b := genB(t)
	z := rapid.Float64Range(-13, 13).Draw(t, "z")
	qNo := rapid.Float64Range(-1e15, 1e15).Draw(t, "qNo")
	qYes := qNo + z*b
	if rapid.Bool().Draw(t, "integer q") {
		qNo, qYes = math.Round(qNo), math.Round(qYes)
	}
	if !finiteQ(qYes) {
		qYes = qNo
	}
	return Binary{B: b, QYes: qYes, QNo: qNo}
}

// genKopeckBinary draws a platform market: integer b from 100 to 1e9
// kopecks and integer q inside the band, within ±1e12.
func genKopeckBinary(t *rapid.T) Binary {
	b := math.Round(math.Exp(rapid.Float64Range(math.Log(100), math.Log(1e9)).Draw(t, "lnb")))
	z := rapid.Float64Range(-10, 10).Draw(t, "z")
	qNo := math.Round(rapid.Float64Range(0, 1e12).Draw(t, "qNo"))
	return Binary{B: b, QYes: qNo + math.Round(z*b), QNo: qNo}
}

// genSide draws Yes or No.
func genSide(t *rapid.T) Side {
	return rapid.SampledFrom([]Side{Yes, No}).Draw(t, "side")
}

// genDelta draws a trade size as a fraction of b, log-uniform from 1e-9·b
// to 5·b (beyond that most trades hit the price limit).
func genDelta(t *rapid.T, b float64, label string) float64 {
	return b * math.Exp(rapid.Float64Range(math.Log(1e-9), math.Log(5)).Draw(t, label))
}

// exact returns the increment that q + d actually applies in float64,
// (q + d) − q, which is exact (Sterbenz). Properties that compare a trade
// with the state it leads to must use it: with q near 1e15 and a small b,
// q + d rounds, and the rounded state is a different market.
func exact(q, d float64) float64 { return (q + d) - q }

// genMarket draws an n-outcome state with 2..12 outcomes whose quantities
// spread over at most 8·b (every price above 1e-4).
func genMarket(t *rapid.T) Market {
	b := genB(t)
	n := rapid.IntRange(2, 12).Draw(t, "n")
	base := rapid.Float64Range(-1e14, 1e14).Draw(t, "base")
	q := make([]float64, n)
	for i := range q {
		q[i] = base + b*rapid.Float64Range(-4, 4).Draw(t, "z")
	}
	return Market{B: b, Q: q}
}

// mustBuy fails the test when BuyCost errs.
func mustBuy(t interface {
	Helper()
	Fatalf(string, ...any)
}, m Binary, s Side, d float64) float64 {
	t.Helper()
	c, err := m.BuyCost(s, d)
	if err != nil {
		t.Fatalf("%+v.BuyCost(%v, %v): %v", m, s, d, err)
	}
	return c
}
