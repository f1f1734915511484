package sim

// Paths returns the price paths of runs as plain slices,
// [run][step][outcome]: the form quantile bands over runs are drawn from.
func Paths(runs []*Result) [][][]float64 {
	out := make([][][]float64, len(runs))
	for r, res := range runs {
		out[r] = res.Prices
	}
	return out
}

// Truths returns each run's truth, [run][outcome].
func Truths(runs []*Result) [][]float64 {
	out := make([][]float64, len(runs))
	for r, res := range runs {
		out[r] = res.Truth
	}
	return out
}

// Truths returns the truth of every run of point p, [run][outcome].
func (r *SweepResult) Truths(p int) [][]float64 {
	out := make([][]float64, r.Runs)
	for i := range out {
		out[i] = r.Rows[p*r.Runs+i].Truth
	}
	return out
}

// Column returns the named metric's mean and 95% interval over the given
// summaries, one entry per summary: the series of a plot of a metric
// against b or the trader mix. It returns nils for an unknown name.
func Column(sums []Summary, name string) (mean, lo, hi []float64) {
	for _, s := range sums {
		iv, ok := s.Stat(name)
		if !ok {
			return nil, nil, nil
		}
		mean = append(mean, iv.Mean)
		lo = append(lo, iv.Lo)
		hi = append(hi, iv.Hi)
	}
	return mean, lo, hi
}
