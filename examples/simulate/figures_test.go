package main

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSweepDrawsAFigurePerMetric(t *testing.T) {
	tests := []struct {
		name  string
		extra []string
		files []string
	}{
		{"by subsidy, the default x axis", nil, []string{"mae_final-by-subsidy.png", "brier_avg-by-subsidy.png", "mm_pnl-by-subsidy.png"}},
		{"by b, as SVG", []string{"-plot-x", "b", "-plot-metrics", "log_final,arbitrage_left", "-plot-format", "svg"}, []string{"log_final-by-b.svg", "arbitrage_left-by-b.svg"}},
		{"by the informed share", []string{"-informed", "0.2,0.8", "-plot-x", "informed", "-plot-metrics", "steps_to_eps"}, []string{"steps_to_eps-by-informed.png"}},
		{"none", []string{"-plot-metrics", ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := sweep(t, dir, tt.extra...)
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var figures []string
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".csv") {
					figures = append(figures, e.Name())
				}
			}
			if len(figures) != len(tt.files) {
				t.Errorf("figures %v, want %v", figures, tt.files)
			}
			for _, name := range tt.files {
				if !strings.Contains(out, name) {
					t.Errorf("the summary does not name %s:\n%s", name, out)
				}
				f, err := os.Open(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if strings.HasSuffix(name, ".png") {
					img, err := png.Decode(f)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
						t.Errorf("%s is %v, too small to read", name, b)
					}
					continue
				}
				b, err := io.ReadAll(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := xml.Unmarshal(b, new(struct{})); err != nil {
					t.Errorf("%s is not XML: %v", name, err)
				}
				// Every design is a line of the legend; the axis names its unit.
				for _, want := range []string{"n binary markets", "exclusive pool", "LS-LMSR", "liquidity b (kopecks, log scale)"} {
					if !bytes.Contains(b, []byte(want)) {
						t.Errorf("%s lacks %q", name, want)
					}
				}
			}
		})
	}
}

func TestFigureFlagsRefuseWhatTheyCannotDraw(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown x axis", []string{"-sweep", "-plot-x", "noise"}, "-plot-x must be subsidy, b or informed"},
		{"an unknown metric", []string{"-sweep", "-plot-metrics", "mae_final,profit"}, `no metric "profit"`},
		{"an unknown format", []string{"-sweep", "-plot-format", "pdf"}, "-plot-format must be png or svg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			err := run(append(tt.args, "-out", dir), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run = %v, want an error with %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a refused run wrote %d files", len(entries))
			}
		})
	}
}

func TestTheDefaultModeDrawsBandsAndCalibration(t *testing.T) {
	for _, truth := range []string{"", "0.6,0.3,0.1"} {
		t.Run("truth "+map[string]string{"": "drawn per run", "0.6,0.3,0.1": "fixed"}[truth], func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"-design", "binary", "-outcomes", "3", "-traders", "6", "-trades", "40", "-runs", "20", "-seed", "5", "-budget", "60", "-out", dir, "-prices", "prices.svg"}
			if truth != "" {
				args = append(args, "-truth", truth)
			}
			var out bytes.Buffer
			if err := run(args, &out); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			svg, err := os.ReadFile(filepath.Join(dir, "prices.svg"))
			if err != nil {
				t.Fatal(err)
			}
			// One small multiple per outcome, with the bands' legend.
			for _, want := range []string{"outcome 1", "outcome 2", "outcome 3", "25–75% of runs", "10–90% of runs"} {
				if !bytes.Contains(svg, []byte(want)) {
					t.Errorf("prices.svg lacks %q", want)
				}
			}
			if fixed := bytes.Contains(svg, []byte(">truth<")); fixed != (truth != "") {
				t.Errorf("the truth line is drawn: %v, with truth %q", fixed, truth)
			}
			for _, name := range []string{"pnl.png", "calibration.png"} {
				f, err := os.Open(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := png.Decode(f); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				f.Close()
			}
		})
	}
}
