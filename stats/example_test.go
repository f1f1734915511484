package stats_test

import (
	"context"
	"fmt"
	"time"

	"github.com/predictkit/predictkit/stats"
)

// year is a store with the aggregates of two days.
type year []stats.Day

func (y year) StatsDays(_ context.Context, from, to time.Time) (int64, []stats.Day, error) {
	var before int64
	var out []stats.Day
	for _, d := range y {
		switch {
		case d.Date.Before(from):
			before = d.OpenInterest
		case !d.Date.After(to):
			out = append(out, d)
		}
	}
	return before, out, nil
}

func (y year) StatsTotals(context.Context) (stats.Totals, error) { return stats.Totals{}, nil }

func (y year) StatsTopMarkets(context.Context, time.Time, int) ([]stats.TopMarket, error) {
	return nil, nil
}

// Daily answers every day of the range: a day on which nothing happened
// has zeros and carries the open interest forward. A bad range is an
// *input.Error, which the server answers 400.
func Example() {
	svc := stats.NewService(year{
		{Date: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Volume: 50_000, Trades: 3, ActiveTraders: 2, OpenInterest: 40_000},
		{Date: time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), Volume: 10_000, Trades: 1, ActiveTraders: 1, OpenInterest: 45_000},
	})
	svc.Now = func() time.Time { return time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC) }

	days, err := svc.Daily(context.Background(), "2026-03-01", "")
	if err != nil {
		panic(err)
	}
	for _, d := range days {
		fmt.Println(d.Date.Format(stats.DateLayout), d.Volume, d.Trades, d.OpenInterest)
	}
	_, err = svc.Daily(context.Background(), "2026-03-05", "2026-03-01")
	fmt.Println(err)
	// Output:
	// 2026-03-01 50000 3 40000
	// 2026-03-02 0 0 40000
	// 2026-03-03 10000 1 45000
	// 2026-03-04 0 0 45000
	// invalid from: must not be after to
}
