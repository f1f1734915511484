package storagetest

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

func testBatching(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a batch applies exactly what a sequential run applies, at the same prices", func(t *testing.T) {
		// The same requests, once one by one and once as a single batch, on
		// two fresh stores: every result, the market and every balance must
		// match to the kopeck.
		type world struct {
			e     *env
			m     *market.Market
			users []*account.User
		}
		build := func() world {
			e := newEnv(t, newStores)
			m := e.event(e.creator(), 0.02, 20000, 0.5).Pools[0].Markets[0]
			w := world{e: e, m: m}
			for i, bal := range []int64{5000, 300, 20000} {
				w.users = append(w.users, e.user("b"+itoa(i), bal, 0))
			}
			return w
		}
		reqs := func(w world) []market.Request {
			u := w.users
			return []market.Request{
				{UserID: u[0].ID, Side: market.Yes, Action: market.ActionBuy, Amount: 2000},
				{UserID: u[1].ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000},              // insufficient funds
				{UserID: u[2].ID, Side: market.No, Action: market.ActionBuy, Amount: 4000, MaxCost: 100}, // slippage guard
				{UserID: u[2].ID, Side: market.No, Action: market.ActionBuy, Amount: 4000},
				{UserID: u[0].ID, Side: market.Yes, Action: market.ActionSell, Shares: 1000},
				{UserID: u[1].ID, Side: market.No, Action: market.ActionSell, Shares: 10},                // no position
				{UserID: u[2].ID, Side: market.No, Action: market.ActionSell, Shares: 1, MinPayout: 1e9}, // slippage guard
				{UserID: u[1].ID, Side: market.Yes, Action: market.ActionBuy, Amount: 250},
			}
		}
		seq, bat := build(), build()
		var seqResults []market.Result
		for _, r := range reqs(seq) {
			res, err := (market.Direct{Store: seq.e.stores.Markets}).Trade(seq.e.ctx, seq.m.ID, r)
			if err != nil {
				t.Fatal(err)
			}
			seqResults = append(seqResults, res)
		}
		batch := reqs(bat)
		eff, err := bat.e.stores.Markets.Exec(bat.e.ctx, market.LockFor(bat.m.ID, batch), func(st *market.State) (*market.Effects, error) {
			return market.DecideTrades(st, batch)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range seqResults {
			b := eff.Results[i]
			if (s.Err == nil) != (b.Err == nil) || (s.Err != nil && s.Err.Error() != b.Err.Error()) {
				t.Fatalf("request %d: sequential %v, batched %v", i, s.Err, b.Err)
			}
			if s.Err == nil && (s.Trade.Shares != b.Trade.Shares || s.Trade.Amount != b.Trade.Amount || s.Trade.Fee != b.Trade.Fee || s.Trade.PriceAfter != b.Trade.PriceAfter) {
				t.Fatalf("request %d: sequential %+v, batched %+v", i, s.Trade, b.Trade)
			}
		}
		accepted := 0
		for _, r := range eff.Results {
			if r.Err == nil {
				accepted++
			}
		}
		if accepted != 4 {
			t.Fatalf("%d accepted, want 4", accepted)
		}
		ms, mb := seq.e.market(seq.m.ID), bat.e.market(bat.m.ID)
		if ms.QYes != mb.QYes || ms.QNo != mb.QNo || ms.Volume != mb.Volume {
			t.Fatalf("market sequential %+v, batched %+v", ms, mb)
		}
		for i := range seq.users {
			if s, b := seq.e.balances(seq.users[i]), bat.e.balances(bat.users[i]); s != b {
				t.Fatalf("user %d: sequential %+v, batched %+v", i, s, b)
			}
		}
		trades, _ := bat.e.stores.Markets.Trades(bat.e.ctx, bat.m.ID)
		if len(trades) != 4 || trades[0].ID >= trades[3].ID || trades[1].UserID != bat.users[2].ID {
			t.Fatalf("trade log %+v, want the 4 accepted in arrival order", trades)
		}
		seq.e.audit()
		bat.e.audit()
	})
	t.Run("a batch on a closed market refuses every request and changes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 10000, 0.5)
		m := ev.Pools[0].Markets[0]
		u := e.user("late", 5000, 0)
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "NO"); err != nil {
			t.Fatal(err)
		}
		reqs := []market.Request{
			{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100},
			{UserID: u.ID, Side: market.No, Action: market.ActionBuy, Amount: 100},
		}
		eff, err := e.stores.Markets.Exec(e.ctx, market.LockFor(m.ID, reqs), func(st *market.State) (*market.Effects, error) {
			return market.DecideTrades(st, reqs)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range eff.Results {
			if !errors.Is(r.Err, market.ErrClosed) {
				t.Fatalf("request %d: %v, want ErrClosed", i, r.Err)
			}
		}
		if e.balances(u).Balance != 5000 {
			t.Fatalf("balance %d", e.balances(u).Balance)
		}
		e.audit()
	})
	t.Run("concurrent traders through the group commit form batches and keep the ledger whole", func(t *testing.T) {
		e := newEnv(t, newStores)
		m := e.event(e.creator(), 0.01, 50000, 0.5).Pools[0].Markets[0]
		var batches, batched atomic.Int64
		b := market.NewBatcher(e.stores.Markets, 16, 0)
		b.Observe = func(size int, _ time.Duration, err error) {
			if err == nil {
				batches.Add(1)
				batched.Add(int64(size))
			}
		}
		const traders, each = 16, 12
		var accepted atomic.Int64
		var wg sync.WaitGroup
		for i := range traders {
			u := e.user("g"+itoa(i), 2000, 0)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range each {
					res, err := b.Trade(e.ctx, m.ID, market.Request{UserID: u.ID, Side: market.Side(j % 2), Action: market.ActionBuy, Amount: 150})
					if err != nil {
						t.Error(err)
						return
					}
					if res.Err == nil {
						accepted.Add(1)
					} else if !errors.Is(res.Err, account.ErrInsufficientFunds) {
						t.Errorf("refused: %v", res.Err)
					}
				}
			}()
		}
		wg.Wait()
		if batched.Load() != traders*each {
			t.Fatalf("batches carried %d requests, want %d", batched.Load(), traders*each)
		}
		if batches.Load() >= batched.Load() {
			t.Logf("no batch held more than one request (%d batches); the machine may be idle enough", batches.Load())
		}
		trades, _ := e.stores.Markets.Trades(e.ctx, m.ID)
		if int64(len(trades)) != accepted.Load() {
			t.Fatalf("trade log %d, accepted %d", len(trades), accepted.Load())
		}
		e.audit()
	})
	t.Run("a settlement racing a batch pays exactly the trades that came before it", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		b := market.NewBatcher(e.stores.Markets, 32, 0)
		users := make([]*account.User, 8)
		for i := range users {
			users[i] = e.user("r"+itoa(i), 10_000_000, 0)
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for i, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				for {
					select {
					case <-stop:
						return
					default:
					}
					res, err := b.Trade(e.ctx, m.ID, market.Request{UserID: u.ID, Side: market.Side(rng.IntN(2)), Action: market.ActionBuy, Amount: 100 + rng.Int64N(400)})
					if err != nil {
						t.Error(err)
						return
					}
					if errors.Is(res.Err, market.ErrClosed) || errors.Is(res.Err, account.ErrInsufficientFunds) {
						return
					}
					if res.Err != nil {
						t.Errorf("refused: %v", res.Err)
						return
					}
				}
			}()
		}
		time.Sleep(50 * time.Millisecond)
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		trades, _ := e.stores.Markets.Trades(e.ctx, m.ID)
		var paid, spent int64
		yes := map[int64]int64{}
		for _, tr := range trades {
			spent += tr.Amount
			if tr.Side == market.Yes {
				yes[tr.UserID] += tr.Shares
			}
		}
		for _, u := range users {
			bal := e.balances(u).Balance
			var userSpent int64
			for _, tr := range trades {
				if tr.UserID == u.ID {
					userSpent += tr.Amount
				}
			}
			if want := 10_000_000 - userSpent + yes[u.ID]; bal != want {
				t.Fatalf("user %d: balance %d, want %d (spent %d, %d YES shares)", u.ID, bal, want, userSpent, yes[u.ID])
			}
			paid += yes[u.ID]
		}
		for _, u := range users {
			if open, _ := e.stores.Markets.OpenPositions(e.ctx, u.ID); len(open) != 0 {
				t.Fatalf("user %d kept open positions after settlement: %+v", u.ID, open)
			}
		}
		if len(trades) == 0 {
			t.Fatal("no trade ran before the settlement")
		}
		t.Logf("%d trades before settlement, %d kopecks spent, %d paid", len(trades), spent, paid)
		e.audit()
	})
}
