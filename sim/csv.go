package sim

import (
	"bufio"
	"encoding/csv"
	"io"
	"math"
	"strconv"
)

// paramHeader are the configuration columns of the sweep and summary CSVs.
var paramHeader = []string{
	"design", "outcomes", "b", "margin", "ls_commission",
	"informed", "noise", "momentum", "arbitrage",
	"traders", "cash", "budget", "steps", "signal_noise", "lookback", "epsilon",
}

func params(c Config) []string {
	f := ftoa
	return []string{
		string(c.Design), strconv.Itoa(c.Outcomes), strconv.FormatInt(c.B, 10), f(c.Margin), f(c.LSCommission),
		f(c.Mix.Informed), f(c.Mix.Noise), f(c.Mix.Momentum), f(c.Mix.Arbitrage),
		strconv.Itoa(c.Traders), strconv.FormatInt(c.Cash, 10), strconv.FormatInt(c.Budget, 10), strconv.Itoa(c.Steps),
		f(c.Noise), strconv.Itoa(c.Lookback), f(c.Epsilon),
	}
}

// ftoa formats x in the shortest form that reads back as x; NaN prints as
// the empty string.
func ftoa(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// metricCell formats a metric; steps_to_eps of a run that never came
// within ε prints as "never".
func metricCell(m Metric, ms Metrics) string {
	if m.Name == "steps_to_eps" && ms.StepsToEps == Never {
		return "never"
	}
	return ftoa(m.Of(ms))
}

type csvWriter struct {
	bw *bufio.Writer
	cw *csv.Writer
}

func newCSV(w io.Writer) csvWriter {
	bw := bufio.NewWriterSize(w, 1<<16)
	return csvWriter{bw, csv.NewWriter(bw)}
}

func (c csvWriter) flush() error {
	c.cw.Flush()
	if err := c.cw.Error(); err != nil {
		return err
	}
	return c.bw.Flush()
}

// WriteSweepCSV writes one row per point and run: point, run, seed, the
// point's parameters, the truth (truth_0 … truth_{N−1}), the winner, the
// final YES prices (final_0 … final_{N−1}) and every metric of MetricList.
func WriteSweepCSV(w io.Writer, r *SweepResult) error {
	c := newCSV(w)
	n := r.Points[0].Outcomes
	head := append([]string{"point", "run", "seed"}, paramHeader...)
	for i := range n {
		head = append(head, "truth_"+strconv.Itoa(i))
	}
	head = append(head, "winner")
	for i := range n {
		head = append(head, "final_"+strconv.Itoa(i))
	}
	for _, m := range MetricList {
		head = append(head, m.Name)
	}
	if err := c.cw.Write(head); err != nil {
		return err
	}
	rec := make([]string, 0, len(head))
	for _, row := range r.Rows {
		rec = append(rec[:0], strconv.Itoa(row.Point), strconv.Itoa(row.Run), strconv.FormatUint(row.Seed, 10))
		rec = append(rec, params(r.Points[row.Point])...)
		for _, p := range row.Truth {
			rec = append(rec, ftoa(p))
		}
		rec = append(rec, strconv.Itoa(row.Winner))
		for _, p := range row.Final {
			rec = append(rec, ftoa(p))
		}
		for _, m := range MetricList {
			rec = append(rec, metricCell(m, row.Metrics))
		}
		if err := c.cw.Write(rec); err != nil {
			return err
		}
	}
	return c.flush()
}

// WriteSummaryCSV writes one row per point: its parameters, the runs, and
// for every metric NAME of MetricList the columns NAME_mean, NAME_lo and
// NAME_hi (the 95% interval of the mean); steps_to_eps is over the runs
// that came within ε, whose share is steps_to_eps_reached.
func WriteSummaryCSV(w io.Writer, r *SweepResult) error {
	c := newCSV(w)
	head := append([]string{"point"}, paramHeader...)
	head = append(head, "runs")
	for _, m := range MetricList {
		head = append(head, m.Name+"_mean", m.Name+"_lo", m.Name+"_hi")
	}
	head = append(head, "steps_to_eps_reached")
	if err := c.cw.Write(head); err != nil {
		return err
	}
	for _, s := range r.Summaries() {
		rec := append([]string{strconv.Itoa(s.Point)}, params(s.Config)...)
		rec = append(rec, strconv.Itoa(s.Runs))
		for _, iv := range s.Stats {
			rec = append(rec, ftoa(iv.Mean), ftoa(iv.Lo), ftoa(iv.Hi))
		}
		rec = append(rec, ftoa(s.Reached))
		if err := c.cw.Write(rec); err != nil {
			return err
		}
	}
	return c.flush()
}

// PathHeader is the header of WritePathCSV.
var PathHeader = []string{"run", "step", "outcome", "truth", "won", "price", "mm_pnl"}

// WritePathCSV writes the runs' paths, tidy: one row per run, step and
// outcome with the truth, won (1 for the winner), the YES price after the
// step, and mm_pnl, the maker's profit in kopecks if that outcome won then.
// Run r is results[r].
func WritePathCSV(w io.Writer, results []*Result) error {
	c := newCSV(w)
	if err := c.cw.Write(PathHeader); err != nil {
		return err
	}
	rec := make([]string, len(PathHeader))
	for r, res := range results {
		rec[0] = strconv.Itoa(r)
		for step, prices := range res.Prices {
			rec[1] = strconv.Itoa(step)
			for i, p := range prices {
				won := "0"
				if i == res.Winner {
					won = "1"
				}
				rec[2], rec[3], rec[4], rec[5] = strconv.Itoa(i), ftoa(res.Truth[i]), won, ftoa(p)
				rec[6] = strconv.FormatInt(res.PnL[step][i], 10)
				if err := c.cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	return c.flush()
}

// Runs runs c n times with the seeds DeriveSeed(c.Seed, 0, r), for
// WritePathCSV and per-step plots of one configuration. Run r is
// Run(c) with that seed.
func Runs(c Config, n int) ([]*Result, error) {
	out := make([]*Result, n)
	for r := range n {
		cr := c
		cr.Seed = DeriveSeed(c.Seed, 0, r)
		res, err := Run(cr)
		if err != nil {
			return nil, err
		}
		out[r] = res
	}
	return out, nil
}
