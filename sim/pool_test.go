package sim_test

import (
	"errors"
	"testing"

	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/sim"
	"pgregory.net/rapid"
)

// TestTwoOutcomePoolIsABinaryMarket checks what holds exactly between an
// exclusive pool of two markets and one binary market at the kopeck
// level: YES on the pool's market 0 is YES on the binary market, YES on
// market 1 is its NO, and NO on market 1 is its YES. Every such pair of
// trades gets the same shares, cost, fee and cash, both are refused
// together, the pool's price of outcome 0 is the binary YES price to the
// last bit, and the payouts are equal in both outcomes.
func TestTwoOutcomePoolIsABinaryMarket(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := sim.DefaultConfig()
		c.Outcomes = 2
		c.B = rapid.Int64Range(1, 100_000).Draw(t, "b")
		c.Margin = rapid.SampledFrom([]float64{0, 0.01, 0.03, 0.07, 0.2}).Draw(t, "margin")
		c.Design = sim.Pool
		pool, err := sim.NewDesign(c)
		if err != nil {
			t.Fatal(err)
		}
		c.Design = sim.Binary
		bin, err := sim.NewDesign(c) // only its market 0 trades
		if err != nil {
			t.Fatal(err)
		}
		pp, bp := make([]float64, 2), make([]float64, 2)
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for step := range steps {
			i := rapid.IntRange(0, 1).Draw(t, "market")
			s := lmsr.Side(rapid.IntRange(0, 1).Draw(t, "side"))
			bs := s
			if i == 1 {
				bs = s.Opposite()
			}
			var pt, bt sim.Trade
			var perr, berr error
			if rapid.Bool().Draw(t, "sell") {
				shares := rapid.Int64Range(1, 3*c.B).Draw(t, "shares")
				pt, perr = pool.QuoteSell(i, s, shares)
				bt, berr = bin.QuoteSell(0, bs, shares)
			} else {
				budget := rapid.Int64Range(1, 5*c.B).Draw(t, "budget")
				pt, perr = pool.QuoteBuy(i, s, budget)
				bt, berr = bin.QuoteBuy(0, bs, budget)
			}
			if sentinel(perr) != sentinel(berr) {
				t.Fatalf("step %d: pool says %v, binary market %v", step, perr, berr)
			}
			if perr != nil {
				continue
			}
			if pt.Shares != bt.Shares || pt.Cost != bt.Cost || pt.Fee != bt.Fee || pt.Cash != bt.Cash {
				t.Fatalf("step %d: pool %+v, binary market %+v", step, pt, bt)
			}
			pool.Apply(pt)
			bin.Apply(bt)
			if err := pool.PricesInto(pp); err != nil {
				t.Fatal(err)
			}
			if err := bin.PricesInto(bp); err != nil {
				t.Fatal(err)
			}
			if pp[0] != bp[0] {
				t.Fatalf("step %d: pool price %v, binary YES price %v", step, pp[0], bp[0])
			}
			for w := range 2 {
				if pool.Payout(w) != bin.Payout(w) {
					t.Fatalf("step %d: if %d wins the pool pays %d, the binary market %d", step, w, pool.Payout(w), bin.Payout(w))
				}
			}
			if pool.Collected() != bin.Collected() || pool.Fees() != bin.Fees() || pool.Subsidy() != bin.Subsidy()/2 {
				t.Fatalf("step %d: pool collected %d fees %d subsidy %d; binary market %d, %d, %d", step,
					pool.Collected(), pool.Fees(), pool.Subsidy(), bin.Collected(), bin.Fees(), bin.Subsidy()/2)
			}
		}
	})
}

// sentinel is the lmsr error err wraps, nil for nil.
func sentinel(err error) error {
	if err == nil {
		return nil
	}
	for _, e := range []error{lmsr.ErrPriceLimit, lmsr.ErrTooSmall, lmsr.ErrInvalidQuantity, lmsr.ErrInvalidAmount} {
		if errors.Is(err, e) {
			return e
		}
	}
	return err
}
