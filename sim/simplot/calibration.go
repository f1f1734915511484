package simplot

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// z95 is the standard normal quantile of 0.975, for 95% intervals.
const z95 = 1.959963984540054

// CalibrationBin is one bin of a reliability diagram.
type CalibrationBin struct {
	// Lo and Hi are the bin's edges; a forecast f falls in the bin when
	// Lo ≤ f < Hi, and the last bin also holds f = 1.
	Lo, Hi float64
	// Count is the number of forecasts in the bin; Happened how many of
	// them came true.
	Count, Happened int
	// MeanForecast is the mean of the bin's forecasts, Observed the share
	// that came true, and WilsonLo..WilsonHi the 95% Wilson score
	// interval of that share. All four are NaN in an empty bin.
	MeanForecast, Observed, WilsonLo, WilsonHi float64
}

// CalibrationBins sorts forecasts of an event into bins equal-width bins
// over [0, 1] and returns every bin, empty ones included, so that the bins
// keep their places in a table. Forecasts must be probabilities in [0, 1].
func CalibrationBins(forecast []float64, happened []bool, bins int) ([]CalibrationBin, error) {
	if bins < 1 {
		return nil, inputErr("bins is %d, want at least 1", bins)
	}
	if len(forecast) == 0 {
		return nil, inputErr("no forecasts")
	}
	if len(forecast) != len(happened) {
		return nil, inputErr("%d forecasts but %d outcomes", len(forecast), len(happened))
	}
	out := make([]CalibrationBin, bins)
	sums := make([]float64, bins)
	for i := range out {
		out[i].Lo = float64(i) / float64(bins)
		out[i].Hi = float64(i+1) / float64(bins)
	}
	for i, f := range forecast {
		if !(f >= 0 && f <= 1) {
			return nil, inputErr("forecast[%d] is %g, want a probability in [0, 1]", i, f)
		}
		b := min(int(f*float64(bins)), bins-1)
		out[b].Count++
		sums[b] += f
		if happened[i] {
			out[b].Happened++
		}
	}
	for i := range out {
		b := &out[i]
		if b.Count == 0 {
			b.MeanForecast, b.Observed, b.WilsonLo, b.WilsonHi = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			continue
		}
		b.MeanForecast = sums[i] / float64(b.Count)
		b.Observed = float64(b.Happened) / float64(b.Count)
		b.WilsonLo, b.WilsonHi = Wilson(b.Happened, b.Count)
	}
	return out, nil
}

// Wilson returns the 95% Wilson score interval of a share of k successes
// in n trials. Unlike the normal approximation it stays inside [0, 1] and
// does not collapse to a point when k is 0 or n. It returns NaNs for n < 1
// or k outside [0, n].
func Wilson(k, n int) (lo, hi float64) {
	if n < 1 || k < 0 || k > n {
		return math.NaN(), math.NaN()
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z95 * z95
	denom := 1 + z2/nf
	centre := (p + z2/(2*nf)) / denom
	half := z95 / denom * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return math.Max(centre-half, 0), math.Min(centre+half, 1)
}

// calibrationPoints holds the non-empty bins for the scatter and the error
// bars, which read their data through these methods.
type calibrationPoints []CalibrationBin

func (c calibrationPoints) Len() int                    { return len(c) }
func (c calibrationPoints) XY(i int) (float64, float64) { return c[i].MeanForecast, c[i].Observed }
func (c calibrationPoints) YError(i int) (float64, float64) {
	return c[i].Observed - c[i].WilsonLo, c[i].WilsonHi - c[i].Observed
}

// Calibration draws a reliability diagram: for each of bins equal-width
// bins of the forecasts, the mean forecast against the share of events
// that happened, with its 95% Wilson interval, a point whose area grows
// with the number of forecasts in the bin, and that number written beside
// it. The diagonal is perfect calibration: points below it mean the
// forecasts were too high.
func Calibration(forecast []float64, happened []bool, bins int, o Options) (*Figure, error) {
	all, err := CalibrationBins(forecast, happened, bins)
	if err != nil {
		return nil, err
	}
	var pts calibrationPoints
	most := 0
	for _, b := range all {
		if b.Count > 0 {
			pts = append(pts, b)
			most = max(most, b.Count)
		}
	}
	if o.XLabel == "" {
		o.XLabel = "forecast probability"
	}
	if o.YLabel == "" {
		o.YLabel = "observed frequency"
	}
	if o.Width == 0 && o.Height == 0 {
		o.Width, o.Height = 5.5*vg.Inch, 5.8*vg.Inch
	}
	f, err := newFigure([]string{""}, o)
	if err != nil {
		return nil, err
	}
	p := f.panels[0]
	p.X.Tick.Marker = RoundTicks{Percent: o.Percent}
	p.X.Min, p.X.Max = 0, 1

	diag, err := line([]float64{0, 1}, []float64{0, 1}, color.Gray{Y: 110}, vg.Points(1), dashed)
	if err != nil {
		return nil, err
	}
	bars, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return nil, err
	}
	bars.Color, bars.Width, bars.CapWidth = Palette[0], vg.Points(1.2), vg.Points(5)
	dots, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	dots.GlyphStyleFunc = func(i int) draw.GlyphStyle {
		r := vg.Points(2.5 + 4.5*math.Sqrt(float64(pts[i].Count)/float64(most)))
		return draw.GlyphStyle{Color: Palette[0], Radius: r, Shape: draw.CircleGlyph{}}
	}
	dots.GlyphStyle = draw.GlyphStyle{Color: Palette[0], Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
	counts := plotter.XYLabels{XYs: make(plotter.XYs, len(pts)), Labels: make([]string, len(pts))}
	for i, b := range pts {
		counts.XYs[i] = plotter.XY{X: b.MeanForecast, Y: b.Observed}
		counts.Labels[i] = formatNumber(float64(b.Count), 0)
	}
	labels, err := plotter.NewLabels(counts)
	if err != nil {
		return nil, err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].Font.Size = 7
		labels.TextStyle[i].Color = color.Gray{Y: 70}
	}
	labels.Offset = vg.Point{X: vg.Points(7), Y: vg.Points(-9)}
	p.Add(diag, bars, dots, labels)
	f.addLegend("perfect calibration", diag)
	f.addLegend(fmt.Sprintf("observed, 95%% interval (number: forecasts in bin, %d bins)", bins), dots)
	if err := f.setY(0, 1, o, false); err != nil {
		return nil, err
	}
	return f, nil
}

// WriteCalibrationCSV writes bins as CSV with a header row, one row per
// bin. The statistics of an empty bin are left empty, which spreadsheets
// and data-frame libraries read as missing.
func WriteCalibrationCSV(w io.Writer, bins []CalibrationBin) error {
	// A csv.Writer keeps its first error and reports it from Error.
	cw := csv.NewWriter(w)
	cw.Write([]string{"lo", "hi", "count", "happened", "mean_forecast", "observed", "wilson_lo", "wilson_hi"})
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, b := range bins {
		cw.Write([]string{
			num(b.Lo), num(b.Hi), strconv.Itoa(b.Count), strconv.Itoa(b.Happened),
			num(b.MeanForecast), num(b.Observed), num(b.WilsonLo), num(b.WilsonHi),
		})
	}
	cw.Flush()
	return cw.Error()
}
