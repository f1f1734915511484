package lmsr

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestMarketValues(t *testing.T) {
	tests := []struct {
		name   string
		m      Market
		cost   float64
		prices []float64
		loss   float64
	}{
		{"three even outcomes cost b·ln 3 and price each at 1/3",
			Market{B: 10, Q: []float64{0, 0, 0}}, 10 * math.Log(3), []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 10 * math.Log(3)},
		{"quantities b·ln π price the outcomes at π",
			Market{B: 100, Q: []float64{100 * math.Log(0.5), 100 * math.Log(0.3), 100 * math.Log(0.2)}}, 0, []float64{0.5, 0.3, 0.2}, 100 * math.Log(5)},
		{"a market two outcomes wide agrees with Binary",
			Market{B: 7, Q: []float64{3, 11}}, Binary{B: 7, QYes: 3, QNo: 11}.Cost(),
			[]float64{Binary{B: 7, QYes: 3, QNo: 11}.Price(Yes), Binary{B: 7, QYes: 3, QNo: 11}.Price(No)}, Binary{B: 7, QYes: 3, QNo: 11}.WorstCaseLoss()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.Cost(); math.Abs(got-tt.cost) > 1e-12*math.Max(1, math.Abs(tt.cost)) {
				t.Errorf("Cost() = %v, want %v", got, tt.cost)
			}
			got := make([]float64, tt.m.N())
			if err := tt.m.PricesInto(got); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if relErr(got[i], tt.prices[i]) > 1e-14 {
					t.Errorf("prices = %v, want %v", got, tt.prices)
					break
				}
			}
			if got := tt.m.WorstCaseLoss(); relErr(got, tt.loss) > 1e-13 {
				t.Errorf("WorstCaseLoss() = %v, want %v", got, tt.loss)
			}
		})
	}
}

func TestMarketAgreesWithBinary(t *testing.T) {
	bm := Binary{B: 250, QYes: 400, QNo: -75}
	m := Market{B: 250, Q: []float64{400, -75}}
	for _, s := range []Side{Yes, No} {
		i := int(s)
		for _, d := range []float64{0.5, 30, 700} {
			c1, _ := bm.BuyCost(s, d)
			c2, _ := m.BuyCost(i, d)
			r1, _ := bm.SellRefund(s, d)
			r2, _ := m.SellRefund(i, d)
			x1, _ := bm.SharesForSpend(s, d)
			x2, _ := m.SharesForSpend(i, d)
			if relErr(c1, c2) > 1e-14 || relErr(r1, r2) > 1e-14 || relErr(x1, x2) > 1e-14 {
				t.Errorf("%v %v: buy %v/%v sell %v/%v spend %v/%v", s, d, c1, c2, r1, r2, x1, x2)
			}
		}
	}
}

func TestMarketErrors(t *testing.T) {
	m := Market{B: 100, Q: []float64{0, 0, 0}}
	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"a one-outcome market is a dimension error", func() error { return Market{B: 1, Q: []float64{0}}.Validate() }, ErrDimension},
		{"a NaN quantity is invalid", func() error { return Market{B: 1, Q: []float64{0, math.NaN()}}.Validate() }, ErrInvalidQuantity},
		{"a negative b is an invalid liquidity", func() error { return Market{B: -1, Q: []float64{0, 0}}.Validate() }, ErrInvalidLiquidity},
		{"b above 2^53 is an invalid liquidity", func() error { return Market{B: 1e17, Q: []float64{0, 0}}.Validate() }, ErrInvalidLiquidity},
		{"an outcome index past the end is a dimension error", func() error { _, err := m.BuyCost(3, 1); return err }, ErrDimension},
		{"a negative index is a dimension error", func() error { _, err := m.SellRefund(-1, 1); return err }, ErrDimension},
		{"a short price buffer is a dimension error", func() error { return m.PricesInto(make([]float64, 2)) }, ErrDimension},
		{"a bundle of the wrong length is a dimension error", func() error { _, err := m.BundleCost([]float64{1, 2}); return err }, ErrDimension},
		{"a bundle with an infinite leg is invalid", func() error { _, err := m.BundleCost([]float64{1, math.Inf(1), 0}); return err }, ErrInvalidQuantity},
		{"a negative spend is invalid", func() error { _, err := m.SharesForSpend(0, -1); return err }, ErrInvalidQuantity},
		{"a buy that pushes the others below 1e-6 is refused", func() error { _, err := m.BuyCost(0, 1500); return err }, ErrPriceLimit},
		{"a sale that pushes its own price below 1e-6 is refused", func() error { _, err := m.SellRefund(0, 1500); return err }, ErrPriceLimit},
		{"a bundle that pushes a price below 1e-6 is refused", func() error { _, err := m.BundleCost([]float64{800, 800, -800}); return err }, ErrPriceLimit},
		{"probabilities not summing to 1 are refused", func() error { _, err := InitialQuantities(100, []float64{0.5, 0.4}); return err }, ErrInvalidProbability},
		{"a probability of 0 is refused", func() error { _, err := InitialQuantities(100, []float64{0, 1}); return err }, ErrInvalidProbability},
		{"a single probability is a dimension error", func() error { _, err := InitialQuantities(100, []float64{0.5}); return err }, ErrDimension},
		{"the maximum loss of invalid probabilities is refused", func() error { _, err := MaxLoss(100, []float64{0.7, 0.7}); return err }, ErrInvalidProbability},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestMarketPriceLimitOnlyRefusesOutwardMoves(t *testing.T) {
	// Opened with outcome 2 at 1e-9, below the band.
	q, err := InitialQuantities(100, []float64{0.5, 0.5 - 1e-9, 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	m := Market{B: 100, Q: q}
	t.Run("buying the outcome below the band brings it back and is allowed", func(t *testing.T) {
		if _, err := m.BuyCost(2, 10); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("buying another outcome pushes it further down and is refused", func(t *testing.T) {
		if _, err := m.BuyCost(0, 10); !errors.Is(err, ErrPriceLimit) {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("a bundle that raises it is allowed", func(t *testing.T) {
		if _, err := m.BundleCost([]float64{0, -5, 5}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMarketNeverMutatesCallerData(t *testing.T) {
	q := []float64{1, 2, 3}
	orig := slices.Clone(q)
	m := Market{B: 5, Q: q}
	m2 := m.With(1, 10)
	_, _ = m.BuyCost(0, 1)
	_, _ = m.SellRefund(2, 1)
	_, _ = m.SharesForSpend(1, 1)
	delta := []float64{1, -1, 2}
	_, _ = m.BundleCost(delta)
	_ = m.Prices()
	if !slices.Equal(q, orig) || !slices.Equal(delta, []float64{1, -1, 2}) {
		t.Fatalf("caller data changed: q = %v, delta = %v", q, delta)
	}
	if m2.Q[1] != 12 || &m2.Q[0] == &q[0] {
		t.Fatalf("With must return its own copy: %v", m2.Q)
	}
}

func TestMarketBundles(t *testing.T) {
	m := Market{B: 50, Q: []float64{10, 20, 30}}
	tests := []struct {
		name  string
		delta []float64
		want  func() float64
	}{
		{"an empty bundle costs nothing", []float64{0, 0, 0}, func() float64 { return 0 }},
		{"one share of every outcome costs exactly 1", []float64{1, 1, 1}, func() float64 { return 1 }},
		{"a single leg costs what BuyCost says", []float64{0, 40, 0}, func() float64 { c, _ := m.BuyCost(1, 40); return c }},
		{"a single sold leg refunds what SellRefund says", []float64{-25, 0, 0}, func() float64 { r, _ := m.SellRefund(0, 25); return -r }},
		{"selling every outcome far down takes the direct branch", []float64{-400, -400, -400}, func() float64 { return -400 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.BundleCost(tt.delta)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.want(); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("BundleCost = %v, want %v", got, want)
			}
		})
	}
}
