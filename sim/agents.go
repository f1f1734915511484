package sim

import (
	"errors"
	"math"

	"github.com/predictkit/predictkit/lmsr"
)

// agent is a kind of trader.
type agent uint8

const (
	informed agent = iota
	noise
	momentum
	arbitrage
	numAgents
)

var agentNames = [numAgents]string{"informed", "noise", "momentum", "arbitrage"}

// trader holds cash and shares: hold[2i] YES and hold[2i+1] NO of market
// i. belief is an informed trader's private signal.
type trader struct {
	kind   agent
	cash   int64
	hold   []int64
	belief []float64
}

func (t *trader) held(i int, s lmsr.Side) *int64 { return &t.hold[2*i+int(s)] }

// assignKinds gives count traders their kinds in the mix's proportions:
// floor(share·count) each, the rest to the largest remainders, ties to the
// earlier kind.
func assignKinds(m Mix, count int) []agent {
	shares := m.shares()
	var n [numAgents]int
	var rem [numAgents]float64
	left := count
	for k, s := range shares {
		x := s * float64(count)
		n[k] = int(math.Floor(x))
		rem[k] = x - float64(n[k])
		left -= n[k]
	}
	for ; left > 0; left-- {
		best := 0
		for k := range rem {
			if rem[k] > rem[best] {
				best = k
			}
		}
		n[best]++
		rem[best] = -1
	}
	kinds := make([]agent, 0, count)
	for k := range n {
		for range n[k] {
			kinds = append(kinds, agent(k))
		}
	}
	return kinds
}

// act lets trader k take its step.
func (w *world) act(k int) {
	t := &w.traders[k]
	switch t.kind {
	case informed:
		w.actInformed(k, t)
	case noise:
		w.actNoise(k, t)
	case momentum:
		w.actMomentum(k, t)
	case arbitrage:
		w.actArbitrage(k, t)
	}
}

// actInformed takes the trade with the largest edge against the trader's
// belief, fee included: a buy of YES (or NO) priced below the belief, or a
// sale of held shares priced above it. A buy is sized to bring the price
// to the belief by the LMSR formula at the market's current b, and capped
// by the budget and the cash; a sale likewise, capped by the holding.
func (w *world) actInformed(k int, t *trader) {
	m := w.cfg.Margin
	type choice struct {
		i    int
		s    lmsr.Side
		sell bool
		edge float64
	}
	best := choice{edge: 0}
	for i, p := range w.prices {
		bel := t.belief[i]
		sides := 1
		if w.d.HasNo() {
			sides = 2
		}
		for s := range sides {
			side := lmsr.Side(s)
			price, worth := p, bel
			if side == lmsr.No {
				price, worth = 1-p, 1-bel
			}
			if e := worth - price*(1+m); e > best.edge {
				best = choice{i, side, false, e}
			}
			if *t.held(i, side) > 0 {
				if e := price*(1-m) - worth; e > best.edge {
					best = choice{i, side, true, e}
				}
			}
		}
	}
	if best.edge == 0 {
		return
	}
	i, s := best.i, best.s
	price, worth := w.prices[i], t.belief[i]
	if s == lmsr.No {
		price, worth = 1-price, 1-worth
	}
	b := w.d.Liquidity(i)
	if best.sell {
		// Selling Δ shares takes the price from x down to y:
		// Δ = b·ln(x(1−y) / (y(1−x))); stop where the payout is the belief.
		y := worth / (1 - m)
		delta := b * math.Log(price*(1-y)/(y*(1-price)))
		shares := *t.held(i, s)
		switch {
		case math.IsNaN(delta): // a price at or past 1 on LS
			shares = 1
		case delta < float64(shares):
			shares = max(1, int64(delta))
		}
		w.sell(k, t, i, s, shares)
		return
	}
	// Buying up to price y costs b·ln((1−x)/(1−y)); stop where the price
	// with the fee is the belief.
	y := worth / (1 + m)
	cost := math.Ceil(b * math.Log((1-price)/(1-y)) * (1 + m))
	if !(cost >= 1) {
		return
	}
	budget := min(t.cash, w.cfg.Budget)
	if cost < float64(budget) {
		budget = int64(cost)
	}
	w.buy(k, t, i, s, budget)
}

// actNoise sells part of a random holding half the time it holds any, and
// otherwise buys a random side of a random market for a random budget.
func (w *world) actNoise(k int, t *trader) {
	if w.rng.IntN(2) == 0 {
		var n int
		for _, h := range t.hold {
			if h > 0 {
				n++
			}
		}
		if n > 0 {
			pick := w.rng.IntN(n)
			for j, h := range t.hold {
				if h > 0 {
					if pick == 0 {
						w.sell(k, t, j/2, lmsr.Side(j%2), 1+w.rng.Int64N(h))
						return
					}
					pick--
				}
			}
		}
	}
	i := w.rng.IntN(w.d.N())
	s := lmsr.Yes
	if w.d.HasNo() && w.rng.IntN(2) == 1 {
		s = lmsr.No
	}
	if c := min(t.cash, w.cfg.Budget); c > 0 {
		w.buy(k, t, i, s, 1+w.rng.Int64N(c))
	}
}

// actMomentum finds the market whose YES price moved most over the last
// Lookback steps and trades with the move, spending its whole budget: YES
// after a rise, NO after a fall (on LS, which has no NO, it sells half of
// its YES instead).
func (w *world) actMomentum(k int, t *trader) {
	now := len(w.path) - 1
	if now < w.cfg.Lookback {
		return
	}
	then := w.path[now-w.cfg.Lookback]
	best, move := -1, 0.0
	for i, p := range w.prices {
		if d := p - then[i]; math.Abs(d) > math.Abs(move) {
			best, move = i, d
		}
	}
	if best < 0 {
		return
	}
	budget := min(t.cash, w.cfg.Budget)
	switch {
	case move > 0:
		w.buy(k, t, best, lmsr.Yes, budget)
	case w.d.HasNo():
		w.buy(k, t, best, lmsr.No, budget)
	case *t.held(best, lmsr.Yes) > 1:
		w.sell(k, t, best, lmsr.Yes, *t.held(best, lmsr.Yes)/2)
	}
}

// actArbitrage, on the Binary design, buys the bundle with the largest
// sure profit: the same shares of YES on every market when the YES prices
// sum below 1, of NO when above, each leg within the budget and all of
// them within the cash. On a pool the prices sum to 1: nothing to do.
func (w *world) actArbitrage(k int, t *trader) {
	if w.d.Kind() != Binary {
		return
	}
	b, ok := bestBundle(w.d, w.prices, w.cfg.Margin, min(w.cfg.Budget, t.cash))
	if !ok || b.total > t.cash {
		return
	}
	for i, c := range b.legs {
		w.buy(k, t, i, b.side, c)
	}
}

// bundle is a buy of Shares shares of Side on every market.
type bundle struct {
	side   lmsr.Side
	shares int64
	profit int64   // sure payout less the legs' charges
	legs   []int64 // each leg's charge
	total  int64
}

// bestBundle returns the most profitable bundle whose legs each cost at
// most maxLeg, and false when none makes a sure profit. A YES bundle of k
// shares pays k whoever wins, a NO bundle (n−1)·k; the charges rise with
// k, so past the rounding of the first shares the profit's increments
// fall.
func bestBundle(d Design, prices []float64, margin float64, maxLeg int64) (bundle, bool) {
	n := d.N()
	sum := 0.0
	for _, p := range prices {
		sum += p
	}
	var side lmsr.Side
	var pays int64
	switch {
	case sum*(1+margin) < 1:
		side, pays = lmsr.Yes, 1
	case (float64(n)-sum)*(1+margin) < float64(n-1):
		side, pays = lmsr.No, int64(n-1)
	default:
		return bundle{}, false
	}
	eval := func(k int64) (bundle, bool) {
		b := bundle{side: side, shares: k, legs: make([]int64, n)}
		for i := range n {
			q, err := d.QuoteShares(i, side, k)
			if err != nil || q.Cash > maxLeg {
				return bundle{}, false
			}
			b.legs[i] = q.Cash
			b.total += q.Cash
		}
		b.profit = pays*k - b.total
		return b, true
	}
	// Rounding costs up to a kopeck a leg, which outweighs the gap for the
	// first shares; past that the profit is concave in k. So scan the
	// powers of two (until a leg is refused or past the budget, or the
	// profit has been positive and fallen for two doublings) for the best,
	// then bisect around it on the sign of the increment.
	var best bundle
	found := false
	bestK := int64(0)
	for k := int64(1); k <= lmsr.MaxQuantity; k *= 2 {
		b, ok := eval(k)
		if !ok {
			break
		}
		if !found || b.profit > best.profit {
			best, bestK, found = b, k, true
		} else if best.profit > 0 && k >= 4*bestK {
			break
		}
	}
	if !found {
		return bundle{}, false
	}
	lo, hi := max(1, bestK/2), bestK*2
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		b, ok := eval(mid)
		prev, okPrev := eval(mid - 1)
		if ok && okPrev && b.profit > prev.profit {
			lo = mid
			if b.profit > best.profit {
				best = b
			}
		} else {
			hi = mid
		}
	}
	if best.profit <= 0 {
		return bundle{}, false
	}
	return best, true
}

// buy executes a buy for budget if the maker accepts it.
func (w *world) buy(k int, t *trader, i int, s lmsr.Side, budget int64) {
	if budget < 1 || budget > t.cash {
		return
	}
	q, err := w.d.QuoteBuy(i, s, budget)
	if err != nil {
		w.refuse(err)
		return
	}
	t.cash -= q.Cash
	*t.held(i, s) += q.Shares
	w.execute(k, q)
}

// sell executes a sale of shares the trader holds.
func (w *world) sell(k int, t *trader, i int, s lmsr.Side, shares int64) {
	if shares < 1 || shares > *t.held(i, s) {
		return
	}
	q, err := w.d.QuoteSell(i, s, shares)
	if err != nil {
		w.refuse(err)
		return
	}
	t.cash += q.Cash
	*t.held(i, s) -= shares
	w.execute(k, q)
}

func (w *world) refuse(err error) {
	if errors.Is(err, lmsr.ErrPriceLimit) || errors.Is(err, lmsr.ErrTooSmall) {
		w.m.Refused++
		return
	}
	// Anything else is a bug in the simulator, not a market's refusal.
	w.err = errors.Join(w.err, err)
}

func (w *world) execute(k int, q Trade) {
	q.Step, q.Trader = len(w.path), k
	w.d.Apply(q)
	w.m.Trades++
	w.m.Volume += q.Cost
	if w.keep {
		w.trades = append(w.trades, q)
	}
}
