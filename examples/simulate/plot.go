package main

import (
	"fmt"
	"image/color"
	"slices"

	"github.com/predictkit/predictkit/sim"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

var dashed = []vg.Length{vg.Points(5), vg.Points(3)}

// plotExclusivePrices draws, for one run of -exclusive, the YES price of
// every market on the exclusive pool (solid) and on the independent binary
// markets (dashed), with the truth dotted, in one colour per outcome.
func plotExclusivePrices(cfg config, res exclusiveResult, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("YES prices, run %d (solid: exclusive pool, dashed: binary markets, dotted: truth)", cfg.plotRun)
	p.X.Label.Text = "step"
	p.Y.Label.Text = "price"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	bin, pool := res.runs[0][cfg.plotRun], res.runs[1][cfg.plotRun]
	steps := float64(len(pool.Prices) - 1)
	for i := range cfg.outcomes {
		for _, v := range []struct {
			run    *sim.Result
			dashes []vg.Length
		}{{pool, nil}, {bin, dashed}} {
			xys := make(plotter.XYs, len(v.run.Prices))
			for step, prices := range v.run.Prices {
				xys[step] = plotter.XY{X: float64(step), Y: prices[i]}
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return err
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.5)
			l.Dashes = v.dashes
			p.Add(l)
			if v.dashes == nil && cfg.outcomes <= 10 {
				p.Legend.Add(fmt.Sprintf("outcome %d", i), l)
			}
		}
		truth, err := plotter.NewLine(plotter.XYs{{X: 0, Y: pool.Truth[i]}, {X: steps, Y: pool.Truth[i]}})
		if err != nil {
			return err
		}
		truth.Color = plotutil.Color(i)
		truth.Dashes = dotted
		p.Add(truth)
	}
	p.Add(plotter.NewGrid())
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

var dotted = []vg.Length{vg.Points(1), vg.Points(3)}

// plotExclusivePnL draws the market maker's P&L over runs for both designs
// as two histograms on the same bins, each with its floor, −subsidy.
func plotExclusivePnL(cfg config, res exclusiveResult, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Market-maker P&L at resolution, %d runs", cfg.runs)
	p.X.Label.Text = "P&L (kopecks)"
	p.Y.Label.Text = "runs"
	pnl := func(m sim.Metrics) float64 { return float64(m.PnL) }
	pnls := [2][]float64{metric(res.runs[0], pnl), metric(res.runs[1], pnl)}
	lo := min(slices.Min(pnls[0]), slices.Min(pnls[1]))
	hi := max(slices.Max(pnls[0]), slices.Max(pnls[1]))
	bins := min(max(cfg.runs/5, 5), 50)
	colours := []color.NRGBA{{R: 220, G: 110, B: 40, A: 150}, {R: 60, G: 110, B: 210, A: 150}}
	top := 0.0
	for k, x := range pnls {
		// Two weightless points at the common range give both histograms
		// the same bins.
		xys := make(plotter.XYs, 0, len(x)+2)
		for _, v := range x {
			xys = append(xys, plotter.XY{X: v, Y: 1})
		}
		xys = append(xys, plotter.XY{X: lo}, plotter.XY{X: hi})
		h, err := plotter.NewHistogram(xys, bins)
		if err != nil {
			return err
		}
		h.FillColor = colours[k]
		h.LineStyle.Width = 0
		p.Add(h)
		p.Legend.Add(venueName(exclusiveDesigns[k]), h)
		for _, b := range h.Bins {
			top = max(top, b.Weight)
		}
	}
	for k, runs := range res.runs {
		floor := -float64(runs[0].Metrics.Subsidy)
		l, err := plotter.NewLine(plotter.XYs{{X: floor, Y: 0}, {X: floor, Y: top}})
		if err != nil {
			return err
		}
		l.Color = color.NRGBA{R: colours[k].R, G: colours[k].G, B: colours[k].B, A: 255}
		l.Dashes = dashed
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("−subsidy, "+venueName(exclusiveDesigns[k]), l)
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// plotPriceSums draws the sum of the YES prices over the steps of one run
// of -exclusive: the binary markets' drifts, the pool's stays at 1.
func plotPriceSums(cfg config, res exclusiveResult, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Sum of the YES prices of %d markets, run %d", cfg.outcomes, cfg.plotRun)
	p.X.Label.Text = "step"
	p.Y.Label.Text = "Σ YES prices"
	p.Legend.Top = true
	for k, runs := range res.runs {
		path := runs[cfg.plotRun].Prices
		xys := make(plotter.XYs, len(path))
		for step, prices := range path {
			xys[step] = plotter.XY{X: float64(step), Y: priceSum(prices)}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(k)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(venueName(exclusiveDesigns[k]), l)
	}
	p.Add(plotter.NewGrid())
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
