package simplot

import (
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
)

func labels(ticks []plot.Tick) string {
	var out []string
	for _, t := range ticks {
		if t.Label == "" {
			out = append(out, "·")
			continue
		}
		out = append(out, t.Label)
	}
	return strings.Join(out, " ")
}

func TestRoundTicks(t *testing.T) {
	tests := []struct {
		name     string
		ticker   RoundTicks
		min, max float64
		want     string
	}{
		{"a probability axis steps by 0.2", RoundTicks{}, 0, 1, "0 0.2 0.4 0.6 0.8 1"},
		{"a probability axis in percent steps by 20%", RoundTicks{Percent: true}, 0, 1, "0% 20% 40% 60% 80% 100%"},
		{"a narrow probability range in percent keeps a decimal", RoundTicks{Percent: true}, 0, 0.02, "0% 0.5% 1% 1.5% 2%"},
		{"trades up to 300 step by 50", RoundTicks{}, 0, 300, "0 50 100 150 200 250 300"},
		{"kopecks group thousands with commas", RoundTicks{}, 0, 12500, "0 2,000 4,000 6,000 8,000 10,000 12,000"},
		{"a range crossing zero has a plain zero", RoundTicks{}, -7000, 3000, "−6,000 −4,000 −2,000 0 2,000"},
		{"ticks stay inside an unround range", RoundTicks{}, 0.03, 0.97, "0.2 0.4 0.6 0.8"},
		{"small steps have no float noise", RoundTicks{}, 0.1, 0.4, "0.1 0.15 0.2 0.25 0.3 0.35 0.4"},
		{"a tiny range keeps its decimals", RoundTicks{}, 0.001, 0.002, "0.001 0.0012 0.0014 0.0016 0.0018 0.002"},
		{"counts do not step below one", RoundTicks{Integer: true}, 0, 3, "0 1 2 3"},
		{"a reversed range is read forwards", RoundTicks{}, 10, 0, "0 2 4 6 8 10"},
		{"an empty range gets its one value", RoundTicks{}, 5, 5, "5"},
		{"a huge range uses powers of ten", RoundTicks{}, 0, 1e6, "0 200,000 400,000 600,000 800,000 1,000,000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := labels(tt.ticker.Ticks(tt.min, tt.max)); got != tt.want {
				t.Errorf("Ticks(%g, %g) = %q, want %q", tt.min, tt.max, got, tt.want)
			}
		})
	}
}

func TestRoundTicksSkipsNonFiniteRanges(t *testing.T) {
	for _, r := range [][2]float64{{nan(), 1}, {0, inf()}} {
		if got := (RoundTicks{}).Ticks(r[0], r[1]); got != nil {
			t.Errorf("Ticks(%g, %g) = %v, want none", r[0], r[1], got)
		}
	}
}

func TestRoundTicksEndOnARangeTooNarrowForItsMagnitude(t *testing.T) {
	done := make(chan []plot.Tick)
	go func() { done <- (RoundTicks{}).Ticks(1e10, 1e10+1e-6) }()
	select {
	case ticks := <-done:
		if len(ticks) > 2*targetTicks+3 {
			t.Errorf("got %d ticks, want a handful", len(ticks))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ticks(1e10, 1e10+1e-6) did not return")
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		name     string
		min, max float64
		want     string
	}{
		{"two decades label 1, 2 and 5", 10, 1000, "10 20 50 100 200 500 1,000"},
		{"nearly three decades label only powers of ten", 10, 5000, "10 · · 100 · · 1,000 · ·"},
		{"ticks stay inside the range", 3, 30, "5 10 20"},
		{"fractions keep their decimals", 0.01, 1, "0.01 0.02 0.05 0.1 0.2 0.5 1"},
		{"six decades label only powers of ten", 1, 1e6, "1 · · 10 · · 100 · · 1,000 · · 10,000 · · 100,000 · · 1,000,000"},
		{"a range without a positive minimum has no ticks", 0, 100, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := labels(LogTicks{}.Ticks(tt.min, tt.max)); got != tt.want {
				t.Errorf("Ticks(%g, %g) = %q, want %q", tt.min, tt.max, got, tt.want)
			}
		})
	}
}

func TestRoundRangeWidensToTicks(t *testing.T) {
	tests := []struct {
		name           string
		min, max       float64
		integer        bool
		wantLo, wantHi float64
	}{
		{"probabilities inside the unit range", 0.03, 0.97, false, 0, 1},
		{"kopecks", -2870, 2990, false, -3000, 3000},
		{"a span that moves to a larger step when widened", -1.4, 5.9, false, -2, 6},
		{"counts", 0, 2.5, true, 0, 3},
		{"an already round range", 0, 300, false, 0, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := roundRange(tt.min, tt.max, tt.integer)
			if lo != tt.wantLo || hi != tt.wantHi {
				t.Errorf("roundRange(%g, %g) = %g, %g, want %g, %g", tt.min, tt.max, lo, hi, tt.wantLo, tt.wantHi)
			}
		})
	}
}

func TestLogRange(t *testing.T) {
	lo, hi := logRange(12, 3000)
	if lo != 10 || hi != 5000 {
		t.Errorf("logRange(12, 3000) = %g, %g, want 10, 5000", lo, hi)
	}
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		v    float64
		dec  int
		want string
	}{
		{12500, 0, "12,500"},
		{-1234567.5, 1, "−1,234,567.5"},
		{0.5, 2, "0.5"},
		{2, 3, "2"},
		{-0.0001, 2, "0"},
		{999, 0, "999"},
	}
	for _, tt := range tests {
		if got := formatNumber(tt.v, tt.dec); got != tt.want {
			t.Errorf("formatNumber(%g, %d) = %q, want %q", tt.v, tt.dec, got, tt.want)
		}
	}
}
