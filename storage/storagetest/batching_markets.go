package storagetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// testBatchingMarkets checks Store.ExecMarkets, the transaction a batch
// spanning several markets commits in, and the Batcher that forms such
// batches.
func testBatchingMarkets(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a batch over several markets decides as their batches would one after another", func(t *testing.T) {
		// Two fresh worlds get the same requests: one market after another
		// through Direct, and all at once through ExecMarkets. Ann's money
		// runs out on the second market, Bob trades on a closed market, and
		// one market does not exist.
		type world struct {
			e        *env
			ms       []*market.Market
			ann, bob *account.User
		}
		build := func() world {
			e := newEnv(t, newStores)
			c := e.creator()
			ms := e.event(c, 0.02, 20000, 0.5, 0.3).Pools[0].Markets
			closed := e.event(c, 0, 10000, 0.5)
			cm := closed.Pools[0].Markets[0]
			if err := e.markets.Close(e.ctx, c.ID, closed.ID, cm.PoolID, cm.ID, "NO"); err != nil {
				t.Fatal(err)
			}
			return world{e: e, ms: append(ms, cm), ann: e.user("ann", 3000, 0), bob: e.user("bob", 9000, 0)}
		}
		const missing = 1 << 40
		groups := func(w world) ([]int64, [][]market.Request) {
			a, b := w.ann.ID, w.bob.ID
			return []int64{w.ms[1].ID, missing, w.ms[0].ID, w.ms[2].ID}, [][]market.Request{
				{
					{UserID: a, Side: market.Yes, Action: market.ActionBuy, Amount: 2000},
					{UserID: b, Side: market.No, Action: market.ActionBuy, Amount: 4000},
				},
				{{UserID: b, Side: market.Yes, Action: market.ActionBuy, Amount: 100}},
				{
					{UserID: a, Side: market.Yes, Action: market.ActionBuy, Amount: 2000}, // 1,000 left: refused
					{UserID: a, Side: market.No, Action: market.ActionBuy, Amount: 1000},
					{UserID: b, Side: market.No, Action: market.ActionSell, Shares: 10}, // no position here
				},
				{{UserID: b, Side: market.Yes, Action: market.ActionBuy, Amount: 500}}, // closed
			}
		}
		seq, bat := build(), build()
		ids, reqs := groups(seq)
		var want [][]market.Result
		for i, id := range ids {
			var rs []market.Result
			for _, r := range reqs[i] {
				res, err := (market.Direct{Store: seq.e.stores.Markets}).Trade(seq.e.ctx, id, r)
				if id == missing {
					if !errors.Is(err, market.ErrMarketNotFound) {
						t.Fatalf("a trade on a missing market: %v, want ErrMarketNotFound", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				rs = append(rs, res)
			}
			want = append(want, rs)
		}

		ids, reqs = groups(bat)
		locks := make([]market.Lock, len(ids))
		for i, id := range ids {
			locks[i] = market.LockFor(id, reqs[i])
		}
		var sawShared bool
		effs, err := bat.e.stores.Markets.ExecMarkets(bat.e.ctx, locks, func(sts []*market.State) ([]*market.Effects, error) {
			if len(sts) != len(locks) {
				t.Fatalf("%d states for %d locks", len(sts), len(locks))
			}
			for i, st := range sts {
				if (st.Market == nil) != (ids[i] == missing) || st.Market != nil && st.Market.ID != ids[i] {
					t.Fatalf("state %d holds market %+v, want %d", i, st.Market, ids[i])
				}
			}
			// One ledger for the whole transaction: Ann's account is in the
			// balances every state sees.
			_, sawShared = sts[3].Balances[account.UserAccount(bat.ann.ID)]
			return market.DecideMarkets(sts, reqs)
		})
		if err != nil {
			t.Fatal(err)
		}
		if !sawShared {
			t.Error("the closed market's state does not see Ann's balance: the states do not share the ledger")
		}
		if effs[1] != nil {
			t.Fatalf("effects for a missing market: %+v", effs[1])
		}
		accepted := 0
		for i, id := range ids {
			if id == missing {
				continue
			}
			got := effs[i].Results
			if len(got) != len(want[i]) {
				t.Fatalf("market %d: %d results, want %d", id, len(got), len(want[i]))
			}
			for j, s := range want[i] {
				b := got[j]
				if (s.Err == nil) != (b.Err == nil) || s.Err != nil && s.Err.Error() != b.Err.Error() {
					t.Fatalf("market %d request %d: sequential %v, batched %v", id, j, s.Err, b.Err)
				}
				if s.Err != nil {
					continue
				}
				accepted++
				if s.Trade.Shares != b.Trade.Shares || s.Trade.Fee != b.Trade.Fee || s.Balances != b.Balances || b.Trade.ID == 0 {
					t.Fatalf("market %d request %d: sequential %+v %+v, batched %+v %+v", id, j, s.Trade, s.Balances, b.Trade, b.Balances)
				}
			}
		}
		if accepted != 3 {
			t.Fatalf("%d trades accepted, want 3 (Ann's and Bob's first two, Ann's NO)", accepted)
		}
		for i := range seq.ms {
			s, b := seq.e.market(seq.ms[i].ID), bat.e.market(bat.ms[i].ID)
			if s.QYes != b.QYes || s.QNo != b.QNo || s.Volume != b.Volume {
				t.Fatalf("market %d: sequential %+v, batched %+v", i, s, b)
			}
		}
		for _, u := range [][2]*account.User{{seq.ann, bat.ann}, {seq.bob, bat.bob}} {
			if s, b := seq.e.balances(u[0]), bat.e.balances(u[1]); s != b {
				t.Fatalf("%s: sequential %+v, batched %+v", u[0].Name, s, b)
			}
		}
		// The missing market left nothing behind: both ledgers hold the
		// same accounts.
		rs, _ := seq.e.accounts.Audit(seq.e.ctx)
		rb, _ := bat.e.accounts.Audit(bat.e.ctx)
		if rs.Accounts != rb.Accounts || rs.Postings != rb.Postings {
			t.Fatalf("sequential ledger %d accounts %d postings, batched %d and %d", rs.Accounts, rs.Postings, rb.Accounts, rb.Postings)
		}
		seq.e.audit()
		bat.e.audit()
	})

	t.Run("a batch of only missing markets changes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("nobody", 1000, 0)
		reqs := [][]market.Request{{{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100}}}
		before, _ := e.accounts.Audit(e.ctx)
		effs, err := e.stores.Markets.ExecMarkets(e.ctx, []market.Lock{market.LockFor(1<<40, reqs[0])}, func(sts []*market.State) ([]*market.Effects, error) {
			return market.DecideMarkets(sts, reqs)
		})
		if err != nil || len(effs) != 1 || effs[0] != nil {
			t.Fatalf("effects %v, error %v; want one nil", effs, err)
		}
		if after, _ := e.accounts.Audit(e.ctx); after.Accounts != before.Accounts {
			t.Fatalf("%d ledger accounts, had %d", after.Accounts, before.Accounts)
		}
	})

	t.Run("an idempotency key repeated on two markets of one batch runs once", func(t *testing.T) {
		e := newEnv(t, newStores)
		if e.partners == nil {
			t.Skip("the store has no partners")
		}
		p := e.partner("twice", 100_000)
		ms := e.event(e.creator(), 0, 20000, 0.5, 0.5).Pools[0].Markets
		bet := func(m *market.Market, hash string) market.Request {
			return market.Request{Side: market.Yes, Action: market.ActionBuy, Amount: 1000, Partner: &market.PartnerOrder{
				Key: market.Key{PartnerID: p.ID, ClientBetID: "bet-1"}, Digest: hash, ExternalID: "u-1", TopUp: true}}
		}
		ids := []int64{ms[0].ID, ms[1].ID}
		reqs := [][]market.Request{{bet(ms[0], "h0")}, {bet(ms[1], "h1")}}
		effs, err := e.stores.Markets.ExecMarkets(e.ctx, []market.Lock{market.LockFor(ids[0], reqs[0]), market.LockFor(ids[1], reqs[1])},
			func(sts []*market.State) ([]*market.Effects, error) { return market.DecideMarkets(sts, reqs) })
		if err != nil {
			t.Fatal(err)
		}
		if r := effs[0].Results[0]; r.Err != nil || r.Trade == nil || r.Trade.ID == 0 {
			t.Fatalf("first use of the key: %+v", r)
		}
		if r := effs[1].Results[0]; !errors.Is(r.Err, market.ErrIdempotencyConflict) {
			t.Fatalf("the key again with another request: %v, want ErrIdempotencyConflict", r.Err)
		}
		if trades, _ := e.stores.Markets.Trades(e.ctx, ids[1]); len(trades) != 0 {
			t.Fatalf("the second market traded: %+v", trades)
		}
		e.audit()
	})

	t.Run("traders on many markets share batches and keep the ledger whole while a market settles", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.01, 30000, 0.5, 0.4, 0.6, 0.5)
		ms := ev.Pools[0].Markets
		b := market.NewBatcher(e.stores.Markets, 16, 0)
		b.MaxInFlight = 2
		var batches, batched atomic.Int64
		b.Observe = func(size int, _ time.Duration, err error) {
			if err == nil {
				batches.Add(1)
				batched.Add(int64(size))
			}
		}
		const traders, each = 12, 16
		users := make([]*account.User, traders)
		for i := range users {
			users[i] = e.user("s"+itoa(i), 4000, 0)
		}
		var accepted atomic.Int64
		var wg sync.WaitGroup
		for i, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range each {
					m := ms[(i+j)%len(ms)]
					res, err := b.Trade(e.ctx, m.ID, market.Request{UserID: u.ID, Side: market.Side(j % 2), Action: market.ActionBuy, Amount: 100 + int64(i)})
					if err != nil {
						t.Error(err)
						return
					}
					switch {
					case res.Err == nil:
						accepted.Add(1)
					case errors.Is(res.Err, account.ErrInsufficientFunds), errors.Is(res.Err, market.ErrClosed):
					default:
						t.Errorf("refused: %v", res.Err)
					}
				}
			}()
		}
		// A missing market among them fails its own caller only.
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.Trade(e.ctx, 1<<40, market.Request{UserID: users[0].ID, Side: market.Yes, Action: market.ActionBuy, Amount: 100})
			if !errors.Is(err, market.ErrMarketNotFound) {
				t.Errorf("a trade on a missing market: %v, want ErrMarketNotFound", err)
			}
		}()
		time.Sleep(5 * time.Millisecond)
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[1].PoolID, ms[1].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if batched.Load() != traders*each+1 {
			t.Fatalf("batches carried %d requests, want %d", batched.Load(), traders*each+1)
		}
		var logged int64
		for _, m := range ms {
			trades, _ := e.stores.Markets.Trades(e.ctx, m.ID)
			logged += int64(len(trades))
		}
		if logged != accepted.Load() {
			t.Fatalf("trade logs hold %d trades, callers were told %d", logged, accepted.Load())
		}
		for _, u := range users {
			open, _ := e.stores.Markets.OpenPositions(e.ctx, u.ID)
			for _, p := range open {
				if p.MarketID == ms[1].ID {
					t.Fatalf("user %d kept a position on the settled market: %+v", u.ID, p)
				}
			}
		}
		t.Logf("%d requests in %d batches", batched.Load(), batches.Load())
		e.audit()
	})
}
