package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// small runs the simulation into dir with a small, fast configuration.
func small(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append([]string{
		"-b", "100", "-outcomes", "3", "-traders", "5", "-trades", "20", "-runs", "4",
		"-seed", "7", "-budget", "30",
		"-out", dir, "-csv", "out.csv",
	}, extra...)
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return out.String()
}

func TestRunWritesItsOutputs(t *testing.T) {
	dir := t.TempDir()
	summary := small(t, dir)

	t.Run("the CSV has the tidy header and one row per run, step and outcome", func(t *testing.T) {
		f, err := os.Open(filepath.Join(dir, "out.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(rows[0], ","); got != "run,step,outcome,truth,won,price,mm_pnl" {
			t.Fatalf("header %q", got)
		}
		if got, want := len(rows)-1, 4*21*3; got != want {
			t.Fatalf("%d data rows, want runs·(trades+1)·outcomes = %d", got, want)
		}
		// The opening: every price a third, the maker even.
		if r := rows[1]; r[0] != "0" || r[1] != "0" || r[2] != "0" || r[5] != "0.3333333333333333" || r[6] != "0" {
			t.Fatalf("first row %q, want the opening state of run 0", r)
		}
	})
	t.Run("both plots are non-empty PNG files", func(t *testing.T) {
		for _, name := range []string{"prices.png", "pnl.png"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 1000 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("%s: %d bytes, not a PNG", name, len(b))
			}
		}
	})
	t.Run("the summary reports the P&L against its bound and the price error", func(t *testing.T) {
		for _, want := range []string{"95% interval of the mean", "−subsidy = -110: never crossed", "Brier score", "fees per run", "mean |p − p*|", "out.csv (252 rows)"} {
			if !strings.Contains(summary, want) {
				t.Errorf("summary lacks %q:\n%s", want, summary)
			}
		}
	})
}

func TestRunIsReproducibleFromItsSeed(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	small(t, a)
	small(t, b)
	small(t, c, "-seed", "8")
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
	if bytes.Equal(read(a), read(c)) {
		t.Fatal("a different seed gave the same CSV")
	}
}

func TestRunWithSVGAndAFixedTruth(t *testing.T) {
	dir := t.TempDir()
	summary := small(t, dir, "-outcomes", "2", "-truth", "0.8,0.2", "-prices", filepath.Join(dir, "p.svg"), "-pnl", "")
	b, err := os.ReadFile(filepath.Join(dir, "p.svg"))
	if err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Fatalf("no SVG written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pnl.png")); !os.IsNotExist(err) {
		t.Fatalf("an empty -pnl must skip the plot: %v", err)
	}
	if !strings.Contains(summary, "never crossed") {
		t.Fatalf("summary:\n%s", summary)
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"a zero b is refused", []string{"-b", "0"}},
		{"a single outcome is refused", []string{"-outcomes", "1"}},
		{"zero runs are refused", []string{"-runs", "0"}},
		{"a truth of the wrong length is refused", []string{"-outcomes", "3", "-truth", "0.5,0.5"}},
		{"a truth that does not sum to 1 is refused", []string{"-outcomes", "2", "-truth", "0.5,0.6"}},
		{"an unknown flag is refused", []string{"-nope"}},
		{"a stray argument is refused", []string{"extra"}},
		{"a plot run past the last run is refused", []string{"-runs", "2", "-plot-run", "2"}},
		{"a fractional b is refused in kopecks", []string{"-exclusive", "-b", "100.5"}},
		{"a fractional b is refused for a design too", []string{"-b", "100.5"}},
		{"an unknown design is refused", []string{"-design", "cpmm"}},
		{"a margin above the platform's is refused", []string{"-margin", "0.3"}},
		{"a mix not summing to 1 is refused", []string{"-mix", "informed=0.5,noise=0.2"}},
		{"an unknown kind of trader is refused", []string{"-mix", "informed=0.5,whale=0.5"}},
		{"two modes at once are refused", []string{"-sweep", "-exclusive"}},
		{"a sweep over an unknown design is refused", []string{"-sweep", "-designs", "pool,cpmm", "-runs", "1"}},
		{"a sweep with a bad b is refused", []string{"-sweep", "-bs", "100,x"}},
		{"a fractional budget is refused in kopecks", []string{"-exclusive", "-budget", "0.5"}},
		{"a single outcome is refused for a pool too", []string{"-exclusive", "-outcomes", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"-csv", filepath.Join(dir, "x.csv"), "-prices", "", "-pnl", "", "-sums", ""}, tt.args...)
			if err := run(args, new(bytes.Buffer)); err == nil {
				t.Fatal("run succeeded")
			}
		})
	}
}

func TestTheMarketMakerNeverLosesMoreThanTheBound(t *testing.T) {
	cfg, err := parseFlags([]string{"-b", "50", "-outcomes", "4", "-runs", "30", "-trades", "200", "-traders", "20", "-noise", "0.1", "-budget", "500", "-seed", "3"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate(cfg, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	for r, p := range res.pnl {
		if p < res.bound-1e-9 {
			t.Fatalf("run %d lost %v, past the bound %v", r, p, res.bound)
		}
	}
}
