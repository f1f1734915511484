package sim_test

import (
	"context"
	"fmt"

	"github.com/predictkit/predictkit/sim"
)

// One run: an exclusive pool of three outcomes with a 2% fee, traded by
// informed, noise and momentum traders. The maker's P&L never goes below
// minus the subsidy.
func Example() {
	c := sim.DefaultConfig()
	c.Design, c.Outcomes, c.B = sim.Pool, 3, 5000
	c.Truth = []float64{0.6, 0.3, 0.1}
	c.Seed = 3
	res, err := sim.Run(c)
	if err != nil {
		panic(err)
	}
	m := res.Metrics
	final := res.Prices[len(res.Prices)-1]
	fmt.Printf("winner %d; final prices %.2f against the truth %.2f\n", res.Winner, final, res.Truth)
	fmt.Printf("%d trades; subsidy %d, maker's P&L %d (worst %d), fees %d kopecks\n", m.Trades, m.Subsidy, m.PnL, m.WorstPnL, m.Fees)
	fmt.Printf("final Brier %.3f, mean |p − p*| %.3f\n", m.BrierFinal, m.MAEFinal)
	// Output:
	// winner 0; final prices [0.64 0.27 0.09] against the truth [0.60 0.30 0.10]
	// 500 trades; subsidy 5494, maker's P&L -3120 (worst -3120), fees 4280 kopecks
	// final Brier 0.209, mean |p − p*| 0.027
}

// A sweep: two designs by two liquidities, 20 runs each, on all CPUs.
// The output is the same for any number of workers.
func ExampleSweep() {
	base := sim.DefaultConfig()
	base.Outcomes, base.Steps = 3, 200
	s := sim.Sweep{
		Points: sim.Grid(base, []sim.Kind{sim.Binary, sim.Pool}, nil, []int64{1000, 10000}, nil),
		Runs:   20,
		Seed:   1,
	}
	res, err := s.Run(context.Background())
	if err != nil {
		panic(err)
	}
	for _, sum := range res.Summaries() {
		mae, _ := sum.Stat("mae_final")
		fmt.Printf("%-6s b=%-5d final mean |p − p*| %.3f [%.3f, %.3f]\n", sum.Config.Design, sum.Config.B, mae.Mean, mae.Lo, mae.Hi)
	}
	// Output:
	// binary b=1000  final mean |p − p*| 0.079 [0.062, 0.097]
	// binary b=10000 final mean |p − p*| 0.055 [0.048, 0.062]
	// pool   b=1000  final mean |p − p*| 0.095 [0.064, 0.127]
	// pool   b=10000 final mean |p − p*| 0.053 [0.039, 0.067]
}
