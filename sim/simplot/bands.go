package simplot

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/vg"
)

// Paths is one quantity of many runs over steps: Runs[r][s] is its value in
// run r after step s. Truth is an optional reference per step (nil: none);
// when the truth differs from run to run, pass nil and plot the errors
// (price − truth) instead.
type Paths struct {
	Name  string
	Runs  [][]float64
	Truth []float64
}

// The quantiles drawn by QuantileBands: the 10–90% and 25–75% bands and
// the median.
var bandQuantiles = []float64{0.10, 0.25, 0.50, 0.75, 0.90}

// QuantileBands draws one small multiple per Paths (for instance one per
// outcome): the median over runs as a line, shaded bands between the 10th
// and 90th and the 25th and 75th percentiles, and the truth as a dashed
// line. All panels share their axes. Every run of a panel must have the
// same number of steps, at least two.
func QuantileBands(panels []Paths, o Options) (*Figure, error) {
	if len(panels) == 0 {
		return nil, inputErr("no panels to draw")
	}
	titles := make([]string, len(panels))
	qs := make([][][]float64, len(panels))
	ys, xs := newSpan(), newSpan()
	for i, p := range panels {
		q, err := StepQuantiles(p.Runs, bandQuantiles)
		if err != nil {
			return nil, fmt.Errorf("panel %q: %w", p.Name, err)
		}
		if p.Truth != nil {
			if len(p.Truth) != len(q[0]) {
				return nil, inputErr("panel %q: truth has %d steps, the runs %d", p.Name, len(p.Truth), len(q[0]))
			}
			if err := checkFinite("truth", p.Truth); err != nil {
				return nil, fmt.Errorf("panel %q: %w", p.Name, err)
			}
			ys.add(p.Truth...)
		}
		ys.add(q[0]...)
		ys.add(q[len(q)-1]...)
		xs.add(0, float64(len(q[0])-1))
		titles[i], qs[i] = p.Name, q
	}
	if o.XLabel == "" {
		o.XLabel = "step"
	}
	f, err := newFigure(titles, o)
	if err != nil {
		return nil, err
	}
	blue, vermillion := Palette[0], Palette[1]
	for i, p := range panels {
		q := qs[i]
		x := make([]float64, len(q[0]))
		for s := range x {
			x[s] = float64(s)
		}
		outer, err := band(x, q[0], q[4], faded(blue, 60))
		if err != nil {
			return nil, err
		}
		inner, err := band(x, q[1], q[3], faded(blue, 110))
		if err != nil {
			return nil, err
		}
		median, err := line(x, q[2], blue, vg.Points(1.5), nil)
		if err != nil {
			return nil, err
		}
		f.panels[i].Add(outer, inner, median)
		if i == 0 {
			f.addLegend("median", median)
			f.addLegend("25–75% of runs", inner)
			f.addLegend("10–90% of runs", outer)
		}
		if p.Truth != nil {
			truth, err := line(x, p.Truth, vermillion, vg.Points(1.5), dashed)
			if err != nil {
				return nil, err
			}
			f.panels[i].Add(truth)
			if !f.hasLegend("truth") {
				f.addLegend("truth", truth)
			}
		}
	}
	f.setX(xs.lo, xs.hi)
	if err := f.setY(ys.lo, ys.hi, o, false); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *Figure) hasLegend(name string) bool {
	return slices.ContainsFunc(f.legend, func(e legendEntry) bool { return e.name == name })
}

// StepQuantiles returns, for each probability p in ps, the p-quantile over
// runs of every step: out[k][s] is quantile ps[k] of runs[·][s]. Quantiles
// interpolate linearly between order statistics (type 7 of Hyndman and
// Fan, the default of R and NumPy).
func StepQuantiles(runs [][]float64, ps []float64) ([][]float64, error) {
	if len(runs) == 0 {
		return nil, inputErr("no runs")
	}
	steps := len(runs[0])
	if steps < 2 {
		return nil, inputErr("run 0 has %d steps, want at least 2", steps)
	}
	for r, run := range runs {
		if len(run) != steps {
			return nil, inputErr("run %d has %d steps, run 0 has %d", r, len(run), steps)
		}
		if err := checkFinite(fmt.Sprintf("run %d step", r), run); err != nil {
			return nil, err
		}
	}
	for _, p := range ps {
		if !(p >= 0 && p <= 1) {
			return nil, inputErr("quantile %g is outside [0, 1]", p)
		}
	}
	out := make([][]float64, len(ps))
	for k := range out {
		out[k] = make([]float64, steps)
	}
	col := make([]float64, len(runs))
	for s := range steps {
		for r, run := range runs {
			col[r] = run[s]
		}
		slices.Sort(col)
		for k, p := range ps {
			out[k][s] = quantile(col, p)
		}
	}
	return out, nil
}

// quantile is the p-quantile of sorted, a non-empty ascending slice.
func quantile(sorted []float64, p float64) float64 {
	h := p * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}
