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

// OutcomePaths returns the YES price of outcome i in every run at every
// step, [run][step]: one panel of quantile bands.
func OutcomePaths(runs []*Result, i int) [][]float64 {
	out := make([][]float64, len(runs))
	for r, res := range runs {
		out[r] = make([]float64, len(res.Prices))
		for s, p := range res.Prices {
			out[r][s] = p[i]
		}
	}
	return out
}

// Forecasts returns every run's final YES price of every outcome, run by
// run, and whether that outcome won: the input of a calibration plot.
func Forecasts(runs []*Result) (forecast []float64, happened []bool) {
	for _, res := range runs {
		for i, p := range res.Prices[len(res.Prices)-1] {
			forecast = append(forecast, p)
			happened = append(happened, i == res.Winner)
		}
	}
	return forecast, happened
}

// Forecasts returns the final YES price of every outcome in every run of
// point p, and whether that outcome won, as the function Forecasts does.
func (r *SweepResult) Forecasts(p int) (forecast []float64, happened []bool) {
	for _, row := range r.Rows[p*r.Runs : (p+1)*r.Runs] {
		for i, x := range row.Final {
			forecast = append(forecast, x)
			happened = append(happened, i == row.Winner)
		}
	}
	return forecast, happened
}
