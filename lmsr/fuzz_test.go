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

// FuzzExclusive drives the exclusive pool with arbitrary liquidity,
// quantities, sizes and margins: nothing may panic, the prices of a valid
// pool sum to 1, the kopeck trades keep their invariants and favour the
// house against the float n-outcome maker, and a two-outcome pool agrees
// with the binary kopeck functions.
func FuzzExclusive(f *testing.F) {
	f.Add(int64(10000), int64(9163), int64(4055), int64(0), int64(0), uint8(3), 0.0, 0.03, int64(5000), int64(100), uint8(2), false)
	f.Add(int64(100), int64(0), int64(0), int64(-1300), int64(7), uint8(3), 0.0, 0.0, int64(50), int64(100), uint8(0), false)
	f.Add(int64(1), int64(1<<53), int64(-1<<53), int64(0), int64(0), uint8(2), 1e-6, 0.5, int64(1<<53), int64(1), uint8(1), true)
	f.Add(int64(1e12), int64(5), int64(6), int64(7), int64(8), uint8(4), 0.49, 0.999, int64(-1), int64(0), uint8(7), true)
	f.Fuzz(func(t *testing.T, b, q0, q1, q2, q3 int64, n uint8, minPrice, margin float64, budget, shares int64, i uint8, no bool) {
		p := Exclusive{B: b, Q: []int64{q0, q1, q2, q3}[:2+int(n%3)], MinPrice: minPrice}
		k := int(i % 5) // 4 is out of range on purpose
		s := Yes
		if no {
			s = No
		}
		valid := p.Validate() == nil
		prices := make([]float64, p.N())
		if err := p.PricesInto(prices); err == nil {
			sum := 0.0
			for _, x := range prices {
				if !(x >= 0 && x <= 1) {
					t.Fatalf("%+v: prices %v", p, prices)
				}
				sum += x
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("%+v: prices sum to %v", p, sum)
			}
		} else if valid {
			t.Fatalf("%+v: PricesInto: %v", p, err)
		}
		if x := p.Price(k); !(x >= 0 && x <= 1) {
			t.Fatalf("%+v: Price(%d) = %v", p, k, x)
		}
		if l := p.WorstCaseLoss(); math.IsNaN(l) || l < 0 {
			t.Fatalf("%+v: worst-case loss %v", p, l)
		}
		if sub, err := p.SubsidyKopecks(); err == nil && sub < 0 {
			t.Fatalf("%+v: subsidy %d", p, sub)
		}
		if views := p.BinaryViews(); views != nil {
			for j, v := range views {
				if v.QYes != p.Q[j] {
					t.Fatalf("%+v: views %v", p, views)
				}
			}
		}
		m := p.Market()

		buy, err := p.BuyForSpend(k, s, budget, margin)
		if err == nil {
			if buy.Shares < 1 || buy.Cost < 1 || buy.Charge > budget || buy.Fee < 0 || buy.Charge != buy.Cost+buy.Fee {
				t.Fatalf("%+v: BuyForSpend(%d, %v, %d, %v) = %+v", p, k, s, budget, margin, buy)
			}
			checkExclusiveBuy(t, p, m, k, s, buy)
		} else if buy != (Buy{}) {
			t.Fatalf("BuyForSpend returned %+v with %v", buy, err)
		}
		buy, err = p.BuyShares(k, s, shares, margin)
		if err == nil {
			if buy.Shares != shares || buy.Cost < 1 || buy.Charge < buy.Cost || buy.Charge != buy.Cost+buy.Fee {
				t.Fatalf("%+v: BuyShares(%d, %v, %d, %v) = %+v", p, k, s, shares, margin, buy)
			}
			checkExclusiveBuy(t, p, m, k, s, buy)
		}
		sell, err := p.SellShares(k, s, shares, margin)
		if err == nil {
			if sell.Refund < 0 || sell.Payout < 0 || sell.Payout > sell.Refund || sell.Refund != sell.Payout+sell.Fee {
				t.Fatalf("%+v: SellShares(%d, %v, %d, %v) = %+v", p, k, s, shares, margin, sell)
			}
			if exact, ok := exclusiveFloatCost(m, k, s, -shares); ok && float64(sell.Refund) > -exact*(1+1e-9)+1e-9 {
				t.Fatalf("%+v: sale of %d %v on %d refunds %d, the float maker %v", p, shares, s, k, sell.Refund, -exact)
			}
		}

		if p.N() != 2 || k > 1 || !valid || checkMargin(margin) != nil {
			return
		}
		// A valid two-outcome pool is the binary market (q0, q1). Far
		// outside the price band the pool may refuse, with
		// ErrInvalidQuantity, a state whose quantities lie more than 2^53
		// apart; otherwise every answer is the binary one. (For invalid
		// input both refuse, but may name different faults first.)
		bin := Binary{B: float64(b), QYes: float64(q0), QNo: float64(q1), MinPrice: minPrice}
		bs := s
		if k == 1 {
			bs = s.Opposite()
		}
		same := func(what string, got, want any, errP, errB error) {
			if errors.Is(errP, ErrInvalidQuantity) || errors.Is(errB, ErrInvalidQuantity) {
				return
			}
			if got != want || !sameErr(errP, errB) {
				t.Fatalf("%+v: %s(%d, %v) = %+v (%v), binary %+v (%v)", p, what, k, s, got, errP, want, errB)
			}
		}
		if bin.Validate() == nil && p.Price(k) != bin.Price(Side(k)) {
			t.Fatalf("%+v: Price(%d) = %v, binary %v", p, k, p.Price(k), bin.Price(Side(k)))
		}
		buyP, errP := p.BuyForSpend(k, s, budget, margin)
		buyB, errB := BuyForSpend(bin, bs, budget, margin)
		same("BuyForSpend", buyP, buyB, errP, errB)
		buyP, errP = p.BuyShares(k, s, shares, margin)
		buyB, errB = BuyShares(bin, bs, shares, margin)
		same("BuyShares", buyP, buyB, errP, errB)
		sellP, errP := p.SellShares(k, s, shares, margin)
		sellB, errB := SellShares(bin, bs, shares, margin)
		same("SellShares", sellP, sellB, errP, errB)
	})
}

// exclusiveFloatCost prices delta shares of side s of market i (a sale
// when negative) with the float n-outcome Market, an implementation the
// pool does not use; ok is false when that maker refuses.
func exclusiveFloatCost(m Market, i int, s Side, delta int64) (float64, bool) {
	d := make([]float64, m.N())
	for j := range d {
		if (j == i) == (s == Yes) {
			d[j] = float64(delta)
		}
	}
	m.MinPrice = 5e-324
	c, err := m.BundleCost(d)
	return c, err == nil
}

// checkExclusiveBuy checks that a buy's cost covers the float maker's
// cost of the same shares.
func checkExclusiveBuy(t *testing.T, p Exclusive, m Market, i int, s Side, buy Buy) {
	t.Helper()
	if exact, ok := exclusiveFloatCost(m, i, s, buy.Shares); ok && float64(buy.Cost) < exact*(1-1e-9)-1e-9 {
		t.Fatalf("%+v: %d shares of %v on %d cost %d, the float maker %v", p, buy.Shares, s, i, buy.Cost, exact)
	}
}
