package simplot

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// targetTicks is how many intervals between major ticks an axis aims for.
// Five reads at a glance and leaves room for the labels of a small multiple.
const targetTicks = 5

// RoundTicks is a plot.Ticker that puts major ticks at steps of 1, 2 or 5
// times a power of ten, about five per axis, so that every label is a
// number a reader would write by hand.
type RoundTicks struct {
	// Percent labels a probability as a percentage: 0.25 becomes "25%".
	Percent bool
	// Integer keeps the step at 1 or more, for counts such as runs.
	Integer bool
}

// Ticks returns the major ticks in [min, max]. Labels carry no trailing
// zeros, separate thousands with commas (12,500) and write negative
// numbers with a minus sign (−2,000).
func (t RoundTicks) Ticks(min, max float64) []plot.Tick {
	if !finite(min) || !finite(max) {
		return nil
	}
	if min > max {
		min, max = max, min
	}
	if min == max {
		return []plot.Tick{{Value: min, Label: t.label(min, 0)}}
	}
	step := roundStep(max - min)
	if t.Integer && step < 1 {
		step = 1
	}
	dec := decimals(step)
	// Index the ticks by integers so that 0.1+0.2 never shows up as
	// 0.30000000000000004 and the last tick is not lost to rounding.
	eps := step * 1e-9
	var ticks []plot.Tick
	// The cap stops a range too narrow for its magnitude (1e10 to
	// 1e10+1e-6), where i++ no longer changes i, from looping for ever.
	for i := math.Ceil((min - eps) / step); i*step <= max+eps && len(ticks) <= 2*targetTicks+2; i++ {
		v := i * step
		if math.Abs(v) < eps {
			v = 0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: t.label(v, dec)})
	}
	return ticks
}

func (t RoundTicks) label(v float64, dec int) string {
	if t.Percent {
		return formatNumber(v*100, max(dec-2, 0)) + "%"
	}
	return formatNumber(v, dec)
}

// roundRange widens [min, max] outwards to the nearest round ticks, so an
// axis starts and ends on a labelled value.
func roundRange(min, max float64, integer bool) (float64, float64) {
	if !finite(min) || !finite(max) || min >= max {
		return min, max
	}
	lo, hi := min, max
	// Widening can move the span to a larger step, whose ticks might miss
	// the new ends; a few rounds settle it.
	for range 4 {
		step := roundStep(hi - lo)
		if integer && step < 1 {
			step = 1
		}
		nlo := math.Floor(min/step+1e-9) * step
		nhi := math.Ceil(max/step-1e-9) * step
		if nlo == lo && nhi == hi {
			break
		}
		lo, hi = nlo, nhi
	}
	return lo, hi
}

// roundStep is the 1-2-5 × 10^k step nearest to span/targetTicks.
func roundStep(span float64) float64 {
	raw := span / targetTicks
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f < 1.5:
		return mag
	case f < 3:
		return 2 * mag
	case f < 7:
		return 5 * mag
	default:
		return 10 * mag
	}
}

// decimals is how many digits after the point a multiple of step needs.
func decimals(step float64) int {
	d := -int(math.Floor(math.Log10(step) + 1e-9))
	return max(d, 0)
}

// formatNumber writes v with dec decimals, drops trailing zeros, groups
// the integer part by thousands and writes a minus sign (U+2212).
func formatNumber(v float64, dec int) string {
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	// A true minus sign, as wide as a plus and level with the digits,
	// rather than a hyphen.
	sign := ""
	if s[0] == '-' {
		sign, s = "−", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// LogTicks is a plot.Ticker for a logarithmic axis. Over two decades or
// less it labels 1, 2 and 5 of every decade; over a wider range, only the
// powers of ten, with 2 and 5 as unlabelled minor ticks (their labels ran
// into each other in a small multiple a third of a page wide).
type LogTicks struct{}

// Ticks returns the ticks in [min, max]; none if min is not positive, since
// a log axis cannot show zero.
func (LogTicks) Ticks(min, max float64) []plot.Tick {
	if !finite(min) || !finite(max) || min <= 0 || max <= 0 {
		return nil
	}
	if min > max {
		min, max = max, min
	}
	wide := math.Log10(max/min) > 2
	var ticks []plot.Tick
	for k := math.Floor(math.Log10(min)); ; k++ {
		p := math.Pow(10, k)
		if p > max*(1+1e-9) {
			break
		}
		for _, m := range []float64{1, 2, 5} {
			v := m * p
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			tick := plot.Tick{Value: v}
			if m == 1 || !wide {
				tick.Label = formatNumber(v, decimals(p))
			}
			ticks = append(ticks, tick)
		}
	}
	return ticks
}

// logRange widens [min, max] to the 1-2-5 values around it.
func logRange(min, max float64) (float64, float64) {
	down := func(v float64) float64 {
		p := math.Pow(10, math.Floor(math.Log10(v)+1e-9))
		for _, m := range []float64{5, 2, 1} {
			if m*p <= v*(1+1e-9) {
				return m * p
			}
		}
		return p
	}
	up := func(v float64) float64 {
		p := math.Pow(10, math.Floor(math.Log10(v)-1e-9))
		for _, m := range []float64{1, 2, 5, 10} {
			if m*p >= v*(1-1e-9) {
				return m * p
			}
		}
		return 10 * p
	}
	return down(min), up(max)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
