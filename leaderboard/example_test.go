package leaderboard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/predictkit/predictkit/leaderboard"
)

// board is a store with two traders, one of them hidden.
type board []leaderboard.Row

func (b board) Leaderboard(_ context.Context, q leaderboard.Query) ([]leaderboard.Row, error) {
	return b[:min(q.Limit, len(b))], nil
}

func (b board) LeaderboardTotals(_ context.Context, userID int64) (leaderboard.Row, error) {
	for _, r := range b {
		if r.UserID == userID {
			return r, nil
		}
	}
	return leaderboard.Row{UserID: userID}, nil
}

// A board's query comes from the API's parameters; the service ranks the
// rows and hides what a hidden profile does not show.
func Example() {
	svc := leaderboard.NewService(board{
		{UserID: 7, Name: "Alice", PnL: 12_500, Volume: 90_000, Trades: 4},
		{UserID: 3, Name: "Bob", Hidden: true, PnL: -800, Volume: 40_000, Trades: 2},
	})
	svc.Now = func() time.Time { return time.Date(2026, 3, 20, 15, 0, 0, 0, time.UTC) }

	q, err := leaderboard.Parse("7d", "", "")
	if err != nil {
		panic(err)
	}
	since, _ := leaderboard.Query{Period: q.Period, Today: leaderboard.Day(svc.Now())}.Since()
	fmt.Println(q.Period, q.By, q.Limit, "from", since.Format(time.DateOnly))
	entries, _ := svc.Top(context.Background(), q)
	for _, e := range entries {
		fmt.Println(e.Rank, e.UserID, e.Name, e.PnL, e.Volume, e.Trades)
	}
	_, err = leaderboard.Parse("1y", "", "")
	fmt.Println(err)
	// Output:
	// 7d pnl 50 from 2026-03-14
	// 1 7 Alice 12500 90000 4
	// 2 0 Anonymous -800 40000 2
	// invalid period: must be all, 30d or 7d
}
