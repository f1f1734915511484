package lmsr

import (
	"fmt"
	"math"
	"testing"
)

// A typical platform market: b = 10000 kopecks, YES at about 70%.
var benchMarket = Binary{B: 10000, QYes: 8473, QNo: 0}

// BenchmarkExpLog1p is the baseline: one math.Exp and one math.Log1p, the
// floor for any exact LMSR evaluation. The other benchmarks are reported
// as multiples of it.
func BenchmarkExpLog1p(b *testing.B) {
	x := 0.37
	for b.Loop() {
		_ = math.Log1p(math.Exp(x))
	}
}

func BenchmarkBinaryPrice(b *testing.B) {
	for b.Loop() {
		_ = benchMarket.Price(Yes)
	}
}

func BenchmarkBinaryBuyCost(b *testing.B) {
	for b.Loop() {
		_, _ = benchMarket.BuyCost(Yes, 1234)
	}
}

func BenchmarkBinarySellRefund(b *testing.B) {
	for b.Loop() {
		_, _ = benchMarket.SellRefund(Yes, 1234)
	}
}

func BenchmarkBinarySharesForSpend(b *testing.B) {
	for b.Loop() {
		_, _ = benchMarket.SharesForSpend(No, 1234)
	}
}

func BenchmarkCost10Outcomes(b *testing.B) {
	m := Market{B: 1000, Q: []float64{0, 137.5, 275, 412.5, 550, 687.5, 825, 962.5, 1100, 1237.5}}
	for b.Loop() {
		_ = m.Cost()
	}
}

func BenchmarkPricesInto10Outcomes(b *testing.B) {
	m := Market{B: 1000, Q: []float64{0, 137.5, 275, 412.5, 550, 687.5, 825, 962.5, 1100, 1237.5}}
	dst := make([]float64, 10)
	for b.Loop() {
		_ = m.PricesInto(dst)
	}
}

func BenchmarkBuyCost10Outcomes(b *testing.B) {
	m := Market{B: 1000, Q: []float64{0, 137.5, 275, 412.5, 550, 687.5, 825, 962.5, 1100, 1237.5}}
	for b.Loop() {
		_, _ = m.BuyCost(4, 250)
	}
}

func BenchmarkBuyForSpend(b *testing.B) {
	for b.Loop() {
		_, _ = BuyForSpend(benchMarket, Yes, 5000, 0.03)
	}
}

func BenchmarkBuyShares(b *testing.B) {
	for b.Loop() {
		_, _ = BuyShares(benchMarket, Yes, 5000, 0.03)
	}
}

func BenchmarkSellShares(b *testing.B) {
	for b.Loop() {
		_, _ = SellShares(benchMarket, Yes, 5000, 0.03)
	}
}

// benchPool returns an exclusive pool of n outcomes with b = 10000 whose
// quantities spread over 2·b, so that every price is well inside the band.
func benchPool(n int) Exclusive {
	q := make([]int64, n)
	for i := range q {
		q[i] = int64(i*7919) % 20000
	}
	return Exclusive{B: 10000, Q: q}
}

// benchPoolSizes are the pool sizes of the exclusive benchmarks: a trade
// costs one exponential per outcome on top of the binary kopeck pricing.
var benchPoolSizes = []int{2, 5, 20, 100}

func BenchmarkExclusiveBuyForSpend(b *testing.B) {
	for _, n := range benchPoolSizes {
		p := benchPool(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if _, err := p.BuyForSpend(n/2, Yes, 5000, 0.03); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				_, _ = p.BuyForSpend(n/2, Yes, 5000, 0.03)
			}
		})
	}
}

func BenchmarkExclusiveBuyForSpendNo(b *testing.B) {
	for _, n := range benchPoolSizes {
		p := benchPool(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if _, err := p.BuyForSpend(n/2, No, 5000, 0.03); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				_, _ = p.BuyForSpend(n/2, No, 5000, 0.03)
			}
		})
	}
}

func BenchmarkExclusiveSellShares(b *testing.B) {
	for _, n := range benchPoolSizes {
		p := benchPool(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if _, err := p.SellShares(n/2, Yes, 5000, 0.03); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				_, _ = p.SellShares(n/2, Yes, 5000, 0.03)
			}
		})
	}
}

func BenchmarkExclusiveBinaryViews(b *testing.B) {
	for _, n := range benchPoolSizes {
		p := benchPool(n)
		dst := make([]BinaryView, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				_ = p.BinaryViewsInto(dst)
			}
		})
	}
}

// TestHotPathsDoNotAllocate holds the 0 allocs/op promise in the ordinary
// test run, not only when someone reads benchmark output.
func TestHotPathsDoNotAllocate(t *testing.T) {
	m10 := Market{B: 1000, Q: []float64{0, 137.5, 275, 412.5, 550, 687.5, 825, 962.5, 1100, 1237.5}}
	dst := make([]float64, 10)
	bundle := []float64{1, -2, 3, 0, 0, 0, 0, 0, 0, 4}
	pool := benchPool(20)
	poolPrices := make([]float64, 20)
	views := make([]BinaryView, 20)
	for _, tt := range []struct {
		name string
		f    func()
	}{
		{"a binary price", func() { _ = benchMarket.Price(Yes) }},
		{"a binary buy cost", func() { _, _ = benchMarket.BuyCost(Yes, 1234) }},
		{"a binary sell refund", func() { _, _ = benchMarket.SellRefund(Yes, 1234) }},
		{"binary shares for a spend", func() { _, _ = benchMarket.SharesForSpend(No, 1234) }},
		{"a ten-outcome cost", func() { _ = m10.Cost() }},
		{"ten prices into a buffer", func() { _ = m10.PricesInto(dst) }},
		{"a ten-outcome buy", func() { _, _ = m10.BuyCost(4, 250) }},
		{"a ten-outcome sale", func() { _, _ = m10.SellRefund(9, 2500) }},
		{"a ten-outcome bundle", func() { _, _ = m10.BundleCost(bundle) }},
		{"a kopeck buy for a budget", func() { _, _ = BuyForSpend(benchMarket, Yes, 5000, 0.03) }},
		{"a kopeck sale", func() { _, _ = SellShares(benchMarket, Yes, 5000, 0.03) }},
		{"a refused trade", func() { _, _ = benchMarket.BuyCost(Yes, 1e9) }},
		{"a pool's YES buy for a budget", func() { _, _ = pool.BuyForSpend(3, Yes, 5000, 0.03) }},
		{"a pool's NO buy of shares", func() { _, _ = pool.BuyShares(3, No, 5000, 0.03) }},
		{"a pool's sale", func() { _, _ = pool.SellShares(3, No, 5000, 0.03) }},
		{"a pool's price", func() { _ = pool.Price(3) }},
		{"a pool's prices into a buffer", func() { _ = pool.PricesInto(poolPrices) }},
		{"a pool's binary views into a buffer", func() { _ = pool.BinaryViewsInto(views) }},
		{"a pool's subsidy", func() { _, _ = pool.SubsidyKopecks() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.f); n != 0 {
				t.Fatalf("%v allocs per run", n)
			}
		})
	}
}
