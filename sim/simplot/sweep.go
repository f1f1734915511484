package simplot

import (
	"fmt"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is a metric against a swept parameter: one line, with its
// interval from Lo to Hi at every point. Lo and Hi may both be nil for a
// line without an interval.
type Series struct {
	Name            string
	X, Mean, Lo, Hi []float64
}

// Panel is one small multiple of a sweep plot.
type Panel struct {
	Title  string
	Series []Series
}

// Sweep draws a metric against a swept parameter (the liquidity b, the
// share of informed traders, …), one panel each: every series is a line
// with points and its interval shaded. A series keeps its colour in every
// panel, so one legend serves them all. With logX the x axis is
// logarithmic and every X must be positive.
func Sweep(panels []Panel, o Options, logX bool) (*Figure, error) {
	if len(panels) == 0 {
		return nil, inputErr("no panels to draw")
	}
	colour := map[string]int{}
	titles := make([]string, len(panels))
	xs, ys := newSpan(), newSpan()
	for i, p := range panels {
		if len(p.Series) == 0 {
			return nil, inputErr("panel %q has no series", p.Title)
		}
		for _, s := range p.Series {
			if err := checkSeries(s, logX); err != nil {
				return nil, fmt.Errorf("panel %q: %w", p.Title, err)
			}
			if _, ok := colour[s.Name]; !ok {
				colour[s.Name] = len(colour)
			}
			xs.add(s.X...)
			ys.add(s.Mean...)
			ys.add(s.Lo...)
			ys.add(s.Hi...)
		}
		titles[i] = p.Title
	}
	f, err := newFigure(titles, o)
	if err != nil {
		return nil, err
	}
	named := map[string]bool{}
	for i, p := range panels {
		for _, s := range p.Series {
			s = sortedByX(s)
			c := Color(colour[s.Name])
			if s.Lo != nil {
				b, err := band(s.X, s.Lo, s.Hi, faded(c, 55))
				if err != nil {
					return nil, err
				}
				f.panels[i].Add(b)
			}
			xys := make(plotter.XYs, len(s.X))
			for k := range s.X {
				xys[k] = plotter.XY{X: s.X[k], Y: s.Mean[k]}
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = c, vg.Points(1.5)
			pts.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
			f.panels[i].Add(l, pts)
			if !named[s.Name] {
				named[s.Name] = true
				f.addLegend(s.Name, l)
			}
		}
	}
	if logX {
		if xs.lo == xs.hi {
			// A single x: a log axis cannot take the ±1 a linear one
			// would add, so show the decade around it.
			xs.add(xs.lo/2, xs.hi*2)
		}
		lo, hi := logRange(xs.lo, xs.hi)
		for _, p := range f.panels {
			// gonum places an axis label's glyph box at the linear
			// midpoint of the range, which on a log scale lies near the
			// right end: a long label then squeezes the panel's data area
			// to a fraction of its tile. One label under the grid avoids it.
			if p.X.Label.Text != "" {
				f.xLabel, p.X.Label.Text = p.X.Label.Text, ""
			}
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = LogTicks{}
			p.X.Min, p.X.Max = lo, hi
		}
	} else {
		f.setX(xs.lo, xs.hi)
	}
	if err := f.setY(ys.lo, ys.hi, o, false); err != nil {
		return nil, err
	}
	return f, nil
}

func checkSeries(s Series, logX bool) error {
	n := len(s.X)
	if n == 0 {
		return inputErr("series %q has no points", s.Name)
	}
	if len(s.Mean) != n {
		return inputErr("series %q has %d x values but %d means", s.Name, n, len(s.Mean))
	}
	if (s.Lo == nil) != (s.Hi == nil) {
		return inputErr("series %q has only one end of its interval", s.Name)
	}
	if s.Lo != nil && (len(s.Lo) != n || len(s.Hi) != n) {
		return inputErr("series %q has %d x values but intervals of %d and %d", s.Name, n, len(s.Lo), len(s.Hi))
	}
	for _, c := range []struct {
		what string
		vs   []float64
	}{{"X", s.X}, {"Mean", s.Mean}, {"Lo", s.Lo}, {"Hi", s.Hi}} {
		if err := checkFinite(fmt.Sprintf("series %q %s", s.Name, c.what), c.vs); err != nil {
			return err
		}
	}
	for k := range s.Lo {
		if s.Lo[k] > s.Hi[k] {
			return inputErr("series %q: Lo[%d] = %g is above Hi[%d] = %g", s.Name, k, s.Lo[k], k, s.Hi[k])
		}
	}
	if logX {
		for k, x := range s.X {
			if x <= 0 {
				return inputErr("series %q: X[%d] = %g cannot go on a log axis", s.Name, k, x)
			}
		}
	}
	return nil
}

// sortedByX returns a copy of s with its points in increasing X, so that
// its line and band do not double back.
func sortedByX(s Series) Series {
	idx := make([]int, len(s.X))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.X[idx[a]] < s.X[idx[b]] })
	pick := func(vs []float64) []float64 {
		if vs == nil {
			return nil
		}
		out := make([]float64, len(idx))
		for i, j := range idx {
			out[i] = vs[j]
		}
		return out
	}
	return Series{Name: s.Name, X: pick(s.X), Mean: pick(s.Mean), Lo: pick(s.Lo), Hi: pick(s.Hi)}
}
