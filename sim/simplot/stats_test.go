package simplot

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestQuantile(t *testing.T) {
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"the median of an odd count is the middle value", []float64{1, 2, 3, 4, 5}, 0.5, 3},
		{"the median of an even count is halfway", []float64{1, 2, 3, 4}, 0.5, 2.5},
		{"the 10th percentile interpolates", []float64{10, 20, 30, 40, 50}, 0.1, 14},
		{"the 90th percentile interpolates", []float64{10, 20, 30, 40, 50}, 0.9, 46},
		{"the quartiles of 0..10", []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.25, 2.5},
		{"p = 0 is the minimum", []float64{-3, 1, 7}, 0, -3},
		{"p = 1 is the maximum", []float64{-3, 1, 7}, 1, 7},
		{"one run is every quantile", []float64{0.4}, 0.9, 0.4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.sorted, tt.p); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("quantile(%v, %g) = %g, want %g", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestStepQuantilesTakeEachStepAcrossRuns(t *testing.T) {
	// The runs are given out of order at each step: the quantiles must
	// sort each step's values, not trust the run order.
	runs := [][]float64{
		{0.5, 0.9, 0.1},
		{0.1, 0.7, 0.3},
		{0.3, 0.8, 0.2},
	}
	got, err := StepQuantiles(runs, []float64{0, 0.5, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0.1, 0.7, 0.1}, {0.3, 0.8, 0.2}, {0.5, 0.9, 0.3}}
	for k := range want {
		for s := range want[k] {
			if got[k][s] != want[k][s] {
				t.Errorf("quantile %d at step %d = %g, want %g", k, s, got[k][s], want[k][s])
			}
		}
	}
}

func TestStepQuantilesRefuseBadRuns(t *testing.T) {
	tests := []struct {
		name string
		runs [][]float64
		ps   []float64
	}{
		{"no runs", nil, []float64{0.5}},
		{"a single step", [][]float64{{0.5}}, []float64{0.5}},
		{"ragged runs", [][]float64{{1, 2, 3}, {1, 2}}, []float64{0.5}},
		{"a NaN", [][]float64{{1, 2}, {1, nan()}}, []float64{0.5}},
		{"an infinity", [][]float64{{inf(), 2}, {1, 2}}, []float64{0.5}},
		{"a quantile above one", [][]float64{{1, 2}}, []float64{1.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := StepQuantiles(tt.runs, tt.ps); !errors.Is(err, ErrInput) {
				t.Errorf("StepQuantiles() error = %v, want ErrInput", err)
			}
		})
	}
}

func TestWilson(t *testing.T) {
	// Worked by hand with z = 1.96: for k = 3, n = 10, p = 0.3,
	// centre = (0.3 + 0.19208) / 1.38415 = 0.35551 and
	// half = 1.95996 / 1.38415 · √(0.021 + 0.0096036) = 0.24772.
	tests := []struct {
		name   string
		k, n   int
		lo, hi float64
	}{
		{"3 of 10", 3, 10, 0.10779, 0.60322},
		{"none of 10 still has room above zero", 0, 10, 0, 0.27753},
		{"all of 10 still has room below one", 10, 10, 0.72247, 1},
		{"1 of 1", 1, 1, 0.20654, 1},
		{"half of 100", 50, 100, 0.40383, 0.59617},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := Wilson(tt.k, tt.n)
			if math.Abs(lo-tt.lo) > 5e-5 || math.Abs(hi-tt.hi) > 5e-5 {
				t.Errorf("Wilson(%d, %d) = [%.5f, %.5f], want [%.5f, %.5f]", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
			}
		})
	}
	for _, bad := range [][2]int{{0, 0}, {-1, 5}, {6, 5}} {
		if lo, hi := Wilson(bad[0], bad[1]); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("Wilson(%d, %d) = [%g, %g], want NaNs", bad[0], bad[1], lo, hi)
		}
	}
}

func TestCalibrationBins(t *testing.T) {
	forecast := []float64{0.05, 0.15, 0.3, 0.35, 0.3, 0.9, 0.95, 1, 0.5}
	happened := []bool{false, false, true, false, false, true, true, true, false}
	bins, err := CalibrationBins(forecast, happened, 4)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		bin             int
		lo, hi          float64
		count, happened int
		mean, observed  float64
	}{
		{"the first bin holds 0.05 and 0.15, neither happened", 0, 0, 0.25, 2, 0, 0.1, 0},
		{"the second bin holds the three forecasts near 0.3", 1, 0.25, 0.5, 3, 1, 0.95 / 3, 1.0 / 3},
		{"a forecast on an edge goes to the upper bin", 2, 0.5, 0.75, 1, 0, 0.5, 0},
		{"the last bin also holds a forecast of exactly 1", 3, 0.75, 1, 3, 3, 0.95, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bins[tt.bin]
			if b.Lo != tt.lo || b.Hi != tt.hi || b.Count != tt.count || b.Happened != tt.happened ||
				math.Abs(b.MeanForecast-tt.mean) > 1e-12 || math.Abs(b.Observed-tt.observed) > 1e-12 {
				t.Errorf("bin %d = %+v, want [%g, %g) count %d happened %d mean %g observed %g",
					tt.bin, b, tt.lo, tt.hi, tt.count, tt.happened, tt.mean, tt.observed)
			}
			if lo, hi := Wilson(tt.happened, tt.count); b.WilsonLo != lo || b.WilsonHi != hi {
				t.Errorf("bin %d interval = [%g, %g], want Wilson's [%g, %g]", tt.bin, b.WilsonLo, b.WilsonHi, lo, hi)
			}
		})
	}
}

func TestCalibrationBinsMarkEmptyBinsWithNaN(t *testing.T) {
	bins, err := CalibrationBins([]float64{0.1, 0.9}, []bool{false, true}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 5 {
		t.Fatalf("got %d bins, want all 5", len(bins))
	}
	if b := bins[2]; b.Count != 0 || !math.IsNaN(b.MeanForecast) || !math.IsNaN(b.Observed) {
		t.Errorf("empty middle bin = %+v, want count 0 and NaN statistics", b)
	}
}

func TestCalibrationBinsRefuseBadInput(t *testing.T) {
	tests := []struct {
		name     string
		forecast []float64
		happened []bool
		bins     int
	}{
		{"no bins", []float64{0.5}, []bool{true}, 0},
		{"no forecasts", nil, nil, 10},
		{"more forecasts than outcomes", []float64{0.5, 0.6}, []bool{true}, 10},
		{"a forecast above one", []float64{1.2}, []bool{true}, 10},
		{"a negative forecast", []float64{-0.1}, []bool{true}, 10},
		{"a NaN forecast", []float64{nan()}, []bool{true}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := CalibrationBins(tt.forecast, tt.happened, tt.bins); !errors.Is(err, ErrInput) {
				t.Errorf("CalibrationBins() error = %v, want ErrInput", err)
			}
			if _, err := Calibration(tt.forecast, tt.happened, tt.bins, Options{}); !errors.Is(err, ErrInput) {
				t.Errorf("Calibration() error = %v, want ErrInput", err)
			}
		})
	}
}

func TestWriteCalibrationCSV(t *testing.T) {
	bins, err := CalibrationBins([]float64{0.2, 0.3, 0.9}, []bool{false, true, true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	if err := WriteCalibrationCSV(&buf, bins); err != nil {
		t.Fatal(err)
	}
	lo, hi := Wilson(1, 2)
	lo1, _ := Wilson(1, 1)
	want := "lo,hi,count,happened,mean_forecast,observed,wilson_lo,wilson_hi\n" +
		"0,0.3333333333333333,2,1,0.25,0.5," + strconv.FormatFloat(lo, 'g', -1, 64) + "," + strconv.FormatFloat(hi, 'g', -1, 64) + "\n" +
		"0.3333333333333333,0.6666666666666666,0,0,,,,\n" +
		"0.6666666666666666,1,1,1,0.9,1," + strconv.FormatFloat(lo1, 'g', -1, 64) + ",1\n"
	if buf.String() != want {
		t.Errorf("CSV =\n%s\nwant\n%s", buf.String(), want)
	}
}
