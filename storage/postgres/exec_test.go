package postgres_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/postgres"
)

func TestExecWritesWhatReadsBack(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0.03, 20000, 0.4)
	m := ev.Pools[0].Markets[0]
	alice, bob := e.user("alice", 10000), e.user("bob", 10000)
	first, err := e.buy(alice, m, market.Yes, 3000)
	if err != nil {
		t.Fatal(err)
	}

	// In one transaction: alice sells her whole position (an update that
	// closes it) and opens a new one on the same side (an insert under the
	// same open-position key); bob opens two positions.
	reqs := []market.Request{
		{UserID: alice.ID, Side: market.Yes, Action: market.ActionSell, Shares: first.Trade.Shares},
		{UserID: alice.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000},
		{UserID: bob.ID, Side: market.No, Action: market.ActionBuy, Amount: 2000},
		{UserID: bob.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 500},
	}
	eff, err := e.store.Exec(e.ctx, market.LockFor(m.ID, reqs), func(st *market.State) (*market.Effects, error) {
		return market.DecideTrades(st, reqs)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range eff.Results {
		if r.Err != nil {
			t.Fatalf("request %d refused: %v", i, r.Err)
		}
	}

	t.Run("trades come back as they were decided, ids ascending", func(t *testing.T) {
		log, err := e.store.Trades(e.ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 5 {
			t.Fatalf("%d trades", len(log))
		}
		for i, te := range eff.Trades {
			if i > 0 && te.Trade.ID <= eff.Trades[i-1].Trade.ID {
				t.Fatalf("trade ids %d then %d", eff.Trades[i-1].Trade.ID, te.Trade.ID)
			}
			if !reflect.DeepEqual(*log[i+1], *te.Trade) {
				t.Fatalf("trade %d read back\n%+v\nwritten\n%+v", i, *log[i+1], *te.Trade)
			}
		}
	})
	t.Run("postings and price points carry their trade's id", func(t *testing.T) {
		pts, err := e.store.PriceHistory(e.ctx, m.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		for i, te := range eff.Trades {
			for _, p := range te.Postings {
				if p.TradeID != te.Trade.ID {
					t.Fatalf("posting %+v of trade %d", p, te.Trade.ID)
				}
			}
			te.Price.TradeID = te.Trade.ID
			if !reflect.DeepEqual(pts[i+1], te.Price) {
				t.Fatalf("price point read back %+v, written %+v", pts[i+1], te.Price)
			}
		}
		var unlinked int
		if err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM postings p JOIN trades t ON t.id = p.trade_id WHERE t.market_id = $1`, m.ID).Scan(&unlinked); err != nil {
			t.Fatal(err)
		}
		if unlinked == 0 {
			t.Fatal("no posting links to its trade")
		}
	})
	t.Run("positions come back as they were decided", func(t *testing.T) {
		for _, p := range eff.Positions {
			if p.ID == 0 {
				t.Fatalf("position without id: %+v", p)
			}
		}
		open, err := e.store.OpenPositions(e.ctx, bob.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(open) != 2 {
			t.Fatalf("bob has %d open positions", len(open))
		}
		for _, d := range open {
			var want *market.Position
			for _, p := range eff.Positions {
				if p.ID == d.ID {
					want = p
				}
			}
			if want == nil || !reflect.DeepEqual(d.Position, *want) {
				t.Fatalf("position read back %+v, written %+v", d.Position, want)
			}
			if d.Market == nil || d.Market.QYes != eff.Market.QYes || d.PoolID != m.PoolID || d.EventID != ev.ID {
				t.Fatalf("detail %+v", d)
			}
		}
		closed, _ := e.store.ClosedPositions(e.ctx, alice.ID, 10, 0)
		open, _ = e.store.OpenPositions(e.ctx, alice.ID)
		if len(closed) != 1 || len(open) != 1 || closed[0].ID == open[0].ID || *closed[0].WonSide != -1 {
			t.Fatalf("alice: closed %+v, open %+v", closed, open)
		}
	})
	t.Run("the market comes back as it was decided", func(t *testing.T) {
		got, err := e.store.Market(e.ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got, *eff.Market) {
			t.Fatalf("market read back\n%+v\ndecided\n%+v", *got, *eff.Market)
		}
	})
	t.Run("realized pnl names the position it came from", func(t *testing.T) {
		evs, err := e.store.PnLEvents(e.ctx, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		closed, _ := e.store.ClosedPositions(e.ctx, alice.ID, 10, 0)
		if len(evs) != 1 || len(closed) != 1 || evs[0].PositionID != closed[0].ID || evs[0].Delta != eff.PnL[0].Delta || !evs[0].At.Equal(eff.PnL[0].At) {
			t.Fatalf("pnl events %+v, decided %+v", evs, eff.PnL)
		}
	})
	e.audit()
}

func TestExecDecisions(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0, 10000, 0.5)
	m := ev.Pools[0].Markets[0]
	u := e.user("u", 1000)
	t.Run("a decision's error comes back as it is", func(t *testing.T) {
		boom := &input.Error{Field: "x", Reason: "y"}
		_, err := e.store.Exec(e.ctx, market.Lock{MarketID: m.ID}, func(*market.State) (*market.Effects, error) { return nil, boom })
		if err != error(boom) {
			t.Fatalf("got %#v", err)
		}
	})
	t.Run("a posting to an account the lock did not name writes nothing", func(t *testing.T) {
		_, err := e.store.Exec(e.ctx, market.Lock{MarketID: m.ID}, func(st *market.State) (*market.Effects, error) {
			return &market.Effects{Postings: []account.Posting{{From: account.EscrowAccount(m.ID), To: account.UserAccount(u.ID), Amount: 1, Reason: "x"}}}, nil
		})
		if err == nil {
			t.Fatal("accepted")
		}
		if b, _ := e.store.Balances(e.ctx, u.ID); b.Balance != 1000 {
			t.Fatalf("balance %d", b.Balance)
		}
	})
	t.Run("a posting that overdraws is ErrInsufficientFunds and writes nothing", func(t *testing.T) {
		_, err := e.store.Exec(e.ctx, market.Lock{MarketID: m.ID, Accounts: []account.Ref{account.UserAccount(u.ID)}}, func(st *market.State) (*market.Effects, error) {
			return &market.Effects{Postings: []account.Posting{{From: account.UserAccount(u.ID), To: account.FeeAccount(m.ID), Amount: 1001, Reason: "x"}}}, nil
		})
		if !errors.Is(err, account.ErrInsufficientFunds) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("the state holds every locked account, zero when new", func(t *testing.T) {
		stranger := account.UserAccount(u.ID + 1000)
		_, err := e.store.Exec(e.ctx, market.Lock{MarketID: m.ID, Accounts: []account.Ref{stranger, account.UserAccount(u.ID)}}, func(st *market.State) (*market.Effects, error) {
			for _, r := range []account.Ref{stranger, account.UserAccount(u.ID), account.EscrowAccount(m.ID), account.FeeAccount(m.ID)} {
				if _, ok := st.Balances[r]; !ok {
					t.Errorf("%s not loaded", r)
				}
			}
			if st.Balances[account.UserAccount(u.ID)] != 1000 || st.Balances[stranger] != 0 {
				t.Errorf("balances %v", st.Balances)
			}
			if st.Now.Location() != time.UTC || st.Now.Nanosecond()%1000 != 0 {
				t.Errorf("now %v is not UTC microseconds", st.Now)
			}
			return &market.Effects{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	e.audit()
}

// waitBlocked waits until some backend is blocked by the backend pid. It
// asks on a connection of its own: a transaction sees the activity of
// others as it was when it first looked.
func waitBlocked(t *testing.T, db *pgxpool.Pool, pid uint32) {
	t.Helper()
	ctx := context.Background()
	for range 500 {
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, int32(pid)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("nothing waited for the lock")
}

func TestExecRetriesADeadlock(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0, 10000, 0.5)
	m := ev.Pools[0].Markets[0]
	u := e.user("u", 5000)

	// Another transaction holds u's account and then wants the market
	// row, which Exec holds while it waits for u's account: a deadlock.
	// PostgreSQL aborts Exec's side (its wait began first, so its deadlock
	// check runs first); Exec must run again and succeed.
	other, err := e.store.DB().Acquire(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	tx, err := other.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	if _, err := tx.Exec(e.ctx, `SELECT 1 FROM ledger_accounts WHERE kind = 'user' AND owner = $1 FOR UPDATE`, u.ID); err != nil {
		t.Fatal(err)
	}
	// Make sure this side never runs the deadlock check first; without the
	// privilege to set it, the default still favours Exec's earlier wait.
	var super bool
	if err := tx.QueryRow(e.ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil {
		t.Fatal(err)
	}
	if super {
		if _, err := tx.Exec(e.ctx, `SET LOCAL deadlock_timeout = '10s'`); err != nil {
			t.Fatal(err)
		}
	}
	var pid uint32
	if err := tx.QueryRow(e.ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}

	var calls int
	var mu sync.Mutex
	reqs := []market.Request{{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000}}
	done := make(chan error, 1)
	var eff *market.Effects
	go func() {
		var err error
		eff, err = e.store.Exec(e.ctx, market.LockFor(m.ID, reqs), func(st *market.State) (*market.Effects, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return market.DecideTrades(st, reqs)
		})
		done <- err
	}()
	waitBlocked(t, e.store.DB(), pid)
	if _, err := tx.Exec(e.ctx, `UPDATE markets SET paused = paused WHERE id = $1`, m.ID); err != nil {
		t.Fatalf("the other transaction was the one aborted: %v", err)
	}
	if err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Exec after a deadlock: %v", err)
	}
	// The other transaction got the market row, so Exec's first attempt
	// was the one aborted: it succeeded by running again. decide runs
	// only once every lock is held, so the aborted attempt never reached
	// it.
	if eff.Results[0].Err != nil || calls != 1 {
		t.Fatalf("result %v after %d decisions", eff.Results[0].Err, calls)
	}
	e.audit()
}

func TestExecGivesUpWithItsContext(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0, 10000, 0.5)
	m := ev.Pools[0].Markets[0]
	u := e.user("u", 5000)
	tx, err := e.store.DB().Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	if _, err := tx.Exec(e.ctx, `SELECT 1 FROM markets WHERE id = $1 FOR UPDATE`, m.ID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	_, err = e.markets.Execute(ctx, m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a trade stuck behind a lock past its deadline: %v", err)
	}
	if err := tx.Rollback(e.ctx); err != nil {
		t.Fatal(err)
	}
	// The abandoned attempt left no transaction open on a pooled
	// connection: every connection serves the next trades.
	for range 2 * e.store.DB().Config().MaxConns {
		if _, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100}); err != nil {
			t.Fatal(err)
		}
	}
	e.audit()
}

func TestExecDuplicateKeyAcrossMarkets(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0, 10000, 0.5, 0.5)
	a, b := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
	p := &partner.Partner{Name: "Bookie"}
	if err := e.store.CreatePartner(e.ctx, p, []byte("key")); err != nil {
		t.Fatal(err)
	}
	float := account.FloatAccount(p.ID)
	if err := e.store.Transfer(e.ctx, []account.Posting{{From: account.External, To: float, Amount: 10000, Reason: "float"}}); err != nil {
		t.Fatal(err)
	}
	someone := e.user("someone", 0)

	// A concurrent transaction records the key on market a and has not
	// committed yet when Exec records it on market b.
	other, err := e.store.DB().Acquire(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	tx, err := other.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx)
	if _, err := tx.Exec(e.ctx, `INSERT INTO trades (market_id, user_id, side, action, shares, amount, cost, fee,
		price_before, price_after, q_yes, q_no, partner_id, client_bet_id, created_at)
		VALUES ($1, $2, 1, 'buy', 1, 1, 1, 0, 0.5, 0.5, 0, 0, $3, 'k', now())`, a.ID, someone.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	var pid uint32
	if err := tx.QueryRow(e.ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	reqs := []market.Request{{Side: market.Yes, Action: market.ActionBuy, Amount: 1000, Partner: &market.PartnerOrder{
		Key: market.Key{PartnerID: p.ID, ClientBetID: "k"}, Digest: "h", ExternalID: "ext", TopUp: true}}}
	done := make(chan error, 1)
	go func() {
		_, err := e.store.Exec(e.ctx, market.LockFor(b.ID, reqs), func(st *market.State) (*market.Effects, error) {
			return market.DecideTrades(st, reqs)
		})
		done <- err
	}()
	waitBlocked(t, e.store.DB(), pid)
	if err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, market.ErrDuplicateKey) {
		t.Fatalf("got %v, want ErrDuplicateKey", err)
	}
	if _, err := e.store.SubAccount(e.ctx, p.ID, "ext"); !errors.Is(err, partner.ErrNoAccount) {
		t.Fatalf("the failed bet left a sub-account: %v", err)
	}
	if f, _ := e.store.Balance(e.ctx, float); f != 10000 {
		t.Fatalf("float = %d", f)
	}
}

func TestExecRemembersAccountIDs(t *testing.T) {
	e := newEnv(t)
	ev, _ := e.event(0.02, 10000, 0.5)
	m := ev.Pools[0].Markets[0]
	u := e.user("ann", 10000)
	buy := func() {
		t.Helper()
		res, err := e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	var balanceID int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT id FROM ledger_accounts WHERE kind = 'user' AND owner = $1`, u.ID).Scan(&balanceID); err != nil {
		t.Fatal(err)
	}
	escrow := account.EscrowAccount(m.ID)

	t.Run("creating a market teaches the store its escrow and fee accounts", func(t *testing.T) {
		for _, r := range []account.Ref{escrow, account.FeeAccount(m.ID)} {
			id, ok := postgres.CachedAccountID(e.store, r)
			var want int64
			if err := e.store.DB().QueryRow(e.ctx, `SELECT id FROM ledger_accounts WHERE kind = $1 AND owner = $2`, string(r.Kind), r.Owner).Scan(&want); err != nil {
				t.Fatalf("%v: %v", r, err)
			}
			if !ok || id != want {
				t.Fatalf("%v: cached id %d (%v), want %d", r, id, ok, want)
			}
		}
		if _, ok := postgres.CachedAccountID(e.store, account.UserAccount(u.ID)); ok {
			t.Fatal("the user's account id is known before any trade")
		}
	})
	t.Run("a committed trade teaches the store its accounts' ids", func(t *testing.T) {
		buy()
		if id, ok := postgres.CachedAccountID(e.store, account.UserAccount(u.ID)); !ok || id != balanceID {
			t.Fatalf("cached id %d (%v), want %d", id, ok, balanceID)
		}
	})
	t.Run("a wrong remembered id is noticed, and the trade runs with the right accounts", func(t *testing.T) {
		escrowID, _ := postgres.CachedAccountID(e.store, escrow)
		postgres.SetCachedAccountID(e.store, account.UserAccount(u.ID), escrowID)
		before, _ := e.store.Balance(e.ctx, escrow)
		buy()
		after, _ := e.store.Balance(e.ctx, escrow)
		if b, _ := e.store.Balances(e.ctx, u.ID); b.Balance >= 9000 || after <= before {
			t.Fatalf("balance %d, escrow %d -> %d: the second buy did not move money", b.Balance, before, after)
		}
		if id, _ := postgres.CachedAccountID(e.store, account.UserAccount(u.ID)); id != balanceID {
			t.Fatalf("cached id %d after the trade, want %d", id, balanceID)
		}
		e.audit()
	})
}

func TestConcurrentExec(t *testing.T) {
	t.Run("twenty traders on one market with limited funds", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0.02, 30000, 0.5)
		m := ev.Pools[0].Markets[0]
		const workers, funds, sharedFunds = 20, 2000, 5000
		users := make([]*account.User, workers)
		for i := range users {
			users[i] = e.user("t", funds)
		}
		shared := e.user("shared", sharedFunds)

		var mu sync.Mutex
		var accepted []*market.Trade
		var wg sync.WaitGroup
		for i := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 11))
				for range 15 {
					u := users[i]
					if rng.IntN(3) == 0 {
						u = shared // every worker also spends one account
					}
					res, err := e.buy(u, m, market.Side(rng.IntN(2)), 100+rng.Int64N(600))
					switch {
					case err == nil:
						mu.Lock()
						accepted = append(accepted, res.Trade)
						mu.Unlock()
					case errors.Is(err, account.ErrInsufficientFunds), errors.Is(err, market.ErrTradeRefused):
					default:
						t.Errorf("buy: %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()

		log, err := e.store.Trades(e.ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != len(accepted) || len(accepted) == 0 {
			t.Fatalf("%d trades logged, %d accepted", len(log), len(accepted))
		}
		var dy, dn, spent int64
		for _, tr := range accepted {
			if tr.Side == market.Yes {
				dy += tr.Shares
			} else {
				dn += tr.Shares
			}
			spent += tr.Amount
		}
		got, _ := e.store.Market(e.ctx, m.ID)
		if got.QYes != m.QYes+dy || got.QNo != m.QNo+dn {
			t.Fatalf("q = %d/%d, want %d/%d", got.QYes, got.QNo, m.QYes+dy, m.QNo+dn)
		}
		var left int64
		for _, u := range append(users, shared) {
			b, _ := e.store.Balances(e.ctx, u.ID)
			if b.Balance < 0 {
				t.Fatalf("user %d overdrawn: %d", u.ID, b.Balance)
			}
			left += b.Balance
		}
		if left != workers*funds+sharedFunds-spent {
			t.Fatalf("users hold %d, want %d", left, workers*funds+sharedFunds-spent)
		}
		states, postings, err := e.store.LedgerState(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r := account.Check(states, postings, time.Now()); !r.OK {
			t.Fatalf("ledger: %v", r.Problems)
		}
		e.audit()
	})
	t.Run("twenty traders across markets sharing accounts never deadlock for good", func(t *testing.T) {
		e := newEnv(t)
		ev, _ := e.event(0.01, 20000, 0.3, 0.5, 0.7)
		ms := ev.Pools[0].Markets
		users := make([]*account.User, 5)
		for i := range users {
			users[i] = e.user("x", 20000)
		}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				for range 10 {
					// A batch for several users at once takes several
					// account locks, in whatever order the requests name
					// them.
					m := ms[rng.IntN(len(ms))]
					var reqs []market.Request
					for range 1 + rng.IntN(3) {
						reqs = append(reqs, market.Request{UserID: users[rng.IntN(len(users))].ID, Side: market.Side(rng.IntN(2)), Action: market.ActionBuy, Amount: 100 + rng.Int64N(300)})
					}
					_, err := e.store.Exec(e.ctx, market.LockFor(m.ID, reqs), func(st *market.State) (*market.Effects, error) {
						return market.DecideTrades(st, reqs)
					})
					if err != nil {
						t.Errorf("exec: %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		e.audit()
	})
}

func TestConcurrentSettlement(t *testing.T) {
	e := newEnv(t)
	ev, c := e.event(0.02, 10000, 0.5)
	m := ev.Pools[0].Markets[0]
	users := make([]*account.User, 10)
	for i := range users {
		users[i] = e.user("w", 5000)
	}
	var wg sync.WaitGroup
	closes := make(chan error, 20)
	var mu sync.Mutex
	var accepted []*market.Trade
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			closes <- e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES")
		}()
		go func() {
			defer wg.Done()
			res, err := e.buy(users[i%len(users)], m, market.Side(i%2), 500)
			switch {
			case err == nil:
				mu.Lock()
				accepted = append(accepted, res.Trade)
				mu.Unlock()
			case errors.Is(err, market.ErrClosed):
			default:
				t.Errorf("buy racing the close: %v", err)
			}
		}()
	}
	wg.Wait()
	close(closes)
	ok := 0
	for err := range closes {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, market.ErrResolved):
		default:
			t.Fatalf("close: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d closes succeeded", ok)
	}
	// Every buy that got in before the close is paid once if it was YES.
	want := map[int64]int64{}
	for _, u := range users {
		want[u.ID] = 5000
	}
	var payouts int
	for _, tr := range accepted {
		want[tr.UserID] -= tr.Amount
		if tr.Side == market.Yes {
			want[tr.UserID] += tr.Shares
		}
	}
	for _, u := range users {
		b, _ := e.store.Balances(e.ctx, u.ID)
		if b.Balance != want[u.ID] {
			t.Fatalf("user %d holds %d, want %d", u.ID, b.Balance, want[u.ID])
		}
	}
	if err := e.store.DB().QueryRow(e.ctx, `SELECT count(*) FROM postings WHERE reason = 'settlement_leftover'`).Scan(&payouts); err != nil || payouts != 1 {
		t.Fatalf("%d leftover postings, %v", payouts, err)
	}
	if esc, _ := e.store.Balance(e.ctx, account.EscrowAccount(m.ID)); esc != 0 {
		t.Fatalf("escrow holds %d after settlement", esc)
	}
	e.audit()
}
