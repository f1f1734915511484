package sim_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/predictkit/predictkit/sim"
)

func TestPlainSlices(t *testing.T) {
	c := sim.DefaultConfig()
	c.Steps = 20
	runs, err := sim.Runs(c, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Paths is [run][step][outcome]", func(t *testing.T) {
		p := sim.Paths(runs)
		if len(p) != 3 || len(p[0]) != 21 || len(p[0][0]) != c.Outcomes || p[2][20][1] != runs[2].Prices[20][1] {
			t.Fatalf("shape %d×%d×%d", len(p), len(p[0]), len(p[0][0]))
		}
		if !reflect.DeepEqual(sim.Truths(runs)[1], runs[1].Truth) {
			t.Fatal("Truths[1] is not run 1's truth")
		}
		o := sim.OutcomePaths(runs, 2)
		if len(o) != 3 || len(o[1]) != 21 || o[1][7] != runs[1].Prices[7][2] {
			t.Fatal("OutcomePaths(2) is not outcome 2's [run][step] prices")
		}
		f, won := sim.Forecasts(runs)
		if len(f) != 3*c.Outcomes || f[c.Outcomes+1] != runs[1].Prices[20][1] || won[c.Outcomes+runs[1].Winner] != true {
			t.Fatalf("Forecasts: %v %v", f, won)
		}
		wins := 0
		for _, w := range won {
			if w {
				wins++
			}
		}
		if wins != 3 {
			t.Fatalf("%d winners in 3 runs", wins)
		}
	})
	t.Run("a sweep's columns follow its points", func(t *testing.T) {
		s := sim.Sweep{Points: sim.Grid(c, nil, nil, []int64{500, 5000}, nil), Runs: 5, Seed: 3}
		res, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sums := res.Summaries()
		mean, lo, hi := sim.Column(sums, "subsidy")
		// The subsidy does not vary between runs: the interval is a point.
		d, err := sim.NewDesign(s.Points[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(mean) != 2 || mean[0] != float64(d.Subsidy()) || lo[1] != hi[1] || mean[1] <= mean[0] {
			t.Fatalf("subsidy by b: %v [%v, %v]", mean, lo, hi)
		}
		if m, _, _ := sim.Column(sums, "nope"); m != nil {
			t.Fatal("an unknown metric gave a column")
		}
		if len(res.Truths(1)) != 5 || !reflect.DeepEqual(res.Truths(1)[4], res.Rows[9].Truth) {
			t.Fatal("Truths(1) is not point 1's runs")
		}
		f, won := res.Forecasts(1)
		if len(f) != 5*c.Outcomes || f[0] != res.Rows[5].Final[0] || won[res.Rows[5].Winner] != true {
			t.Fatalf("Forecasts(1): %v %v", f, won)
		}
		if v := res.Values(0, "mm_pnl"); len(v) != 5 || v[2] != float64(res.Rows[2].Metrics.PnL) {
			t.Fatalf("Values: %v", v)
		}
	})
}
