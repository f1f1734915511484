package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sweep(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append([]string{
		"-sweep", "-designs", "binary,pool,ls", "-margins", "0,0.02", "-bs", "200,1000", "-informed", "0.5",
		"-outcomes", "3", "-traders", "6", "-trades", "40", "-runs", "3", "-seed", "5", "-budget", "60",
		"-out", dir,
	}, extra...)
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return out.String()
}

func TestSweepWritesRunsAndSummary(t *testing.T) {
	one, four := t.TempDir(), t.TempDir()
	summary := sweep(t, one, "-workers", "1")
	sweep(t, four, "-workers", "4")
	read := func(dir, name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("1 and 4 workers write the same bytes", func(t *testing.T) {
		for _, name := range []string{"simulate.csv", "summary.csv"} {
			if !bytes.Equal(read(one, name), read(four, name)) {
				t.Fatalf("%s differs", name)
			}
		}
	})
	t.Run("the runs' CSV has a row per point and run, with the truth", func(t *testing.T) {
		rows, err := csv.NewReader(bytes.NewReader(read(one, "simulate.csv"))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		// 3 designs × 2 margins × 2 b × 1 informed share = 12 points, 3 runs each.
		if len(rows) != 1+12*3 {
			t.Fatalf("%d rows", len(rows))
		}
		head := strings.Join(rows[0], ",")
		for _, col := range []string{"design", "margin", "truth_0,truth_1,truth_2,winner", "mm_pnl", "brier_final", "steps_to_eps", "arbitrage_left"} {
			if !strings.Contains(head, col) {
				t.Errorf("header lacks %s: %s", col, head)
			}
		}
	})
	t.Run("the summary has a row per point and the table names every design", func(t *testing.T) {
		rows, err := csv.NewReader(bytes.NewReader(read(one, "summary.csv"))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1+12 {
			t.Fatalf("%d rows", len(rows))
		}
		for _, want := range []string{"12 points × 3 runs", "binary", "pool", "ls", "simulate.csv (36 rows), summary.csv"} {
			if !strings.Contains(summary, want) {
				t.Errorf("output lacks %q:\n%s", want, summary)
			}
		}
	})
}

func TestEveryDesignRunsAsTheDefaultMode(t *testing.T) {
	for _, d := range []string{"binary", "pool", "ls"} {
		t.Run(d+" runs and keeps within its subsidy", func(t *testing.T) {
			summary := small(t, t.TempDir(), "-design", d, "-margin", "0.05", "-mix", "informed=0.6,noise=0.2,momentum=0.1,arbitrage=0.1", "-prices", "", "-pnl", "")
			if !strings.Contains(summary, d+" simulation") || !strings.Contains(summary, "never crossed") {
				t.Fatalf("summary:\n%s", summary)
			}
		})
	}
}
