package lmsr_test

import (
	"errors"
	"fmt"

	"github.com/predictkit/predictkit/lmsr"
)

// Price a market: open it at 70% YES with b = 10000 kopecks and read the
// prices and the cost function.
func ExampleBinary_Price() {
	qYes, qNo, err := lmsr.InitialQ(10000, 0.70)
	if err != nil {
		panic(err)
	}
	m := lmsr.Binary{B: 10000, QYes: float64(qYes), QNo: float64(qNo)}
	fmt.Printf("q = (%d, %d)\n", qYes, qNo)
	fmt.Printf("P(YES) = %.4f, P(NO) = %.4f\n", m.Price(lmsr.Yes), m.Price(lmsr.No))
	fmt.Printf("C(q) = %.2f kopecks\n", m.Cost())
	// Output:
	// q = (8473, 0)
	// P(YES) = 0.7000, P(NO) = 0.3000
	// C(q) = 12039.74 kopecks
}

// Buy for a budget: 50 RUB (5000 kopecks) on NO with a 3% fee. The budget
// covers the fee; the shares are the most whose charge fits.
func ExampleBuyForSpend() {
	m := lmsr.Binary{B: 10000, QYes: 8473}
	buy, err := lmsr.BuyForSpend(m, lmsr.No, 5000, 0.03)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d shares: cost %d + fee %d = charge %d kopecks\n", buy.Shares, buy.Cost, buy.Fee, buy.Charge)
	after := m.With(lmsr.No, float64(buy.Shares))
	fmt.Printf("P(NO) moves from %.4f to %.4f\n", m.Price(lmsr.No), after.Price(lmsr.No))
	// Output:
	// 11258 shares: cost 4854 + fee 146 = charge 5000 kopecks
	// P(NO) moves from 0.3000 to 0.5692
}

// Sell shares back: the refund is rounded down and the fee taken from it.
func ExampleSellShares() {
	m := lmsr.Binary{B: 10000, QYes: 8473 + 5000}
	sell, err := lmsr.SellShares(m, lmsr.Yes, 5000, 0.03)
	if err != nil {
		panic(err)
	}
	fmt.Printf("refund %d − fee %d = payout %d kopecks\n", sell.Refund, sell.Fee, sell.Payout)
	// Output:
	// refund 3743 − fee 113 = payout 3630 kopecks
}

// Compute the subsidy the platform escrows when it opens a market: the
// maker's worst-case loss b·ln(1/min π), rounded up.
func ExampleSubsidyKopecks() {
	for _, p := range []float64{0.5, 0.7, 0.99} {
		qYes, qNo, _ := lmsr.InitialQ(10000, p)
		sub, _ := lmsr.SubsidyKopecks(lmsr.Binary{B: 10000, QYes: float64(qYes), QNo: float64(qNo)})
		fmt.Printf("open at %.2f: escrow %d kopecks\n", p, sub)
	}
	// Output:
	// open at 0.50: escrow 6932 kopecks
	// open at 0.70: escrow 12040 kopecks
	// open at 0.99: escrow 46052 kopecks
}

// A trade that would push a price past the limit is refused.
func ExampleErrPriceLimit() {
	m := lmsr.Binary{B: 100}
	_, err := m.BuyCost(lmsr.Yes, 5000)
	fmt.Println(errors.Is(err, lmsr.ErrPriceLimit))
	// Output:
	// true
}

// Price an n-outcome market for research without allocating.
func ExampleMarket_PricesInto() {
	q, err := lmsr.InitialQuantities(1000, []float64{0.5, 0.3, 0.2})
	if err != nil {
		panic(err)
	}
	m := lmsr.Market{B: 1000, Q: q}
	prices := make([]float64, m.N())
	if err := m.PricesInto(prices); err != nil {
		panic(err)
	}
	cost, _ := m.BuyCost(2, 500)
	fmt.Printf("prices %.3f, subsidy %.1f, 500 shares of outcome 2 cost %.2f\n", prices, m.WorstCaseLoss(), cost)
	// Output:
	// prices [0.500 0.300 0.200], subsidy 1609.4, 500 shares of outcome 2 cost 121.99
}

// The liquidity-sensitive maker: prices sum to more than 1, by at most the
// commission v.
func ExampleLS() {
	m := lmsr.LS{Alpha: lmsr.AlphaForCommission(0.05, 2), Q: []float64{510, 490}}
	prices := make([]float64, 2)
	_ = m.PricesInto(prices)
	fmt.Printf("b = %.1f, prices %.4f, sum %.4f ≤ %.4f\n", m.Liquidity(), prices, m.PriceSum(), m.MaxPriceSum())
	// Output:
	// b = 36.1, prices [0.6588 0.3885], sum 1.0473 ≤ 1.0500
}

// Price an exclusive pool: three markets of which exactly one resolves
// YES, priced by one three-outcome LMSR. YES on market i buys outcome i;
// NO buys one share of every other outcome. The YES prices always sum to
// 1, and each market still shows a binary (q_yes, q_no).
func ExampleExclusive() {
	pool, err := lmsr.NewExclusive(10000, []float64{0.5, 0.3, 0.2})
	if err != nil {
		panic(err)
	}
	sub, _ := pool.SubsidyKopecks()
	fmt.Printf("q = %v, escrow %d kopecks\n", pool.Q, sub)

	// 50 RUB on YES of market 2, then 50 RUB on NO of market 0, 3% fee.
	buy, err := pool.BuyForSpend(2, lmsr.Yes, 5000, 0.03)
	if err != nil {
		panic(err)
	}
	pool = pool.With(2, lmsr.Yes, buy.Shares)
	fmt.Printf("YES on 2: %d shares for %d + fee %d\n", buy.Shares, buy.Cost, buy.Fee)
	buy, err = pool.BuyForSpend(0, lmsr.No, 5000, 0.03)
	if err != nil {
		panic(err)
	}
	pool = pool.With(0, lmsr.No, buy.Shares)
	fmt.Printf("NO on 0: %d shares for %d + fee %d\n", buy.Shares, buy.Cost, buy.Fee)

	prices := pool.Prices()
	fmt.Printf("prices %.4f, sum %.4f\n", prices, prices[0]+prices[1]+prices[2])
	for i, v := range pool.BinaryViews() {
		m := lmsr.Binary{B: 10000, QYes: float64(v.QYes), QNo: float64(v.QNo)}
		fmt.Printf("market %d shows q_yes %d, q_no %d: P(YES) = %.4f\n", i, v.QYes, v.QNo, m.Price(lmsr.Yes))
	}
	// Output:
	// q = [9163 4055 0], escrow 16095 kopecks
	// YES on 2: 14168 shares for 4854 + fee 146
	// NO on 0: 6432 shares for 4854 + fee 146
	// prices [0.1894 0.2162 0.5944], sum 1.0000
	// market 0 shows q_yes 9163, q_no 23702: P(YES) = 0.1894
	// market 1 shows q_yes 10487, q_no 23366: P(YES) = 0.2162
	// market 2 shows q_yes 20600, q_no 16778: P(YES) = 0.5944
}
