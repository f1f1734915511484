package lmsr

import (
	"errors"
	"math"
	"testing"
)

// FuzzBinary drives every public binary and kopeck function with arbitrary
// states, sizes and margins: nothing may panic, no float result may be NaN
// or infinite, and the kopeck results must keep their invariants.
func FuzzBinary(f *testing.F) {
	f.Add(10000.0, 8473.0, 0.0, 0.0, 1234.0, 0.03, int64(5000), int64(100), false)
	f.Add(1.0, 1e15, 1e15+3, 1e-6, 2.0, 0.0, int64(1), int64(1), true)
	f.Add(1e12, 0.0, 0.0, 0.0, 1.0, 0.999, int64(1<<53), int64(1<<53), false)
	f.Add(math.SmallestNonzeroFloat64, -1e300, 1e300, 0.49, math.Inf(1), math.NaN(), int64(-1), int64(0), true)
	f.Fuzz(func(t *testing.T, b, qy, qn, minPrice, x, margin float64, budget, shares int64, no bool) {
		m := Binary{B: b, QYes: qy, QNo: qn, MinPrice: minPrice}
		s := Yes
		if no {
			s = No
		}
		valid := m.Validate() == nil
		for _, v := range []float64{m.Cost(), m.Price(Yes), m.Price(No), m.WorstCaseLoss(), m.Q(s)} {
			if valid && !finite(v) {
				t.Fatalf("%+v: non-finite %v", m, v)
			}
			if math.IsNaN(v) {
				t.Fatalf("%+v: NaN", m)
			}
		}
		if valid {
			if p := m.Price(Yes); p < 0 || p > 1 {
				t.Fatalf("price %v", p)
			}
		}
		checkFloat := func(name string, v float64, err error) {
			if err == nil && (!finite(v) || v < 0) {
				t.Fatalf("%+v %s(%v, %v) = %v", m, name, s, x, v)
			}
			if err != nil && v != 0 {
				t.Fatalf("%s returned %v with error %v", name, v, err)
			}
		}
		c, err := m.BuyCost(s, x)
		checkFloat("BuyCost", c, err)
		if err == nil && c > x*(1+1e-12) {
			t.Fatalf("%+v: %v shares cost %v, more than they pay", m, x, c)
		}
		r, err := m.SellRefund(s, x)
		checkFloat("SellRefund", r, err)
		d, err := m.SharesForSpend(s, x)
		checkFloat("SharesForSpend", d, err)
		if err == nil && d < x {
			t.Fatalf("%+v: spend %v bought only %v shares", m, x, d)
		}

		buy, err := BuyForSpend(m, s, budget, margin)
		if err == nil {
			if buy.Shares < 1 || buy.Cost < 1 || buy.Charge > budget || buy.Fee < 0 || buy.Charge != buy.Cost+buy.Fee {
				t.Fatalf("%+v: BuyForSpend(%d, %v) = %+v", m, budget, margin, buy)
			}
		} else if buy != (Buy{}) {
			t.Fatalf("BuyForSpend returned %+v with %v", buy, err)
		}
		buy, err = BuyShares(m, s, shares, margin)
		if err == nil && (buy.Shares != shares || buy.Cost < 1 || buy.Charge < buy.Cost || buy.Charge != buy.Cost+buy.Fee) {
			t.Fatalf("%+v: BuyShares(%d, %v) = %+v", m, shares, margin, buy)
		}
		sell, err := SellShares(m, s, shares, margin)
		if err == nil && (sell.Refund < 0 || sell.Payout < 0 || sell.Payout > sell.Refund || sell.Refund != sell.Payout+sell.Fee) {
			t.Fatalf("%+v: SellShares(%d, %v) = %+v", m, shares, margin, sell)
		}
		if sub, err := SubsidyKopecks(m); err == nil && sub < 0 {
			t.Fatalf("%+v: subsidy %d", m, sub)
		}
		if qy, qn, err := InitialQ(budget, x); err == nil && (qy < 0 || qn < 0) {
			t.Fatalf("InitialQ(%d, %v) = %d, %d", budget, x, qy, qn)
		}
		for _, amount := range []int64{budget, shares} {
			if ch, err := ChargeForCost(amount, margin); err == nil && ch < amount {
				t.Fatalf("ChargeForCost(%d, %v) = %d", amount, margin, ch)
			}
			if p, err := PayoutForRefund(amount, margin); err == nil && (p > amount || p < 0) {
				t.Fatalf("PayoutForRefund(%d, %v) = %d", amount, margin, p)
			}
		}
	})
}

// FuzzMarket does the same for the n-outcome and liquidity-sensitive makers.
func FuzzMarket(f *testing.F) {
	f.Add(1000.0, 0.0, 137.5, 275.0, 250.0, -30.0, 0.0, uint8(1))
	f.Add(1.0, 1e15, -1e15, 0.0, 1e15, 1e15, 0.001, uint8(2))
	f.Add(1e-300, 1.0, 2.0, 3.0, 1e-300, 0.0, 0.49, uint8(0))
	f.Fuzz(func(t *testing.T, b, q0, q1, q2, x, y, minPrice float64, i uint8) {
		m := Market{B: b, Q: []float64{q0, q1, q2}, MinPrice: minPrice}
		k := int(i % 4) // 3 is out of range on purpose
		p := make([]float64, 3)
		valid := m.Validate() == nil
		for _, v := range []float64{m.Cost(), m.Price(k), m.WorstCaseLoss()} {
			if math.IsNaN(v) || (valid && !finite(v)) {
				t.Fatalf("%+v: %v", m, v)
			}
		}
		if err := m.PricesInto(p); err == nil {
			for _, v := range p {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("%+v: prices %v", m, p)
				}
			}
		}
		for _, f := range []func() (float64, error){
			func() (float64, error) { return m.BuyCost(k, x) },
			func() (float64, error) { return m.SellRefund(k, x) },
			func() (float64, error) { return m.SharesForSpend(k, x) },
			func() (float64, error) { return m.BundleCost([]float64{x, y, -x}) },
		} {
			v, err := f()
			if err == nil && !finite(v) {
				t.Fatalf("%+v: %v", m, v)
			}
			if err != nil && errors.Is(err, ErrDimension) && k < 3 {
				t.Fatalf("%+v: %v", m, err)
			}
		}
		if q, err := InitialQuantities(b, []float64{x, 1 - x}); err == nil {
			for _, v := range q {
				if !finite(v) {
					t.Fatalf("InitialQuantities: %v", q)
				}
			}
		}

		ls := LS{Alpha: minPrice, Q: []float64{math.Abs(q0), math.Abs(q1), math.Abs(q2)}}
		if ls.Validate() == nil {
			for _, v := range []float64{ls.Cost(), ls.Liquidity(), ls.PriceSum(), ls.WorstCaseLoss()} {
				if !finite(v) {
					t.Fatalf("%+v: %v", ls, v)
				}
			}
			if err := ls.PricesInto(p); err != nil {
				t.Fatal(err)
			}
			for _, v := range p {
				if !finite(v) {
					t.Fatalf("%+v: prices %v", ls, p)
				}
			}
			if c, err := ls.BuyCost(k, math.Abs(x)); err == nil && !finite(c) {
				t.Fatalf("%+v: buy %v", ls, c)
			}
			if r, err := ls.SellRefund(k, math.Abs(y)); err == nil && !finite(r) {
				t.Fatalf("%+v: sell %v", ls, r)
			}
		}
	})
}
