package sim

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/predictkit/predictkit/lmsr"
)

// MaxMargin is the largest fee a pool may charge on the platform
// (market.MaxMargin); Config refuses larger ones.
const MaxMargin = 0.2

// ErrConfig is wrapped by every error Config.Validate returns.
var ErrConfig = errors.New("sim: invalid config")

// Kind names a market design.
type Kind string

// The market designs; see Design.
const (
	// Binary is N independent binary LMSR markets, one per outcome, each
	// of liquidity B and opened at 1/N.
	Binary Kind = "binary"
	// Pool is one exclusive pool of N markets: one N-outcome LMSR of
	// liquidity B opened at 1/N each.
	Pool Kind = "pool"
	// LS is the liquidity-sensitive LMSR with α from LSCommission,
	// opened where its liquidity α·Σq is B.
	LS Kind = "ls"
)

// Kinds lists the designs in the order sweeps and summaries use.
var Kinds = []Kind{Binary, Pool, LS}

// Mix is the share of each kind of trader; the shares are non-negative and
// sum to 1.
type Mix struct {
	Informed  float64 // trade on a private noisy signal of the truth
	Noise     float64 // trade at random
	Momentum  float64 // follow the recent price move
	Arbitrage float64 // lock in the gap when the binary markets' YES prices do not sum to 1
}

func (m Mix) shares() [numAgents]float64 {
	return [numAgents]float64{m.Informed, m.Noise, m.Momentum, m.Arbitrage}
}

// WithInformed returns m with the informed share set to s and the other
// shares scaled so that they keep their proportions and the mix still sums
// to 1; when m has no other trader, the rest are noise traders.
func (m Mix) WithInformed(s float64) Mix {
	rest := m.Noise + m.Momentum + m.Arbitrage
	if rest == 0 {
		return Mix{Informed: s, Noise: 1 - s}
	}
	k := (1 - s) / rest
	// Rounded to 12 places so that 0.28 does not print as
	// 0.27999999999999997 in the CSVs; the sum stays within 1e-11 of 1.
	r := func(x float64) float64 { return math.Round(x*1e12) / 1e12 }
	return Mix{Informed: s, Noise: r(m.Noise * k), Momentum: r(m.Momentum * k), Arbitrage: r(m.Arbitrage * k)}
}

// Config is one simulated market and its traders. Start from
// DefaultConfig and change what the study varies: Validate refuses a zero
// Design, Outcomes, B, Traders, Cash, Budget, Steps, Lookback or Epsilon,
// a zero Mix, and a zero LSCommission on LS.
type Config struct {
	Design   Kind
	Outcomes int     // N ≥ 2
	B        int64   // liquidity in kopecks (one share pays 1 kopeck)
	Margin   float64 // the platform's fee, 0 to MaxMargin, as a pool's margin
	// LSCommission is the most the LS prices may sum above 1, v in
	// α = v/(N·ln N); only the LS design reads it.
	LSCommission float64

	Mix      Mix
	Traders  int     // how many traders; each trader's kind follows Mix
	Cash     int64   // each trader's opening cash, kopecks
	Budget   int64   // the most a trader spends on one buy, kopecks
	Steps    int     // trades attempted per run (one trader per step)
	Noise    float64 // standard deviation of the informed traders' signals, in log-odds
	Lookback int     // steps a momentum trader looks back
	Epsilon  float64 // the distance to the truth TimeToEpsilon measures

	// Truth, when set, is the true distribution of every run; otherwise
	// each run draws one from the flat Dirichlet.
	Truth []float64
	Seed  uint64
}

// DefaultConfig returns a Binary market of 5 outcomes with b = 1000, a 2%
// fee, and 50 traders (70% informed, 20% noise, 10% momentum) taking 500
// steps.
func DefaultConfig() Config {
	return Config{
		Design: Binary, Outcomes: 5, B: 1000, Margin: 0.02, LSCommission: 0.05,
		Mix:     Mix{Informed: 0.7, Noise: 0.2, Momentum: 0.1},
		Traders: 50, Cash: 100_000, Budget: 500, Steps: 500,
		Noise: 0.5, Lookback: 10, Epsilon: 0.05, Seed: 1,
	}
}

// Validate reports the first thing wrong with c, as an error wrapping
// ErrConfig that names the field.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch c.Design {
	case Binary, Pool, LS:
	default:
		return bad("design %q, want one of %s", c.Design, kindList())
	}
	switch {
	case c.Outcomes < 2:
		return bad("%d outcomes, want at least 2", c.Outcomes)
	case c.B <= 0 || c.B > lmsr.MaxQuantity:
		return bad("b = %d, want 0 < b <= 2^53", c.B)
	case !(c.Margin >= 0 && c.Margin <= MaxMargin):
		return bad("margin %v, want 0 to %v", c.Margin, MaxMargin)
	case c.Design == LS && !(c.LSCommission > 0 && c.LSCommission < 1):
		return bad("LS commission %v, want (0, 1)", c.LSCommission)
	case c.Traders < 1:
		return bad("%d traders, want at least 1", c.Traders)
	case c.Cash < 1 || c.Cash > lmsr.MaxQuantity:
		return bad("cash %d, want 1 to 2^53 kopecks", c.Cash)
	case c.Budget < 1 || c.Budget > lmsr.MaxQuantity:
		return bad("budget %d, want 1 to 2^53 kopecks", c.Budget)
	case c.Steps < 1:
		return bad("%d steps, want at least 1", c.Steps)
	case !(c.Noise >= 0) || !finite(c.Noise):
		return bad("signal noise %v, want finite and >= 0", c.Noise)
	case c.Lookback < 1:
		return bad("lookback %d, want at least 1", c.Lookback)
	case !(c.Epsilon > 0 && c.Epsilon < 1):
		return bad("epsilon %v, want (0, 1)", c.Epsilon)
	}
	sum := 0.0
	for i, s := range c.Mix.shares() {
		if !(s >= 0) || !finite(s) {
			return bad("mix: %s share %v, want >= 0", agentNames[i], s)
		}
		sum += s
	}
	if math.Abs(sum-1) > 1e-9 {
		return bad("mix shares sum to %v, want 1", sum)
	}
	if c.Truth != nil {
		if len(c.Truth) != c.Outcomes {
			return bad("truth has %d probabilities for %d outcomes", len(c.Truth), c.Outcomes)
		}
		sum := 0.0
		for i, p := range c.Truth {
			if !(p > 0 && p < 1) {
				return bad("truth[%d] = %v, want (0, 1)", i, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			return bad("truth sums to %v, want 1", sum)
		}
	}
	return nil
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
