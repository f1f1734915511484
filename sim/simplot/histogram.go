package simplot

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Ref is a vertical reference line on a histogram, such as the market
// maker's worst case or the mean.
type Ref struct {
	Name string
	X    float64
}

// refDashes tells the reference lines apart without relying on colour.
var refDashes = [][]vg.Length{
	{vg.Points(6), vg.Points(3)},
	nil,
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
}

// Histogram draws the distribution of values (for instance the market
// maker's P&L over runs) in bins equal-width bins, with a vertical line
// for each reference, named in the legend with its value. The y axis
// counts values; its label defaults to "runs".
func Histogram(values []float64, bins int, refs []Ref, o Options) (*Figure, error) {
	if bins < 1 {
		return nil, inputErr("bins is %d, want at least 1", bins)
	}
	if len(values) == 0 {
		return nil, inputErr("no values")
	}
	if err := checkFinite("values", values); err != nil {
		return nil, err
	}
	for _, r := range refs {
		if !finite(r.X) {
			return nil, inputErr("reference %q is at %g", r.Name, r.X)
		}
	}
	if o.YLabel == "" {
		o.YLabel = "runs"
	}
	f, err := newFigure([]string{""}, o)
	if err != nil {
		return nil, err
	}
	p := f.panels[0]
	p.Y.Tick.Marker = RoundTicks{Percent: o.Percent, Integer: !o.Percent}

	xs := newSpan()
	xs.add(values...)
	if xs.lo == xs.hi {
		// One value repeated: plotter.NewHistogram makes its single bin
		// one unit wide.
		xs.add(xs.lo + 1)
	}
	h, err := plotter.NewHistogram(valueXYs(values), bins)
	if err != nil {
		return nil, err
	}
	h.FillColor = Palette[5]
	h.LineStyle.Color, h.LineStyle.Width = color.White, vg.Points(0.5)
	top := 0.0
	for _, b := range h.Bins {
		top = math.Max(top, b.Weight)
	}
	p.Add(h)
	f.addLegend(fmt.Sprintf("%s values in %d bins", formatNumber(float64(len(values)), 0), bins), h)

	_, yTop := roundRange(0, top, true)
	for i, r := range refs {
		l, err := line([]float64{r.X, r.X}, []float64{0, yTop}, Color(i+1), vg.Points(1.8), refDashes[i%len(refDashes)])
		if err != nil {
			return nil, err
		}
		p.Add(l)
		xs.add(r.X)
		f.addLegend(fmt.Sprintf("%s = %s", r.Name, formatNumber(r.X, decimals(roundStep(xs.hi-xs.lo))+1)), l)
	}
	f.setX(xs.lo, xs.hi)
	if err := f.setY(0, top, o, true); err != nil {
		return nil, err
	}
	return f, nil
}

// valueXYs puts every value at weight one, as plotter.NewHistogram counts.
type valueXYs []float64

func (v valueXYs) Len() int                    { return len(v) }
func (v valueXYs) XY(i int) (float64, float64) { return v[i], 1 }
