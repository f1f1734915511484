package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/predictkit/predictkit/sim"
)

// result is what the plots and the summary need from the runs.
type result struct {
	runs  []*sim.Result
	pnl   []float64 // market-maker P&L at resolution, per run
	bound float64   // its floor, −subsidy
	rows  int       // CSV data rows written
}

// simulate runs cfg.runs runs of one configuration (run r with the seed
// sim.DeriveSeed(seed, 0, r), as sim.Runs does) and writes their paths
// to w as sim.WritePathCSV does.
func simulate(cfg config, w io.Writer) (result, error) {
	runs, err := sim.Runs(cfg.simConfig(), cfg.runs)
	if err != nil {
		return result{}, err
	}
	if err := sim.WritePathCSV(w, runs); err != nil {
		return result{}, err
	}
	res := result{runs: runs, bound: -float64(runs[0].Metrics.Subsidy)}
	for _, r := range runs {
		res.pnl = append(res.pnl, float64(r.Metrics.PnL))
		res.rows += len(r.Prices) * cfg.outcomes
	}
	return res, nil
}

// summarize prints the market maker's P&L against its bound, the fees,
// and how well the prices found the truth.
func summarize(w io.Writer, cfg config, res result) error {
	col := func(of func(sim.Metrics) float64) []float64 {
		x := make([]float64, len(res.runs))
		for i, r := range res.runs {
			x[i] = of(r.Metrics)
		}
		return x
	}
	pnl := slices.Clone(res.pnl)
	slices.Sort(pnl)
	iv := sim.MeanCI(pnl)
	within := "never crossed"
	if pnl[0] < res.bound {
		within = "CROSSED (a bug)"
	}
	mean := func(of func(sim.Metrics) float64) float64 { return sim.MeanCI(col(of)).Mean }
	reached := col(func(m sim.Metrics) float64 {
		if m.StepsToEps == sim.Never {
			return math.NaN()
		}
		return float64(m.StepsToEps)
	})
	at := sim.MeanCI(reached)

	var b strings.Builder
	fmt.Fprintf(&b, "%s simulation: %d runs × %d trades, %d outcomes, b = %g, margin %g, %d traders (%s), noise %g, budget %g, seed %d\n",
		cfg.design, cfg.runs, cfg.trades, cfg.outcomes, cfg.b, cfg.margin, cfg.traders, mixString(cfg.mix), cfg.noise, cfg.budget, cfg.seed)
	fmt.Fprintf(&b, "trades executed per run: %.1f on average\n", mean(func(m sim.Metrics) float64 { return float64(m.Trades) }))
	fmt.Fprintf(&b, "market-maker P&L at resolution (kopecks, fees excluded):\n")
	fmt.Fprintf(&b, "  mean %.2f, 95%% interval of the mean [%.2f, %.2f]\n", iv.Mean, iv.Lo, iv.Hi)
	fmt.Fprintf(&b, "  runs' 2.5%%–97.5%% range [%.2f, %.2f], worst %.2f, best %.2f\n",
		sim.Quantile(pnl, 0.025), sim.Quantile(pnl, 0.975), pnl[0], pnl[len(pnl)-1])
	fmt.Fprintf(&b, "  bound −subsidy = %.0f: %s\n", res.bound, within)
	fmt.Fprintf(&b, "fees per run: %.1f kopecks on average\n", mean(func(m sim.Metrics) float64 { return float64(m.Fees) }))
	fmt.Fprintf(&b, "final prices vs truth: mean |p − p*| = %.4f, RMSE = %.4f\n",
		mean(func(m sim.Metrics) float64 { return m.MAEFinal }), mean(func(m sim.Metrics) float64 { return m.RMSEFinal }))
	fmt.Fprintf(&b, "Brier score: final prices %.4f, time-averaged %.4f\n",
		mean(func(m sim.Metrics) float64 { return m.BrierFinal }), mean(func(m sim.Metrics) float64 { return m.BrierAvg }))
	if at.N == 0 {
		fmt.Fprintf(&b, "within ε = %g of the truth to the end: never, in every run\n", cfg.epsilon)
	} else {
		fmt.Fprintf(&b, "within ε = %g of the truth to the end: %d of %d runs, from step %.0f on average\n", cfg.epsilon, at.N, len(res.runs), at.Mean)
	}
	b.WriteString(cfg.wrote(res.rows, cfg.pricesPath, cfg.pnlPath, cfg.figures.calibrationPath))
	_, err := io.WriteString(w, b.String())
	return err
}

func mixString(m sim.Mix) string {
	var parts []string
	for _, k := range []struct {
		name  string
		share float64
	}{{"informed", m.Informed}, {"noise", m.Noise}, {"momentum", m.Momentum}, {"arbitrage", m.Arbitrage}} {
		if k.share > 0 {
			parts = append(parts, fmt.Sprintf("%g %s", k.share, k.name))
		}
	}
	return strings.Join(parts, ", ")
}
