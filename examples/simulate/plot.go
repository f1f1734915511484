package main

import (
	"fmt"
	"image/color"
	"slices"

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
	steps := float64(len(res.pool.path) - 1)
	for i := range cfg.outcomes {
		for _, v := range []struct {
			st     venueStats
			dashes []vg.Length
		}{{res.pool, nil}, {res.binary, dashed}} {
			xys := make(plotter.XYs, len(v.st.path))
			for step, prices := range v.st.path {
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
		truth, err := plotter.NewLine(plotter.XYs{{X: 0, Y: res.pathTrue[i]}, {X: steps, Y: res.pathTrue[i]}})
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

// plotExclusivePnL draws the market maker's P&L over runs for both venues
// as two histograms on the same bins, each with its floor, −subsidy.
func plotExclusivePnL(cfg config, res exclusiveResult, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Market-maker P&L at resolution, %d runs", cfg.runs)
	p.X.Label.Text = "P&L (kopecks)"
	p.Y.Label.Text = "runs"
	lo := min(slices.Min(res.binary.pnl), slices.Min(res.pool.pnl))
	hi := max(slices.Max(res.binary.pnl), slices.Max(res.pool.pnl))
	bins := min(max(len(res.pool.pnl)/5, 5), 50)
	colours := []color.NRGBA{{R: 220, G: 110, B: 40, A: 150}, {R: 60, G: 110, B: 210, A: 150}}
	top := 0.0
	for k, v := range []venueStats{res.binary, res.pool} {
		// Two weightless points at the common range give both histograms
		// the same bins.
		xys := make(plotter.XYs, 0, len(v.pnl)+2)
		for _, x := range v.pnl {
			xys = append(xys, plotter.XY{X: x, Y: 1})
		}
		xys = append(xys, plotter.XY{X: lo}, plotter.XY{X: hi})
		h, err := plotter.NewHistogram(xys, bins)
		if err != nil {
			return err
		}
		h.FillColor = colours[k]
		h.LineStyle.Width = 0
		p.Add(h)
		p.Legend.Add(v.name, h)
		for _, b := range h.Bins {
			top = max(top, b.Weight)
		}
	}
	for k, v := range []venueStats{res.binary, res.pool} {
		l, err := plotter.NewLine(plotter.XYs{{X: -float64(v.subsidy), Y: 0}, {X: -float64(v.subsidy), Y: top}})
		if err != nil {
			return err
		}
		l.Color = color.NRGBA{R: colours[k].R, G: colours[k].G, B: colours[k].B, A: 255}
		l.Dashes = dashed
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("−subsidy, "+v.name, l)
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
	for k, v := range []venueStats{res.binary, res.pool} {
		xys := make(plotter.XYs, len(v.sums))
		for step, s := range v.sums {
			xys[step] = plotter.XY{X: float64(step), Y: s}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(k)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(v.name, l)
	}
	p.Add(plotter.NewGrid())
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
