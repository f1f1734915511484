package sim_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/predictkit/predictkit/sim"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 || a == b }

func TestScoresOnHandWorkedCases(t *testing.T) {
	cases := []struct {
		name       string
		prices     []float64
		winner     int
		brier, log float64
	}{
		{"a sure right forecast scores 0 and 0", []float64{1, 0}, 0, 0, 0},
		{"a sure wrong forecast scores Brier 2 and log −Inf", []float64{0, 1}, 0, 2, math.Inf(-1)},
		{"a uniform forecast of 4", []float64{0.25, 0.25, 0.25, 0.25}, 2, 0.75, math.Log(0.25)},
		// (0.6−1)² + 0.3² + 0.1² = 0.26; ln 0.6.
		{"a forecast of three", []float64{0.6, 0.3, 0.1}, 0, 0.26, math.Log(0.6)},
		// Prices summing to 1.5 are read as 0.4/1.5 for the log score.
		{"prices summing above 1 are normalised for the log score", []float64{0.4, 0.6, 0.5}, 0, 0.36 + 0.36 + 0.25, math.Log(0.4 / 1.5)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sim.Brier(tc.prices, tc.winner); !near(got, tc.brier) {
				t.Errorf("Brier %v, want %v", got, tc.brier)
			}
			if got := sim.LogScore(tc.prices, tc.winner); !near(got, tc.log) {
				t.Errorf("log score %v, want %v", got, tc.log)
			}
		})
	}
}

func TestPriceErrorOnHandWorkedCases(t *testing.T) {
	cases := []struct {
		name          string
		prices, truth []float64
		mae, rmse     float64
	}{
		{"prices at the truth have no error", []float64{0.2, 0.8}, []float64{0.2, 0.8}, 0, 0},
		// |0.1|, |0.1|: MAE 0.1, RMSE 0.1.
		{"a binary market 0.1 off", []float64{0.6, 0.4}, []float64{0.5, 0.5}, 0.1, 0.1},
		// Errors 0.3, 0, 0: MAE 0.1, RMSE √(0.09/3).
		{"one outcome off by 0.3", []float64{0.6, 0.2, 0.2}, []float64{0.3, 0.2, 0.2}, 0.1, math.Sqrt(0.03)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mae, rmse := sim.PriceError(tc.prices, tc.truth)
			if !near(mae, tc.mae) || !near(rmse, tc.rmse) {
				t.Fatalf("MAE %v RMSE %v, want %v and %v", mae, rmse, tc.mae, tc.rmse)
			}
		})
	}
}

func TestStepsToWithin(t *testing.T) {
	truth := []float64{0.7, 0.3}
	cases := []struct {
		name string
		path [][]float64
		want int
	}{
		{"within from the opening", [][]float64{{0.68, 0.32}, {0.71, 0.29}}, 0},
		{"arrives at step 2", [][]float64{{0.5, 0.5}, {0.6, 0.4}, {0.66, 0.34}, {0.69, 0.31}}, 2},
		{"arrives, leaves and arrives again: the last arrival counts", [][]float64{{0.7, 0.3}, {0.5, 0.5}, {0.7, 0.3}}, 2},
		{"leaves at the last step: never", [][]float64{{0.7, 0.3}, {0.7, 0.3}, {0.9, 0.1}}, sim.Never},
		{"one outcome within and one not: never", [][]float64{{0.7, 0.5}}, sim.Never},
		{"exactly ε away counts as within", [][]float64{{0.75, 0.25}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sim.StepsToWithin(tc.path, truth, 0.05+1e-15); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestMeanCI(t *testing.T) {
	cases := []struct {
		name string
		x    []float64
		want sim.Interval
	}{
		// Mean 2, sd 1, half width 1.96/√3.
		{"three values", []float64{1, 2, 3}, sim.Interval{N: 3, Mean: 2, Lo: 2 - 1.96/math.Sqrt(3), Hi: 2 + 1.96/math.Sqrt(3)}},
		{"one value has no width", []float64{5}, sim.Interval{N: 1, Mean: 5, Lo: 5, Hi: 5}},
		{"NaN (a run that never arrived) is skipped", []float64{1, math.NaN(), 3}, sim.Interval{N: 2, Mean: 2, Lo: 2 - 1.96, Hi: 2 + 1.96}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := sim.MeanCI(tc.x)
			if got.N != tc.want.N || !near(got.Mean, tc.want.Mean) || !near(got.Lo, tc.want.Lo) || !near(got.Hi, tc.want.Hi) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	t.Run("no values give NaN", func(t *testing.T) {
		if got := sim.MeanCI(nil); !math.IsNaN(got.Mean) || got.N != 0 {
			t.Fatalf("got %+v", got)
		}
	})
}

func TestQuantile(t *testing.T) {
	x := []float64{4, 1, 3, 2}
	for _, tc := range []struct {
		q, want float64
	}{{0, 1}, {1, 4}, {0.5, 2.5}, {1.0 / 3, 2}} {
		if got := sim.Quantile(x, tc.q); !near(got, tc.want) {
			t.Errorf("quantile %v of %v: %v, want %v", tc.q, x, got, tc.want)
		}
	}
	if x[0] != 4 {
		t.Error("Quantile sorted its argument")
	}
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
