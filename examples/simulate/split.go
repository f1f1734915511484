package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/sim"
)

// splitHeader is the CSV header of -split: one row per run, step and
// outcome listed at that step (the new answer only from the split on).
var splitHeader = []string{"run", "step", "outcome", "truth", "q", "q0", "price", "claim", "escrow"}

// pool is one exclusive pool over n outcomes, traded in integer shares
// and kopecks through the lmsr kopeck functions, without a fee.
type pool struct {
	p         lmsr.Exclusive
	q0        []int64 // the opening quantities
	collected int64   // the costs taken, kopecks
}

// newPool opens a pool of n outcomes at 1/n each and returns it with its
// subsidy.
func newPool(b int64, n int) (*pool, int64, error) {
	uniform := make([]float64, n)
	for i := range uniform {
		uniform[i] = 1 / float64(n)
	}
	p, err := lmsr.NewExclusive(b, uniform)
	if err != nil {
		return nil, 0, err
	}
	sub, err := p.SubsidyKopecks()
	return &pool{p: p, q0: slices.Clone(p.Q)}, sub, err
}

func (v *pool) buy(i int, s lmsr.Side, shares int64) (lmsr.Buy, error) {
	return v.p.BuyShares(i, s, shares, 0)
}

func (v *pool) buyForSpend(i int, s lmsr.Side, budget int64) (lmsr.Buy, error) {
	return v.p.BuyForSpend(i, s, budget, 0)
}

func (v *pool) apply(i int, s lmsr.Side, b lmsr.Buy) {
	v.p = v.p.With(i, s, b.Shares)
	v.collected += b.Cost
}

// payout returns what the pool owes if outcome k wins.
func (v *pool) payout(k int) int64 { return v.p.Q[k] - v.q0[k] }

// venue is what a trader of tradeVenue trades on.
type venue interface {
	// buy prices a buy of shares of side s of market i; it does not trade.
	buy(i int, s lmsr.Side, shares int64) (lmsr.Buy, error)
	// buyForSpend prices the most shares a budget buys; it does not trade.
	buyForSpend(i int, s lmsr.Side, budget int64) (lmsr.Buy, error)
	// apply executes a priced buy.
	apply(i int, s lmsr.Side, b lmsr.Buy)
}

// tradeVenue lets a trader with belief bel take the market with the
// largest gap |bel_i − p_i| between belief and YES price: YES when the
// price is below the belief, NO when above. It buys the shares that bring
// that price to the belief with the market's other quantities fixed,
// Δ = b·|logit bel_i − logit p_i| (exact for a pool's market, whose
// log-odds are (q_i − q_no)/b), but spends at most budget. It reports
// whether it traded.
func tradeVenue(v venue, b float64, prices, bel []float64, budget int64) bool {
	best, gap := -1, 0.0
	for i, p := range prices {
		if g := math.Abs(bel[i] - p); g > gap {
			best, gap = i, g
		}
	}
	if best < 0 {
		return false
	}
	p, t := prices[best], bel[best]
	s := lmsr.Yes
	if t < p {
		s = lmsr.No
	}
	shares := int64(math.Floor(b * math.Abs(logit(t)-logit(p))))
	if shares < 1 {
		return false
	}
	buy, err := v.buy(best, s, shares)
	if err == nil && buy.Charge > budget {
		buy, err = v.buyForSpend(best, s, budget)
	}
	if err != nil {
		// Past the price limit, or the budget buys no share.
		return false
	}
	v.apply(best, s, buy)
	return true
}

func logit(p float64) float64 { return math.Log(p) - math.Log1p(-p) }

// recorder is the pool as one trader sees it: their buys are recorded as
// holdings.
type recorder struct {
	*pool
	holdings *[]lmsr.Holding
}

func (v recorder) apply(i int, s lmsr.Side, b lmsr.Buy) {
	v.pool.apply(i, s, b)
	*v.holdings = append(*v.holdings, lmsr.Holding{Market: i, Side: s, Shares: b.Shares})
}

// splitResult is what the summary of -split needs.
type splitResult struct {
	topUp       []float64 // kopecks added to the escrow by the split, per run
	pnl         []float64 // the maker's costs collected less the winner's payout, per run
	maxCostDrop float64   // the largest C(q) − C(q') of a split
	maxPriceMov float64   // the largest move of another market's price at a split
	checked     int       // traders' payouts compared, outcome by outcome
	rows        int
}

// simulateSplit runs a pool of cfg.outcomes markets, the last one Other,
// against traders whose beliefs cover one more outcome, hidden in Other,
// until the step cfg.splitAt, where that outcome is added as a market
// taking cfg.splitShare of Other's price (lmsr.SplitOther). Each trader's
// holdings are mapped, and at the end every trader's payout in every
// outcome is compared with what their holdings would have paid without the
// split; so is every outcome's claim with the escrow.
func simulateSplit(cfg config, w io.Writer) (splitResult, error) {
	rng := rand.New(rand.NewPCG(cfg.seed, 0x5eed_0f_1a5b))
	n := cfg.outcomes // markets before the split; n−1 is Other, n the new answer
	other := n - 1
	b, budget := int64(cfg.b), int64(cfg.budget)
	var res splitResult

	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csv.NewWriter(bw)
	if err := cw.Write(splitHeader); err != nil {
		return res, err
	}
	fmtF := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	fmtI := func(x int64) string { return strconv.FormatInt(x, 10) }

	truth := make([]float64, n+1)
	beliefs := make([][]float64, cfg.traders)
	for k := range beliefs {
		beliefs[k] = make([]float64, n+1)
	}
	record := make([]string, len(splitHeader))
	for r := range cfg.runs {
		sim.DrawTruth(rng, cfg.truth, truth)
		for _, bel := range beliefs {
			sim.DrawSignal(rng, truth, cfg.noise, bel)
		}
		pl, subsidy, err := newPool(b, n)
		if err != nil {
			return res, err
		}
		// before: each trader's holdings bought before the split, as
		// bought; holdings: what they hold in the pool now (mapped at
		// the split, then added to).
		before := make([][]lmsr.Holding, cfg.traders)
		holdings := make([][]lmsr.Holding, cfg.traders)
		var split *lmsr.Split
		var topUp int64
		listed := n
		prices, bel := make([]float64, n+1), make([]float64, n+1)
		for step := 0; step <= cfg.trades; step++ {
			if step == cfg.splitAt && step > 0 {
				for t := range holdings {
					before[t] = slices.Clone(holdings[t])
				}
				s, err := splitPool(pl, holdings, other, cfg.splitShare)
				if err != nil {
					return res, fmt.Errorf("run %d, step %d: %w", r, step, err)
				}
				res.maxCostDrop = max(res.maxCostDrop, s.costDrop)
				res.maxPriceMov = max(res.maxPriceMov, s.priceMove)
				split, listed = &s.Split, n+1
				topUp = split.TopUp(subsidy + pl.collected)
			}
			if step > 0 {
				t := rng.IntN(cfg.traders)
				copy(bel, beliefs[t][:listed])
				if listed == n {
					bel[other] += beliefs[t][n] // the new answer is part of Other
				}
				_ = pl.p.PricesInto(prices)
				tradeVenue(recorder{pl, &holdings[t]}, cfg.b, prices[:listed], bel[:listed], budget)
			}
			_ = pl.p.PricesInto(prices)
			claims, err := lmsr.Claims(listed, slices.Concat(holdings...))
			if err != nil {
				return res, err
			}
			escrow := subsidy + pl.collected + topUp
			record[0], record[1] = strconv.Itoa(r), strconv.Itoa(step)
			for i := range listed {
				tr := truth[i]
				if i == other && listed == n {
					tr += truth[n]
				}
				if claims[i] != pl.payout(i) {
					return res, fmt.Errorf("run %d, step %d: outcome %d: the holdings claim %d, q − q0 = %d", r, step, i, claims[i], pl.payout(i))
				}
				if claims[i] > escrow {
					return res, fmt.Errorf("run %d, step %d: outcome %d claims %d, the escrow holds %d", r, step, i, claims[i], escrow)
				}
				record[2], record[3] = strconv.Itoa(i), fmtF(tr)
				record[4], record[5], record[6] = fmtI(pl.p.Q[i]), fmtI(pl.q0[i]), fmtF(prices[i])
				record[7], record[8] = fmtI(claims[i]), fmtI(escrow)
				if err := cw.Write(record); err != nil {
					return res, err
				}
				res.rows++
			}
		}
		if split == nil {
			return res, fmt.Errorf("-split-at %d: no split in %d trades", cfg.splitAt, cfg.trades)
		}
		// Every trader is paid, in every outcome, what they would have
		// been paid without the split: their holdings before it in the
		// outcome that contained this one, plus what they bought since.
		for t := range holdings {
			since := holdings[t][len(mapHoldings(split, before[t])):]
			for k := range n + 1 {
				var paid, would int64
				for _, h := range holdings[t] {
					paid += h.Payout(k)
				}
				for _, h := range before[t] {
					would += h.Payout(split.From[k])
				}
				for _, h := range since {
					would += h.Payout(k)
				}
				if paid != would {
					return res, fmt.Errorf("run %d: trader %d is paid %d if outcome %d wins, would have been paid %d", r, t, paid, k, would)
				}
				res.checked++
			}
		}
		winner := sim.DrawIndex(rng, truth)
		res.topUp = append(res.topUp, float64(topUp))
		res.pnl = append(res.pnl, float64(pl.collected-pl.payout(winner)))
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return res, err
	}
	return res, bw.Flush()
}

// splitDone is a split with what it moved.
type splitDone struct {
	lmsr.Split
	costDrop  float64 // C(q) − C(q')
	priceMove float64 // the largest move of a price other than Other's
}

// splitPool adds the new answer to pl at share of Other's price and maps
// every trader's holdings in place.
func splitPool(pl *pool, holdings [][]lmsr.Holding, other int, share float64) (splitDone, error) {
	claims, err := lmsr.Claims(pl.p.N(), slices.Concat(holdings...))
	if err != nil {
		return splitDone{}, err
	}
	s, err := lmsr.SplitOther(pl.p, claims, other, share*pl.p.Price(other))
	if err != nil {
		return splitDone{}, err
	}
	d := splitDone{Split: s, costDrop: pl.p.Market().Cost() - s.Pool.Market().Cost()}
	was, now := pl.p.Prices(), s.Pool.Prices()
	for j := range was {
		if j != other {
			d.priceMove = max(d.priceMove, math.Abs(now[j]-was[j]))
		}
	}
	for t := range holdings {
		holdings[t] = mapHoldings(&s, holdings[t])
	}
	pl.p, pl.q0 = s.Pool, s.Q0
	return d, nil
}

// mapHoldings returns the holdings hs become at the split s.
func mapHoldings(s *lmsr.Split, hs []lmsr.Holding) []lmsr.Holding {
	var out []lmsr.Holding
	for _, h := range hs {
		m, err := s.MapHolding(h)
		if err != nil {
			panic(err) // hs are holdings of the pool before s
		}
		out = append(out, m...)
	}
	return out
}

// runSplit is run for -split: simulate, close the CSV and summarise.
func runSplit(cfg config, csvOut io.Writer, file *os.File, stdout io.Writer) error {
	res, err := simulateSplit(cfg, csvOut)
	if err != nil {
		return err
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return err
		}
	}
	topUp, _ := meanSD(res.topUp)
	pnl, sd := meanSD(res.pnl)
	half := 1.96 * sd / math.Sqrt(float64(len(res.pnl)))
	var b strings.Builder
	fmt.Fprintf(&b, "answer added later: %d runs × %d trades, %d markets (the last one Other), b = %g, %d traders, seed %d\n",
		cfg.runs, cfg.trades, cfg.outcomes, cfg.b, cfg.traders, cfg.seed)
	fmt.Fprintf(&b, "at step %d a new answer takes %g of Other's price\n", cfg.splitAt, cfg.splitShare)
	fmt.Fprintf(&b, "  C(q) − C(q') at most %.4f kopecks; other prices moved by at most %.2g\n", res.maxCostDrop, res.maxPriceMov)
	fmt.Fprintf(&b, "  escrow top-up for the new worst case: %.0f kopecks on average\n", topUp)
	fmt.Fprintf(&b, "every trader's payout, in each of the %d outcomes, is what it would have been without the split: %d checked, all equal\n",
		cfg.outcomes+1, res.checked)
	fmt.Fprintf(&b, "every outcome's claims within the escrow at every step\n")
	fmt.Fprintf(&b, "market-maker P&L at resolution: mean %.2f kopecks, 95%% interval of the mean [%.2f, %.2f]\n", pnl, pnl-half, pnl+half)
	b.WriteString(cfg.wrote(res.rows))
	_, err = io.WriteString(stdout, b.String())
	return err
}
