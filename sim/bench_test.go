package sim_test

import (
	"testing"

	"github.com/predictkit/predictkit/sim"
)

// BenchmarkRun is one run of 500 steps with 5 outcomes and every kind of
// trader, per design.
func BenchmarkRun(b *testing.B) {
	for _, k := range sim.Kinds {
		b.Run(string(k), func(b *testing.B) {
			c := sim.DefaultConfig()
			c.Design = k
			c.Mix = sim.Mix{Informed: 0.6, Noise: 0.2, Momentum: 0.1, Arbitrage: 0.1}
			for i := 0; b.Loop(); i++ {
				c.Seed = uint64(i)
				if _, err := sim.Run(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
