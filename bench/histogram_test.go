package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// exactQuantile is the value of rank ⌈q·n⌉ of sorted, the definition
// Histogram.Quantile approximates.
func exactQuantile(sorted []time.Duration, q float64) time.Duration {
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func TestHistogramQuantilesOfKnownDistributions(t *testing.T) {
	cases := []struct {
		name string
		draw func(r *rand.Rand) time.Duration
	}{
		{"a uniform distribution from 10µs to 60s", func(r *rand.Rand) time.Duration {
			return 10*time.Microsecond + time.Duration(r.Int64N(int64(60*time.Second)))
		}},
		{"an exponential distribution with a 2ms mean", func(r *rand.Rand) time.Duration {
			return time.Duration(r.ExpFloat64() * float64(2*time.Millisecond))
		}},
		{"a log-normal distribution around 1ms spanning decades", func(r *rand.Rand) time.Duration {
			return time.Duration(math.Exp(r.NormFloat64()*2) * float64(time.Millisecond))
		}},
		{"a bimodal distribution of a fast path and a slow tail", func(r *rand.Rand) time.Duration {
			if r.Float64() < 0.95 {
				return 200*time.Microsecond + time.Duration(r.Int64N(int64(50*time.Microsecond)))
			}
			return 40*time.Millisecond + time.Duration(r.Int64N(int64(20*time.Millisecond)))
		}},
		{"values under 256ns, which are exact", func(r *rand.Rand) time.Duration {
			return time.Duration(r.Int64N(256))
		}},
	}
	qs := []float64{0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			h := NewHistogram()
			vals := make([]time.Duration, 200_000)
			for i := range vals {
				vals[i] = c.draw(r)
				h.Record(vals[i])
			}
			slices.Sort(vals)
			for _, q := range qs {
				want, got := exactQuantile(vals, q), h.Quantile(q)
				if rel := math.Abs(float64(got-want)) / float64(max(want, 1)); rel > 0.01 {
					t.Errorf("quantile %v = %v, want %v (off by %.2f%%)", q, got, want, 100*rel)
				}
			}
			if h.Max() != vals[len(vals)-1] || h.Min() != vals[0] {
				t.Errorf("min, max = %v, %v, want %v, %v", h.Min(), h.Max(), vals[0], vals[len(vals)-1])
			}
			if h.Count() != uint64(len(vals)) {
				t.Errorf("count = %d, want %d", h.Count(), len(vals))
			}
		})
	}
}

func TestHistogramMergeEqualsRecordingIntoOne(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	all, parts := NewHistogram(), []*Histogram{NewHistogram(), NewHistogram(), NewHistogram()}
	for i := range 30_000 {
		d := time.Duration(r.ExpFloat64() * float64(time.Millisecond))
		all.Record(d)
		parts[i%len(parts)].Record(d)
	}
	merged := NewHistogram()
	merged.Merge(NewHistogram()) // an empty histogram changes nothing
	for _, p := range parts {
		merged.Merge(p)
	}
	if *merged != *all {
		t.Fatalf("merged histogram differs: count %d max %v, want count %d max %v", merged.Count(), merged.Max(), all.Count(), all.Max())
	}
}

func TestHistogramEdgeCases(t *testing.T) {
	t.Run("an empty histogram reports zeros", func(t *testing.T) {
		h := NewHistogram()
		if h.Quantile(0.5) != 0 || h.Max() != 0 || h.Mean() != 0 || h.Count() != 0 {
			t.Fatal("an empty histogram reports non-zero figures")
		}
	})
	t.Run("a negative duration counts as zero", func(t *testing.T) {
		h := NewHistogram()
		h.Record(-time.Second)
		if h.Quantile(1) != 0 || h.Count() != 1 {
			t.Fatalf("got quantile %v count %d", h.Quantile(1), h.Count())
		}
	})
	t.Run("a value beyond the range keeps its exact maximum", func(t *testing.T) {
		h := NewHistogram()
		h.Record(time.Millisecond)
		h.Record(100 * time.Hour)
		if h.Max() != 100*time.Hour || h.Quantile(1) != 100*time.Hour {
			t.Fatalf("max %v, quantile(1) %v", h.Max(), h.Quantile(1))
		}
	})
	t.Run("a single value is every quantile", func(t *testing.T) {
		h := NewHistogram()
		h.Record(1234567 * time.Nanosecond)
		for _, q := range []float64{0, 0.5, 1} {
			if got := h.Quantile(q); got != 1234567*time.Nanosecond {
				t.Errorf("quantile %v = %v", q, got)
			}
		}
	})
	t.Run("every bucket maps back to a range that holds its values", func(t *testing.T) {
		for _, v := range []int64{0, 1, 255, 256, 257, 511, 512, 1000, 1 << 20, 1<<20 + 12345, 60e9, 1 << 39} {
			low, width := bucketRange(bucketOf(v))
			if v < low || v >= low+width {
				t.Errorf("value %d in bucket [%d, %d)", v, low, low+width)
			}
			if v >= 256 && float64(width)/float64(v) > 1.0/128 {
				t.Errorf("value %d in a bucket %d wide: coarser than 1/128", v, width)
			}
		}
	})
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := NewHistogram()
	for i := range b.N {
		h.Record(time.Duration(i&0xfffff) * time.Microsecond)
	}
}
