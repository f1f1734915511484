package leaderboard_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/leaderboard"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, period, by, limit string
		want                    leaderboard.Query
		field                   string
	}{
		{name: "nothing given is all time by pnl, 50 long", want: leaderboard.Query{Period: "all", By: "pnl", Limit: 50}},
		{name: "every value is taken as given", period: "7d", by: "volume", limit: "100", want: leaderboard.Query{Period: "7d", By: "volume", Limit: 100}},
		{name: "30d and a limit of 1", period: "30d", limit: "1", want: leaderboard.Query{Period: "30d", By: "pnl", Limit: 1}},
		{name: "an unknown period is refused", period: "24h", field: "period"},
		{name: "periods are lower case", period: "ALL", field: "period"},
		{name: "an unknown ranking is refused", by: "trades", field: "by"},
		{name: "a limit of 0 is refused", limit: "0", field: "limit"},
		{name: "a limit over 100 is refused", limit: "101", field: "limit"},
		{name: "a negative limit is refused", limit: "-5", field: "limit"},
		{name: "a limit that is not a number is refused", limit: "5x", field: "limit"},
		{name: "a limit past int64 is refused", limit: "99999999999999999999", field: "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := leaderboard.Parse(c.period, c.by, c.limit)
			if c.field != "" {
				var ie *input.Error
				if !errors.As(err, &ie) || ie.Field != c.field {
					t.Fatalf("Parse = %+v, %v; want an invalid %s", q, err, c.field)
				}
				return
			}
			if err != nil || q != c.want {
				t.Fatalf("Parse = %+v, %v; want %+v", q, err, c.want)
			}
		})
	}
}

func TestSince(t *testing.T) {
	today := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		period leaderboard.Period
		want   time.Time
		ok     bool
	}{
		{leaderboard.AllTime, time.Time{}, false},
		{leaderboard.Month, time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), true},
		{leaderboard.Week, time.Date(2026, 2, 23, 0, 0, 0, 0, time.UTC), true},
	}
	for _, c := range cases {
		t.Run("the first day of "+string(c.period), func(t *testing.T) {
			got, ok := leaderboard.Query{Period: c.period, Today: today}.Since()
			if !got.Equal(c.want) || ok != c.ok {
				t.Fatalf("Since = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// fakeApplier has pending entries, applied at most limit at a time; it
// fails while fail is set.
type fakeApplier struct {
	mu      sync.Mutex
	pending int
	fail    bool
	calls   atomic.Int64
}

func (f *fakeApplier) ApplyLeaderboard(_ context.Context, limit int) (int, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return 0, errors.New("database down")
	}
	n := min(limit, f.pending)
	f.pending -= n
	return n, nil
}

func (f *fakeApplier) left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending
}

func TestConsumer(t *testing.T) {
	t.Run("it drains what is pending in batches, then waits to be woken", func(t *testing.T) {
		f := &fakeApplier{pending: 25}
		wake := make(chan struct{})
		var mu sync.Mutex
		woken := func() <-chan struct{} { mu.Lock(); defer mu.Unlock(); return wake }
		c := &leaderboard.Consumer{Store: f, Batch: 10, Interval: time.Hour, Woken: woken}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		for f.left() != 0 {
			time.Sleep(time.Millisecond)
		}
		f.mu.Lock()
		f.pending = 5
		f.mu.Unlock()
		mu.Lock()
		close(wake)
		wake = make(chan struct{})
		mu.Unlock()
		for f.left() != 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
		<-done
	})
	t.Run("after a failure it tries again, and nothing is lost", func(t *testing.T) {
		f := &fakeApplier{pending: 3, fail: true}
		c := &leaderboard.Consumer{Store: f, Interval: time.Millisecond}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		for f.calls.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		f.mu.Lock()
		f.fail = false
		f.mu.Unlock()
		for f.left() != 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
		<-done
	})
}
