package lmsr_test

import (
	"fmt"

	"github.com/predictkit/predictkit/lmsr"
)

// Add an answer to a pool with an Other market: Ann 50%, Bob 30%, Other
// 20% with b = 10000 kopecks; three traders buy, then "Cid" is added at 5%,
// taken out of Other. Every other price stays, the cost function moves by
// less than a share, every holding pays what it paid before in every
// outcome, and the escrow needs a top-up for the new answer's worst case.
func ExampleSplitOther() {
	const ann, bob, other = 0, 1, 2
	pool, err := lmsr.NewExclusive(10000, []float64{0.5, 0.3, 0.2})
	if err != nil {
		panic(err)
	}
	escrow, _ := pool.SubsidyKopecks()
	var holdings []lmsr.Holding
	for _, t := range []struct {
		market int
		side   lmsr.Side
		budget int64
	}{{ann, lmsr.Yes, 2000}, {other, lmsr.Yes, 1000}, {other, lmsr.No, 3000}} {
		buy, err := pool.BuyForSpend(t.market, t.side, t.budget, 0)
		if err != nil {
			panic(err)
		}
		pool = pool.With(t.market, t.side, buy.Shares)
		escrow += buy.Cost
		holdings = append(holdings, lmsr.Holding{Market: t.market, Side: t.side, Shares: buy.Shares})
	}
	claims, _ := lmsr.Claims(pool.N(), holdings)
	fmt.Printf("before: q = %v, prices %.6f, C = %.4f\n", pool.Q, pool.Prices(), pool.Market().Cost())
	fmt.Printf("        claims %v, escrow %d, needs %d\n", claims, escrow, mustEscrow(pool, claims))

	split, err := lmsr.SplitOther(pool, claims, other, 0.05)
	if err != nil {
		panic(err)
	}
	after := split.Pool
	fmt.Printf("after:  q = %v, prices %.6f, C = %.4f\n", after.Q, after.Prices(), after.Market().Cost())
	fmt.Printf("        claims %v, q0 %v\n", split.Claims, split.Q0)
	fmt.Printf("        escrow needed %d (was %d): top up %d\n", split.Escrow, split.EscrowBefore, split.TopUp(escrow))
	fmt.Printf("C(q) − C(q') = %.4f\n", pool.Market().Cost()-after.Market().Cost())
	for _, h := range holdings {
		mapped, _ := split.MapHolding(h)
		was, now := make([]int64, after.N()), make([]int64, after.N())
		for k := range now {
			was[k] = h.Payout(split.From[k])
			for _, m := range mapped {
				now[k] += m.Payout(k)
			}
		}
		fmt.Printf("%v %d on market %d -> %v: pays %v, was %v\n", h.Side, h.Shares, h.Market, mapped, now, was)
	}
	// Output:
	// before: q = [16628 7855 4960], prices [0.578950 0.240788 0.180263], C = 22093.3984
	//         claims [7465 3800 4960], escrow 22095, needs 22094
	// after:  q = [16628 7855 1711 -7863], prices [0.578950 0.240788 0.130258 0.050005], C = 22093.3951
	//         claims [7465 3800 4960 4960], q0 [9163 4055 -3249 -12823]
	//         escrow needed 34917 (was 22094): top up 12822
	// C(q) − C(q') = 0.0033
	// YES 3665 on market 0 -> [{0 YES 3665}]: pays [3665 0 0 0], was [3665 0 0 0]
	// YES 4960 on market 2 -> [{2 YES 4960} {3 YES 4960}]: pays [0 0 4960 4960], was [0 0 4960 4960]
	// NO 3800 on market 2 -> [{0 YES 3800} {1 YES 3800}]: pays [3800 3800 0 0], was [3800 3800 0 0]
}

func mustEscrow(p lmsr.Exclusive, claims []int64) int64 {
	e, err := lmsr.RequiredEscrow(p, claims)
	if err != nil {
		panic(err)
	}
	return e
}
