package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// smallSplit runs -split into dir with a small, fast configuration: four
// markets, the last one Other, and an answer added at step 20 of 40.
func smallSplit(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append([]string{
		"-split", "-b", "100", "-outcomes", "4", "-traders", "10", "-trades", "40", "-runs", "5",
		"-seed", "7", "-budget", "30", "-split-at", "20",
		"-out", dir, "-csv", "out.csv",
	}, extra...)
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return out.String()
}

func TestSplitRunPaysEveryTraderAsBefore(t *testing.T) {
	wd := emptyWorkingDirectory(t)
	dir := t.TempDir()
	summary := smallSplit(t, dir)
	if !strings.Contains(summary, "what it would have been without the split: 250 checked, all equal") {
		t.Errorf("summary does not report the payouts of 10 traders × 5 outcomes × 5 runs as equal:\n%s", summary)
	}
	assertEmpty(t, wd)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "out.csv" {
		t.Errorf("-out holds %v, want only out.csv (-split draws no plot)", entries)
	}

	rows := readCSV(t, dir)
	if got := strings.Join(rows[0], ","); got != strings.Join(splitHeader, ",") {
		t.Fatalf("header %q", got)
	}
	type key struct{ run, step, outcome int }
	at := map[key][]string{}
	for _, r := range rows[1:] {
		k := key{}
		k.run, _ = strconv.Atoi(r[0])
		k.step, _ = strconv.Atoi(r[1])
		k.outcome, _ = strconv.Atoi(r[2])
		at[k] = r
	}
	// 5 runs: 4 outcomes at steps 0–19, 5 at steps 20–40.
	if want := 5 * (20*4 + 21*5); len(rows)-1 != want {
		t.Errorf("%d rows, want %d", len(rows)-1, want)
	}
	for run := range 5 {
		if _, ok := at[key{run, 19, 4}]; ok {
			t.Errorf("run %d lists the new answer before the split", run)
		}
		if _, ok := at[key{run, 20, 4}]; !ok {
			t.Errorf("run %d does not list the new answer at the split", run)
		}
		// The markets other than Other keep their q0; the claims of
		// Other and of the new answer start equal.
		for i := range 3 {
			if a, b := at[key{run, 19, i}][5], at[key{run, 20, i}][5]; a != b {
				t.Errorf("run %d: market %d's q0 moved from %s to %s at the split", run, i, a, b)
			}
		}
	}
	for _, c := range []string{"claim", "escrow"} {
		for _, x := range column(t, rows, c) {
			if x < 0 || math.IsNaN(x) {
				t.Fatalf("%s %v", c, x)
			}
		}
	}
}

func TestSplitRunIsReproducibleFromItsSeed(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	smallSplit(t, a)
	smallSplit(t, b)
	x, _ := os.ReadFile(filepath.Join(a, "out.csv"))
	y, _ := os.ReadFile(filepath.Join(b, "out.csv"))
	if !bytes.Equal(x, y) {
		t.Error("the same seed wrote different CSVs")
	}
}

func TestSplitRunTakesATruthWithTheNewAnswer(t *testing.T) {
	summary := smallSplit(t, t.TempDir(), "-truth", "0.3,0.2,0.1,0.15,0.25")
	if !strings.Contains(summary, "all equal") {
		t.Errorf("summary:\n%s", summary)
	}
}

func TestSplitRunRefusesBadFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"-split with -exclusive is refused", []string{"-split", "-exclusive"}},
		{"a share of 0 is refused", []string{"-split", "-split-share", "0"}},
		{"a share of all of Other is refused", []string{"-split", "-split-share", "1"}},
		{"a split past the last trade is refused", []string{"-split", "-trades", "10", "-split-at", "11"}},
		{"a truth without the new answer is refused", []string{"-split", "-outcomes", "2", "-truth", "0.5,0.5"}},
		{"a fractional b is refused in kopecks", []string{"-split", "-b", "100.5"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-csv", filepath.Join(t.TempDir(), "x.csv")}, tt.args...)
			if err := run(args, new(bytes.Buffer)); err == nil {
				t.Fatal("run succeeded")
			}
		})
	}
}
