package bench

import (
	"math"
	"math/bits"
	"time"
)

// subBits sets the histogram's precision: each power of two of nanoseconds
// is split into 1<<subBits equal buckets, so a bucket is at most 1/128 of
// its values (0.8%), and a reported percentile, the bucket's midpoint, is
// within 0.4% of a recorded value.
const subBits = 7

const (
	subCount = 1 << subBits
	// maxShift bounds the range: values up to 2^(maxShift+subBits+1) ns
	// (about 18 minutes) have their own bucket; larger ones are counted in
	// the last bucket (and still set Max exactly).
	maxShift   = 32
	numBuckets = (maxShift+1)*subCount + subCount
)

// Histogram records durations in log-linear buckets, in the manner of
// HdrHistogram: values under 256 ns are exact, and above that every bucket
// spans less than 1% of its values. It is not safe for concurrent use:
// each client records into its own histogram, and the histograms are
// merged when the run ends.
type Histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	sum      float64 // nanoseconds
	min, max int64   // nanoseconds
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{} }

// bucketOf returns the bucket index of v nanoseconds (v ≥ 0).
func bucketOf(v int64) int {
	shift := bits.Len64(uint64(v)) - (subBits + 1)
	if shift <= 0 {
		return int(v)
	}
	if shift > maxShift {
		return numBuckets - 1
	}
	return shift*subCount + int(v>>shift)
}

// bucketRange returns the smallest value of bucket i and its width.
func bucketRange(i int) (low, width int64) {
	if i < 2*subCount {
		return int64(i), 1
	}
	shift := i/subCount - 1
	top := int64(i - shift*subCount)
	return top << shift, 1 << shift
}

// Record adds one duration. Negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of recorded values.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the largest recorded value, exactly.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Min returns the smallest recorded value, exactly.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Mean returns the mean of the recorded values.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(math.Round(h.sum / float64(h.n)))
}

// Quantile returns the value below or at which a fraction q (0 to 1) of
// the recorded values lie: the midpoint of the bucket holding the value
// of rank ⌈q·n⌉, clamped to the exact minimum and maximum. It returns 0
// for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			if i == numBuckets-1 { // the overflow bucket has no upper bound
				return time.Duration(h.max)
			}
			low, width := bucketRange(i)
			v := low + (width-1)/2
			return time.Duration(min(max(v, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}
