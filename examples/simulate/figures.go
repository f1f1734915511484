package main

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/predictkit/predictkit/sim"
	"github.com/predictkit/predictkit/sim/simplot"
)

// figureFlags are the plots of the default mode and of -sweep drawn with
// sim/simplot.
type figureFlags struct {
	calibrationPath string   // default mode: the reliability diagram's file name in -out
	plotX           string   // -sweep: subsidy, b or informed
	plotMetrics     []string // -sweep: one figure per metric
	plotFormat      string   // -sweep: png or svg
}

func (f *figureFlags) register(fs *flag.FlagSet, metrics *string) {
	fs.StringVar(&f.calibrationPath, "calibration", "calibration.png", "reliability diagram of the final prices file name in -out, .png or .svg (empty: none)")
	fs.StringVar(&f.plotX, "plot-x", "subsidy", "with -sweep: the x axis of the figures: subsidy (kopecks escrowed), b or informed")
	fs.StringVar(metrics, "plot-metrics", "mae_final,brier_avg,mm_pnl", "with -sweep: a figure of each of these metrics (summary.csv's names) against -plot-x (empty: none)")
	fs.StringVar(&f.plotFormat, "plot-format", "png", "with -sweep: png or svg")
}

// check validates the figure flags once the other flags are parsed.
func (f *figureFlags) check(metrics string) error {
	switch f.plotX {
	case "subsidy", "b", "informed":
	default:
		return fmt.Errorf("-plot-x must be subsidy, b or informed, got %q", f.plotX)
	}
	if f.plotFormat != "png" && f.plotFormat != "svg" {
		return fmt.Errorf("-plot-format must be png or svg, got %q", f.plotFormat)
	}
	for _, m := range strings.Split(metrics, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if !slices.ContainsFunc(sim.MetricList, func(x sim.Metric) bool { return x.Name == m }) {
			return fmt.Errorf("-plot-metrics: no metric %q (the columns of summary.csv: trades, mm_pnl, brier_final, …)", m)
		}
		f.plotMetrics = append(f.plotMetrics, m)
	}
	return nil
}

// metricLabel names a metric and its unit on an axis: short, since a
// vertical label longer than its panel pushes the panel's title up.
var metricLabel = map[string]string{
	"mm_pnl":         "maker's P&L (kopecks)",
	"mm_worst_pnl":   "maker's worst-case P&L (kopecks)",
	"fees":           "fees (kopecks)",
	"subsidy":        "subsidy (kopecks)",
	"volume":         "volume (kopecks)",
	"collected":      "money collected (kopecks)",
	"brier_final":    "Brier score, final prices",
	"brier_avg":      "Brier score, mean prices",
	"log_final":      "log score, final prices",
	"log_avg":        "log score, mean prices",
	"mae_final":      "mean |p − p*|, final",
	"mae_avg":        "mean |p − p*| over the run",
	"rmse_final":     "RMSE to the truth, final",
	"rmse_avg":       "RMSE to the truth, mean",
	"steps_to_eps":   "trades to within ε",
	"arbitrage_left": "arbitrage left (kopecks)",
	"price_sum":      "Σ final YES prices",
	"trades":         "trades executed",
	"refused":        "trades refused",
}

func label(metric string) string {
	if l, ok := metricLabel[metric]; ok {
		return l
	}
	return metric
}

// plotRuns draws the default mode's price bands, one panel per outcome:
// the price itself against a fixed truth, or its distance from a truth
// drawn per run.
func plotRuns(cfg config, res result, path string) error {
	fixed := cfg.truth != nil
	panels := make([]simplot.Paths, cfg.outcomes)
	for i := range panels {
		runs := sim.OutcomePaths(res.runs, i)
		p := simplot.Paths{Name: fmt.Sprintf("outcome %d", i+1), Runs: runs}
		if fixed {
			p.Truth = make([]float64, len(runs[0]))
			for s := range p.Truth {
				p.Truth[s] = cfg.truth[i]
			}
		} else {
			for r, run := range runs {
				for s := range run {
					run[s] -= res.runs[r].Truth[i]
				}
			}
		}
		panels[i] = p
	}
	o := simplot.Options{
		Title:  fmt.Sprintf("%s, %d outcomes, b = %g, margin %g: prices over %d runs", designName(cfg.design), cfg.outcomes, cfg.b, cfg.margin, cfg.runs),
		XLabel: "trades",
		YLabel: "price of YES (probability)",
	}
	if fixed {
		o.YMin, o.YMax, o.Percent = simplot.Float(0), simplot.Float(1), true
	} else {
		o.Title = fmt.Sprintf("%s, %d outcomes, b = %g, margin %g: price − truth over %d runs (truth drawn per run)", designName(cfg.design), cfg.outcomes, cfg.b, cfg.margin, cfg.runs)
		o.YLabel = "price − truth (probability)"
	}
	fig, err := simplot.QuantileBands(panels, o)
	if err != nil {
		return err
	}
	return fig.Save(path)
}

// plotPnL draws the distribution of the market maker's P&L over the runs,
// with its floor −subsidy and its mean.
func plotPnL(cfg config, res result, path string) error {
	mean := sim.MeanCI(res.pnl).Mean
	fig, err := simplot.Histogram(res.pnl, min(max(len(res.pnl)/5, 5), 50), []simplot.Ref{
		{Name: "floor −subsidy", X: res.bound},
		{Name: "mean", X: mean},
	}, simplot.Options{
		Title:  fmt.Sprintf("%s: the market maker's P&L at resolution, %d runs", designName(cfg.design), cfg.runs),
		XLabel: "P&L, fees excluded (kopecks)",
		YLabel: "runs",
	})
	if err != nil {
		return err
	}
	return fig.Save(path)
}

// plotCalibration draws the reliability diagram of every run's final
// prices: of the outcomes priced near p, about p should have won.
func plotCalibration(cfg config, res result, path string) error {
	forecast, happened := sim.Forecasts(res.runs)
	fig, err := simplot.Calibration(forecast, happened, 10, simplot.Options{
		Title:   fmt.Sprintf("%s: calibration of the final prices, %d runs × %d outcomes", designName(cfg.design), cfg.runs, cfg.outcomes),
		XLabel:  "final price of YES",
		YLabel:  "share of those outcomes that won",
		Percent: true,
	})
	if err != nil {
		return err
	}
	return fig.Save(path)
}

func designName(k sim.Kind) string {
	switch k {
	case sim.Binary:
		return "n binary markets"
	case sim.Pool:
		return "exclusive pool"
	case sim.LS:
		return "LS-LMSR"
	}
	return string(k)
}

// sweepFigures draws each of -plot-metrics against -plot-x: one line per
// design, one panel per value of the parameters the x axis does not
// sweep (the fee, and b or the informed share), and returns the files'
// names.
func sweepFigures(cfg config, res *sim.SweepResult) ([]string, error) {
	sums := res.Summaries()
	type panelKey struct {
		margin, other float64
	}
	var keys []panelKey
	byPanel := map[panelKey]map[sim.Kind][]sim.Summary{}
	var designs []sim.Kind
	for _, s := range sums {
		c := s.Config
		k := panelKey{margin: c.Margin, other: c.Mix.Informed}
		if cfg.figures.plotX == "informed" {
			k.other = float64(c.B)
		}
		if byPanel[k] == nil {
			byPanel[k] = map[sim.Kind][]sim.Summary{}
			keys = append(keys, k)
		}
		byPanel[k][c.Design] = append(byPanel[k][c.Design], s)
		if !slices.Contains(designs, c.Design) {
			designs = append(designs, c.Design)
		}
	}
	x := func(s sim.Summary) float64 {
		switch cfg.figures.plotX {
		case "b":
			return float64(s.Config.B)
		case "informed":
			return s.Config.Mix.Informed
		}
		iv, _ := s.Stat("subsidy")
		return iv.Mean
	}
	xLabel := map[string]string{
		"subsidy":  "subsidy escrowed at the opening (kopecks, log scale)",
		"b":        "liquidity b (kopecks, log scale)",
		"informed": "share of informed traders",
	}[cfg.figures.plotX]
	var files []string
	for _, metric := range cfg.figures.plotMetrics {
		var panels []simplot.Panel
		for _, k := range keys {
			title := fmt.Sprintf("fee %g%%, informed %g%%", k.margin*100, k.other*100)
			if cfg.figures.plotX == "informed" {
				title = fmt.Sprintf("fee %g%%, b = %g", k.margin*100, k.other)
			}
			p := simplot.Panel{Title: title}
			for _, d := range designs {
				ss := slices.Clone(byPanel[k][d])
				if len(ss) == 0 {
					continue
				}
				slices.SortFunc(ss, func(a, b sim.Summary) int { return cmp.Compare(x(a), x(b)) })
				mean, lo, hi := sim.Column(ss, metric)
				xs := make([]float64, len(ss))
				for i, s := range ss {
					xs[i] = x(s)
				}
				// A metric with no value at a point (steps_to_eps where no
				// run got within ε) leaves that point out.
				var sr simplot.Series
				sr.Name = designName(d)
				for i := range xs {
					if math.IsNaN(mean[i]) || math.IsNaN(lo[i]) || math.IsNaN(hi[i]) {
						continue
					}
					sr.X, sr.Mean, sr.Lo, sr.Hi = append(sr.X, xs[i]), append(sr.Mean, mean[i]), append(sr.Lo, lo[i]), append(sr.Hi, hi[i])
				}
				if len(sr.X) > 0 {
					p.Series = append(p.Series, sr)
				}
			}
			panels = append(panels, p)
		}
		columns := 0
		if n := len(keys); n > 3 && n%2 == 0 {
			columns = n / 2
		}
		fig, err := simplot.Sweep(panels, simplot.Options{
			Title:   fmt.Sprintf("%s: mean and 95%% interval over %d runs a point", label(metric), cfg.runs),
			XLabel:  xLabel,
			YLabel:  label(metric),
			Columns: columns,
		}, cfg.figures.plotX != "informed")
		if err != nil {
			return nil, fmt.Errorf("%s figure: %w", metric, err)
		}
		name := fmt.Sprintf("%s-by-%s.%s", metric, cfg.figures.plotX, cfg.figures.plotFormat)
		if err := fig.Save(cfg.inOut(name)); err != nil {
			return nil, err
		}
		files = append(files, name)
	}
	return files, nil
}

// inOut is the path of a file named name in the output directory.
func (c *config) inOut(name string) string { return filepath.Join(c.outDir, name) }
