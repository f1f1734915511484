package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// holding is what one user bought on a market before it settles.
type holding struct {
	u                *account.User
	start            int64
	spent            int64
	yesShares        int64
	positions        int
	soldOutPositions int
}

// seedHoldings has n users buy on m: every third holds both sides, the
// others one, and every fifth also opens a NO position and sells it out
// again (a closed position the settlement must leave alone).
func seedHoldings(e *env, m *market.Market, n int) []*holding {
	e.t.Helper()
	var hs []*holding
	for i := range n {
		h := &holding{u: e.user(fmt.Sprintf("h%d", i), 100_000), start: 100_000}
		sides := []market.Side{market.Yes}
		switch i % 3 {
		case 1:
			sides = []market.Side{market.No}
		case 2:
			sides = []market.Side{market.Yes, market.No}
		}
		if i%5 == 4 && len(sides) == 1 && sides[0] == market.Yes {
			r, err := e.buy(h.u, m, market.No, 700)
			if err != nil {
				e.t.Fatal(err)
			}
			s, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: h.u.ID, Side: market.No, Action: market.ActionSell, Shares: r.Trade.Shares})
			if err != nil {
				e.t.Fatal(err)
			}
			h.spent += r.Trade.Amount - s.Trade.Amount
			h.soldOutPositions++
		}
		for j, side := range sides {
			r, err := e.buy(h.u, m, side, int64(1000+100*i+300*j))
			if err != nil {
				e.t.Fatal(err)
			}
			h.spent += r.Trade.Amount
			if side == market.Yes {
				h.yesShares += r.Trade.Shares
			}
			h.positions++
		}
		hs = append(hs, h)
	}
	return hs
}

func resolvedNotes(e *env, u *account.User) []*social.Notification {
	e.t.Helper()
	ns, err := e.store.Notifications(e.ctx, u.ID, false, -1, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*social.Notification
	for _, n := range ns {
		if n.Type == social.TypeMarketResolved {
			out = append(out, n)
		}
	}
	return out
}

// ledgerCounts is how many postings, notifications, PnL events and
// positions closed in their rows the store holds: of these a settlement
// writes only postings (see settle.go).
func ledgerCounts(e *env) [4]int64 {
	e.t.Helper()
	var c [4]int64
	err := e.store.DB().QueryRow(e.ctx, `SELECT (SELECT count(*) FROM postings), (SELECT count(*) FROM notifications),
		(SELECT count(*) FROM pnl_events), (SELECT count(*) FROM positions WHERE closed_at IS NOT NULL)`).Scan(&c[0], &c[1], &c[2], &c[3])
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func TestSettle(t *testing.T) {
	t.Run("every holder is paid and notified once, every position reads closed, and only postings are written", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0.02, 200_000, 0.5, 0.4)
		m, other := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		hs := seedHoldings(e, m, 11)
		// A position on another market stays open.
		bystander := hs[0]
		ob, err := e.buy(bystander.u, other, market.No, 500)
		if err != nil {
			t.Fatal(err)
		}
		bystander.spent += ob.Trade.Amount
		before := ledgerCounts(e)

		if err := e.store.Settle(e.ctx, m.ID, market.Settlement{Won: market.Yes}); err != nil {
			t.Fatal(err)
		}

		got, err := e.store.Market(e.ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Resolved || got.WinningOutcome == nil || *got.WinningOutcome != market.Yes || got.ResolvedAt == nil {
			t.Fatalf("market %+v", got)
		}
		var positions, paid int64
		for _, h := range hs {
			positions += int64(h.positions)
			if h.yesShares > 0 {
				paid++
			}
			b, err := e.accounts.Balances(e.ctx, h.u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := h.start - h.spent + h.yesShares; b.Balance != want {
				t.Errorf("user %d: balance %d, want %d", h.u.ID, b.Balance, want)
			}
			notes := resolvedNotes(e, h.u)
			if len(notes) != 1 || notes[0].Data.Amount != h.yesShares || notes[0].Data.Won != "YES" || notes[0].RelatedID != ev.ID ||
				notes[0].Read || !notes[0].CreatedAt.Equal(*got.ResolvedAt) {
				t.Errorf("user %d: market_resolved notifications %+v, want one paying %d", h.u.ID, notes, h.yesShares)
			}
			open, err := e.markets.OpenPositions(e.ctx, h.u.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range open {
				if p.MarketID == m.ID {
					t.Errorf("user %d: position %d is still open", h.u.ID, p.ID)
				}
			}
			closed, err := e.store.ClosedPositions(e.ctx, h.u.ID, -1, 0)
			if err != nil {
				t.Fatal(err)
			}
			var settled, sold int
			var realized int64
			for _, p := range closed {
				switch {
				case p.WonSide != nil && *p.WonSide == 1:
					settled++
					if p.CostBasis != 0 || p.ClosedAt == nil || !p.ClosedAt.Equal(*got.ResolvedAt) {
						t.Errorf("closed position %+v", p.Position)
					}
				case p.WonSide != nil && *p.WonSide == -1:
					sold++
				}
				realized += p.PnL()
			}
			if settled != h.positions || sold != h.soldOutPositions {
				t.Errorf("user %d: %d settled and %d sold positions, want %d and %d", h.u.ID, settled, sold, h.positions, h.soldOutPositions)
			}
			// What the positions of m made, closed by settlement or sale.
			if want := h.yesShares - (h.spent - ob.Trade.Amount*boolInt(h == bystander)); realized != want {
				t.Errorf("user %d: closed positions made %d, want %d", h.u.ID, realized, want)
			}
			evs, err := e.store.PnLEvents(e.ctx, h.u.ID)
			if err != nil {
				t.Fatal(err)
			}
			var settledEvents int
			for _, ev := range evs {
				if ev.At.Equal(*got.ResolvedAt) {
					settledEvents++
				}
			}
			if settledEvents != h.positions {
				t.Errorf("user %d: %d realizations at the settlement, want one per position (%d)", h.u.ID, settledEvents, h.positions)
			}
		}
		if open, _ := e.markets.OpenPositions(e.ctx, bystander.u.ID); len(open) != 1 || open[0].MarketID != other.ID {
			t.Errorf("the position on the other market: %+v", open)
		}
		// One posting per paid holder and the escrow's leftover; no
		// notification, realization or position row.
		if after := ledgerCounts(e); after != [4]int64{before[0] + paid + 1, before[1], before[2], before[3]} {
			t.Errorf("rows %v after the settlement, %v before; want %d more postings and nothing else", after, before, paid+1)
		}
		if esc, _ := e.store.Balance(e.ctx, account.EscrowAccount(m.ID)); esc != 0 {
			t.Errorf("escrow holds %d after settlement", esc)
		}
		if pool, _ := e.store.Pool(e.ctx, m.PoolID); pool.WonSide == nil || *pool.WonSide != 0 {
			t.Errorf("pool won_side %v, want 0", pool.WonSide)
		}
		e.audit()

		t.Run("a second settlement is refused and writes nothing", func(t *testing.T) {
			before := ledgerCounts(e)
			if err := e.store.Settle(e.ctx, m.ID, market.Settlement{Won: market.No}); !errors.Is(err, market.ErrResolved) {
				t.Fatalf("second settle: %v, want ErrResolved", err)
			}
			if after := ledgerCounts(e); after != before {
				t.Fatalf("counts %v after a refused settlement, were %v", after, before)
			}
			if got, _ := e.store.Market(e.ctx, m.ID); *got.WinningOutcome != market.Yes {
				t.Fatalf("the refused settlement changed the result: %+v", got)
			}
			e.audit()
		})
	})
	t.Run("a market with no open positions settles and returns its subsidy", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0, 10_000, 0.5)
		m := ev.Pools[0].Markets[0]
		if err := e.store.Settle(e.ctx, m.ID, market.Settlement{Won: market.No}); err != nil {
			t.Fatal(err)
		}
		if esc, _ := e.store.Balance(e.ctx, account.EscrowAccount(m.ID)); esc != 0 {
			t.Fatalf("escrow %d", esc)
		}
		if pool, _ := e.store.Pool(e.ctx, m.PoolID); pool.WonSide != nil {
			t.Fatalf("a NO result set the pool's won_side to %d", *pool.WonSide)
		}
		e.audit()
	})
	t.Run("an unknown market is not found and nothing is written", func(t *testing.T) {
		e := newEnv(t)
		e.event(0, 10_000, 0.5)
		before := ledgerCounts(e)
		var accounts int64
		_ = e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM ledger_accounts`).Scan(&accounts)
		if err := e.store.Settle(e.ctx, 987654, market.Settlement{Won: market.Yes}); !errors.Is(err, market.ErrMarketNotFound) {
			t.Fatalf("err = %v, want ErrMarketNotFound", err)
		}
		var after int64
		_ = e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM ledger_accounts`).Scan(&after)
		if ledgerCounts(e) != before || after != accounts {
			t.Fatal("a settlement of an unknown market wrote something")
		}
	})
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestSettleRacingTrades settles markets one after another while the same users trade on them and on the other markets of
// the event: every settlement must finish (a deadlock would be retried;
// a lock order violation would surface as failures) and the ledger must
// stay whole.
func TestSettleRacingTrades(t *testing.T) {
	// No retries: a deadlock or serialization failure fails the test
	// rather than hide behind a second attempt.
	e := &env{t: t, ctx: context.Background(), store: pgtest.New(t, postgres.WithRetries(1))}
	e.accounts = account.NewService(e.store)
	e.accounts.BcryptCost = bcrypt.MinCost
	e.markets = market.NewService(e.store, e.accounts)
	ev, c := e.event(0.01, 100_000, 0.5, 0.5, 0.5, 0.5)
	ms := ev.Pools[0].Markets
	const traders = 12
	users := make([]*account.User, traders)
	for i := range users {
		users[i] = e.user(fmt.Sprintf("r%d", i), 5_000_000)
		for j, m := range ms {
			if _, err := e.buy(users[i], m, market.Side((i+j)%2), 2000); err != nil {
				t.Fatal(err)
			}
		}
	}
	batcher := market.NewBatcher(e.store, 8, 0)
	var stop atomic.Bool
	var trades, closed atomic.Int64
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			for !stop.Load() {
				m := ms[rng.IntN(len(ms))]
				side := market.Side(rng.IntN(2))
				r := market.Request{UserID: u.ID, Side: side, Action: market.ActionBuy, Amount: 200 + rng.Int64N(800)}
				if rng.IntN(3) == 0 {
					r = market.Request{UserID: u.ID, Side: side, Action: market.ActionSell, Shares: 1 + rng.Int64N(300)}
				}
				res, err := batcher.Trade(e.ctx, m.ID, r)
				if err != nil {
					t.Errorf("trade: %v", err)
					return
				}
				switch {
				case res.Err == nil:
					trades.Add(1)
				case errors.Is(res.Err, market.ErrClosed):
					closed.Add(1)
				case errors.Is(res.Err, market.ErrNoPosition), errors.Is(res.Err, market.ErrInsufficientShares),
					errors.Is(res.Err, account.ErrInsufficientFunds), errors.Is(res.Err, market.ErrTradeRefused):
				default:
					t.Errorf("trade refused: %v", res.Err)
					return
				}
			}
		}()
	}
	// Settle all but the last market while trading goes on, two of them
	// at once.
	time.Sleep(100 * time.Millisecond)
	errs := make([]error, len(ms)-1)
	var sw sync.WaitGroup
	for i, m := range ms[:len(ms)-1] {
		sw.Add(1)
		go func() {
			defer sw.Done()
			time.Sleep(time.Duration(i/2) * 150 * time.Millisecond)
			errs[i] = e.store.Settle(e.ctx, m.ID, market.Settlement{Won: market.Side(i % 2)})
		}()
	}
	sw.Wait()
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("settling market %d: %v", ms[i].ID, err)
		}
	}
	if trades.Load() == 0 {
		t.Fatal("no trade ran")
	}
	t.Logf("%d trades, %d refused as closed", trades.Load(), closed.Load())
	for _, u := range users {
		open, err := e.markets.OpenPositions(e.ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range open {
			if p.MarketID != ms[len(ms)-1].ID {
				t.Fatalf("user %d holds an open position %d on settled market %d", u.ID, p.ID, p.MarketID)
			}
		}
	}
	e.audit()
	last := ms[len(ms)-1]
	if err := e.markets.Close(e.ctx, c.ID, ev.ID, last.PoolID, last.ID, "YES"); err != nil {
		t.Fatal(err)
	}
	// Every user's money is what they were credited, less what they paid
	// in, plus what they were paid out.
	var sum int64
	for _, u := range users {
		b, _ := e.accounts.Balances(e.ctx, u.ID)
		sum += b.Balance
	}
	var fees, treasury int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT
		COALESCE(sum(balance) FILTER (WHERE kind = 'platform_fees'), 0)::bigint,
		COALESCE(sum(balance) FILTER (WHERE kind = 'platform_treasury'), 0)::bigint FROM ledger_accounts`).Scan(&fees, &treasury); err != nil {
		t.Fatal(err)
	}
	if want := int64(traders*5_000_000) - fees - treasury; sum != want {
		t.Fatalf("users hold %d, want credits %d - fees %d - treasury %d = %d", sum, traders*5_000_000, fees, treasury, want)
	}
	e.audit()
}
