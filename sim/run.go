package sim

import (
	"errors"
	"math"
	"math/rand/v2"

	"github.com/predictkit/predictkit/lmsr"
)

// Result is one run: the truth, the winner drawn from it, the price path
// and the trades, and the metrics.
type Result struct {
	Config Config
	Truth  []float64 // the true probability of each outcome
	Winner int       // the outcome that won, drawn from Truth
	// Prices is [step][outcome] the YES prices, step 0 being the opening
	// and step s the state after the s-th step's trades.
	Prices [][]float64
	// PnL is [step][outcome] the maker's profit, kopecks, if that outcome
	// won at that step: Collected − Payout.
	PnL    [][]int64
	Trades []Trade
	// Cash is each trader's cash at the end, before the payout; Paid what
	// each trader's shares pay when Winner wins.
	Cash, Paid []int64
	Metrics    Metrics
}

// seedStream is the second word of the PCG state; the first is the seed.
const seedStream = 0x5eed_0f_1a5b

// world is the state of one run.
type world struct {
	cfg     Config
	rng     *rand.Rand
	d       Design
	traders []trader
	prices  []float64   // now
	path    [][]float64 // every step so far
	keep    bool        // record trades and the P&L path
	trades  []Trade
	m       Metrics
	err     error
}

// Run simulates one market as c says. The same c gives the same Result.
func Run(c Config) (*Result, error) {
	return run(c, true)
}

func run(c Config, keep bool) (*Result, error) {
	d, err := NewDesign(c)
	if err != nil {
		return nil, err
	}
	n := c.Outcomes
	rng := rand.New(rand.NewPCG(c.Seed, seedStream))
	res := &Result{Config: c, Truth: make([]float64, n)}
	DrawTruth(rng, c.Truth, res.Truth)
	res.Winner = DrawIndex(rng, res.Truth)

	w := &world{cfg: c, rng: rng, d: d, keep: keep, path: make([][]float64, 0, c.Steps+1)}
	for _, kind := range assignKinds(c.Mix, c.Traders) {
		t := trader{kind: kind, cash: c.Cash, hold: make([]int64, 2*n)}
		if kind == informed {
			t.belief = make([]float64, n)
			DrawSignal(rng, res.Truth, c.Noise, t.belief)
		}
		w.traders = append(w.traders, t)
	}
	pnl := func() []int64 {
		row := make([]int64, n)
		for i := range row {
			row[i] = d.Collected() - d.Payout(i)
		}
		return row
	}
	w.snapshot()
	if w.err != nil {
		return nil, w.err
	}
	if keep {
		res.PnL = append(res.PnL, pnl())
	}
	for range c.Steps {
		w.act(rng.IntN(len(w.traders)))
		w.snapshot()
		if w.err != nil {
			return nil, w.err
		}
		if keep {
			res.PnL = append(res.PnL, pnl())
		}
	}
	res.Prices, res.Trades = w.path, w.trades
	for _, t := range w.traders {
		res.Cash = append(res.Cash, t.cash)
		paid := int64(0)
		for i := range n {
			if i == res.Winner {
				paid += *t.held(i, lmsr.Yes)
			} else {
				paid += *t.held(i, lmsr.No)
			}
		}
		res.Paid = append(res.Paid, paid)
	}
	res.Metrics = w.metrics(res)
	return res, nil
}

// snapshot records the prices after a step.
func (w *world) snapshot() {
	p := make([]float64, w.d.N())
	if err := w.d.PricesInto(p); err != nil {
		w.err = errors.Join(w.err, err)
	}
	w.prices = p
	w.path = append(w.path, p)
}

func (w *world) metrics(res *Result) Metrics {
	m := w.m
	d := w.d
	m.Subsidy, m.Collected, m.Fees = d.Subsidy(), d.Collected(), d.Fees()
	m.PnL = d.Collected() - d.Payout(res.Winner)
	m.WorstPnL = math.MaxInt64
	for i := range d.N() {
		m.WorstPnL = min(m.WorstPnL, d.Collected()-d.Payout(i))
	}
	final := w.prices
	avg := make([]float64, len(final))
	for _, p := range w.path {
		for i, x := range p {
			avg[i] += x
		}
	}
	for i := range avg {
		avg[i] /= float64(len(w.path))
	}
	m.BrierFinal, m.BrierAvg = Brier(final, res.Winner), Brier(avg, res.Winner)
	m.LogFinal, m.LogAvg = LogScore(final, res.Winner), LogScore(avg, res.Winner)
	m.MAEFinal, m.RMSEFinal = PriceError(final, res.Truth)
	m.MAEAvg, m.RMSEAvg = PriceError(avg, res.Truth)
	m.StepsToEps = StepsToWithin(w.path, res.Truth, w.cfg.Epsilon)
	for _, p := range final {
		m.PriceSum += p
	}
	if d.Kind() == Binary {
		b, ok := bestBundle(d, final, w.cfg.Margin, lmsr.MaxQuantity)
		if ok {
			m.ArbitrageLeft = b.profit
		}
	}
	return m
}

// DrawTruth fills dst with fixed, or else a draw from the flat Dirichlet
// (normalised exponentials), kept 1e-3 away from 0 before normalising so
// that prices can reach it. Run draws every truth with it; an experiment
// of one's own (examples/simulate -split) draws the same way.
func DrawTruth(rng *rand.Rand, fixed, dst []float64) {
	if fixed != nil {
		copy(dst, fixed)
		return
	}
	sum := 0.0
	for i := range dst {
		dst[i] = rng.ExpFloat64() + 1e-3
		sum += dst[i]
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// DrawSignal fills dst with an informed trader's private signal: the log of
// the truth plus Gaussian noise of standard deviation sd, renormalised.
func DrawSignal(rng *rand.Rand, truth []float64, sd float64, dst []float64) {
	mx := math.Inf(-1)
	for i, p := range truth {
		dst[i] = math.Log(p) + sd*rng.NormFloat64()
		mx = max(mx, dst[i])
	}
	sum := 0.0
	for i := range dst {
		dst[i] = math.Exp(dst[i] - mx)
		sum += dst[i]
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// DrawIndex draws an index with probabilities p, such as the winner from
// the truth.
func DrawIndex(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	for i, x := range p {
		if u < x {
			return i
		}
		u -= x
	}
	return len(p) - 1
}
