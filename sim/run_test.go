package sim_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func mixed(design sim.Kind, seed uint64) sim.Config {
	c := sim.DefaultConfig()
	c.Design, c.Seed = design, seed
	c.Mix = sim.Mix{Informed: 0.5, Noise: 0.2, Momentum: 0.15, Arbitrage: 0.15}
	c.Traders, c.Cash, c.Steps = 20, 5_000, 300
	return c
}

func TestRunIsDeterministic(t *testing.T) {
	for _, k := range sim.Kinds {
		t.Run("the same "+string(k)+" config gives the same result", func(t *testing.T) {
			a, err := sim.Run(mixed(k, 7))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := sim.Run(mixed(k, 7))
			if !reflect.DeepEqual(a, b) {
				t.Fatal("two runs of one config differ")
			}
			c, _ := sim.Run(mixed(k, 8))
			if reflect.DeepEqual(a.Prices, c.Prices) {
				t.Fatal("seeds 7 and 8 gave the same prices")
			}
		})
	}
}

// TestMoneyIsConserved checks every run's books: the traders' cash, the
// maker's money and the fees always add up to the traders' opening cash
// plus the subsidy; the traders' shares pay what the maker owes; no trader
// goes below zero cash or sells shares they do not hold; and the maker
// never owes more than the subsidy covers.
func TestMoneyIsConserved(t *testing.T) {
	for _, k := range sim.Kinds {
		for seed := uint64(1); seed <= 5; seed++ {
			c := mixed(k, seed)
			c.Margin = []float64{0, 0.02, 0.2}[seed%3]
			t.Run(string(k)+" books balance", func(t *testing.T) {
				res, err := sim.Run(c)
				if err != nil {
					t.Fatal(err)
				}
				m := res.Metrics
				var cash, paid int64
				for i := range res.Cash {
					if res.Cash[i] < 0 || res.Paid[i] < 0 {
						t.Fatalf("trader %d: cash %d, paid %d", i, res.Cash[i], res.Paid[i])
					}
					cash += res.Cash[i]
					paid += res.Paid[i]
				}
				if got, want := cash+m.Collected+m.Fees, int64(c.Traders)*c.Cash; got != want {
					t.Fatalf("cash %d + collected %d + fees %d = %d, want the opening %d", cash, m.Collected, m.Fees, got, want)
				}
				if paid != m.Collected-m.PnL {
					t.Fatalf("the traders' shares pay %d, the maker owes %d", paid, m.Collected-m.PnL)
				}
				// Replay the trades: cash and holdings never go negative,
				// and every trade's cash is its cost and fee.
				type key struct {
					k, i int
					s    lmsr.Side
				}
				hold := map[key]int64{}
				have := make([]int64, c.Traders)
				for i := range have {
					have[i] = c.Cash
				}
				for _, tr := range res.Trades {
					h := key{tr.Trader, tr.Outcome, tr.Side}
					if tr.Sell {
						if tr.Cash != tr.Cost-tr.Fee || hold[h] < tr.Shares {
							t.Fatalf("sale %+v of a holding of %d", tr, hold[h])
						}
						hold[h] -= tr.Shares
						have[tr.Trader] += tr.Cash
					} else {
						if tr.Cash != tr.Cost+tr.Fee || tr.Cash > tr.Budget || tr.Cost < 1 {
							t.Fatalf("buy %+v", tr)
						}
						hold[h] += tr.Shares
						have[tr.Trader] -= tr.Cash
					}
					if have[tr.Trader] < 0 {
						t.Fatalf("trader %d's cash went to %d", tr.Trader, have[tr.Trader])
					}
				}
				if !reflect.DeepEqual(have, res.Cash) {
					t.Fatalf("replayed cash %v, result %v", have, res.Cash)
				}
				for step, row := range res.PnL {
					for w, p := range row {
						if p < -m.Subsidy {
							t.Fatalf("step %d: the maker would lose %d if %d won, past the subsidy %d", step, -p, w, m.Subsidy)
						}
					}
				}
			})
		}
	}
}

// TestInformedTradersFindTheTruth: with only informed traders of small
// noise, the final prices of every design end near a fixed truth.
func TestInformedTradersFindTheTruth(t *testing.T) {
	for _, k := range sim.Kinds {
		t.Run(string(k)+" prices end within 0.06 of the truth on average", func(t *testing.T) {
			c := sim.DefaultConfig()
			c.Design, c.Outcomes, c.B, c.Margin = k, 3, 2000, 0.01
			c.Mix = sim.Mix{Informed: 1}
			c.Noise, c.Steps, c.Traders = 0.1, 1500, 40
			c.Truth = []float64{0.6, 0.3, 0.1}
			res, err := sim.Run(c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Metrics.MAEFinal > 0.06 {
				t.Fatalf("final prices %v, truth %v: MAE %v", res.Prices[len(res.Prices)-1], c.Truth, res.Metrics.MAEFinal)
			}
			first, _ := sim.PriceError(res.Prices[0], c.Truth)
			if res.Metrics.MAEFinal >= first {
				t.Fatalf("the error grew from %v to %v", first, res.Metrics.MAEFinal)
			}
		})
	}
}

// TestArbitrageursPullBinaryPricesTogether: on n binary markets the YES
// prices sum away from 1; arbitrageurs bring the sum closer and leave less
// arbitrage.
func TestArbitrageursPullBinaryPricesTogether(t *testing.T) {
	gap := func(mix sim.Mix) (float64, float64) {
		var g, left float64
		for seed := uint64(1); seed <= 20; seed++ {
			c := sim.DefaultConfig()
			c.Seed, c.Mix, c.Margin, c.B = seed, mix, 0.01, 10_000
			res, err := sim.Run(c)
			if err != nil {
				t.Fatal(err)
			}
			g += math.Abs(res.Metrics.PriceSum - 1)
			left += float64(res.Metrics.ArbitrageLeft)
		}
		return g / 20, left / 20
	}
	g0, l0 := gap(sim.Mix{Informed: 0.7, Noise: 0.3})
	g1, l1 := gap(sim.Mix{Informed: 0.5, Noise: 0.2, Arbitrage: 0.3})
	if !(g1 < g0) || !(l1 < l0) {
		t.Fatalf("without arbitrageurs |Σp − 1| %.3f and %.0f kopecks left; with them %.3f and %.0f", g0, l0, g1, l1)
	}
	c := sim.DefaultConfig()
	c.Design, c.Mix = sim.Pool, sim.Mix{Informed: 0.5, Arbitrage: 0.5}
	res, err := sim.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.ArbitrageLeft != 0 || math.Abs(res.Metrics.PriceSum-1) > 1e-12 {
		t.Fatalf("a pool: %d kopecks of arbitrage, prices sum to %v", res.Metrics.ArbitrageLeft, res.Metrics.PriceSum)
	}
}

func smallSweep() sim.Sweep {
	base := mixed(sim.Binary, 0)
	base.Outcomes, base.Steps, base.Traders = 3, 120, 10
	return sim.Sweep{
		Points: sim.Grid(base, sim.Kinds, []float64{0, 0.03}, []int64{500, 2000}, []float64{0.3, 0.8}),
		Runs:   4, Seed: 42,
	}
}

func sweepCSV(t *testing.T, s sim.Sweep) (rows, summary []byte) {
	t.Helper()
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := sim.WriteSweepCSV(&a, res); err != nil {
		t.Fatal(err)
	}
	if err := sim.WriteSummaryCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	return a.Bytes(), b.Bytes()
}

func TestSweepIsTheSameForAnyNumberOfWorkers(t *testing.T) {
	s := smallSweep()
	s.Workers = 1
	rows1, sum1 := sweepCSV(t, s)
	s.Workers = 4
	rows4, sum4 := sweepCSV(t, s)
	if !bytes.Equal(rows1, rows4) || !bytes.Equal(sum1, sum4) {
		t.Fatal("1 and 4 workers wrote different CSVs")
	}
	golden := func(name string, got []byte) {
		// Compilers for arm64, ppc64 and s390x may fuse a·b + c into one
		// rounding, which moves the last bits of the floats; the golden
		// files are amd64's.
		if runtime.GOARCH != "amd64" {
			return
		}
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed (go test ./sim -run TestSweepIsTheSame -update, if on purpose)", path)
		}
	}
	golden("sweep.csv", rows1)
	golden("summary.csv", sum1)
}

func TestSweepRunIsRunWithTheDerivedSeed(t *testing.T) {
	s := smallSweep()
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []int{0, 5, len(res.Rows) - 1} {
		row := res.Rows[j]
		c := s.Points[row.Point]
		c.Seed = sim.DeriveSeed(s.Seed, row.Point, row.Run)
		one, err := sim.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		if one.Metrics != row.Metrics || one.Winner != row.Winner || !reflect.DeepEqual(one.Truth, row.Truth) || !reflect.DeepEqual(one.Prices[len(one.Prices)-1], row.Final) {
			t.Fatalf("row %d differs from Run with seed %d", j, c.Seed)
		}
	}
	runs, err := sim.Runs(s.Points[3], 2)
	if err != nil {
		t.Fatal(err)
	}
	if runs[1].Metrics == runs[0].Metrics {
		t.Fatal("Runs gave two identical runs")
	}
}

func TestSweepStopsWhenCancelled(t *testing.T) {
	s := smallSweep()
	s.Runs = 1000
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestSweepRefusesMixedOutcomesAndNoRuns(t *testing.T) {
	s := smallSweep()
	s.Points[1].Outcomes = 4
	if _, err := s.Run(context.Background()); !errors.Is(err, sim.ErrConfig) {
		t.Fatalf("mixed outcomes: %v", err)
	}
	s = smallSweep()
	s.Runs = 0
	if _, err := s.Run(context.Background()); !errors.Is(err, sim.ErrConfig) {
		t.Fatalf("no runs: %v", err)
	}
	s = smallSweep()
	s.Points[2].Margin = 0.5
	if _, err := s.Run(context.Background()); !errors.Is(err, sim.ErrConfig) {
		t.Fatalf("a bad point: %v", err)
	}
}

func TestPathCSV(t *testing.T) {
	c := sim.DefaultConfig()
	c.Outcomes, c.Steps = 2, 3
	runs, err := sim.Runs(c, 2)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := sim.WritePathCSV(&b, runs); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n"))
	if string(lines[0]) != "run,step,outcome,truth,won,price,mm_pnl" {
		t.Fatalf("header %s", lines[0])
	}
	// 2 runs × 4 steps (the opening and 3) × 2 outcomes.
	if len(lines) != 1+2*4*2 {
		t.Fatalf("%d lines", len(lines))
	}
	if string(lines[1]) != "0,0,0,"+ftoa(runs[0].Truth[0])+","+won(runs[0].Winner == 0)+",0.5,0" {
		t.Fatalf("first row %s", lines[1])
	}
}

func won(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func TestCommonSeedsGiveEveryPointTheSameDraws(t *testing.T) {
	s := smallSweep()
	s.Common = true
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for j, row := range res.Rows {
		first := res.Rows[row.Run] // point 0, the same run
		if row.Seed != first.Seed || row.Winner != first.Winner || !reflect.DeepEqual(row.Truth, first.Truth) {
			t.Fatalf("row %d (point %d run %d) drew otherwise than point 0", j, row.Point, row.Run)
		}
	}
	if res.Rows[0].Truth[0] == res.Rows[1].Truth[0] {
		t.Fatal("runs 0 and 1 drew the same truth")
	}
}
