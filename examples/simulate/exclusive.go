package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/predictkit/predictkit/lmsr"
)

// exclusiveHeader is the CSV header of -exclusive: one row per run, step
// and outcome, the two venues side by side.
var exclusiveHeader = []string{
	"run", "step", "outcome", "truth",
	"binary_q_yes", "binary_q_no", "binary_price",
	"pool_q_yes", "pool_q_no", "pool_price",
	"binary_mm_pnl", "pool_mm_pnl",
	"binary_price_sum", "pool_price_sum", "arbitrage",
}

// venue is one way of making the n markets of a run: n independent binary
// LMSR markets, or one exclusive pool. Both trade in integer shares and
// kopecks through the lmsr kopeck functions, without a fee.
type venue interface {
	// pricesInto writes the YES price of every market.
	pricesInto(dst []float64)
	// buy prices a buy of shares of side s of market i; it does not trade.
	buy(i int, s lmsr.Side, shares int64) (lmsr.Buy, error)
	// buyForSpend prices the most shares a budget buys; it does not trade.
	buyForSpend(i int, s lmsr.Side, budget int64) (lmsr.Buy, error)
	// apply executes a priced buy.
	apply(i int, s lmsr.Side, b lmsr.Buy)
	// view returns what market i shows: its q_yes and q_no.
	view(i int) (qYes, qNo int64)
	// payout returns what the venue owes if outcome k wins.
	payout(k int) int64
	// cash returns the costs the venue has collected (kopecks).
	cash() int64
}

// binaries are n independent binary markets, market i on outcome i.
type binaries struct {
	b         int64
	qYes, qNo []int64
	yes0, no0 []int64 // the opening quantities
	collected int64
}

func newBinaries(b int64, n int) (*binaries, int64, error) {
	qy, qn, err := lmsr.InitialQ(b, 1/float64(n))
	if err != nil {
		return nil, 0, err
	}
	v := &binaries{b: b, qYes: make([]int64, n), qNo: make([]int64, n)}
	for i := range n {
		v.qYes[i], v.qNo[i] = qy, qn
	}
	v.yes0, v.no0 = slices.Clone(v.qYes), slices.Clone(v.qNo)
	sub, err := lmsr.SubsidyKopecks(v.market(0))
	return v, int64(n) * sub, err
}

func (v *binaries) market(i int) lmsr.Binary {
	return lmsr.Binary{B: float64(v.b), QYes: float64(v.qYes[i]), QNo: float64(v.qNo[i])}
}

func (v *binaries) pricesInto(dst []float64) {
	for i := range v.qYes {
		dst[i] = v.market(i).Price(lmsr.Yes)
	}
}

func (v *binaries) buy(i int, s lmsr.Side, shares int64) (lmsr.Buy, error) {
	return lmsr.BuyShares(v.market(i), s, shares, 0)
}

func (v *binaries) buyForSpend(i int, s lmsr.Side, budget int64) (lmsr.Buy, error) {
	return lmsr.BuyForSpend(v.market(i), s, budget, 0)
}

func (v *binaries) apply(i int, s lmsr.Side, b lmsr.Buy) {
	if s == lmsr.Yes {
		v.qYes[i] += b.Shares
	} else {
		v.qNo[i] += b.Shares
	}
	v.collected += b.Cost
}

func (v *binaries) view(i int) (int64, int64) { return v.qYes[i], v.qNo[i] }

// payout is what the YES shares of market k and the NO shares of every
// other market pay.
func (v *binaries) payout(k int) int64 {
	sum := v.qYes[k] - v.yes0[k]
	for i := range v.qNo {
		if i != k {
			sum += v.qNo[i] - v.no0[i]
		}
	}
	return sum
}

func (v *binaries) cash() int64 { return v.collected }

// pool is one exclusive pool over the n outcomes.
type pool struct {
	p         lmsr.Exclusive
	q0        []int64
	views     []lmsr.BinaryView
	collected int64
}

func newPool(b int64, n int) (*pool, int64, error) {
	uniform := make([]float64, n)
	for i := range uniform {
		uniform[i] = 1 / float64(n)
	}
	p, err := lmsr.NewExclusive(b, uniform)
	if err != nil {
		return nil, 0, err
	}
	v := &pool{p: p, q0: slices.Clone(p.Q), views: make([]lmsr.BinaryView, n)}
	if err := p.BinaryViewsInto(v.views); err != nil {
		return nil, 0, err
	}
	sub, err := p.SubsidyKopecks()
	return v, sub, err
}

func (v *pool) pricesInto(dst []float64) { _ = v.p.PricesInto(dst) }

func (v *pool) buy(i int, s lmsr.Side, shares int64) (lmsr.Buy, error) {
	return v.p.BuyShares(i, s, shares, 0)
}

func (v *pool) buyForSpend(i int, s lmsr.Side, budget int64) (lmsr.Buy, error) {
	return v.p.BuyForSpend(i, s, budget, 0)
}

func (v *pool) apply(i int, s lmsr.Side, b lmsr.Buy) {
	v.p = v.p.With(i, s, b.Shares)
	_ = v.p.BinaryViewsInto(v.views)
	v.collected += b.Cost
}

func (v *pool) view(i int) (int64, int64) { return v.views[i].QYes, v.views[i].QNo }

func (v *pool) payout(k int) int64 { return v.p.Q[k] - v.q0[k] }

func (v *pool) cash() int64 { return v.collected }

// tradeVenue lets a trader with belief bel take the market with the
// largest gap |bel_i − p_i| between belief and YES price: YES when the
// price is below the belief, NO when above. It buys the shares that bring
// that price to the belief with the market's other quantities fixed,
// Δ = b·|logit bel_i − logit p_i| (exact for a binary market and for a
// pool's market, whose log-odds are (q_i − q_no)/b), but spends at most
// budget. It reports whether it traded.
func tradeVenue(v venue, b float64, prices, bel []float64, budget int64) bool {
	best, gap := -1, 0.0
	for i, p := range prices {
		if g := math.Abs(bel[i] - p); g > gap {
			best, gap = i, g
		}
	}
	if best < 0 {
		return false
	}
	p, t := prices[best], bel[best]
	s := lmsr.Yes
	if t < p {
		s = lmsr.No
	}
	shares := int64(math.Floor(b * math.Abs(logit(t)-logit(p))))
	if shares < 1 {
		return false
	}
	buy, err := v.buy(best, s, shares)
	if err == nil && buy.Charge > budget {
		buy, err = v.buyForSpend(best, s, budget)
	}
	if err != nil {
		// Past the price limit, or the budget buys no share.
		return false
	}
	v.apply(best, s, buy)
	return true
}

func logit(p float64) float64 { return math.Log(p) - math.Log1p(-p) }

// arbitrage returns the most a trader can lock in, in kopecks before
// rounding, against n independent binary markets of liquidity b whose YES
// log-odds are x: when the YES prices sum to less than 1, by buying the
// same Δ YES shares on every market (they pay Δ whichever outcome wins);
// when they sum to more than 1, by buying Δ NO shares on every market
// (they pay (n−1)·Δ). The best Δ = b·t is where the marginal prices make
// the bundle cost exactly its payout: Σ σ(x_i ± t) = 1.
func arbitrage(b float64, x []float64) float64 {
	sum := func(t float64) float64 {
		s := 0.0
		for _, xi := range x {
			s += sigmoid(xi + t)
		}
		return s
	}
	s0 := sum(0)
	if s0 == 1 {
		return 0
	}
	dir := 1.0 // YES on every market: prices rise with t
	if s0 > 1 {
		dir = -1 // NO on every market: YES prices fall with t
	}
	lo, hi := 0.0, 1.0
	for (sum(dir*hi) < 1) == (dir > 0) && hi < 1e3 {
		lo, hi = hi, 2*hi
	}
	for range 100 {
		mid := (lo + hi) / 2
		if (sum(dir*mid) < 1) == (dir > 0) {
			lo = mid
		} else {
			hi = mid
		}
	}
	t := lo
	n := float64(len(x))
	profit := b * t
	if dir < 0 {
		profit = (n - 1) * b * t
	}
	for _, xi := range x {
		// The cost of Δ = b·t shares of a side priced p: b·log1p(p·expm1(t)).
		p := sigmoid(xi)
		if dir < 0 {
			p = 1 - p
		}
		profit -= b * math.Log1p(p*math.Expm1(t))
	}
	return max(profit, 0)
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// venueStats are the per-run results of one venue.
type venueStats struct {
	name          string
	subsidy       int64       // what the platform escrows at the opening
	pnl           []float64   // market-maker P&L at resolution, per run
	absErr, sqErr []float64   // mean |p − p*| and (p − p*)² of the final YES prices
	trades        []int       // trades that executed, per run
	endSumErr     []float64   // |Σ YES prices − 1| at the end of each run
	maxSumErr     float64     // the largest |Σ − 1| over every step of every run
	path          [][]float64 // YES prices at each step of cfg.plotRun
	sums          []float64   // Σ YES prices at each step of cfg.plotRun
}

// exclusiveResult is what the plots and the summary of -exclusive need.
type exclusiveResult struct {
	binary, pool venueStats
	arbitrage    []float64 // arbitrage left at the end of each run (kopecks)
	maxArb       float64   // the largest over every step of every run
	pathTrue     []float64
	rows         int
}

// simulateExclusive runs every run twice over, on n independent binary
// markets and on one exclusive pool, with the same truth, the same traders
// and the same order of traders, and streams the CSV rows to w.
func simulateExclusive(cfg config, w io.Writer) (exclusiveResult, error) {
	rng := rand.New(rand.NewPCG(cfg.seed, 0x5eed_0f_1a5b))
	n := cfg.outcomes
	b := int64(cfg.b)
	budget := int64(cfg.budget)
	res := exclusiveResult{
		binary: venueStats{name: "binary markets"},
		pool:   venueStats{name: "exclusive pool"},
	}

	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csv.NewWriter(bw)
	if err := cw.Write(exclusiveHeader); err != nil {
		return res, err
	}
	fmtF := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	fmtI := func(x int64) string { return strconv.FormatInt(x, 10) }

	truth := make([]float64, n)
	beliefs := make([][]float64, cfg.traders)
	for k := range beliefs {
		beliefs[k] = make([]float64, n)
	}
	prices := [2][]float64{make([]float64, n), make([]float64, n)}
	x := make([]float64, n)
	record := make([]string, len(exclusiveHeader))
	for r := range cfg.runs {
		drawTruth(rng, cfg.truth, truth)
		for _, bel := range beliefs {
			drawBelief(rng, truth, cfg.noise, bel)
		}
		bins, binSub, err := newBinaries(b, n)
		if err != nil {
			return res, err
		}
		pl, poolSub, err := newPool(b, n)
		if err != nil {
			return res, err
		}
		res.binary.subsidy, res.pool.subsidy = binSub, poolSub
		venues := [2]venue{bins, pl}
		stats := [2]*venueStats{&res.binary, &res.pool}
		executed := [2]int{}
		if r == cfg.plotRun {
			res.pathTrue = slices.Clone(truth)
		}
		var arb float64
		for step := 0; step <= cfg.trades; step++ {
			if step > 0 {
				bel := beliefs[rng.IntN(cfg.traders)]
				for k, v := range venues {
					if tradeVenue(v, cfg.b, prices[k], bel, budget) {
						executed[k]++
					}
				}
			}
			var sums [2]float64
			for k, v := range venues {
				v.pricesInto(prices[k])
				for _, p := range prices[k] {
					sums[k] += p
				}
				stats[k].maxSumErr = max(stats[k].maxSumErr, math.Abs(sums[k]-1))
				if r == cfg.plotRun {
					stats[k].path = append(stats[k].path, slices.Clone(prices[k]))
					stats[k].sums = append(stats[k].sums, sums[k])
				}
			}
			for i := range n {
				x[i] = float64(bins.qYes[i]-bins.qNo[i]) / cfg.b
			}
			arb = arbitrage(cfg.b, x)
			res.maxArb = max(res.maxArb, arb)

			record[0], record[1] = strconv.Itoa(r), strconv.Itoa(step)
			for i := range n {
				record[2], record[3] = strconv.Itoa(i), fmtF(truth[i])
				qy, qn := bins.view(i)
				record[4], record[5], record[6] = fmtI(qy), fmtI(qn), fmtF(prices[0][i])
				qy, qn = pl.view(i)
				record[7], record[8], record[9] = fmtI(qy), fmtI(qn), fmtF(prices[1][i])
				record[10] = fmtI(bins.cash() - bins.payout(i))
				record[11] = fmtI(pl.cash() - pl.payout(i))
				record[12], record[13], record[14] = fmtF(sums[0]), fmtF(sums[1]), fmtF(arb)
				if err := cw.Write(record); err != nil {
					return res, err
				}
				res.rows++
			}
		}
		winner := drawIndex(rng, truth)
		for k, v := range venues {
			st := stats[k]
			st.pnl = append(st.pnl, float64(v.cash()-v.payout(winner)))
			var abs, sq, sum float64
			for i, p := range prices[k] {
				d := p - truth[i]
				abs += math.Abs(d)
				sq += d * d
				sum += p
			}
			st.absErr = append(st.absErr, abs/float64(n))
			st.sqErr = append(st.sqErr, sq/float64(n))
			st.trades = append(st.trades, executed[k])
			st.endSumErr = append(st.endSumErr, math.Abs(sum-1))
		}
		res.arbitrage = append(res.arbitrage, arb)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return res, err
	}
	return res, bw.Flush()
}

// runExclusive is run for -exclusive: simulate, close the CSV, plot and
// summarise.
func runExclusive(cfg config, csvOut io.Writer, file *os.File, stdout io.Writer) error {
	res, err := simulateExclusive(cfg, csvOut)
	if err != nil {
		return err
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		path, what string
		draw       func(config, exclusiveResult, string) error
	}{
		{cfg.pricesPath, "price plot", plotExclusivePrices},
		{cfg.pnlPath, "P&L plot", plotExclusivePnL},
		{cfg.sumsPath, "price-sum plot", plotPriceSums},
	} {
		if p.path == "" {
			continue
		}
		if err := p.draw(cfg, res, p.path); err != nil {
			return fmt.Errorf("%s: %w", p.what, err)
		}
	}
	return summarizeExclusive(stdout, cfg, res)
}

// summarizeExclusive prints the two venues side by side.
func summarizeExclusive(w io.Writer, cfg config, res exclusiveResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Exclusive pool vs %d independent binary markets: %d runs × %d trades, b = %g each, %d traders, noise %g, budget %g, seed %d\n",
		cfg.outcomes, cfg.runs, cfg.trades, cfg.b, cfg.traders, cfg.noise, cfg.budget, cfg.seed)
	venues := []venueStats{res.binary, res.pool}
	row := func(label string, f func(v venueStats) string) {
		// Labels left, values right; widths in runes, for Σ and −.
		b.WriteString(label + strings.Repeat(" ", max(40-utf8.RuneCountInString(label), 0)))
		for _, v := range venues {
			s := f(v)
			b.WriteString(strings.Repeat(" ", max(22-utf8.RuneCountInString(s), 1)) + s)
		}
		b.WriteByte('\n')
	}
	row("", func(v venueStats) string { return v.name })
	row("trades executed per run (mean)", func(v venueStats) string {
		m, _ := meanSD(intsToFloats(v.trades))
		return fmt.Sprintf("%.1f", m)
	})
	row("subsidy escrowed (kopecks)", func(v venueStats) string { return strconv.FormatInt(v.subsidy, 10) })
	row("market-maker P&L at resolution, mean", func(v venueStats) string {
		m, _ := meanSD(v.pnl)
		return fmt.Sprintf("%.2f", m)
	})
	row("  95% interval of the mean", func(v venueStats) string {
		m, sd := meanSD(v.pnl)
		half := 1.96 * sd / math.Sqrt(float64(len(v.pnl)))
		return fmt.Sprintf("[%.2f, %.2f]", m-half, m+half)
	})
	row("  worst run", func(v venueStats) string { return fmt.Sprintf("%.2f", slices.Min(v.pnl)) })
	row("  bound −subsidy", func(v venueStats) string {
		crossed := "never crossed"
		if slices.Min(v.pnl) < -float64(v.subsidy) {
			crossed = "CROSSED (a bug)"
		}
		return fmt.Sprintf("%d: %s", -v.subsidy, crossed)
	})
	row("Σ YES prices at the end, mean |Σ − 1|", func(v venueStats) string {
		m, _ := meanSD(v.endSumErr)
		return fmt.Sprintf("%.4f", m)
	})
	row("  largest |Σ − 1| at any step", func(v venueStats) string { return fmt.Sprintf("%.3g", v.maxSumErr) })
	row("final prices vs truth, mean |p − p*|", func(v venueStats) string {
		m, _ := meanSD(v.absErr)
		return fmt.Sprintf("%.4f", m)
	})
	row("  RMSE", func(v venueStats) string {
		m, _ := meanSD(v.sqErr)
		return fmt.Sprintf("%.4f", math.Sqrt(m))
	})
	arb := slices.Sorted(slices.Values(res.arbitrage))
	mean, _ := meanSD(arb)
	fmt.Fprintf(&b, "arbitrage left on the binary markets at the end (kopecks, before rounding): mean %.2f, median %.2f, largest %.2f; at any step up to %.2f\n",
		mean, quantile(arb, 0.5), arb[len(arb)-1], res.maxArb)
	fmt.Fprintf(&b, "  (the pool leaves none: its YES prices sum to 1 after every trade)\n")
	b.WriteString(cfg.wrote(res.rows, cfg.pricesPath, cfg.pnlPath, cfg.sumsPath))
	_, err := io.WriteString(w, b.String())
	return err
}
