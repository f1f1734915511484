package sim

import (
	"math"
	"sort"
)

// Never is what StepsToWithin returns when the prices never settle within
// ε of the truth.
const Never = -1

// Metrics are the measures of one run. Kopeck amounts are exact; the
// scores are of the YES prices as the design quotes them (their sum is
// not 1 on Binary and LS).
type Metrics struct {
	Trades  int   // trades executed
	Refused int   // trades the maker refused (price limit, budget too small)
	Volume  int64 // costs of buys plus refunds of sales, kopecks

	Subsidy   int64 // escrowed at the opening
	Collected int64 // costs taken less refunds paid
	Fees      int64 // the platform's fees
	// PnL is the maker's profit at resolution, Collected − Payout(winner),
	// fees excluded; WorstPnL the least of it over every outcome that
	// could have won. Both are at least −Subsidy.
	PnL, WorstPnL int64

	// Brier is Σ_i (p_i − 1[i = winner])² over the YES prices; Log is
	// ln(p_winner / Σ_i p_i). Final is of the last prices, Avg of the
	// prices averaged over every step, the opening included.
	BrierFinal, BrierAvg float64
	LogFinal, LogAvg     float64
	// MAE is the mean |p_i − p*_i| over the outcomes, RMSE the root mean
	// square, against the truth p*.
	MAEFinal, RMSEFinal float64
	MAEAvg, RMSEAvg     float64
	// StepsToEps is the first step from which every price stays within
	// Epsilon of the truth to the end, or Never.
	StepsToEps int
	// ArbitrageLeft is the most an arbitrageur with unlimited cash could
	// lock in on the final Binary markets, fees and rounding included,
	// kopecks; 0 for the other designs.
	ArbitrageLeft int64
	PriceSum      float64 // Σ of the final YES prices
}

// Brier returns Σ_i (p_i − o_i)², o being 1 for the winner and 0 for the
// others.
func Brier(prices []float64, winner int) float64 {
	s := 0.0
	for i, p := range prices {
		o := 0.0
		if i == winner {
			o = 1
		}
		s += (p - o) * (p - o)
	}
	return s
}

// LogScore returns ln(p_winner / Σ p): the log score of the prices read as
// a distribution. It is 0 for a sure and right forecast and −Inf when the
// winner's price is 0.
func LogScore(prices []float64, winner int) float64 {
	s := 0.0
	for _, p := range prices {
		s += p
	}
	return math.Log(prices[winner] / s)
}

// PriceError returns the mean absolute error and the root mean square
// error of prices against truth.
func PriceError(prices, truth []float64) (mae, rmse float64) {
	for i, p := range prices {
		d := p - truth[i]
		mae += math.Abs(d)
		rmse += d * d
	}
	n := float64(len(prices))
	return mae / n, math.Sqrt(rmse / n)
}

// StepsToWithin returns the first step s such that at every step from s to
// the end every price is within eps of the truth, or Never. path is
// [step][outcome].
func StepsToWithin(path [][]float64, truth []float64, eps float64) int {
	s := len(path)
	for t := len(path) - 1; t >= 0; t-- {
		if !within(path[t], truth, eps) {
			break
		}
		s = t
	}
	if s == len(path) {
		return Never
	}
	return s
}

func within(prices, truth []float64, eps float64) bool {
	for i, p := range prices {
		if math.Abs(p-truth[i]) > eps {
			return false
		}
	}
	return true
}

// Interval is a sample's mean with a 95% confidence interval of the mean,
// mean ± 1.96·sd/√n (the normal approximation; Lo = Hi = Mean for n < 2).
type Interval struct {
	N            int
	Mean, Lo, Hi float64
}

// MeanCI returns the mean of x with its 95% interval, skipping NaN.
func MeanCI(x []float64) Interval {
	var iv Interval
	sum := 0.0
	for _, v := range x {
		if !math.IsNaN(v) {
			sum += v
			iv.N++
		}
	}
	if iv.N == 0 {
		return Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	iv.Mean = sum / float64(iv.N)
	iv.Lo, iv.Hi = iv.Mean, iv.Mean
	if iv.N < 2 {
		return iv
	}
	ss := 0.0
	for _, v := range x {
		if !math.IsNaN(v) {
			ss += (v - iv.Mean) * (v - iv.Mean)
		}
	}
	half := 1.96 * math.Sqrt(ss/float64(iv.N-1)) / math.Sqrt(float64(iv.N))
	iv.Lo, iv.Hi = iv.Mean-half, iv.Mean+half
	return iv
}

// Quantile returns the q-quantile of x by linear interpolation between
// order statistics; x is not modified.
func Quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
