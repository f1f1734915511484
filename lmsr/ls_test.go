package lmsr

import (
	"errors"
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestLS(t *testing.T) {
	alpha := AlphaForCommission(0.05, 3)
	even := LS{Alpha: alpha, Q: []float64{100, 100, 100}}
	t.Run("equal quantities reach the bound 1 + α·n·ln n", func(t *testing.T) {
		if got, want := even.PriceSum(), 1.05; math.Abs(got-want) > 1e-14 {
			t.Fatalf("PriceSum = %v, want %v", got, want)
		}
		if got := even.MaxPriceSum(); math.Abs(got-1.05) > 1e-14 {
			t.Fatalf("MaxPriceSum = %v", got)
		}
	})
	t.Run("its liquidity is α times the volume", func(t *testing.T) {
		if got := even.Liquidity(); math.Abs(got-300*alpha) > 1e-12 {
			t.Fatalf("Liquidity = %v", got)
		}
	})
	t.Run("its cost at equal quantities is q + b·ln n", func(t *testing.T) {
		if got, want := even.Cost(), 100+300*alpha*math.Log(3); math.Abs(got-want) > 1e-12 {
			t.Fatalf("Cost = %v, want %v", got, want)
		}
	})
	t.Run("its prices are the derivative of its cost", func(t *testing.T) {
		m := LS{Alpha: alpha, Q: []float64{120, 80, 300}}
		p := make([]float64, 3)
		if err := m.PricesInto(p); err != nil {
			t.Fatal(err)
		}
		for i := range p {
			h := 1e-4
			up, _ := m.BuyCost(i, h)
			down, _ := m.SellRefund(i, h)
			if d := (up + down) / (2 * h); math.Abs(d-p[i]) > 1e-7 {
				t.Errorf("price %d = %v, central difference %v", i, p[i], d)
			}
		}
	})
	t.Run("an empty market is outside its domain", func(t *testing.T) {
		if err := (LS{Alpha: alpha, Q: []float64{0, 0}}).Validate(); !errors.Is(err, ErrInvalidQuantity) {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("a negative quantity is outside its domain", func(t *testing.T) {
		if _, err := even.SellRefund(0, 101); !errors.Is(err, ErrInvalidQuantity) {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("a zero alpha is an invalid liquidity", func(t *testing.T) {
		if err := (LS{Q: []float64{1, 1}}).Validate(); !errors.Is(err, ErrInvalidLiquidity) {
			t.Fatalf("error = %v", err)
		}
	})
}

func TestPropertyLSPriceSumBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 10).Draw(t, "n")
		v := rapid.Float64Range(0.001, 0.3).Draw(t, "commission")
		q := rapid.SliceOfN(rapid.Float64Range(0, 1e9), n, n).Draw(t, "q")
		q[0] += 1 // Σq > 0
		m := LS{Alpha: AlphaForCommission(v, n), Q: q}
		p := make([]float64, n)
		if err := m.PricesInto(p); err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, x := range p {
			if !(x >= 0) || !finite(x) {
				t.Fatalf("price %v", x)
			}
			sum += x
		}
		if sum < 1-1e-12 || sum > m.MaxPriceSum()+1e-12 {
			t.Fatalf("Σp = %v outside [1, %v]", sum, m.MaxPriceSum())
		}
		if math.Abs(sum-m.PriceSum()) > 1e-12 {
			t.Fatalf("Σp = %v, PriceSum = %v", sum, m.PriceSum())
		}
		// C(q) ≥ max q, which bounds the maker's loss.
		if m.WorstCaseLoss() < 0 {
			t.Fatalf("negative worst-case loss %v", m.WorstCaseLoss())
		}
	})
}
