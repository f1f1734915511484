package storagetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
)

// windowEvent creates an active event with one pool of n 50/50 markets
// whose trading window is live..finish.
func (e *env) windowEvent(live, finish time.Time, n int) *market.Event {
	e.t.Helper()
	c := e.creator()
	np := market.NewPool{Name: "Window", B: 10000, Margin: 0.02, LiveAt: &live, FinishAt: &finish}
	for i := range n {
		np.Markets = append(np.Markets, market.NewMarket{Name: "Outcome " + itoa(i), Probability: 0.5})
	}
	ev, err := e.markets.CreateEvent(e.ctx, c, market.NewEvent{Name: "Window", Pools: []market.NewPool{np}})
	if err != nil {
		e.t.Fatalf("create event: %v", err)
	}
	if err := e.markets.SetActive(e.ctx, c.ID, ev.ID, ptr(true)); err != nil {
		e.t.Fatal(err)
	}
	return ev
}

// window checks that pool id and each of its markets, read back from the
// store every way there is, end their trading window at finish.
func (e *env) window(id int64, finish time.Time) {
	e.t.Helper()
	p, err := e.stores.Markets.Pool(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	ev, err := e.stores.Markets.Event(e.ctx, p.EventID)
	if err != nil {
		e.t.Fatal(err)
	}
	if !p.FinishAt.Equal(finish) || !ev.Pools[0].FinishAt.Equal(finish) {
		e.t.Fatalf("pool %d finishes at %v (in its event %v), want %v", id, p.FinishAt, ev.Pools[0].FinishAt, finish)
	}
	ms := append(p.Markets, ev.Pools[0].Markets...)
	for _, m := range p.Markets {
		ms = append(ms, e.market(m.ID))
	}
	for _, m := range ms {
		if !m.FinishAt.Equal(finish) || !m.LiveAt.Equal(p.LiveAt) {
			e.t.Fatalf("market %d trades %v..%v, its pool %v..%v", m.ID, m.LiveAt, m.FinishAt, p.LiveAt, finish)
		}
	}
}

func testWindow(t *testing.T, newStores func(*testing.T) Stores) {
	// The windows are hours from now: the store's clock, which decides
	// trades, cannot cross their edges while a test runs.
	now := time.Now().UTC().Truncate(time.Second)

	t.Run("a pool not yet live refuses trades and quotes, and a refused first bet makes no sub-account", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.windowEvent(now.Add(time.Hour), now.Add(2*time.Hour), 1).Pools[0].Markets[0]
		u := e.user("early", 10000, 0)
		if _, err := e.buy(u, m, market.Yes, 1000); !errors.Is(err, market.ErrClosed) {
			t.Fatalf("buy: %v, want ErrClosed", err)
		}
		if _, err := e.markets.QuoteBuy(e.ctx, m.ID, market.Yes, 1000); !errors.Is(err, market.ErrClosed) {
			t.Fatalf("quote: %v, want ErrClosed", err)
		}
		if e.partners != nil {
			p := e.partner("Early bookie", 100000)
			_, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: "early", MarketID: m.ID, Side: market.Yes, AmountKopecks: 1000, ClientBetID: "early-1"})
			if !errors.Is(err, market.ErrClosed) {
				t.Fatalf("partner bet: %v, want ErrClosed", err)
			}
			if st, err := e.partners.State(e.ctx, p, "early"); err != nil || st.Exists {
				t.Fatalf("a refused first bet left a sub-account: %+v, %v", st, err)
			}
		}
		if b := e.balances(u); b.Balance != 10000 {
			t.Fatalf("balance %d after refused trades", b.Balance)
		}
		if ts, _ := e.stores.Markets.Trades(e.ctx, m.ID); len(ts) != 0 {
			t.Fatalf("refused trades logged %d trades", len(ts))
		}
		e.audit()
	})

	t.Run("a finished pool refuses trades until its finish_at moves later", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.windowEvent(now.Add(-2*time.Hour), now.Add(-time.Hour), 2)
		m := ev.Pools[0].Markets[1]
		u := e.user("late", 10000, 0)
		if _, err := e.buy(u, m, market.No, 1000); !errors.Is(err, market.ErrClosed) {
			t.Fatalf("buy after finish_at: %v, want ErrClosed", err)
		}
		later := now.Add(time.Hour)
		p, err := e.markets.MoveFinish(e.ctx, ev.CreatorID, m.PoolID, later)
		if err != nil {
			t.Fatal(err)
		}
		if !p.FinishAt.Equal(later) || len(p.Markets) != 2 || !p.Markets[1].FinishAt.Equal(later) || p.Markets[1].ID != m.ID {
			t.Fatalf("the moved pool = %+v", p)
		}
		e.window(m.PoolID, later)
		res, err := e.buy(u, m, market.No, 1000)
		if err != nil {
			t.Fatalf("buy after the move: %v", err)
		}
		if _, err := e.sell(u, m, market.No, res.Trade.Shares); err != nil {
			t.Fatalf("sell after the move: %v", err)
		}
		e.audit()
	})

	t.Run("finish_at moves earlier or later for the creator and the operator, never into the past", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.windowEvent(now.Add(-time.Hour), now.Add(24*time.Hour), 2)
		pool := ev.Pools[0].ID
		stranger := e.user("stranger", 0, 0)
		finish := now.Add(24 * time.Hour)
		for _, c := range []struct {
			name     string
			operator bool
			caller   int64
			pool     int64
			at       time.Time
			want     error
		}{
			{"the creator moves it later", false, ev.CreatorID, pool, now.Add(48 * time.Hour), nil},
			{"the creator moves it earlier", false, ev.CreatorID, pool, now.Add(3 * time.Hour), nil},
			{"the operator moves it", true, 0, pool, now.Add(5 * time.Hour), nil},
			{"another user may not", false, stranger.ID, pool, now.Add(6 * time.Hour), market.ErrForbidden},
			{"an unknown pool is not found for the creator", false, ev.CreatorID, 9999, now.Add(6 * time.Hour), market.ErrPoolNotFound},
			{"an unknown pool is not found for the operator", true, 0, 9999, now.Add(6 * time.Hour), market.ErrPoolNotFound},
			{"into the past is refused", false, ev.CreatorID, pool, now.Add(-time.Minute), input.ErrInvalid},
			{"before live_at is refused", true, 0, pool, now.Add(-2 * time.Hour), input.ErrInvalid},
			{"a stranger is forbidden before the time is read", false, stranger.ID, pool, now.Add(-time.Minute), market.ErrForbidden},
		} {
			t.Run(c.name, func(t *testing.T) {
				var p *market.Pool
				var err error
				if c.operator {
					p, err = e.markets.OperatorMoveFinish(e.ctx, c.pool, c.at)
				} else {
					p, err = e.markets.MoveFinish(e.ctx, c.caller, c.pool, c.at)
				}
				if c.want != nil {
					if !errors.Is(err, c.want) || p != nil {
						t.Fatalf("pool %v, err %v; want %v", p, err, c.want)
					}
					e.window(pool, finish)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				finish = c.at
				e.window(pool, finish)
			})
		}
		if _, err := e.stores.Markets.MoveFinish(e.ctx, 9999, market.FinishMove{At: now.Add(time.Hour), Now: now}); !errors.Is(err, market.ErrPoolNotFound) {
			t.Fatalf("the store moves an unknown pool: %v", err)
		}
	})

	t.Run("a pool with a resolved market keeps its finish_at", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.windowEvent(now.Add(-time.Hour), now.Add(24*time.Hour), 2)
		m := ev.Pools[0].Markets[0]
		if err := e.markets.Close(e.ctx, ev.CreatorID, ev.ID, m.PoolID, m.ID, "NO"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.markets.MoveFinish(e.ctx, ev.CreatorID, m.PoolID, now.Add(48*time.Hour)); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("move: %v, want ErrResolved", err)
		}
		if _, err := e.markets.OperatorMoveFinish(e.ctx, m.PoolID, now.Add(2*time.Hour)); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("the operator's move: %v, want ErrResolved", err)
		}
		e.window(m.PoolID, now.Add(24*time.Hour))
	})

	t.Run("moves racing settlements and trades neither deadlock nor split the window", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.windowEvent(now.Add(-time.Hour), now.Add(24*time.Hour), 3)
		pool := ev.Pools[0]
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for i, m := range pool.Markets {
			u := e.user("racer"+itoa(i), 100000, 0)
			wg.Go(func() {
				for range 10 {
					if _, err := e.buy(u, m, market.Yes, 500); err != nil && !errors.Is(err, market.ErrClosed) {
						errs <- err
					}
				}
			})
		}
		for i := range 4 {
			wg.Go(func() {
				for j := range 5 {
					at := now.Add(time.Duration(2+i*5+j) * time.Hour)
					if _, err := e.markets.MoveFinish(e.ctx, ev.CreatorID, pool.ID, at); err != nil && !errors.Is(err, market.ErrResolved) {
						errs <- err
					}
				}
			})
		}
		wg.Go(func() {
			m := pool.Markets[1]
			if err := e.markets.Close(e.ctx, ev.CreatorID, ev.ID, pool.ID, m.ID, "YES"); err != nil {
				errs <- err
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("a racing operation failed: %v", err)
		}
		p, err := e.stores.Markets.Pool(e.ctx, pool.ID)
		if err != nil {
			t.Fatal(err)
		}
		e.window(pool.ID, p.FinishAt)
		if _, err := e.markets.MoveFinish(e.ctx, ev.CreatorID, pool.ID, now.Add(time.Hour)); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("a move after the settlement: %v, want ErrResolved", err)
		}
		e.audit()
	})
}
