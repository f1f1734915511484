package lmsr

import (
	"errors"
	"math"
	"testing"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"
)

func TestMarginArithmeticIsExact(t *testing.T) {
	tests := []struct {
		name           string
		amount         int64
		margin         float64
		charge, payout int64
	}{
		{"3% on 100 is exactly 103 and 97", 100, 0.03, 103, 97},
		{"7% on 100 is exactly 107 and 93, although 0.07 is above 7/100 in binary", 100, 0.07, 107, 93},
		{"10% on 10 is exactly 11 and 9", 10, 0.1, 11, 9},
		{"3% on 1 kopeck rounds the charge up and the payout down", 1, 0.03, 2, 0},
		{"no margin leaves the amount alone", 12345, 0, 12345, 12345},
		{"a zero amount stays zero", 0, 0.5, 0, 0},
		{"a large amount keeps every kopeck", 1e15, 0.025, 1025000000000000, 975000000000000},
		{"a margin with 17 significant digits still rounds exactly", 3, 1.0 / 3, 4, 2},
		{"a margin too small for 18 decimals falls back to decimal", 1e15, 1e-20, 1e15 + 1, 1e15 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ChargeForCost(tt.amount, tt.margin)
			if err != nil || c != tt.charge {
				t.Errorf("ChargeForCost = %d, %v; want %d", c, err, tt.charge)
			}
			p, err := PayoutForRefund(tt.amount, tt.margin)
			if err != nil || p != tt.payout {
				t.Errorf("PayoutForRefund = %d, %v; want %d", p, err, tt.payout)
			}
		})
	}
}

func TestInvalidMarginsAreRefused(t *testing.T) {
	for _, m := range []float64{-0.01, 1, 1.5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := ChargeForCost(100, m); !errors.Is(err, ErrInvalidMargin) {
			t.Errorf("ChargeForCost(100, %v) error = %v", m, err)
		}
		if _, err := PayoutForRefund(100, m); !errors.Is(err, ErrInvalidMargin) {
			t.Errorf("PayoutForRefund(100, %v) error = %v", m, err)
		}
		if _, err := BuyForSpend(Binary{B: 100}, Yes, 100, m); !errors.Is(err, ErrInvalidMargin) {
			t.Errorf("BuyForSpend margin %v error = %v", m, err)
		}
	}
}

func TestPropertyMarginMatchesDecimal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var margin float64
		if rapid.Bool().Draw(t, "decimal margin") {
			// A margin as people write it: up to 6 decimals.
			margin = float64(rapid.Int64Range(0, 999999).Draw(t, "micro")) / 1e6
		} else {
			margin = rapid.Float64Range(0, 0.999).Draw(t, "margin")
		}
		amount := rapid.Int64Range(0, 1<<53).Draw(t, "amount")
		dm := decimal.NewFromFloat(margin)
		one := decimal.NewFromInt(1)
		wantC := decimal.NewFromInt(amount).Mul(one.Add(dm)).Ceil().IntPart()
		wantP := decimal.NewFromInt(amount).Mul(one.Sub(dm)).Floor().IntPart()
		if c, _ := ChargeForCost(amount, margin); c != wantC {
			t.Fatalf("ChargeForCost(%d, %v) = %d, decimal says %d", amount, margin, c, wantC)
		}
		if p, _ := PayoutForRefund(amount, margin); p != wantP {
			t.Fatalf("PayoutForRefund(%d, %v) = %d, decimal says %d", amount, margin, p, wantP)
		}
	})
}

func TestPropertyDecimalMarginFastPathMatchesStrconv(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		margin := float64(rapid.Int64Range(0, 999999999).Draw(t, "nano")) / 1e9
		if rapid.Bool().Draw(t, "any float") {
			margin = rapid.Float64Range(0, 1).Draw(t, "margin")
		}
		num, den, ok := decimalMargin(margin)
		if margin == 0 {
			return
		}
		sNum, sDen, sOK := decimalMarginSlow(margin)
		if ok != sOK || (ok && num*sDen != sNum*den) {
			t.Fatalf("decimalMargin(%v) = %d/%d %v, strconv says %d/%d %v", margin, num, den, ok, sNum, sDen, sOK)
		}
	})
}

func TestRounding(t *testing.T) {
	tests := []struct {
		name     string
		x        float64
		up, down int64
	}{
		{"a fraction rounds up for the house and down for the trader", 10.4, 11, 10},
		{"a value clearly below an integer rounds up to it", 99.9999, 100, 99},
		{"a value a hair below an integer is pushed past it by the guard", 99.99999999999999, 101, 99},
		{"a float that looks integral is assumed to hide error", 100, 101, 99},
		{"zero is zero both ways", 0, 0, 0},
		{"a large value is guarded relatively", 1e15 + 0.5, 1e15 + 1001, 1e15 - 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := RoundUp(tt.x); got != tt.up {
				t.Errorf("RoundUp(%v) = %d, want %d", tt.x, got, tt.up)
			}
			if got, _ := RoundDown(tt.x); got != tt.down {
				t.Errorf("RoundDown(%v) = %d, want %d", tt.x, got, tt.down)
			}
		})
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), 1e300} {
		if _, err := RoundUp(x); !errors.Is(err, ErrInvalidQuantity) {
			t.Errorf("RoundUp(%v) error = %v", x, err)
		}
		if _, err := RoundDown(x); !errors.Is(err, ErrInvalidQuantity) {
			t.Errorf("RoundDown(%v) error = %v", x, err)
		}
	}
}

func TestKopeckTrades(t *testing.T) {
	even := Binary{B: 10000}
	t.Run("a 1000-kopeck budget at 3% buys the most shares whose charge fits", func(t *testing.T) {
		buy, err := BuyForSpend(even, Yes, 1000, 0.03)
		if err != nil {
			t.Fatal(err)
		}
		want := Buy{Shares: 1854, Cost: 970, Fee: 30, Charge: 1000}
		if buy != want {
			t.Fatalf("got %+v, want %+v", buy, want)
		}
		if next, _ := BuyShares(even, Yes, buy.Shares+1, 0.03); next.Charge <= 1000 {
			t.Fatalf("one more share also fits: %+v", next)
		}
	})
	t.Run("buying shares charges the rounded-up cost plus the fee", func(t *testing.T) {
		buy, err := BuyShares(even, No, 1854, 0.03)
		if err != nil {
			t.Fatal(err)
		}
		if buy != (Buy{Shares: 1854, Cost: 970, Fee: 30, Charge: 1000}) {
			t.Fatalf("got %+v", buy)
		}
	})
	t.Run("selling pays the rounded-down refund less the fee", func(t *testing.T) {
		m := even.With(Yes, 1854)
		sell, err := SellShares(m, Yes, 1854, 0.03)
		if err != nil {
			t.Fatal(err)
		}
		if sell != (Sell{Shares: 1854, Refund: 969, Fee: 30, Payout: 939}) {
			t.Fatalf("got %+v", sell)
		}
	})
	t.Run("a one-share sale at a tiny price refunds nothing rather than failing", func(t *testing.T) {
		m := Binary{B: 100, QNo: 1300}
		sell, err := SellShares(m, Yes, 1, 0)
		if err != nil || sell != (Sell{Shares: 1}) {
			t.Fatalf("got %+v, %v", sell, err)
		}
	})
	t.Run("a one-share buy at a tiny price still costs a kopeck", func(t *testing.T) {
		m := Binary{B: 100, QNo: 1300}
		buy, err := BuyShares(m, Yes, 1, 0)
		if err != nil || buy.Cost != 1 || buy.Charge != 1 {
			t.Fatalf("got %+v, %v", buy, err)
		}
	})
	t.Run("the subsidy of an even market with b = 10000 is ceil(b·ln 2)", func(t *testing.T) {
		if got, err := SubsidyKopecks(even); err != nil || got != 6932 {
			t.Fatalf("got %d, %v; want 6932", got, err)
		}
	})

	errTests := []struct {
		name string
		run  func() error
		want error
	}{
		{"a zero budget is an invalid amount", func() error { _, err := BuyForSpend(even, Yes, 0, 0); return err }, ErrInvalidAmount},
		{"a budget that cannot cover a kopeck after the fee is too small", func() error { _, err := BuyForSpend(even, Yes, 1, 0.5); return err }, ErrTooSmall},
		{"one kopeck at 3% is too small: the fee alone takes a kopeck", func() error { _, err := BuyForSpend(even, Yes, 1, 0.03); return err }, ErrTooSmall},
		{"a budget that would push the price past the limit is refused", func() error { _, err := BuyForSpend(even, Yes, 1e9, 0); return err }, ErrPriceLimit},
		{"zero shares is an invalid amount to buy", func() error { _, err := BuyShares(even, Yes, 0, 0); return err }, ErrInvalidAmount},
		{"negative shares is an invalid amount to sell", func() error { _, err := SellShares(even, No, -3, 0); return err }, ErrInvalidAmount},
		{"selling down past the price limit is refused", func() error { _, err := SellShares(even, No, 200000, 0); return err }, ErrPriceLimit},
		{"an invalid market has no subsidy", func() error { _, err := SubsidyKopecks(Binary{}); return err }, ErrInvalidLiquidity},
		{"an invalid side cannot buy", func() error { _, err := BuyShares(even, Side(9), 1, 0); return err }, ErrInvalidSide},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

// genMargin draws a platform margin: 0 to 10% in basis points.
func genMargin(t *rapid.T) float64 {
	return float64(rapid.Int64Range(0, 1000).Draw(t, "marginBps")) / 1e4
}

func TestPropertyBuyForSpend(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genKopeckBinary(t)
		s := genSide(t)
		margin := genMargin(t)
		budget := rapid.Int64Range(1, int64(3*m.B)).Draw(t, "budget")
		buy, err := BuyForSpend(m, s, budget, margin)
		if errors.Is(err, ErrTooSmall) || errors.Is(err, ErrPriceLimit) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if buy.Shares < 1 || buy.Charge > budget || buy.Fee != buy.Charge-buy.Cost {
			t.Fatalf("budget %d bought %+v", budget, buy)
		}
		// Never more shares than paid for: the escrow gets at least the
		// exact LMSR cost of the shares.
		exactCost := mustBuy(t, m, s, float64(buy.Shares))
		if float64(buy.Cost) < exactCost {
			t.Fatalf("cost %d under the LMSR cost %v", buy.Cost, exactCost)
		}
		if c, _ := ChargeForCost(buy.Cost, margin); c != buy.Charge {
			t.Fatalf("charge %d, want %d", buy.Charge, c)
		}
		// The most shares: one more would not fit.
		if more, err := BuyShares(m, s, buy.Shares+1, margin); err == nil && more.Charge <= budget {
			t.Fatalf("%d shares also fit: %+v", buy.Shares+1, more)
		}
		// And BuyForSpend agrees with BuyShares on the same count.
		if again, _ := BuyShares(m, s, buy.Shares, margin); again != buy {
			t.Fatalf("BuyShares(%d) = %+v, BuyForSpend = %+v", buy.Shares, again, buy)
		}
	})
}

func TestPropertyNoArbitrageInKopecks(t *testing.T) {
	t.Run("buying then selling the same shares never profits", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genKopeckBinary(t)
			s := genSide(t)
			margin := genMargin(t)
			n := rapid.Int64Range(1, int64(2*m.B)).Draw(t, "shares")
			buy, err := BuyShares(m, s, n, margin)
			if err != nil {
				t.Skip(err)
			}
			sell, err := SellShares(m.With(s, float64(n)), s, n, margin)
			if err != nil {
				t.Fatal(err)
			}
			if sell.Refund > buy.Cost || sell.Payout > buy.Charge {
				t.Fatalf("bought %+v, sold %+v", buy, sell)
			}
		})
	})
	t.Run("splitting a buy is never cheaper", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genKopeckBinary(t)
			s := genSide(t)
			margin := genMargin(t)
			n1 := rapid.Int64Range(1, int64(m.B)).Draw(t, "n1")
			n2 := rapid.Int64Range(1, int64(m.B)).Draw(t, "n2")
			whole, err := BuyShares(m, s, n1+n2, margin)
			if err != nil {
				t.Skip(err)
			}
			a, err1 := BuyShares(m, s, n1, margin)
			b, err2 := BuyShares(m.With(s, float64(n1)), s, n2, margin)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if a.Charge+b.Charge < whole.Charge || a.Cost+b.Cost < whole.Cost {
				t.Fatalf("%+v + %+v cheaper than %+v", a, b, whole)
			}
		})
	})
	t.Run("splitting a sell never pays more", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			m := genKopeckBinary(t)
			s := genSide(t)
			margin := genMargin(t)
			n1 := rapid.Int64Range(1, int64(m.B)).Draw(t, "n1")
			n2 := rapid.Int64Range(1, int64(m.B)).Draw(t, "n2")
			whole, err := SellShares(m, s, n1+n2, margin)
			if err != nil {
				t.Skip(err)
			}
			a, err1 := SellShares(m, s, n1, margin)
			b, err2 := SellShares(m.With(s, -float64(n1)), s, n2, margin)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if a.Payout+b.Payout > whole.Payout || a.Refund+b.Refund > whole.Refund {
				t.Fatalf("%+v + %+v pays more than %+v", a, b, whole)
			}
		})
	})
}

func TestPropertyBoundedLoss(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.Int64Range(100, 1e8).Draw(t, "b")
		p := rapid.Float64Range(0.01, 0.99).Draw(t, "p")
		margin := genMargin(t)
		qy, qn, err := InitialQ(b, p)
		if err != nil {
			t.Fatal(err)
		}
		m := Binary{B: float64(b), QYes: float64(qy), QNo: float64(qn)}
		subsidy, err := SubsidyKopecks(m)
		if err != nil {
			t.Fatal(err)
		}
		q0 := [2]float64{m.QYes, m.QNo}
		cash := int64(0) // what the escrow received beyond the subsidy
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for range steps {
			s := genSide(t)
			out := int64(m.Q(s) - q0[s])
			if rapid.Bool().Draw(t, "sell") && out > 0 {
				n := rapid.Int64Range(1, out).Draw(t, "sell shares")
				sell, err := SellShares(m, s, n, margin)
				if err != nil {
					continue
				}
				cash -= sell.Refund
				m = m.With(s, -float64(n))
			} else {
				budget := rapid.Int64Range(1, 2*b).Draw(t, "budget")
				buy, err := BuyForSpend(m, s, budget, margin)
				if err != nil {
					continue
				}
				cash += buy.Cost
				m = m.With(s, float64(buy.Shares))
			}
			// The escrow covers the winning side at every moment.
			for _, w := range []Side{Yes, No} {
				if payout := int64(m.Q(w) - q0[w]); payout-cash > subsidy {
					t.Fatalf("if %v wins the maker pays %d with %d + %d in escrow", w, payout, cash, subsidy)
				}
			}
		}
	})
}
