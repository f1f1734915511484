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
		if v := res.Values(0, "mm_pnl"); len(v) != 5 || v[2] != float64(res.Rows[2].Metrics.PnL) {
			t.Fatalf("Values: %v", v)
		}
	})
}
