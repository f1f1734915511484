package lmsr

import (
	"errors"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// splitPool is a pool with Other and what its traders did: their holdings
// and the escrow, the subsidy plus costs less refunds.
type splitPool struct {
	p        Exclusive
	q0       []int64 // the opening quantities
	holdings []Holding
	escrow   int64
}

// genSplitPool draws a pool of 2 to 10 markets at random probabilities
// with a random b (integer kopecks, 1 to 1e9, mostly the platform's 100
// and up), then lets random traders buy and sell YES and NO on random
// markets, with margins.
func genSplitPool(t *rapid.T) splitPool {
	lo := math.Log(100)
	if rapid.IntRange(0, 9).Draw(t, "tiny b") == 0 {
		lo = 0
	}
	b := int64(math.Round(math.Exp(rapid.Float64Range(lo, math.Log(1e9)).Draw(t, "lnb"))))
	w := rapid.SliceOfN(rapid.Float64Range(0.01, 1), 2, 10).Draw(t, "weights")
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	for i := range w {
		w[i] /= sum
	}
	p, err := NewExclusive(b, w)
	if err != nil {
		t.Fatal(err)
	}
	escrow, err := p.SubsidyKopecks()
	if err != nil {
		t.Fatal(err)
	}
	sp := splitPool{p: p, q0: slices.Clone(p.Q), escrow: escrow}
	sp.trade(t, rapid.IntRange(0, 12).Draw(t, "trades"))
	return sp
}

// trade makes steps random trades on sp: buys of shares, buys for a budget
// and sales of a part of a holding.
func (sp *splitPool) trade(t *rapid.T, steps int) {
	margin := genMargin(t)
	for range steps {
		p := sp.p
		if len(sp.holdings) > 0 && rapid.IntRange(0, 3).Draw(t, "sell?") == 0 {
			j := rapid.IntRange(0, len(sp.holdings)-1).Draw(t, "holding")
			h := &sp.holdings[j]
			if h.Shares == 0 {
				continue
			}
			n := rapid.Int64Range(1, h.Shares).Draw(t, "sell shares")
			sell, err := p.SellShares(h.Market, h.Side, n, margin)
			if err != nil {
				continue
			}
			sp.escrow -= sell.Refund
			h.Shares -= n
			sp.p = p.With(h.Market, h.Side, -n)
			continue
		}
		i, s := genTrade(t, p)
		var buy Buy
		var err error
		if rapid.Bool().Draw(t, "for shares") {
			buy, err = p.BuyShares(i, s, rapid.Int64Range(1, 2*p.B).Draw(t, "buy shares"), margin)
		} else {
			buy, err = p.BuyForSpend(i, s, rapid.Int64Range(1, 2*p.B).Draw(t, "budget"), margin)
		}
		if err != nil {
			continue
		}
		sp.escrow += buy.Cost
		sp.holdings = append(sp.holdings, Holding{Market: i, Side: s, Shares: buy.Shares})
		sp.p = p.With(i, s, buy.Shares)
	}
}

// genPNew draws the new answer's probability as a fraction of Other's,
// log-uniform from 1e-9 to nearly all of it, and sometimes at the edges.
func genPNew(t *rapid.T, pOther float64) float64 {
	switch rapid.IntRange(0, 9).Draw(t, "edge") {
	case 0:
		return math.Nextafter(pOther, 0) * (1 - 1e-15)
	case 1:
		return pOther * 1e-12
	case 2:
		return pOther / 2
	}
	u := rapid.Float64Range(math.Log(1e-9), math.Log(0.999999)).Draw(t, "ln fraction")
	return pOther * math.Exp(u)
}

// costDrop is C(q) − C(q') at 320 bits.
func costDrop(before, after Exclusive) float64 {
	c := func(p Exclusive) refState {
		m := p.Market()
		return newRef(m.B, m.Q)
	}
	return f64(sub(c(before).cost(), c(after).cost()))
}

func TestPropertySplitOtherKeepsEveryClaim(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sp := genSplitPool(t)
		p := sp.p
		claims, err := Claims(p.N(), sp.holdings)
		if err != nil {
			t.Fatal(err)
		}
		for k := range claims {
			if claims[k] != p.Q[k]-sp.q0[k] {
				t.Fatalf("the holdings claim %d in outcome %d, q − q0 = %d", claims[k], k, p.Q[k]-sp.q0[k])
			}
		}
		other := rapid.IntRange(0, p.N()-1).Draw(t, "other")
		pNew := genPNew(t, p.Price(other))
		split, err := SplitOther(p, claims, other, pNew)
		if err != nil {
			t.Fatalf("SplitOther(%+v, %v, %d, %v): %v", p, claims, other, pNew, err)
		}
		n := p.N()
		if split.Pool.N() != n+1 || split.New != n || split.Other != other || split.From[n] != other {
			t.Fatalf("split %+v", split)
		}
		// Every holding, mapped, pays in every outcome what it paid before.
		var mapped []Holding
		for _, h := range sp.holdings {
			hs, err := split.MapHolding(h)
			if err != nil {
				t.Fatal(err)
			}
			for k := range n + 1 {
				var now int64
				for _, m := range hs {
					now += m.Payout(k)
				}
				if was := h.Payout(split.From[k]); now != was {
					t.Fatalf("%+v maps to %+v, which pays %d in outcome %d; it paid %d", h, hs, now, k, was)
				}
			}
			mapped = append(mapped, hs...)
		}
		after, err := Claims(n+1, mapped)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(after, split.Claims) {
			t.Fatalf("the mapped holdings claim %v, the split says %v", after, split.Claims)
		}
		for k := range after {
			if split.Q0[k] != split.Pool.Q[k]-after[k] {
				t.Fatalf("q0[%d] = %d, want q − claims = %d", k, split.Q0[k], split.Pool.Q[k]-after[k])
			}
		}
	})
}

func TestPropertySplitOtherKeepsTheCostAndThePrices(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sp := genSplitPool(t)
		p := sp.p
		claims, _ := Claims(p.N(), sp.holdings)
		other := rapid.IntRange(0, p.N()-1).Draw(t, "other")
		pOther := p.Price(other)
		pNew := genPNew(t, pOther)
		split, err := SplitOther(p, claims, other, pNew)
		if err != nil {
			t.Fatal(err)
		}
		q := split.Pool
		b := float64(p.B)
		// The documented rounding: down, less than a share plus the guard.
		drop := costDrop(p, q)
		offset := math.Abs(float64(min(q.Q[other], q.Q[split.New]) - p.Q[other]))
		if !(drop >= -1e-9 && drop < 1+RoundingGuard*offset) {
			t.Fatalf("C(q) − C(q') = %v, want in [0, 1)", drop)
		}
		before, now := p.Prices(), q.Prices()
		grow := math.Expm1(max(drop, 0) / b)
		for j := range p.N() {
			if j == other {
				continue
			}
			if d := now[j] - before[j]; d < -1e-14 || d > before[j]*grow+1e-14 {
				t.Fatalf("price %d moved from %v to %v, want up by at most a factor e^{%v/b}", j, before[j], now[j], drop)
			}
		}
		if b >= 1e9 {
			for j := range p.N() {
				if j != other && math.Abs(now[j]-before[j]) > 1e-9 {
					t.Fatalf("b = %v: price %d moved from %v to %v", b, j, before[j], now[j])
				}
			}
		}
		slack := 2*pOther*(-math.Expm1(-1/b)) + 1e-12
		if d := math.Abs(now[split.New] - pNew); d > slack {
			t.Fatalf("the new answer's price is %v, asked %v (off by %v > %v)", now[split.New], pNew, d, slack)
		}
		if d := math.Abs(now[split.New] + now[other] - pOther); d > pOther*grow+pOther*(-math.Expm1(-1/b))+1e-12 {
			t.Fatalf("Other and the new answer price %v together, Other priced %v", now[split.New]+now[other], pOther)
		}
	})
}

func TestSplitQuantitiesKeepThePricesBeforeRounding(t *testing.T) {
	// The derivation, in float quantities: q_new = q_o + b·ln r and
	// q_o' = q_o + b·ln(1 − r) leave every other price and C as they were.
	rapid.Check(t, func(t *rapid.T) {
		// Quantities near 0, so that float64 holds them to far below a
		// share and only the formulas are tested.
		m := Market{B: genB(t)}
		for range rapid.IntRange(2, 10).Draw(t, "n") {
			m.Q = append(m.Q, m.B*rapid.Float64Range(-5, 5).Draw(t, "z"))
		}
		o := rapid.IntRange(0, m.N()-1).Draw(t, "other")
		po := m.Price(o)
		r := math.Exp(rapid.Float64Range(math.Log(1e-9), math.Log(0.999999)).Draw(t, "ln r"))
		q := append(slices.Clone(m.Q), m.Q[o]+m.B*math.Log(r))
		q[o] += m.B * math.Log1p(-r)
		after := Market{B: m.B, Q: q}
		for j := range m.N() {
			if j != o && math.Abs(after.Price(j)-m.Price(j)) > 1e-9 {
				t.Fatalf("price %d: %v, was %v", j, after.Price(j), m.Price(j))
			}
		}
		if d := math.Abs(after.Price(m.N()) - r*po); d > 1e-9 {
			t.Fatalf("new answer at %v, want %v", after.Price(m.N()), r*po)
		}
		if !closeTo(after.Cost(), m.Cost(), 1e-12, 1e-9*m.B) {
			t.Fatalf("C %v, was %v", after.Cost(), m.Cost())
		}
	})
}

func TestPropertySplitOtherEscrowCoversTheNewWorstCase(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sp := genSplitPool(t)
		p := sp.p
		claims, _ := Claims(p.N(), sp.holdings)
		other := rapid.IntRange(0, p.N()-1).Draw(t, "other")
		split, err := SplitOther(p, claims, other, genPNew(t, p.Price(other)))
		if err != nil {
			t.Fatal(err)
		}
		// The escrow the traders built covers the old worst case.
		if split.EscrowBefore > sp.escrow {
			t.Fatalf("RequiredEscrow before the split is %d, the escrow holds %d", split.EscrowBefore, sp.escrow)
		}
		escrow := sp.escrow + split.TopUp(sp.escrow)
		for k, c := range split.Claims {
			if c > split.Escrow {
				t.Fatalf("outcome %d claims %d, required escrow %d", k, c, split.Escrow)
			}
		}
		// Topped up, it covers every outcome whatever the traders do next.
		next := splitPool{p: split.Pool, escrow: escrow}
		for _, h := range sp.holdings {
			hs, _ := split.MapHolding(h)
			next.holdings = append(next.holdings, hs...)
		}
		for range rapid.IntRange(1, 4).Draw(t, "rounds") {
			next.trade(t, 4)
			claims, _ := Claims(next.p.N(), next.holdings)
			for k, c := range claims {
				if c > next.escrow {
					t.Fatalf("outcome %d claims %d, the escrow holds %d", k, c, next.escrow)
				}
				if c != next.p.Q[k]-split.Q0[k] {
					t.Fatalf("outcome %d claims %d, q − q0 = %d", k, c, next.p.Q[k]-split.Q0[k])
				}
			}
			if req, _ := RequiredEscrow(next.p, claims); req > next.escrow {
				t.Fatalf("RequiredEscrow %d, the escrow holds %d", req, next.escrow)
			}
		}
	})
}

func TestSplitOtherOfAnEvenPool(t *testing.T) {
	// Ann and Other at 50% with b = 10000: the opening subsidy is b·ln 2;
	// a new answer at 25% makes the pool (50%, 25%, 25%), whose worst case
	// is b·ln 4.
	p, _ := NewExclusive(10000, []float64{0.5, 0.5})
	split, err := SplitOther(p, []int64{0, 0}, 1, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	if split.EscrowBefore != 6932 || split.Escrow != 13864 {
		t.Errorf("escrow %d → %d, want 6932 → 13864 (b·ln 2 → b·ln 4)", split.EscrowBefore, split.Escrow)
	}
	// r = 1/2: the new answer, the larger part by a tie, is rounded down
	// from −6931.47; Other takes what is left, ln(1 − e^{−0.6932}) =
	// −0.693094, rounded down.
	if got := split.Pool.Q; !slices.Equal(got, []int64{0, -6931, -6932}) {
		t.Errorf("q = %v, want [0 -6931 -6932]", got)
	}
}

func TestSplitOtherRefusesBadInput(t *testing.T) {
	p, _ := NewExclusive(10000, []float64{0.5, 0.3, 0.2})
	po := p.Price(2)
	claims := []int64{0, 0, 0}
	for _, tc := range []struct {
		name   string
		p      Exclusive
		claims []int64
		other  int
		pNew   float64
		want   error
	}{
		{"a new answer at 0 is refused", p, claims, 2, 0, ErrInvalidProbability},
		{"a negative probability is refused", p, claims, 2, -0.1, ErrInvalidProbability},
		{"all of Other's probability is refused", p, claims, 2, po, ErrInvalidProbability},
		{"more than Other's probability is refused", p, claims, 2, 0.5, ErrInvalidProbability},
		{"NaN is refused", p, claims, 2, math.NaN(), ErrInvalidProbability},
		{"an Other out of range is refused", p, claims, 3, 0.1, ErrDimension},
		{"a negative Other is refused", p, claims, -1, 0.1, ErrDimension},
		{"claims of the wrong length are refused", p, []int64{0, 0}, 2, 0.1, ErrDimension},
		{"a negative claim is refused", p, []int64{0, -1, 0}, 2, 0.1, ErrInvalidQuantity},
		{"an invalid pool is refused", Exclusive{B: 0, Q: []int64{0, 0, 0}}, claims, 2, 0.1, ErrInvalidLiquidity},
		{"a split past −2^53 is refused", Exclusive{B: 1 << 52, Q: []int64{0, 0, 0}}, claims, 2, 1e-300, ErrInvalidQuantity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SplitOther(tc.p, tc.claims, tc.other, tc.pNew)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestMapHolding(t *testing.T) {
	p, _ := NewExclusive(10000, []float64{0.4, 0.3, 0.3})
	split, err := SplitOther(p, []int64{0, 0, 0}, 2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		h    Holding
		want []Holding
	}{
		{"YES on another market stays", Holding{0, Yes, 5}, []Holding{{0, Yes, 5}}},
		{"NO on another market stays and pays if the new answer wins", Holding{1, No, 5}, []Holding{{1, No, 5}}},
		{"YES on Other adds YES on the new answer", Holding{2, Yes, 5}, []Holding{{2, Yes, 5}, {3, Yes, 5}}},
		{"NO on Other becomes YES on every other old market", Holding{2, No, 5}, []Holding{{0, Yes, 5}, {1, Yes, 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := split.MapHolding(tc.h)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("MapHolding(%+v) = %+v, %v; want %+v", tc.h, got, err, tc.want)
			}
		})
	}
	for _, h := range []Holding{{3, Yes, 1}, {-1, Yes, 1}, {0, Side(7), 1}, {0, Yes, -1}} {
		if _, err := split.MapHolding(h); err == nil {
			t.Errorf("MapHolding(%+v) accepted a holding of no market of the old pool", h)
		}
	}
}

func TestClaims(t *testing.T) {
	got, err := Claims(3, []Holding{{0, Yes, 10}, {1, No, 4}, {2, No, 1}, {2, Yes, 3}})
	if err != nil || !slices.Equal(got, []int64{15, 1, 7}) {
		t.Errorf("Claims = %v, %v; want [15 1 7]", got, err)
	}
	if _, err := Claims(3, []Holding{{3, Yes, 1}}); !errors.Is(err, ErrDimension) {
		t.Errorf("a holding of market 3 of 3: %v, want ErrDimension", err)
	}
}

func BenchmarkSplitOther(b *testing.B) {
	probs := make([]float64, 10)
	for i := range probs {
		probs[i] = 0.1
	}
	p, _ := NewExclusive(10000, probs)
	claims := make([]int64, 10)
	for b.Loop() {
		if _, err := SplitOther(p, claims, 9, 0.03); err != nil {
			b.Fatal(err)
		}
	}
}
