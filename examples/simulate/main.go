// Command simulate runs simulated prediction markets against traders with
// private information and reports how the market maker fares and how well
// prices find the truth. It is a thin command over the package
// github.com/predictkit/predictkit/sim; docs/simulation.md describes the
// designs, the traders and the metrics.
//
// Usage, from a clone of the repository (or, once the module is
// published, go run github.com/predictkit/predictkit/examples/simulate@latest):
//
//	go run ./examples/simulate -design pool -b 1000 -outcomes 2 -margin 0.02 -runs 200 -seed 1 -out /tmp/sim
//
// It writes its CSV and plots into the directory -out, never into the
// working directory: by default a new directory under the system's
// temporary directory, whose path it prints. It reads no file, so it runs
// from any directory.
//
// Each run draws a hidden true distribution over the outcomes (or takes it
// from -truth) and the winner from it, opens the market design -design
// (binary: one binary market per outcome; pool: one exclusive pool; ls:
// the liquidity-sensitive LMSR) at uniform prices with the fee -margin,
// and lets randomly chosen traders of the mix -mix trade -trades times,
// in integer shares and kopecks as the server prices them. It writes a
// tidy CSV with one row per run, step and outcome:
//
//	run,step,outcome,truth,won,price,mm_pnl
//
// where step 0 is the opening state, price is the outcome's YES price
// after the step and mm_pnl the market maker's profit in kopecks if that
// outcome won then (fees excluded). It prints the mean P&L at resolution
// with a 95% interval against the bound −subsidy, the fees, the price
// error and the Brier score, and draws the price paths of one run and the
// distribution of the P&L over runs with gonum/plot (PNG, or SVG by the
// file extension). The same flags and seed always give the same CSV.
//
// # Sweeps
//
// With -sweep it runs every combination of -designs, -margins, -bs and
// -informed (the informed traders' share; the others keep the proportions
// of -mix), -runs times each, on -workers goroutines, and writes one row
// per point and run (-csv, the parameters, truth_0 … truth_{n−1}, the
// winner and every metric) and a summary per point (-summary, each
// metric's mean and 95% interval). The output is the same for any number
// of workers.
//
//	go run ./examples/simulate -sweep -designs binary,pool,ls -margins 0,0.02 -bs 500,1000,2000 -informed 0.2,0.5,0.8 -outcomes 5 -runs 100 -out /tmp/sweep
//
// # Exclusive pools
//
// With -exclusive it compares two of sim's designs for n markets of which
// exactly one resolves YES: n independent binary LMSR markets (binary),
// one per outcome with liquidity b each, and one exclusive pool (pool),
// an n-outcome LMSR of liquidity b. It takes the flags of the default
// mode but -design, and runs run r of both designs with the same seed, as
// a sweep with -common does: the same truth, winner and informed
// traders' signals.
//
//	go run ./examples/simulate -exclusive -outcomes 5 -b 1000 -runs 200 -seed 1
//
// The CSV then has one row per run, step and outcome with both designs
// side by side:
//
//	run,step,outcome,truth,won,binary_price,pool_price,binary_mm_pnl,pool_mm_pnl,binary_price_sum,pool_price_sum
//
// where the price sums are Σ YES prices over the markets. Next to it,
// NAME-runs.csv for -csv NAME.csv has one row per design and run in the
// form of a sweep's CSV: point 0 the binary markets, point 1 the pool,
// with every metric, arbitrage_left among them. It prints, for each
// design, the subsidy, the fees, the maker's P&L at resolution against
// −subsidy, how far the YES prices sum from 1, the error of the final
// prices against the truth and the Brier score, and the arbitrage left on
// the binary markets; it draws the price paths of one run (-prices), the
// two P&L distributions (-pnl) and the sums of the YES prices over one
// run (-sums).
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
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/sim"
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
	design                sim.Kind
	margin, lsCommission  float64
	mix                   sim.Mix
	cash                  int64
	lookback              int
	epsilon               float64
	sweep                 bool // run a grid of configurations
	designs               []sim.Kind
	margins, informed     []float64
	bs                    []int64
	workers               int
	common                bool
	exclusive             bool    // compare independent binary markets with an exclusive pool
	split                 bool    // add an answer to a pool's Other mid-run
	splitAt               int     // -split: the step of the split
	splitShare            float64 // -split: the new answer's share of Other's price
	outDir                string  // where the outputs go; "": a new temporary directory
	csvPath, summaryPath  string
	pricesPath, pnlPath   string
	sumsPath              string // -exclusive only
	plotRun               int
	figures               figureFlags
}

func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	var truth, design, mix, designs, margins, bs, informed, plotMetrics string
	def := sim.DefaultConfig()
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Float64Var(&c.b, "b", 1000, "LMSR liquidity b, whole kopecks (one share pays 1)")
	fs.IntVar(&c.outcomes, "outcomes", 2, "number of outcomes (≥ 2)")
	fs.IntVar(&c.traders, "traders", 50, "number of traders")
	fs.IntVar(&c.trades, "trades", 500, "trades (steps) per run")
	fs.IntVar(&c.runs, "runs", 200, "independent runs (per point with -sweep)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed; the same seed gives the same output")
	fs.Float64Var(&c.noise, "noise", 0.5, "standard deviation of the informed traders' signals, in log-odds")
	fs.Float64Var(&c.budget, "budget", 100, "most a trader spends on one trade, whole kopecks")
	fs.StringVar(&truth, "truth", "", "comma-separated true probabilities (default: drawn per run)")
	fs.StringVar(&design, "design", string(sim.Pool), "market design: binary (one binary market per outcome), pool (one exclusive pool) or ls (liquidity-sensitive LMSR)")
	fs.Float64Var(&c.margin, "margin", def.Margin, "the platform's fee, 0 to 0.2, as a pool's margin")
	fs.Float64Var(&c.lsCommission, "ls-commission", def.LSCommission, "with -design ls: how far its prices may sum above 1")
	fs.StringVar(&mix, "mix", "informed=0.7,noise=0.2,momentum=0.1", "the traders' kinds and shares (informed, noise, momentum, arbitrage), summing to 1")
	fs.Int64Var(&c.cash, "cash", def.Cash, "each trader's opening cash, kopecks")
	fs.IntVar(&c.lookback, "lookback", def.Lookback, "steps a momentum trader looks back")
	fs.Float64Var(&c.epsilon, "epsilon", def.Epsilon, "the distance to the truth the time-to-ε metric measures")
	fs.BoolVar(&c.sweep, "sweep", false, "run every combination of -designs, -margins, -bs and -informed, -runs times each, and write the runs and a summary per point")
	fs.StringVar(&designs, "designs", "binary,pool,ls", "with -sweep: the designs")
	fs.StringVar(&margins, "margins", "0,0.02", "with -sweep: the fees")
	fs.StringVar(&bs, "bs", "500,1000,2000,5000,10000", "with -sweep: the liquidities b, kopecks")
	fs.StringVar(&informed, "informed", "0.1,0.3,0.5,0.7,0.9", "with -sweep: the informed traders' shares")
	fs.BoolVar(&c.common, "common", false, "with -sweep: run r of every point draws the same truth, winner and signals (common random numbers)")
	fs.IntVar(&c.workers, "workers", 0, "with -sweep: runs at once (default: every CPU); the output does not depend on it")
	fs.StringVar(&c.outDir, "out", "", "directory the CSV and the plots are written into, made if missing (default: a new directory under the system's temporary directory, printed)")
	fs.StringVar(&c.csvPath, "csv", "simulate.csv", "CSV file name in -out (empty: none)")
	fs.StringVar(&c.summaryPath, "summary", "summary.csv", "with -sweep: file name in -out of the summary per point (empty: none)")
	fs.StringVar(&c.pricesPath, "prices", "prices.png", "price plot file name in -out, .png or .svg (empty: none): the quantile bands over the runs, one panel per outcome (with -exclusive: one run's paths)")
	fs.StringVar(&c.pnlPath, "pnl", "pnl.png", "P&L distribution plot file name in -out, .png or .svg (empty: none)")
	fs.StringVar(&c.sumsPath, "sums", "sums.png", "with -exclusive: file name in -out of the plot of the sum of the YES prices, .png or .svg (empty: none)")
	fs.IntVar(&c.plotRun, "plot-run", 0, "with -exclusive: which run's price paths to draw")
	fs.BoolVar(&c.exclusive, "exclusive", false, "compare n independent binary markets (one per outcome, b each) with one exclusive pool (b), in kopecks")
	fs.BoolVar(&c.split, "split", false, "run an exclusive pool whose last market is Other and add an answer out of it mid-run, checking every trader's payouts (CSV only)")
	fs.IntVar(&c.splitAt, "split-at", 0, "with -split: the step at which the answer is added (default: half of -trades)")
	fs.Float64Var(&c.splitShare, "split-share", 0.5, "with -split: the new answer's share of Other's price, in (0, 1)")
	c.figures.register(fs, &plotMetrics)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := c.figures.check(plotMetrics); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c.design = sim.Kind(design)
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
	case btoi(c.exclusive)+btoi(c.split)+btoi(c.sweep) > 1:
		return c, errors.New("-exclusive, -split and -sweep are separate modes: give one")
	case c.b != math.Trunc(c.b) || c.b > lmsr.MaxQuantity:
		return c, fmt.Errorf("the markets trade in kopecks: -b must be a whole number up to 2^53, got %v", c.b)
	case c.budget != math.Trunc(c.budget) || c.budget > lmsr.MaxQuantity:
		return c, fmt.Errorf("the markets trade in kopecks: -budget must be a whole number up to 2^53, got %v", c.budget)
	case c.split && !(c.splitShare > 0 && c.splitShare < 1):
		return c, fmt.Errorf("-split-share must be in (0, 1), got %v", c.splitShare)
	case c.split && (c.splitAt < 0 || c.splitAt > c.trades):
		return c, fmt.Errorf("-split-at must be in [1, %d], got %d", c.trades, c.splitAt)
	}
	var err error
	if c.mix, err = parseMix(mix); err != nil {
		return c, fmt.Errorf("-mix: %w", err)
	}
	if c.split {
		if c.splitAt == 0 {
			c.splitAt = max(1, c.trades/2)
		}
		// -split draws no plot.
		c.pricesPath, c.pnlPath = "", ""
	}
	if truth != "" {
		if c.truth, err = parseFloats(truth); err != nil {
			return c, fmt.Errorf("-truth: %w", err)
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
	if c.sweep {
		for _, d := range strings.Split(designs, ",") {
			c.designs = append(c.designs, sim.Kind(strings.TrimSpace(d)))
		}
		if c.margins, err = parseFloats(margins); err != nil {
			return c, fmt.Errorf("-margins: %w", err)
		}
		if c.informed, err = parseFloats(informed); err != nil {
			return c, fmt.Errorf("-informed: %w", err)
		}
		for _, f := range strings.Split(bs, ",") {
			b, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return c, fmt.Errorf("-bs: %w", err)
			}
			c.bs = append(c.bs, b)
		}
		// A sweep draws no plot.
		c.pricesPath, c.pnlPath = "", ""
	}
	switch {
	case c.exclusive:
		// -exclusive runs both designs whatever -design says.
		for _, d := range exclusiveDesigns {
			sc := c.simConfig()
			sc.Design = d
			if err := sc.Validate(); err != nil {
				return c, err
			}
		}
	case !c.split:
		// sim checks the rest: the design, the fee, the mix, the truth.
		if err := c.simConfig().Validate(); err != nil {
			return c, err
		}
	}
	return c, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// parseMix reads "informed=0.7,noise=0.3": kinds not named get 0.
func parseMix(s string) (sim.Mix, error) {
	var m sim.Mix
	for _, f := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return m, fmt.Errorf("%q is not kind=share", f)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return m, fmt.Errorf("%s: %w", name, err)
		}
		switch name {
		case "informed":
			m.Informed = v
		case "noise":
			m.Noise = v
		case "momentum":
			m.Momentum = v
		case "arbitrage":
			m.Arbitrage = v
		default:
			return m, fmt.Errorf("unknown kind %q, want informed, noise, momentum or arbitrage", name)
		}
	}
	return m, nil
}

// simConfig is the sim.Config the flags describe.
func (c config) simConfig() sim.Config {
	return sim.Config{
		Design: c.design, Outcomes: c.outcomes, B: int64(c.b), Margin: c.margin, LSCommission: c.lsCommission,
		Mix: c.mix, Traders: c.traders, Cash: c.cash, Budget: int64(c.budget), Steps: c.trades,
		Noise: c.noise, Lookback: c.lookback, Epsilon: c.epsilon, Truth: c.truth, Seed: c.seed,
	}
}

func run(args []string, stdout io.Writer) error {
	cfg, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	if err := cfg.placeOutputs(); err != nil {
		return err
	}
	if cfg.sweep {
		return runSweep(cfg, stdout)
	}
	if cfg.exclusive {
		return runExclusive(cfg, stdout)
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
		if err := plotRuns(cfg, res, cfg.pricesPath); err != nil {
			return fmt.Errorf("price plot: %w", err)
		}
	}
	if cfg.pnlPath != "" {
		if err := plotPnL(cfg, res, cfg.pnlPath); err != nil {
			return fmt.Errorf("P&L plot: %w", err)
		}
	}
	if cfg.figures.calibrationPath != "" {
		if err := plotCalibration(cfg, res, cfg.figures.calibrationPath); err != nil {
			return fmt.Errorf("calibration plot: %w", err)
		}
	}
	return summarize(stdout, cfg, res)
}
