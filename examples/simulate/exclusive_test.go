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
	f, err := os.Open(filepath.Join(dir, "out.csv"))
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

	t.Run("the CSV has both venues side by side, one row per run, step and outcome", func(t *testing.T) {
		want := "run,step,outcome,truth,binary_q_yes,binary_q_no,binary_price,pool_q_yes,pool_q_no,pool_price," +
			"binary_mm_pnl,pool_mm_pnl,binary_price_sum,pool_price_sum,arbitrage"
		if got := strings.Join(rows[0], ","); got != want {
			t.Fatalf("header %q", got)
		}
		if got, want := len(rows)-1, 5*41*4; got != want {
			t.Fatalf("%d data rows, want runs·(trades+1)·outcomes = %d", got, want)
		}
	})
	t.Run("both venues open every market at 1/n with the same binary view", func(t *testing.T) {
		// InitialQ(100, 1/4) and the pool's complement of three even
		// outcomes are both round(100·ln 3) = 110.
		for _, r := range rows[1:5] {
			if r[1] != "0" || r[4] != "0" || r[5] != "110" || r[7] != "0" || r[8] != "110" || r[9] != "0.25" || r[10] != "0" || r[11] != "0" {
				t.Fatalf("opening row %v", r)
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
	t.Run("the summary compares the venues and neither crosses its bound", func(t *testing.T) {
		for _, want := range []string{"binary markets", "exclusive pool", "subsidy escrowed", "arbitrage left", "mean |p − p*|", "out.csv (820 rows)"} {
			if !strings.Contains(summary, want) {
				t.Errorf("summary lacks %q:\n%s", want, summary)
			}
		}
		if n := strings.Count(summary, "never crossed"); n != 2 {
			t.Errorf("%d venues within their bound, want 2:\n%s", n, summary)
		}
	})
}

func TestExclusiveRunIsReproducibleFromItsSeed(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	sa := smallExclusive(t, a)
	sb := smallExclusive(t, b)
	smallExclusive(t, c, "-seed", "8")
	read := func(dir string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, "out.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if !bytes.Equal(read(a), read(b)) {
		t.Fatal("the same seed gave different CSVs")
	}
	if strings.ReplaceAll(sa, a, "") != strings.ReplaceAll(sb, b, "") {
		t.Fatalf("the same seed gave different summaries:\n%s\n%s", sa, sb)
	}
	if bytes.Equal(read(a), read(c)) {
		t.Fatal("a different seed gave the same CSV")
	}
}

func TestExclusivePricesSumToOneAndBinaryPricesDrift(t *testing.T) {
	dir := t.TempDir()
	smallExclusive(t, dir, "-noise", "1")
	rows := readCSV(t, dir)
	pool, binary, arb := column(t, rows, "pool_price_sum"), column(t, rows, "binary_price_sum"), column(t, rows, "arbitrage")
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
	t.Run("the drift leaves arbitrage on the binary markets", func(t *testing.T) {
		if slices.Max(arb) < 1 {
			t.Fatalf("at most %v kopecks of arbitrage", slices.Max(arb))
		}
	})
}

func TestExclusiveMarketMakersStayWithinTheirSubsidies(t *testing.T) {
	cfg, err := parseFlags([]string{"-exclusive", "-b", "50", "-outcomes", "5", "-runs", "30", "-trades", "200", "-traders", "20", "-noise", "0.3", "-budget", "500", "-seed", "3"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulateExclusive(cfg, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []venueStats{res.binary, res.pool} {
		t.Run("the "+v.name+" never lose more than their subsidy", func(t *testing.T) {
			for r, p := range v.pnl {
				if p < -float64(v.subsidy) {
					t.Fatalf("run %d lost %v with a subsidy of %d", r, -p, v.subsidy)
				}
			}
		})
	}
	t.Run("the pool escrows a fifth of what five binary markets do", func(t *testing.T) {
		// ceil(50·ln 5) for the pool; ceil(50·ln(1/0.2)) for each market.
		if res.pool.subsidy != 81 || res.binary.subsidy != 5*81 {
			t.Fatalf("subsidies %d and %d", res.pool.subsidy, res.binary.subsidy)
		}
	})
}

func TestArbitrage(t *testing.T) {
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	tests := []struct {
		name   string
		prices []float64
		want   float64
	}{
		// Two markets at 0.4: YES on both up to 0.5 each, Δ = b·ln 1.5, at
		// b·ln(1 + 0.4·0.5) each: b·(ln 1.5 − 2·ln 1.2).
		{"two YES prices summing to 0.8 leave b·(ln 1.5 − 2·ln 1.2)", []float64{0.4, 0.4}, 1000 * (math.Log(1.5) - 2*math.Log(1.2))},
		{"two YES prices summing to 1.2 leave the same on the NO side", []float64{0.6, 0.6}, 1000 * (math.Log(1.5) - 2*math.Log(1.2))},
		{"prices summing to 1 leave nothing", []float64{0.25, 0.25, 0.5}, 0},
		{"three even markets at a third leave nothing", []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := make([]float64, len(tt.prices))
			for i, p := range tt.prices {
				x[i] = logit(p)
			}
			if got := arbitrage(1000, x); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("arbitrage = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("more drift leaves more arbitrage", func(t *testing.T) {
		a := arbitrage(1000, []float64{logit(0.3), logit(0.3), logit(0.3)})
		b := arbitrage(1000, []float64{logit(0.32), logit(0.32), logit(0.32)})
		if !(a > b && b > 0) {
			t.Fatalf("Σ = 0.9 leaves %v, Σ = 0.96 leaves %v", a, b)
		}
	})
}
