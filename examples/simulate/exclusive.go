package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/predictkit/predictkit/sim"
)

// exclusiveHeader is the CSV header of -exclusive: one row per run, step
// and outcome, the two designs side by side.
var exclusiveHeader = []string{
	"run", "step", "outcome", "truth", "won",
	"binary_price", "pool_price",
	"binary_mm_pnl", "pool_mm_pnl",
	"binary_price_sum", "pool_price_sum",
}

// exclusiveDesigns are the designs -exclusive compares, in the order of
// its columns.
var exclusiveDesigns = [2]sim.Kind{sim.Binary, sim.Pool}

// venueName is how -exclusive's summary and plots name a design.
func venueName(k sim.Kind) string {
	if k == sim.Binary {
		return "binary markets"
	}
	return "exclusive pool"
}

// exclusiveResult is both designs' runs: runs[k][r] is run r of
// exclusiveDesigns[k]. Run r of both has the same seed, hence the same
// truth, winner and informed traders' signals.
type exclusiveResult struct {
	runs [2][]*sim.Result
}

// simulateExclusive runs cfg.runs runs of each design, the two designs at
// once, with the seeds sim.Runs gives: the common random numbers of
// sim.Sweep{Common: true}, with the price paths kept for the CSV and the
// plots.
func simulateExclusive(cfg config) (exclusiveResult, error) {
	var res exclusiveResult
	var errs [2]error
	var wg sync.WaitGroup
	for k, d := range exclusiveDesigns {
		wg.Go(func() {
			c := cfg.simConfig()
			c.Design = d
			res.runs[k], errs[k] = sim.Runs(c, cfg.runs)
		})
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return res, fmt.Errorf("%s: %w", exclusiveDesigns[k], err)
		}
	}
	return res, nil
}

// priceSum returns Σ prices.
func priceSum(prices []float64) float64 {
	s := 0.0
	for _, p := range prices {
		s += p
	}
	return s
}

// writeExclusiveCSV writes both designs' paths side by side and returns
// the number of data rows.
func writeExclusiveCSV(w io.Writer, res exclusiveResult) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csv.NewWriter(bw)
	if err := cw.Write(exclusiveHeader); err != nil {
		return 0, err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	rows := 0
	rec := make([]string, len(exclusiveHeader))
	for r, bin := range res.runs[0] {
		pool := res.runs[1][r]
		rec[0] = strconv.Itoa(r)
		for step := range bin.Prices {
			rec[1] = strconv.Itoa(step)
			rec[9], rec[10] = f(priceSum(bin.Prices[step])), f(priceSum(pool.Prices[step]))
			for i, truth := range bin.Truth {
				rec[2], rec[3] = strconv.Itoa(i), f(truth)
				rec[4] = "0"
				if i == bin.Winner {
					rec[4] = "1"
				}
				rec[5], rec[6] = f(bin.Prices[step][i]), f(pool.Prices[step][i])
				rec[7] = strconv.FormatInt(bin.PnL[step][i], 10)
				rec[8] = strconv.FormatInt(pool.PnL[step][i], 10)
				if err := cw.Write(rec); err != nil {
					return rows, err
				}
				rows++
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return rows, err
	}
	return rows, bw.Flush()
}

// writeExclusiveRuns writes one row per design and run with sim's metrics
// (arbitrage_left and price_sum among them), as sim.WriteSweepCSV writes a
// sweep of the two designs with common random numbers: point 0 is the
// binary markets, point 1 the pool.
func writeExclusiveRuns(w io.Writer, cfg config, res exclusiveResult) error {
	sr := &sim.SweepResult{Runs: cfg.runs}
	for k, runs := range res.runs {
		sr.Points = append(sr.Points, runs[0].Config)
		for r, run := range runs {
			sr.Rows = append(sr.Rows, sim.Row{
				Point: k, Run: r, Seed: run.Config.Seed,
				Truth: run.Truth, Winner: run.Winner,
				Final: run.Prices[len(run.Prices)-1], Metrics: run.Metrics,
			})
		}
	}
	return sim.WriteSweepCSV(w, sr)
}

// runsPath is where -exclusive writes its per-run CSV: next to the CSV,
// its name ending in -runs.csv.
func runsPath(csvPath string) string {
	if csvPath == "" {
		return ""
	}
	ext := filepath.Ext(csvPath)
	return strings.TrimSuffix(csvPath, ext) + "-runs" + ext
}

// runExclusive is run for -exclusive: simulate, write the CSVs, plot and
// summarise.
func runExclusive(cfg config, stdout io.Writer) error {
	res, err := simulateExclusive(cfg)
	if err != nil {
		return err
	}
	rows, perRun := 0, runsPath(cfg.csvPath)
	if cfg.csvPath != "" {
		if err := writeFile(cfg.csvPath, func(w io.Writer) (err error) {
			rows, err = writeExclusiveCSV(w, res)
			return err
		}); err != nil {
			return err
		}
		if err := writeFile(perRun, func(w io.Writer) error { return writeExclusiveRuns(w, cfg, res) }); err != nil {
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
	var b strings.Builder
	summarizeExclusive(&b, cfg, res)
	b.WriteString(cfg.wrote(rows, perRun, cfg.pricesPath, cfg.pnlPath, cfg.sumsPath))
	_, err = io.WriteString(stdout, b.String())
	return err
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// metric returns of(metrics) of every run.
func metric(runs []*sim.Result, of func(sim.Metrics) float64) []float64 {
	x := make([]float64, len(runs))
	for r, run := range runs {
		x[r] = of(run.Metrics)
	}
	return x
}

// summarizeExclusive prints the two designs side by side.
func summarizeExclusive(b *strings.Builder, cfg config, res exclusiveResult) {
	fmt.Fprintf(b, "Exclusive pool vs %d independent binary markets: %d runs × %d trades, b = %g each, margin %g, %d traders (%s), noise %g, budget %g, seed %d\n",
		cfg.outcomes, cfg.runs, cfg.trades, cfg.b, cfg.margin, cfg.traders, mixString(cfg.mix), cfg.noise, cfg.budget, cfg.seed)
	row := func(label string, f func(runs []*sim.Result) string) {
		// Labels left, values right; widths in runes, for Σ and −.
		b.WriteString(label + strings.Repeat(" ", max(40-utf8.RuneCountInString(label), 0)))
		for _, runs := range res.runs {
			s := f(runs)
			b.WriteString(strings.Repeat(" ", max(22-utf8.RuneCountInString(s), 1)) + s)
		}
		b.WriteByte('\n')
	}
	mean := func(of func(sim.Metrics) float64) func([]*sim.Result) float64 {
		return func(runs []*sim.Result) float64 { return sim.MeanCI(metric(runs, of)).Mean }
	}
	pnl := func(m sim.Metrics) float64 { return float64(m.PnL) }
	subsidy := func(runs []*sim.Result) int64 { return runs[0].Metrics.Subsidy }
	worst := func(runs []*sim.Result) float64 { return slices.Min(metric(runs, pnl)) }

	row("", func(runs []*sim.Result) string { return venueName(runs[0].Config.Design) })
	row("trades executed per run (mean)", func(runs []*sim.Result) string {
		return fmt.Sprintf("%.1f", mean(func(m sim.Metrics) float64 { return float64(m.Trades) })(runs))
	})
	row("subsidy escrowed (kopecks)", func(runs []*sim.Result) string { return strconv.FormatInt(subsidy(runs), 10) })
	row("fees per run (mean, kopecks)", func(runs []*sim.Result) string {
		return fmt.Sprintf("%.1f", mean(func(m sim.Metrics) float64 { return float64(m.Fees) })(runs))
	})
	row("market-maker P&L at resolution, mean", func(runs []*sim.Result) string {
		return fmt.Sprintf("%.2f", mean(pnl)(runs))
	})
	row("  95% interval of the mean", func(runs []*sim.Result) string {
		iv := sim.MeanCI(metric(runs, pnl))
		return fmt.Sprintf("[%.2f, %.2f]", iv.Lo, iv.Hi)
	})
	row("  worst run", func(runs []*sim.Result) string { return fmt.Sprintf("%.2f", worst(runs)) })
	row("  bound −subsidy", func(runs []*sim.Result) string {
		crossed := "never crossed"
		if worst(runs) < -float64(subsidy(runs)) {
			crossed = "CROSSED (a bug)"
		}
		return fmt.Sprintf("%d: %s", -subsidy(runs), crossed)
	})
	row("Σ YES prices at the end, mean |Σ − 1|", func(runs []*sim.Result) string {
		return fmt.Sprintf("%.4f", mean(func(m sim.Metrics) float64 { return math.Abs(m.PriceSum - 1) })(runs))
	})
	row("  largest |Σ − 1| at any step", func(runs []*sim.Result) string {
		largest := 0.0
		for _, run := range runs {
			for _, p := range run.Prices {
				largest = max(largest, math.Abs(priceSum(p)-1))
			}
		}
		return fmt.Sprintf("%.3g", largest)
	})
	row("final prices vs truth, mean |p − p*|", func(runs []*sim.Result) string {
		return fmt.Sprintf("%.4f", mean(func(m sim.Metrics) float64 { return m.MAEFinal })(runs))
	})
	row("  RMSE", func(runs []*sim.Result) string {
		// The root of the mean square error over every run and outcome.
		return fmt.Sprintf("%.4f", math.Sqrt(mean(func(m sim.Metrics) float64 { return m.RMSEFinal * m.RMSEFinal })(runs)))
	})
	row("Brier score of the final prices", func(runs []*sim.Result) string {
		return fmt.Sprintf("%.4f", mean(func(m sim.Metrics) float64 { return m.BrierFinal })(runs))
	})
	arb := metric(res.runs[0], func(m sim.Metrics) float64 { return float64(m.ArbitrageLeft) })
	fmt.Fprintf(b, "arbitrage left on the binary markets at the end (kopecks, fees and rounding included): mean %.2f, median %.0f, largest %.0f; in %d of %d runs\n",
		sim.MeanCI(arb).Mean, sim.Quantile(arb, 0.5), slices.Max(arb), len(arb)-count(arb, 0), len(arb))
	b.WriteString("  (the pool leaves none: its YES prices sum to 1 after every trade)\n")
}

// count returns how many of x equal v.
func count(x []float64, v float64) int {
	n := 0
	for _, e := range x {
		if e == v {
			n++
		}
	}
	return n
}
