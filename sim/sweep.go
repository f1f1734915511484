package sim

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Sweep is a grid of configurations, each run Runs times.
type Sweep struct {
	Points  []Config // every point's Seed is ignored: see DeriveSeed
	Runs    int
	Seed    uint64
	Workers int // runs at once; 0 means runtime.GOMAXPROCS(0)
	// Common gives run r of every point the seed DeriveSeed(Seed, 0, r):
	// every point's run r then has the same truth and winner, and its
	// informed traders the same signals, so that designs are compared on
	// the same draws (common random numbers).
	Common bool
}

// Row is one run of a sweep.
type Row struct {
	Point, Run int
	Seed       uint64
	Truth      []float64
	Winner     int
	Final      []float64 // the YES prices after the last step
	Metrics    Metrics
}

// SweepResult holds a sweep's rows, point by point and within a point run
// by run: row p·Runs + r is run r of point p.
type SweepResult struct {
	Points []Config
	Runs   int
	Rows   []Row
}

// DeriveSeed returns the seed of run r of point p of a sweep seeded with
// base: a SplitMix64 hash of the three, so that neighbouring runs get
// unrelated streams and no run's seed depends on how the runs are spread
// over workers.
func DeriveSeed(base uint64, p, r int) uint64 {
	return splitmix(splitmix(base^splitmix(uint64(p)+1)) + uint64(r) + 1)
}

// seed is the seed of run r of point p.
func (s Sweep) seed(p, r int) uint64 {
	if s.Common {
		p = 0
	}
	return DeriveSeed(s.Seed, p, r)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Grid returns base at every combination of the given designs, margins,
// liquidities and informed shares (the other traders keep base's
// proportions, see Mix.WithInformed), designs varying slowest. An empty
// list keeps base's value.
func Grid(base Config, designs []Kind, margins []float64, bs []int64, informed []float64) []Config {
	if len(designs) == 0 {
		designs = []Kind{base.Design}
	}
	if len(margins) == 0 {
		margins = []float64{base.Margin}
	}
	if len(bs) == 0 {
		bs = []int64{base.B}
	}
	if len(informed) == 0 {
		informed = []float64{base.Mix.Informed}
	}
	var out []Config
	for _, d := range designs {
		for _, m := range margins {
			for _, b := range bs {
				for _, s := range informed {
					c := base
					c.Design, c.Margin, c.B, c.Mix = d, m, b, base.Mix.WithInformed(s)
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// Run runs every point Runs times on Workers goroutines. The result is the
// same for any number of workers. It stops at the first error, or when ctx
// is done, and returns that error.
func (s Sweep) Run(ctx context.Context) (*SweepResult, error) {
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("%w: a sweep of no points", ErrConfig)
	}
	if s.Runs < 1 {
		return nil, fmt.Errorf("%w: %d runs per point, want at least 1", ErrConfig, s.Runs)
	}
	for i, c := range s.Points {
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("point %d: %w", i, err)
		}
		if c.Outcomes != s.Points[0].Outcomes {
			return nil, fmt.Errorf("%w: point %d has %d outcomes, point 0 %d; a sweep's points share the number of outcomes", ErrConfig, i, c.Outcomes, s.Points[0].Outcomes)
		}
	}
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	res := &SweepResult{Points: s.Points, Runs: s.Runs, Rows: make([]Row, len(s.Points)*s.Runs)}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				p, r := j/s.Runs, j%s.Runs
				c := s.Points[p]
				c.Seed = s.seed(p, r)
				out, err := run(c, false)
				if err != nil {
					cancel(fmt.Errorf("point %d run %d: %w", p, r, err))
					continue
				}
				final := out.Prices[len(out.Prices)-1]
				res.Rows[j] = Row{Point: p, Run: r, Seed: c.Seed, Truth: out.Truth, Winner: out.Winner, Final: final, Metrics: out.Metrics}
			}
		}()
	}
feed:
	for j := range res.Rows {
		select {
		case jobs <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// Metric is a metric's column name and how to read it from Metrics.
type Metric struct {
	Name string
	Of   func(Metrics) float64
}

// MetricList lists every metric of a run in the order of the CSV columns.
// steps_to_eps is NaN for a run that never came within ε.
var MetricList = []Metric{
	{"trades", func(m Metrics) float64 { return float64(m.Trades) }},
	{"refused", func(m Metrics) float64 { return float64(m.Refused) }},
	{"volume", func(m Metrics) float64 { return float64(m.Volume) }},
	{"subsidy", func(m Metrics) float64 { return float64(m.Subsidy) }},
	{"collected", func(m Metrics) float64 { return float64(m.Collected) }},
	{"fees", func(m Metrics) float64 { return float64(m.Fees) }},
	{"mm_pnl", func(m Metrics) float64 { return float64(m.PnL) }},
	{"mm_worst_pnl", func(m Metrics) float64 { return float64(m.WorstPnL) }},
	{"brier_final", func(m Metrics) float64 { return m.BrierFinal }},
	{"brier_avg", func(m Metrics) float64 { return m.BrierAvg }},
	{"log_final", func(m Metrics) float64 { return m.LogFinal }},
	{"log_avg", func(m Metrics) float64 { return m.LogAvg }},
	{"mae_final", func(m Metrics) float64 { return m.MAEFinal }},
	{"rmse_final", func(m Metrics) float64 { return m.RMSEFinal }},
	{"mae_avg", func(m Metrics) float64 { return m.MAEAvg }},
	{"rmse_avg", func(m Metrics) float64 { return m.RMSEAvg }},
	{"steps_to_eps", func(m Metrics) float64 {
		if m.StepsToEps == Never {
			return math.NaN()
		}
		return float64(m.StepsToEps)
	}},
	{"arbitrage_left", func(m Metrics) float64 { return float64(m.ArbitrageLeft) }},
	{"price_sum", func(m Metrics) float64 { return m.PriceSum }},
}

// Values returns the named metric of every run of point p, run by run (NaN
// for steps_to_eps of a run that never came within ε), or nil for an
// unknown name.
func (r *SweepResult) Values(p int, name string) []float64 {
	for _, m := range MetricList {
		if m.Name == name {
			out := make([]float64, r.Runs)
			for i := range out {
				out[i] = m.Of(r.Rows[p*r.Runs+i].Metrics)
			}
			return out
		}
	}
	return nil
}

// Summary is one point's metrics over its runs: Stats[i] is the mean and
// 95% interval of MetricList[i] (steps_to_eps over the runs that came
// within ε; Reached is their share).
type Summary struct {
	Point   int
	Config  Config
	Runs    int
	Stats   []Interval
	Reached float64
}

// Summaries returns the summary of every point.
func (r *SweepResult) Summaries() []Summary {
	out := make([]Summary, len(r.Points))
	for p, c := range r.Points {
		s := Summary{Point: p, Config: c, Runs: r.Runs}
		for _, m := range MetricList {
			s.Stats = append(s.Stats, MeanCI(r.Values(p, m.Name)))
		}
		reached := 0
		for i := range r.Runs {
			if r.Rows[p*r.Runs+i].Metrics.StepsToEps != Never {
				reached++
			}
		}
		s.Reached = float64(reached) / float64(r.Runs)
		out[p] = s
	}
	return out
}

// Stat returns the summary of the named metric of MetricList, and false
// for an unknown name.
func (s Summary) Stat(name string) (Interval, bool) {
	for i, m := range MetricList {
		if m.Name == name {
			return s.Stats[i], true
		}
	}
	return Interval{}, false
}
