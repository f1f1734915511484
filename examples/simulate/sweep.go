package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"time"

	"github.com/predictkit/predictkit/sim"
)

// runSweep runs the grid of the flags and writes the runs' CSV, the
// summary CSV and a table of the summary.
func runSweep(cfg config, stdout io.Writer) error {
	s := sim.Sweep{
		Points:  sim.Grid(cfg.simConfig(), cfg.designs, cfg.margins, cfg.bs, cfg.informed),
		Runs:    cfg.runs,
		Seed:    cfg.seed,
		Workers: cfg.workers,
		Common:  cfg.common,
	}
	// Ctrl-C stops the sweep between runs.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	res, err := s.Run(ctx)
	if err != nil {
		return err
	}
	took := time.Since(start)
	write := func(path string, f func(io.Writer, *sim.SweepResult) error) error {
		if path == "" {
			return nil
		}
		out, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := f(out, res); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	if err := write(cfg.csvPath, sim.WriteSweepCSV); err != nil {
		return err
	}
	if err := write(cfg.summaryPath, sim.WriteSummaryCSV); err != nil {
		return err
	}
	figures, err := sweepFigures(cfg, res)
	if err != nil {
		return err
	}
	workers := cfg.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "sweep: %d points × %d runs × %d trades, %d outcomes, seed %d: %.1fs on %d workers\n",
		len(s.Points), cfg.runs, cfg.trades, cfg.outcomes, cfg.seed, took.Seconds(), workers)
	fmt.Fprintf(&b, "%-6s %6s %7s %8s %22s %8s %8s %8s\n", "design", "margin", "b", "informed", "mm_pnl (95% interval)", "fees", "mae", "brier")
	for _, sum := range res.Summaries() {
		pnl, _ := sum.Stat("mm_pnl")
		fees, _ := sum.Stat("fees")
		mae, _ := sum.Stat("mae_final")
		brier, _ := sum.Stat("brier_final")
		c := sum.Config
		fmt.Fprintf(&b, "%-6s %6g %7d %8g %8.0f [%5.0f, %5.0f] %8.0f %8.4f %8.4f\n",
			c.Design, c.Margin, c.B, c.Mix.Informed, pnl.Mean, pnl.Lo, pnl.Hi, fees.Mean, mae.Mean, brier.Mean)
	}
	written := []string{cfg.summaryPath}
	for _, f := range figures {
		written = append(written, cfg.inOut(f))
	}
	b.WriteString(cfg.wrote(len(res.Rows), written...))
	_, err = io.WriteString(stdout, b.String())
	return err
}
