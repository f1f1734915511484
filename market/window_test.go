package market_test

import (
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// TestFinishMoveDecide: finish_at moves earlier or later, never into the
// past nor to live_at or before it, and not at all once a market of the
// pool is resolved; a bad time is reported before a resolved market.
func TestFinishMoveDecide(t *testing.T) {
	now := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	pool := func(live time.Time, resolved ...bool) *market.Pool {
		p := &market.Pool{ID: 1, LiveAt: live, FinishAt: now.Add(time.Hour)}
		for i, r := range resolved {
			p.Markets = append(p.Markets, &market.Market{ID: int64(i + 1), Resolved: r})
		}
		return p
	}
	for _, c := range []struct {
		name string
		at   time.Time
		pool *market.Pool
		want error
	}{
		{"a later finish_at is taken", now.AddDate(0, 1, 0), pool(now.Add(-time.Hour), false, false), nil},
		{"an earlier finish_at still in the future is taken", now.Add(time.Minute), pool(now.Add(-time.Hour), false), nil},
		{"a finish_at a microsecond ahead is taken", now.Add(time.Microsecond), pool(now.Add(-time.Hour), false), nil},
		{"a finish_at that reopens a finished pool is taken", now.Add(time.Hour), pool(now.AddDate(0, 0, -2), false), nil},
		{"finish_at now is the past", now, pool(now.Add(-time.Hour), false), input.ErrInvalid},
		{"finish_at in the past is refused", now.Add(-time.Minute), pool(now.Add(-time.Hour), false), input.ErrInvalid},
		{"finish_at at live_at is refused", now.Add(2 * time.Hour), pool(now.Add(2*time.Hour), false), input.ErrInvalid},
		{"finish_at before live_at is refused", now.Add(time.Hour), pool(now.Add(2*time.Hour), false), input.ErrInvalid},
		{"a pool with a resolved market keeps its window", now.Add(time.Hour), pool(now.Add(-time.Hour), false, true), market.ErrResolved},
		{"a time in the past is reported before a resolved market", now.Add(-time.Hour), pool(now.Add(-2*time.Hour), true), input.ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := market.FinishMove{At: c.at, Now: now}.Decide(c.pool)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			var ie *input.Error
			if errors.As(err, &ie) && ie.Field != "finish_at" {
				t.Fatalf("the refusal names %q, want finish_at", ie.Field)
			}
		})
	}
}

// TestQuotesInsideTheWindow: quotes, like trades, are given while
// live_at <= now < finish_at, by the service's clock.
func TestQuotesInsideTheWindow(t *testing.T) {
	w := newCreatorWorld(t)
	live := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	finish := live.Add(48 * time.Hour)
	ev, err := w.markets.CreateEvent(w.ctx, w.creator, market.NewEvent{Name: "E", Pools: []market.NewPool{{
		Name: "P", B: 10000, LiveAt: &live, FinishAt: &finish, Markets: []market.NewMarket{{Name: "M", Probability: 0.5}}}}})
	if err != nil {
		t.Fatal(err)
	}
	m := ev.Pools[0].Markets[0]
	if !m.LiveAt.Equal(live) || !m.FinishAt.Equal(finish) {
		t.Fatalf("the market's window is %v..%v, want its pool's %v..%v", m.LiveAt, m.FinishAt, live, finish)
	}
	for _, c := range []struct {
		name string
		now  time.Time
		open bool
	}{
		{"a quote before live_at is refused", live.Add(-time.Microsecond), false},
		{"a quote at live_at is given", live, true},
		{"a quote just before finish_at is given", finish.Add(-time.Microsecond), true},
		{"a quote at finish_at is refused", finish, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w.markets.Now = func() time.Time { return c.now }
			_, errBuy := w.markets.QuoteBuy(w.ctx, m.ID, market.Yes, 1000)
			_, errSell := w.markets.QuoteSell(w.ctx, m.ID, market.No, 1000)
			for _, err := range []error{errBuy, errSell} {
				if c.open && err != nil || !c.open && !errors.Is(err, market.ErrClosed) {
					t.Fatalf("buy: %v, sell: %v; want open %v", errBuy, errSell, c.open)
				}
			}
		})
	}
}
