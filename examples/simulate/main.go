// Command simulate runs an LMSR market against traders with noisy beliefs
// and reports how the market maker fares and how well prices find the truth.
//
// Each run draws a hidden true distribution over the outcomes (or takes it
// from -truth), gives every trader a belief scattered around it in log-odds,
// opens an LMSR market at uniform prices and lets randomly chosen traders buy
// the outcome they think most underpriced, up to their belief and within a
// budget per trade. At the end one outcome is drawn from the truth and the
// market resolves.
//
// Usage, from a clone of the repository (or, once the module is
// published, go run github.com/predictkit/predictkit/examples/simulate@latest):
//
//	go run ./examples/simulate -b 1000 -outcomes 2 -traders 50 -trades 500 -runs 200 -seed 1 -out /tmp/sim
//
// It writes its CSV and plots into the directory -out, never into the
// working directory: by default a new directory under the system's
// temporary directory, whose path it prints. It reads no file, so it runs
// from any directory.
//
// It writes a tidy CSV with one row per run, step and outcome:
//
//	run,step,outcome,q,price,cost,mm_pnl
//
// where step 0 is the opening state, q and price are the outcome's quantity
// and price after the step, cost is what the market maker has collected so
// far, C(q_t) − C(q_0), and mm_pnl is its profit if that outcome wins:
// cost − (q_t − q_0). It prints the mean market-maker P&L at resolution with
// a 95% interval against the LMSR bound −b·ln n, and the error of the final
// prices against the truth, and draws the price paths of one run and the
// distribution of the P&L over runs with gonum/plot (PNG, or SVG/PDF by the
// file extension). The same flags and seed always give the same CSV.
//
// # Exclusive pools
//
// With -exclusive it compares two ways of running n markets of which
// exactly one resolves YES, trading in integer shares and kopecks through
// the platform's pricer (no fee): n independent binary LMSR markets, one
// per outcome with liquidity b each, and one exclusive pool, an n-outcome
// LMSR of liquidity b (lmsr.Exclusive). Both open every market at 1/n and
// see the same truth, the same traders and the same order of traders.
// A trader takes the market whose YES price is furthest from their belief,
// YES if the price is below it and NO if above, and buys the shares that
// bring the price to the belief, spending at most -budget (a whole number
// of kopecks, as -b must be).
//
//	go run ./examples/simulate -exclusive -outcomes 5 -b 1000 -runs 200 -seed 1
//
// The CSV then has one row per run, step and outcome with both venues
// side by side:
//
//	run,step,outcome,truth,binary_q_yes,binary_q_no,binary_price,pool_q_yes,pool_q_no,pool_price,
//	binary_mm_pnl,pool_mm_pnl,binary_price_sum,pool_price_sum,arbitrage
//
// where pool_q_yes and pool_q_no are what the pool's market shows (its
// outcome's quantity and the rounded log-sum-exp of the others), mm_pnl is
// the maker's profit in kopecks if that outcome wins (costs collected
// less the payout), the price sums are Σ YES prices over the markets, and
// arbitrage is the most a trader could lock in on the binary markets, in
// kopecks before rounding: buying the same shares of YES on every market
// when the sum is below 1, or of NO when above. It prints, for each venue,
// the subsidy, the maker's P&L at resolution against −subsidy, how far the
// YES prices sum from 1, the arbitrage left on the binary markets, and the
// error of the final prices against the truth; it draws the price paths of
// one run (-prices), the two P&L distributions (-pnl) and the sums of the
// YES prices over one run (-sums).
//
// # Answers added later
//
// With -split it runs one exclusive pool of -outcomes markets, the last of
// them Other, against traders whose beliefs cover one more outcome, hidden
// in Other (-truth then takes -outcomes + 1 probabilities, the new answer
// last). At step -split-at (default: half way) that outcome is added as a
// market taking -split-share of Other's price (lmsr.SplitOther): every
// trader's holdings are mapped, the escrow topped up to the new worst case,
// and trading goes on with the new market. It checks that every trader is
// paid, in every outcome, what their holdings would have paid without the
// split, that the holdings' claims are q − q0 and within the escrow at
// every step, and fails otherwise. It writes only the CSV
//
//	run,step,outcome,truth,q,q0,price,claim,escrow
//
// one row per run, step and outcome listed at that step.
//
//	go run ./examples/simulate -split -outcomes 4 -b 1000 -runs 50 -seed 1
package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/predictkit/predictkit/lmsr"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	b                     float64
	outcomes              int
	traders, trades, runs int
	seed                  uint64
	noise, budget         float64
	truth                 []float64 // nil: drawn per run from a flat Dirichlet
	exclusive             bool      // compare independent binary markets with an exclusive pool
	split                 bool      // add an answer to a pool's Other mid-run
	splitAt               int       // -split: the step of the split
	splitShare            float64   // -split: the new answer's share of Other's price
	outDir                string    // where the outputs go; "": a new temporary directory
	csvPath               string
	pricesPath, pnlPath   string
	sumsPath              string // -exclusive only
	plotRun               int
}

func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	var truth string
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Float64Var(&c.b, "b", 1000, "LMSR liquidity b (kopecks; one share pays 1)")
	fs.IntVar(&c.outcomes, "outcomes", 2, "number of outcomes (≥ 2)")
	fs.IntVar(&c.traders, "traders", 50, "number of traders")
	fs.IntVar(&c.trades, "trades", 500, "trades (steps) per run")
	fs.IntVar(&c.runs, "runs", 200, "independent runs")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed; the same seed gives the same output")
	fs.Float64Var(&c.noise, "noise", 0.5, "standard deviation of the traders' belief noise, in log-odds")
	fs.Float64Var(&c.budget, "budget", 100, "most a trader spends on one trade (kopecks)")
	fs.StringVar(&truth, "truth", "", "comma-separated true probabilities (default: drawn per run)")
	fs.StringVar(&c.outDir, "out", "", "directory the CSV and the plots are written into, made if missing (default: a new directory under the system's temporary directory, printed)")
	fs.StringVar(&c.csvPath, "csv", "simulate.csv", "CSV file name in -out (empty: none)")
	fs.StringVar(&c.pricesPath, "prices", "prices.png", "price-path plot file name in -out, .png or .svg (empty: none)")
	fs.StringVar(&c.pnlPath, "pnl", "pnl.png", "P&L distribution plot file name in -out, .png or .svg (empty: none)")
	fs.StringVar(&c.sumsPath, "sums", "sums.png", "with -exclusive: file name in -out of the plot of the sum of the YES prices, .png or .svg (empty: none)")
	fs.IntVar(&c.plotRun, "plot-run", 0, "which run's price paths to draw")
	fs.BoolVar(&c.exclusive, "exclusive", false, "compare n independent binary markets (one per outcome, b each) with one exclusive pool (b), in kopecks")
	fs.BoolVar(&c.split, "split", false, "run an exclusive pool whose last market is Other and add an answer out of it mid-run, checking every trader's payouts (CSV only)")
	fs.IntVar(&c.splitAt, "split-at", 0, "with -split: the step at which the answer is added (default: half of -trades)")
	fs.Float64Var(&c.splitShare, "split-share", 0.5, "with -split: the new answer's share of Other's price, in (0, 1)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case !(c.b > 0) || math.IsInf(c.b, 0):
		return c, fmt.Errorf("-b must be positive, got %v", c.b)
	case c.outcomes < 2:
		return c, fmt.Errorf("-outcomes must be at least 2, got %d", c.outcomes)
	case c.traders < 1 || c.trades < 1 || c.runs < 1:
		return c, errors.New("-traders, -trades and -runs must be positive")
	case !(c.noise >= 0) || math.IsInf(c.noise, 0):
		return c, fmt.Errorf("-noise must be non-negative, got %v", c.noise)
	case !(c.budget > 0) || math.IsInf(c.budget, 0):
		return c, fmt.Errorf("-budget must be positive, got %v", c.budget)
	case c.plotRun < 0 || c.plotRun >= c.runs:
		return c, fmt.Errorf("-plot-run must be in [0, %d), got %d", c.runs, c.plotRun)
	case c.exclusive && c.split:
		return c, errors.New("-exclusive and -split are separate modes: give one")
	case (c.exclusive || c.split) && (c.b != math.Trunc(c.b) || c.b > lmsr.MaxQuantity):
		return c, fmt.Errorf("-exclusive and -split trade in kopecks: -b must be a whole number up to 2^53, got %v", c.b)
	case (c.exclusive || c.split) && (c.budget != math.Trunc(c.budget) || c.budget > lmsr.MaxQuantity):
		return c, fmt.Errorf("-exclusive and -split trade in kopecks: -budget must be a whole number up to 2^53, got %v", c.budget)
	case c.split && !(c.splitShare > 0 && c.splitShare < 1):
		return c, fmt.Errorf("-split-share must be in (0, 1), got %v", c.splitShare)
	case c.split && (c.splitAt < 0 || c.splitAt > c.trades):
		return c, fmt.Errorf("-split-at must be in [1, %d], got %d", c.trades, c.splitAt)
	}
	if c.split {
		if c.splitAt == 0 {
			c.splitAt = max(1, c.trades/2)
		}
		// -split draws no plot.
		c.pricesPath, c.pnlPath = "", ""
	}
	if truth != "" {
		for _, f := range strings.Split(truth, ",") {
			p, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return c, fmt.Errorf("-truth: %w", err)
			}
			c.truth = append(c.truth, p)
		}
		want := c.outcomes
		if c.split {
			want++ // the answer added later
		}
		if len(c.truth) != want {
			return c, fmt.Errorf("-truth has %d probabilities for %d outcomes", len(c.truth), want)
		}
		// InitialQuantities checks the same conditions a truth must meet.
		if _, err := lmsr.InitialQuantities(1, c.truth); err != nil {
			return c, fmt.Errorf("-truth: %w", err)
		}
	}
	return c, nil
}

func run(args []string, stdout io.Writer) error {
	cfg, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	if err := cfg.placeOutputs(); err != nil {
		return err
	}
	var csvOut io.Writer = io.Discard
	var file *os.File
	if cfg.csvPath != "" {
		if file, err = os.Create(cfg.csvPath); err != nil {
			return err
		}
		defer file.Close()
		csvOut = file
	}
	if cfg.exclusive {
		return runExclusive(cfg, csvOut, file, stdout)
	}
	if cfg.split {
		return runSplit(cfg, csvOut, file, stdout)
	}
	res, err := simulate(cfg, csvOut)
	if err != nil {
		return err
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return err
		}
	}
	if cfg.pricesPath != "" {
		if err := plotPrices(cfg, res, cfg.pricesPath); err != nil {
			return fmt.Errorf("price plot: %w", err)
		}
	}
	if cfg.pnlPath != "" {
		if err := plotPnL(cfg, res, cfg.pnlPath); err != nil {
			return fmt.Errorf("P&L plot: %w", err)
		}
	}
	return summarize(stdout, cfg, res)
}

// result is what the plots and the summary need from the runs.
type result struct {
	pnl      []float64   // market-maker P&L at resolution, per run
	bound    float64     // its theoretical floor, −b·ln n
	absErr   []float64   // mean |p − p*| of the final prices, per run
	sqErr    []float64   // mean (p − p*)² of the final prices, per run
	trades   []int       // trades that executed, per run
	path     [][]float64 // price of each outcome at each step of cfg.plotRun
	pathTrue []float64   // the truth of cfg.plotRun
	rows     int         // CSV data rows written
}

// simulate runs every run and streams the CSV rows to w.
func simulate(cfg config, w io.Writer) (result, error) {
	rng := rand.New(rand.NewPCG(cfg.seed, 0x5eed_0f_1a5b))
	n := cfg.outcomes
	uniform := make([]float64, n)
	for i := range uniform {
		uniform[i] = 1 / float64(n)
	}
	q0, err := lmsr.InitialQuantities(cfg.b, uniform)
	if err != nil {
		return result{}, err
	}
	res := result{bound: -lmsr.Market{B: cfg.b, Q: q0}.WorstCaseLoss()}

	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csv.NewWriter(bw)
	if err := cw.Write([]string{"run", "step", "outcome", "q", "price", "cost", "mm_pnl"}); err != nil {
		return result{}, err
	}
	fmtF := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

	truth := make([]float64, n)
	beliefs := make([][]float64, cfg.traders)
	for k := range beliefs {
		beliefs[k] = make([]float64, n)
	}
	prices := make([]float64, n)
	record := make([]string, 7)
	for r := range cfg.runs {
		drawTruth(rng, cfg.truth, truth)
		for _, bel := range beliefs {
			drawBelief(rng, truth, cfg.noise, bel)
		}
		m := lmsr.Market{B: cfg.b, Q: slices.Clone(q0)}
		c0 := m.Cost()
		executed := 0
		if r == cfg.plotRun {
			res.pathTrue = slices.Clone(truth)
		}
		for step := 0; step <= cfg.trades; step++ {
			if step > 0 && trade(m, beliefs[rng.IntN(cfg.traders)], cfg.budget) {
				executed++
			}
			if err := m.PricesInto(prices); err != nil {
				return result{}, err
			}
			if r == cfg.plotRun {
				res.path = append(res.path, slices.Clone(prices))
			}
			cost := m.Cost() - c0
			record[0], record[1] = strconv.Itoa(r), strconv.Itoa(step)
			for i := range n {
				record[2] = strconv.Itoa(i)
				record[3] = fmtF(m.Q[i])
				record[4] = fmtF(prices[i])
				record[5] = fmtF(cost)
				record[6] = fmtF(cost - (m.Q[i] - q0[i]))
				if err := cw.Write(record); err != nil {
					return result{}, err
				}
				res.rows++
			}
		}
		winner := drawIndex(rng, truth)
		res.pnl = append(res.pnl, (m.Cost()-c0)-(m.Q[winner]-q0[winner]))
		var abs, sq float64
		for i := range n {
			d := prices[i] - truth[i]
			abs += math.Abs(d)
			sq += d * d
		}
		res.absErr = append(res.absErr, abs/float64(n))
		res.sqErr = append(res.sqErr, sq/float64(n))
		res.trades = append(res.trades, executed)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return result{}, err
	}
	return res, bw.Flush()
}

// trade lets a trader with belief bel buy the outcome with the largest edge
// bel_i − p_i, as many shares as bring p_i up to bel_i (other quantities
// fixed: Δ = b·ln(bel·(1−p) / (p·(1−bel)))), but spending at most budget.
// It updates m.Q in place (m owns its Q) and reports whether it traded.
func trade(m lmsr.Market, bel []float64, budget float64) bool {
	best, edge := -1, 0.0
	for i := range bel {
		if e := bel[i] - m.Price(i); e > edge {
			best, edge = i, e
		}
	}
	if best < 0 {
		return false
	}
	p, t := m.Price(best), bel[best]
	delta := m.B * (math.Log(t) - math.Log(p) + math.Log1p(-p) - math.Log1p(-t))
	cost, err := m.BuyCost(best, delta)
	if err == nil && cost > budget {
		delta, err = m.SharesForSpend(best, budget)
	}
	if err != nil || !(delta > 0) {
		// Past the price limit, or no edge left after rounding.
		return false
	}
	m.Q[best] += delta
	return true
}

// drawTruth fills dst with fixed, or else a draw from the flat Dirichlet
// (normalised exponentials), kept away from 0 so that prices can reach it.
func drawTruth(rng *rand.Rand, fixed, dst []float64) {
	if fixed != nil {
		copy(dst, fixed)
		return
	}
	sum := 0.0
	for i := range dst {
		dst[i] = rng.ExpFloat64() + 1e-3
		sum += dst[i]
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// drawBelief scatters a trader's belief around the truth: log p* plus
// Gaussian noise of the given standard deviation, renormalised.
func drawBelief(rng *rand.Rand, truth []float64, noise float64, dst []float64) {
	mx := math.Inf(-1)
	for i, p := range truth {
		dst[i] = math.Log(p) + noise*rng.NormFloat64()
		mx = max(mx, dst[i])
	}
	sum := 0.0
	for i := range dst {
		dst[i] = math.Exp(dst[i] - mx)
		sum += dst[i]
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// drawIndex draws an index with probabilities p.
func drawIndex(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	for i, x := range p {
		if u < x {
			return i
		}
		u -= x
	}
	return len(p) - 1
}

// summarize prints the market maker's P&L against its bound and the price
// error against the truth.
func summarize(w io.Writer, cfg config, res result) error {
	pnl := slices.Clone(res.pnl)
	slices.Sort(pnl)
	mean, sd := meanSD(pnl)
	half := 1.96 * sd / math.Sqrt(float64(len(pnl)))
	within := "never crossed"
	if pnl[0] < res.bound {
		within = "CROSSED (a bug)"
	}
	mae, _ := meanSD(res.absErr)
	mse, _ := meanSD(res.sqErr)
	executed, _ := meanSD(intsToFloats(res.trades))

	var b strings.Builder
	fmt.Fprintf(&b, "LMSR simulation: %d runs × %d trades, %d outcomes, b = %g, %d traders, noise %g, budget %g, seed %d\n",
		cfg.runs, cfg.trades, cfg.outcomes, cfg.b, cfg.traders, cfg.noise, cfg.budget, cfg.seed)
	fmt.Fprintf(&b, "trades executed per run: %.1f on average\n", executed)
	fmt.Fprintf(&b, "market-maker P&L at resolution (kopecks):\n")
	fmt.Fprintf(&b, "  mean %.2f, 95%% interval of the mean [%.2f, %.2f]\n", mean, mean-half, mean+half)
	fmt.Fprintf(&b, "  runs' 2.5%%–97.5%% range [%.2f, %.2f], worst %.2f, best %.2f\n",
		quantile(pnl, 0.025), quantile(pnl, 0.975), pnl[0], pnl[len(pnl)-1])
	fmt.Fprintf(&b, "  theoretical bound −b·ln n = %.2f: %s\n", res.bound, within)
	fmt.Fprintf(&b, "final prices vs truth: mean |p − p*| = %.4f, RMSE = %.4f\n", mae, math.Sqrt(mse))
	b.WriteString(cfg.wrote(res.rows, cfg.pricesPath, cfg.pnlPath))
	_, err := io.WriteString(w, b.String())
	return err
}

// placeOutputs makes the output directory (a new temporary one when -out
// is not given) and puts the output files in it: a relative name is
// taken within it, an absolute path as given. With no output asked for
// it makes nothing.
func (c *config) placeOutputs() error {
	paths := []*string{&c.csvPath, &c.pricesPath, &c.pnlPath}
	if c.exclusive {
		paths = append(paths, &c.sumsPath)
	}
	if !slices.ContainsFunc(paths, func(p *string) bool { return *p != "" }) {
		return nil
	}
	if c.outDir == "" {
		dir, err := os.MkdirTemp("", "predictkit-simulate-")
		if err != nil {
			return err
		}
		c.outDir = dir
	} else if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	for _, p := range paths {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(c.outDir, *p)
		}
	}
	return nil
}

// wrote is the summary's last line: the directory, and the files written
// into it (the CSV with its rows).
func (c *config) wrote(rows int, plots ...string) string {
	name := func(p string) string {
		if rel, err := filepath.Rel(c.outDir, p); err == nil && filepath.IsLocal(rel) {
			return rel
		}
		return p
	}
	var outs []string
	if c.csvPath != "" {
		outs = append(outs, fmt.Sprintf("%s (%d rows)", name(c.csvPath), rows))
	}
	for _, p := range plots {
		if p != "" {
			outs = append(outs, name(p))
		}
	}
	if len(outs) == 0 {
		return ""
	}
	return fmt.Sprintf("wrote into %s: %s\n", c.outDir, strings.Join(outs, ", "))
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

// quantile returns the q-quantile of sorted x by linear interpolation.
func quantile(x []float64, q float64) float64 {
	pos := q * float64(len(x)-1)
	i := int(pos)
	if i >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[i] + (pos-float64(i))*(x[i+1]-x[i])
}

func intsToFloats(x []int) []float64 {
	f := make([]float64, len(x))
	for i, v := range x {
		f[i] = float64(v)
	}
	return f
}
