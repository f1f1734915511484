package sim_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/sim"
	"pgregory.net/rapid"
)

func TestEachDesignEscrowsItsWorstCase(t *testing.T) {
	cases := []struct {
		design   sim.Kind
		outcomes int
		want     int64
	}{
		// ceil(1000·ln 2) = ceil(693.15).
		{sim.Pool, 2, 694},
		// ceil(1000·ln 5) = ceil(1609.44).
		{sim.Pool, 5, 1610},
		// A binary market at 0.2: q_NO − q_YES = round(1000·ln 4) = 1386,
		// loss 1386 + 1000·ln(1 + e^−1.386) = 1609.1; five of them.
		{sim.Binary, 5, 5 * 1610},
		// Opened where its liquidity is b, LS needs b·ln N too.
		{sim.LS, 5, 1610},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s of %d outcomes escrows %d", tc.design, tc.outcomes, tc.want), func(t *testing.T) {
			c := sim.DefaultConfig()
			c.Design, c.Outcomes, c.B = tc.design, tc.outcomes, 1000
			d, err := sim.NewDesign(c)
			if err != nil {
				t.Fatal(err)
			}
			if d.Subsidy() != tc.want {
				t.Fatalf("subsidy %d", d.Subsidy())
			}
			p := make([]float64, tc.outcomes)
			if err := d.PricesInto(p); err != nil {
				t.Fatal(err)
			}
			for i, x := range p {
				if tc.design != sim.LS && x != p[0] || x < 1/float64(tc.outcomes)-1e-3 {
					t.Fatalf("opening price %d is %v, others %v", i, x, p)
				}
			}
		})
	}
}

// TestBuysSpendTheMostTheBudgetAllows checks every design's QuoteBuy: the
// charge fits in the budget, is the cost plus the fee, and one more share
// would not fit.
func TestBuysSpendTheMostTheBudgetAllows(t *testing.T) {
	for _, k := range sim.Kinds {
		t.Run(string(k), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				c := sim.DefaultConfig()
				c.Design = k
				c.Outcomes = rapid.IntRange(2, 6).Draw(t, "outcomes")
				c.B = rapid.Int64Range(10, 50_000).Draw(t, "b")
				c.Margin = rapid.SampledFrom([]float64{0, 0.02, 0.2}).Draw(t, "margin")
				d, err := sim.NewDesign(c)
				if err != nil {
					t.Fatal(err)
				}
				for range rapid.IntRange(1, 20).Draw(t, "trades") {
					i := rapid.IntRange(0, c.Outcomes-1).Draw(t, "market")
					s := lmsr.Yes
					if d.HasNo() && rapid.Bool().Draw(t, "no") {
						s = lmsr.No
					}
					budget := rapid.Int64Range(1, 20*c.B).Draw(t, "budget")
					q, err := d.QuoteBuy(i, s, budget)
					if errors.Is(err, lmsr.ErrTooSmall) || errors.Is(err, lmsr.ErrPriceLimit) {
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					if q.Cash > budget || q.Cash != q.Cost+q.Fee || q.Shares < 1 || q.Cost < 1 {
						t.Fatalf("budget %d: %+v", budget, q)
					}
					if more, err := d.QuoteShares(i, s, q.Shares+1); err == nil && more.Cash <= budget {
						t.Fatalf("budget %d buys %d shares for %d, but %d shares cost %d", budget, q.Shares, q.Cash, q.Shares+1, more.Cash)
					}
					d.Apply(q)
				}
			})
		})
	}
}

func TestLSSellsNoNO(t *testing.T) {
	c := sim.DefaultConfig()
	c.Design = sim.LS
	d, err := sim.NewDesign(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.QuoteBuy(0, lmsr.No, 100); !errors.Is(err, sim.ErrNoSide) {
		t.Fatalf("NO on LS: %v", err)
	}
}

// TestLSBuysALongshot: after outcome 0 of an LS market was bought up, the
// price of outcome 1 is tiny, and a first guess of the shares a budget
// buys (budget / price) lies past 2^53. The buy must still be found.
func TestLSBuysALongshot(t *testing.T) {
	c := sim.DefaultConfig()
	c.Design, c.Outcomes, c.B, c.Margin = sim.LS, 4, 50, 0
	d, err := sim.NewDesign(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int64{36, 985, 293, 1000} {
		q, err := d.QuoteBuy(0, lmsr.Yes, budget)
		if err != nil {
			t.Fatal(err)
		}
		d.Apply(q)
	}
	q, err := d.QuoteBuy(1, lmsr.Yes, 58)
	if err != nil {
		t.Fatalf("the longshot: %v", err)
	}
	if q.Cash > 58 || q.Shares < 58 {
		t.Fatalf("58 kopecks on a longshot bought %+v", q)
	}
}
