package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

var dashed = []vg.Length{vg.Points(5), vg.Points(3)}

// plotPrices draws the price of every outcome over the steps of one run,
// with the hidden truth as a dashed line of the same colour.
func plotPrices(cfg config, res result, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("LMSR price paths, run %d (dashed: truth)", cfg.plotRun)
	p.X.Label.Text = "step"
	p.Y.Label.Text = "price"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	for i := range cfg.outcomes {
		xys := make(plotter.XYs, len(res.path))
		for step, prices := range res.path {
			xys[step] = plotter.XY{X: float64(step), Y: prices[i]}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		truth, err := plotter.NewLine(plotter.XYs{{X: 0, Y: res.pathTrue[i]}, {X: float64(len(res.path) - 1), Y: res.pathTrue[i]}})
		if err != nil {
			return err
		}
		truth.Color = plotutil.Color(i)
		truth.Dashes = dashed
		p.Add(l, truth)
		if cfg.outcomes <= 10 {
			p.Legend.Add(fmt.Sprintf("outcome %d", i), l)
		}
	}
	p.Add(plotter.NewGrid())
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// plotPnL draws the histogram of the market maker's P&L over runs, with its
// theoretical floor −b·ln n and the mean marked.
func plotPnL(cfg config, res result, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Market-maker P&L at resolution, %d runs", cfg.runs)
	p.X.Label.Text = "P&L (kopecks)"
	p.Y.Label.Text = "runs"
	bins := min(max(len(res.pnl)/5, 5), 50)
	h, err := plotter.NewHist(plotter.Values(res.pnl), bins)
	if err != nil {
		return err
	}
	h.FillColor = color.RGBA{R: 90, G: 130, B: 200, A: 255}
	p.Add(h)

	top := 0.0
	for _, b := range h.Bins {
		top = max(top, b.Weight)
	}
	mean, _ := meanSD(res.pnl)
	for _, mark := range []struct {
		x     float64
		label string
		c     color.Color
	}{
		{res.bound, "bound −b·ln n", color.RGBA{R: 200, A: 255}},
		{mean, "mean", color.RGBA{G: 140, A: 255}},
	} {
		l, err := plotter.NewLine(plotter.XYs{{X: mark.x, Y: 0}, {X: mark.x, Y: top}})
		if err != nil {
			return err
		}
		l.Color = mark.c
		l.Dashes = dashed
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(mark.label, l)
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
