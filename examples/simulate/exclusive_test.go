package main

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// smallExclusive runs -exclusive into dir with a small, fast configuration.
func smallExclusive(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append([]string{
		"-exclusive", "-b", "100", "-outcomes", "4", "-traders", "10", "-trades", "40", "-runs", "5",
		"-seed", "7", "-budget", "30",
		"-out", dir, "-csv", "out.csv",
	}, extra...)
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return out.String()
}

// readCSV returns the rows of dir/out.csv, header first.
func readCSV(t *testing.T, dir string) [][]string {
	t.Helper()
	return readCSVFile(t, filepath.Join(dir, "out.csv"))
}

// readCSVFile returns the rows of the CSV file path, header first.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// column returns the values of the named column as floats.
func column(t *testing.T, rows [][]string, name string) []float64 {
	t.Helper()
	k := slices.Index(rows[0], name)
	if k < 0 {
		t.Fatalf("no column %q in %v", name, rows[0])
	}
	var out []float64
	for _, r := range rows[1:] {
		x, err := strconv.ParseFloat(r[k], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

func TestExclusiveRunWritesItsOutputs(t *testing.T) {
	dir := t.TempDir()
	summary := smallExclusive(t, dir)
	rows := readCSV(t, dir)
	perRun := readCSVFile(t, filepath.Join(dir, "out-runs.csv"))

	t.Run("the CSV has both designs side by side, one row per run, step and outcome", func(t *testing.T) {
		want := "run,step,outcome,truth,won,binary_price,pool_price,binary_mm_pnl,pool_mm_pnl,binary_price_sum,pool_price_sum"
		if got := strings.Join(rows[0], ","); got != want {
			t.Fatalf("header %q", got)
		}
		if got, want := len(rows)-1, 5*41*4; got != want {
			t.Fatalf("%d data rows, want runs·(trades+1)·outcomes = %d", got, want)
		}
	})
	t.Run("both designs open every market at about 1/n with the maker even", func(t *testing.T) {
		for _, r := range rows[1:5] {
			bin, err := strconv.ParseFloat(r[5], 64)
			if err != nil {
				t.Fatal(err)
			}
			// The binary market opens at InitialQ(100, 1/4): its log-odds
			// within 0.5/b of logit(1/4).
			if r[1] != "0" || r[6] != "0.25" || math.Abs(bin-0.25) > 0.25*0.75*0.5/100*1.01 || r[7] != "0" || r[8] != "0" || r[10] != "1" {
				t.Fatalf("opening row %v", r)
			}
		}
	})
	t.Run("exactly one outcome of every run and step is marked won", func(t *testing.T) {
		won := map[string]int{}
		for _, r := range rows[1:] {
			if r[4] == "1" {
				won[r[0]+"/"+r[1]]++
			}
		}
		if len(won) != 5*41 {
			t.Fatalf("%d run-steps have a winner, want %d", len(won), 5*41)
		}
		for k, n := range won {
			if n != 1 {
				t.Fatalf("run/step %s has %d winners", k, n)
			}
		}
	})
	t.Run("the per-run CSV has sim's metrics of both designs, binary first", func(t *testing.T) {
		if len(perRun) != 1+2*5 {
			t.Fatalf("%d rows, want a header and 2 designs × 5 runs", len(perRun))
		}
		design := slices.Index(perRun[0], "design")
		for _, name := range []string{"point", "run", "seed", "truth_3", "winner", "final_0", "mm_pnl", "arbitrage_left", "price_sum"} {
			if !slices.Contains(perRun[0], name) {
				t.Errorf("no column %q in %v", name, perRun[0])
			}
		}
		for k, r := range perRun[1:] {
			if want := []string{"binary", "pool"}[k/5]; r[design] != want {
				t.Fatalf("row %d is of design %q, want %q", k+1, r[design], want)
			}
		}
	})
	t.Run("the P&L at the last step of the winner is the per-run P&L", func(t *testing.T) {
		mmPnL := slices.Index(perRun[0], "mm_pnl")
		for _, r := range rows[1:] {
			if r[1] != "40" || r[4] != "1" {
				continue
			}
			run, _ := strconv.Atoi(r[0])
			if got := perRun[1+run][mmPnL]; got != r[7] {
				t.Errorf("run %d: the binary maker's P&L is %s in the path, %s per run", run, r[7], got)
			}
			if got := perRun[1+5+run][mmPnL]; got != r[8] {
				t.Errorf("run %d: the pool maker's P&L is %s in the path, %s per run", run, r[8], got)
			}
		}
	})
	t.Run("all three plots are non-empty PNG files", func(t *testing.T) {
		for _, name := range []string{"prices.png", "pnl.png", "sums.png"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 1000 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("%s: %d bytes, not a PNG", name, len(b))
			}
		}
	})
	t.Run("the summary compares the designs and neither crosses its bound", func(t *testing.T) {
		for _, want := range []string{"binary markets", "exclusive pool", "subsidy escrowed", "fees per run", "arbitrage left", "mean |p − p*|", "Brier score", "out.csv (820 rows), out-runs.csv"} {
			if !strings.Contains(summary, want) {
				t.Errorf("summary lacks %q:\n%s", want, summary)
			}
		}
		if n := strings.Count(summary, "never crossed"); n != 2 {
			t.Errorf("%d designs within their bound, want 2:\n%s", n, summary)
		}
	})
}

func TestExclusiveRunIsReproducibleFromItsSeed(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	sa := smallExclusive(t, a)
	sb := smallExclusive(t, b)
	smallExclusive(t, c, "-seed", "8")
	read := func(dir, name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, name := range []string{"out.csv", "out-runs.csv"} {
		if !bytes.Equal(read(a, name), read(b, name)) {
			t.Fatalf("the same seed gave different %s", name)
		}
		if bytes.Equal(read(a, name), read(c, name)) {
			t.Fatalf("a different seed gave the same %s", name)
		}
	}
	if strings.ReplaceAll(sa, a, "") != strings.ReplaceAll(sb, b, "") {
		t.Fatalf("the same seed gave different summaries:\n%s\n%s", sa, sb)
	}
}

func TestExclusiveDesignsAreComparedOnTheSameDraws(t *testing.T) {
	dir := t.TempDir()
	smallExclusive(t, dir)
	perRun := readCSVFile(t, filepath.Join(dir, "out-runs.csv"))
	for _, name := range []string{"seed", "truth_0", "truth_1", "truth_2", "truth_3", "winner"} {
		t.Run("run r of both designs has the same "+name, func(t *testing.T) {
			k := slices.Index(perRun[0], name)
			for r := range 5 {
				if bin, pool := perRun[1+r][k], perRun[1+5+r][k]; bin != pool {
					t.Fatalf("run %d: %s is %s on the binary markets, %s on the pool", r, name, bin, pool)
				}
			}
		})
	}
}

func TestExclusivePricesSumToOneAndBinaryPricesDrift(t *testing.T) {
	dir := t.TempDir()
	smallExclusive(t, dir, "-noise", "1", "-margin", "0")
	rows := readCSV(t, dir)
	pool, binary := column(t, rows, "pool_price_sum"), column(t, rows, "binary_price_sum")
	arb := column(t, readCSVFile(t, filepath.Join(dir, "out-runs.csv")), "arbitrage_left")
	t.Run("the pool's YES prices sum to 1 after every trade", func(t *testing.T) {
		for k, s := range pool {
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("row %d: the pool's prices sum to %v", k+1, s)
			}
		}
	})
	t.Run("the binary markets' YES prices drift away from 1", func(t *testing.T) {
		worst := 0.0
		for _, s := range binary {
			worst = max(worst, math.Abs(s-1))
		}
		if worst < 0.05 {
			t.Fatalf("the binary markets' prices never summed further from 1 than %v", worst)
		}
	})
	t.Run("the drift leaves arbitrage on the binary markets and none on the pool", func(t *testing.T) {
		bin, pl := arb[:5], arb[5:]
		if slices.Max(bin) < 1 {
			t.Fatalf("at most %v kopecks of arbitrage on the binary markets", slices.Max(bin))
		}
		if slices.Max(pl) != 0 {
			t.Fatalf("%v kopecks of arbitrage on the pool", slices.Max(pl))
		}
	})
}

func TestExclusiveMarketMakersStayWithinTheirSubsidies(t *testing.T) {
	cfg, err := parseFlags([]string{"-exclusive", "-b", "50", "-outcomes", "5", "-runs", "30", "-trades", "200", "-traders", "20", "-noise", "0.3", "-budget", "500", "-seed", "3"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulateExclusive(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, runs := range res.runs {
		t.Run("the "+venueName(runs[0].Config.Design)+" never lose more than their subsidy, whoever wins", func(t *testing.T) {
			for r, run := range runs {
				if m := run.Metrics; m.PnL < -m.Subsidy || m.WorstPnL < -m.Subsidy {
					t.Fatalf("run %d lost %d (at worst %d) with a subsidy of %d", r, -m.PnL, -m.WorstPnL, m.Subsidy)
				}
			}
		})
	}
	t.Run("the pool escrows a fifth of what five binary markets do", func(t *testing.T) {
		// ceil(50·ln 5) for the pool; ceil(50·ln(1/0.2)) for each market.
		if bin, pool := res.runs[0][0].Metrics.Subsidy, res.runs[1][0].Metrics.Subsidy; pool != 81 || bin != 5*81 {
			t.Fatalf("subsidies %d and %d", bin, pool)
		}
	})
}

func TestExclusiveRefusesWhatSimRefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"a margin above the platform's is refused", []string{"-margin", "0.3"}},
		{"a mix not summing to 1 is refused", []string{"-mix", "informed=0.5,noise=0.2"}},
		{"a truth that does not sum to 1 is refused", []string{"-outcomes", "2", "-truth", "0.5,0.6"}},
		{"zero cash is refused", []string{"-cash", "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"-exclusive", "-out", dir}, tt.args...)
			if err := run(args, new(bytes.Buffer)); err == nil {
				t.Fatal("run succeeded")
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("a refused run wrote %v", entries)
			}
		})
	}
	t.Run("-design is ignored: both designs run", func(t *testing.T) {
		if _, err := parseFlags([]string{"-exclusive", "-design", "cpmm"}, new(bytes.Buffer)); err != nil {
			t.Fatal(err)
		}
	})
}
