package storagetest

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
)

// exclusiveEvent creates an active event with one exclusive pool of
// len(probs) markets.
func (e *env) exclusiveEvent(creator *account.User, margin float64, b int64, probs ...float64) *market.Event {
	e.t.Helper()
	np := market.NewPool{Name: "Winner", Margin: margin, B: b, Exclusive: true}
	for i, p := range probs {
		np.Markets = append(np.Markets, market.NewMarket{Name: "Outcome " + itoa(i), Probability: p})
	}
	ev, err := e.markets.CreateEvent(e.ctx, creator, market.NewEvent{Name: "Exclusive", Pools: []market.NewPool{np}})
	if err != nil {
		e.t.Fatalf("create event: %v", err)
	}
	if err := e.markets.SetActive(e.ctx, creator.ID, ev.ID, ptr(true)); err != nil {
		e.t.Fatal(err)
	}
	return ev
}

// poolState reads pool id back and checks what every trade must leave:
// each market's q_yes is its outcome's quantity and q_no its complement's
// (lmsr.Exclusive.BinaryViews), the prices sum to 1, the pool's escrow
// (its first market's) holds what it held at opening plus the net cost of
// every trade, the other escrows are empty, and the audit passes. It
// returns the pool as one lmsr.Exclusive.
func (e *env) poolState(id int64, escrow int64) lmsr.Exclusive {
	e.t.Helper()
	p, err := e.stores.Markets.Pool(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	if !p.Exclusive {
		e.t.Fatalf("pool %d reads back as not exclusive", id)
	}
	ms := slices.Clone(p.Markets)
	slices.SortFunc(ms, func(a, b *market.Market) int { return int(a.ID - b.ID) })
	ex := lmsr.Exclusive{B: p.B, Q: make([]int64, len(ms))}
	for j, m := range ms {
		if !m.Exclusive {
			e.t.Fatalf("market %d of exclusive pool %d reads back as not exclusive", m.ID, id)
		}
		ex.Q[j] = m.QYes
	}
	views := ex.BinaryViews()
	sum, viewSum := 0.0, 0.0
	for j, m := range ms {
		if m.QYes != views[j].QYes || m.QNo != views[j].QNo {
			e.t.Fatalf("market %d shows (q_yes, q_no) = (%d, %d), the pool's view is %+v", m.ID, m.QYes, m.QNo, views[j])
		}
		sum += ex.Price(j)
		viewSum += m.YesProbability()
	}
	if math.Abs(sum-1) > 1e-12 {
		e.t.Fatalf("pool %d: prices sum to %v", id, sum)
	}
	// Each market's view rounds q_no to a share: its binary price is the
	// pool's within 0.125/b.
	if math.Abs(viewSum-1) > float64(len(ms))*0.125/float64(p.B)+1e-12 {
		e.t.Fatalf("pool %d: the markets' binary prices sum to %v", id, viewSum)
	}
	for j, m := range ms {
		got := e.escrowBalance(m.ID)
		if j == 0 && got != escrow {
			e.t.Fatalf("pool %d: escrow holds %d, want %d", id, got, escrow)
		}
		if j > 0 && got != 0 {
			e.t.Fatalf("pool %d: market %d's own escrow holds %d, want 0", id, m.ID, got)
		}
	}
	e.audit()
	return ex
}

func (e *env) escrowBalance(marketID int64) int64 {
	e.t.Helper()
	accts, _, err := e.stores.Accounts.LedgerState(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, a := range accts {
		if a.Ref == account.EscrowAccount(marketID) {
			return a.Balance
		}
	}
	return 0
}

func testExclusive(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("an exclusive pool opens as one LMSR and escrows its worst case once", func(t *testing.T) {
		e := newEnv(t, newStores)
		treasury := e.treasury()
		ev := e.exclusiveEvent(e.creator(), 0.02, 10000, 0.5, 0.3, 0.2)
		want, err := lmsr.NewExclusive(10000, []float64{0.5, 0.3, 0.2})
		if err != nil {
			t.Fatal(err)
		}
		sub, _ := want.SubsidyKopecks()
		got := e.poolState(ev.Pools[0].ID, sub)
		if !slices.Equal(got.Q, want.Q) {
			t.Fatalf("pool opens at q = %v, want %v", got.Q, want.Q)
		}
		if spent := treasury - e.treasury(); spent != sub {
			t.Fatalf("the treasury escrowed %d, want %d", spent, sub)
		}
		read, err := e.markets.Event(e.ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !read.Pools[0].Exclusive {
			t.Fatal("the event's pool reads back as not exclusive")
		}
	})

	t.Run("every trade moves the whole pool and the prices sum to 1 after each", func(t *testing.T) {
		for _, seed := range []uint64{1, 2, 3} {
			e := newEnv(t, newStores)
			ev := e.exclusiveEvent(e.creator(), 0.03, 5000, 0.4, 0.3, 0.2, 0.1)
			pool := ev.Pools[0]
			ex, _ := lmsr.NewExclusive(5000, []float64{0.4, 0.3, 0.2, 0.1})
			escrow, _ := ex.SubsidyKopecks()
			e.poolState(pool.ID, escrow)
			users := []*account.User{e.user("ann", 1_000_000, 0), e.user("bob", 1_000_000, 0)}
			held := map[[3]int64]int64{} // (user, market, side) → shares
			rng := rand.New(rand.NewPCG(seed, 7))
			for range 40 {
				u := users[rng.IntN(len(users))]
				i := rng.IntN(len(pool.Markets))
				m := pool.Markets[i]
				side := market.Side(rng.IntN(2))
				k := [3]int64{u.ID, m.ID, int64(side)}
				if held[k] > 0 && rng.IntN(3) == 0 {
					shares := 1 + rng.Int64N(held[k])
					want, err := ex.SellShares(i, side, shares, 0.03)
					if err != nil {
						t.Fatal(err)
					}
					res, err := e.sell(u, m, side, shares)
					if err != nil {
						t.Fatalf("sell %d %v on market %d: %v", shares, side, i, err)
					}
					if res.Trade.Amount != want.Payout || res.Trade.Cost != want.Refund {
						t.Fatalf("sale paid %d (refund %d), the pricer says %+v", res.Trade.Amount, res.Trade.Cost, want)
					}
					held[k] -= shares
					escrow -= want.Refund
					ex = ex.With(i, side, -shares)
				} else {
					amount := 100 + rng.Int64N(5000)
					want, err := ex.BuyForSpend(i, side, amount, 0.03)
					if err != nil {
						t.Fatal(err)
					}
					res, err := e.buy(u, m, side, amount)
					if err != nil {
						t.Fatalf("buy %v on market %d for %d: %v", side, i, amount, err)
					}
					if res.Trade.Shares != want.Shares || res.Trade.Amount != want.Charge || res.Trade.Cost != want.Cost {
						t.Fatalf("buy got %+v, the pricer says %+v", res.Trade, want)
					}
					if res.Trade.PriceAfter != ex.With(i, side, want.Shares).Price(i) {
						t.Fatalf("price after %v, want the pool's %v", res.Trade.PriceAfter, ex.With(i, side, want.Shares).Price(i))
					}
					held[k] += want.Shares
					escrow += want.Cost
					ex = ex.With(i, side, want.Shares)
				}
				got := e.poolState(pool.ID, escrow)
				if !slices.Equal(got.Q, ex.Q) {
					t.Fatalf("seed %d: pool at q = %v, want %v", seed, got.Q, ex.Q)
				}
			}
			// Open positions are valued by selling them into the whole pool.
			for _, u := range users {
				open, err := e.markets.OpenPositions(e.ctx, u.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, op := range open {
					i := slices.IndexFunc(pool.Markets, func(m *market.Market) bool { return m.ID == op.MarketID })
					want, err := ex.SellShares(i, op.Side, op.Shares, 0.03)
					if err != nil {
						want.Payout = 0
					}
					if op.Value != want.Payout {
						t.Fatalf("%d %v shares on market %d are valued %d, selling them pays %d", op.Shares, op.Side, i, op.Value, want.Payout)
					}
				}
			}
			// Every market's price history has a point per trade of the pool.
			for _, m := range pool.Markets {
				h, err := e.markets.History(e.ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(h) != 41 {
					t.Fatalf("market %d: %d price points, want the opening and 40", m.ID, len(h))
				}
			}
		}
	})

	t.Run("a two-market exclusive pool trades exactly as a binary market", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		bin := e.event(c, 0.02, 7000, 0.35).Pools[0].Markets[0]
		pool := e.exclusiveEvent(c, 0.02, 7000, 0.35, 0.65).Pools[0].Markets
		ann, bob := e.user("ann", 100_000, 0), e.user("bob", 100_000, 0)
		steps := []struct {
			side   market.Side
			amount int64
		}{{market.Yes, 3000}, {market.No, 5000}, {market.Yes, 700}, {market.No, 12000}}
		for _, s := range steps {
			b, err := e.buy(ann, bin, s.side, s.amount)
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.buy(bob, pool[0], s.side, s.amount)
			if err != nil {
				t.Fatal(err)
			}
			if b.Trade.Shares != p.Trade.Shares || b.Trade.Amount != p.Trade.Amount || b.Trade.Cost != p.Trade.Cost ||
				b.Trade.PriceAfter != p.Trade.PriceAfter || b.Trade.QYes != p.Trade.QYes || b.Trade.QNo != p.Trade.QNo {
				t.Fatalf("binary %+v, pool %+v", b.Trade, p.Trade)
			}
		}
		b, err := e.sell(ann, bin, market.No, 1000)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.sell(bob, pool[0], market.No, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if b.Trade.Amount != p.Trade.Amount || b.Trade.Cost != p.Trade.Cost {
			t.Fatalf("binary sale %+v, pool sale %+v", b.Trade, p.Trade)
		}
		if other := e.market(pool[1].ID); other.QYes != p.Trade.QNo || other.QNo != p.Trade.QYes {
			t.Fatalf("the other market shows (%d, %d), want the mirror of (%d, %d)", other.QYes, other.QNo, p.Trade.QYes, p.Trade.QNo)
		}
		e.audit()
	})

	t.Run("YES on every market costs at least what it is sure to pay", func(t *testing.T) {
		e := newEnv(t, newStores)
		ms := e.exclusiveEvent(e.creator(), 0, 10000, 0.25, 0.25, 0.25, 0.25).Pools[0].Markets
		ann := e.user("ann", 1_000_000, 0)
		var paid int64
		shares := make([]int64, len(ms))
		for range 3 {
			for i, m := range ms {
				res, err := e.buy(ann, m, market.Yes, 4000)
				if err != nil {
					t.Fatal(err)
				}
				paid += res.Trade.Amount
				shares[i] += res.Trade.Shares
			}
		}
		if sure := slices.Min(shares); paid < sure {
			t.Fatalf("paid %d for YES on every market, which pays at least %d whoever wins", paid, sure)
		}
	})

	t.Run("markets of one pool in one batch decide one after the other", func(t *testing.T) {
		// The same requests on two fresh pools: one at a time through
		// the service, and as one batch over two markets of the pool.
		type world struct {
			e   *env
			ms  []*market.Market
			ann *account.User
		}
		build := func() world {
			e := newEnv(t, newStores)
			ms := e.exclusiveEvent(e.creator(), 0.02, 8000, 0.5, 0.3, 0.2).Pools[0].Markets
			return world{e, ms, e.user("ann", 50_000, 0)}
		}
		reqs := func(w world) [][]market.Request {
			pool := []int64{w.ms[0].ID, w.ms[1].ID, w.ms[2].ID}
			a := w.ann.ID
			return [][]market.Request{
				{{UserID: a, Side: market.Yes, Action: market.ActionBuy, Amount: 3000, Pool: pool}, {UserID: a, Side: market.No, Action: market.ActionBuy, Amount: 2000, Pool: pool}},
				{{UserID: a, Side: market.No, Action: market.ActionBuy, Amount: 4000, Pool: pool}},
			}
		}
		seq, bat := build(), build()
		var want []market.Result
		for g, rs := range reqs(seq) {
			for _, r := range rs {
				res, err := seq.e.markets.Execute(seq.e.ctx, seq.ms[2-g].ID, r)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, *res)
			}
		}
		rs := reqs(bat)
		ids := []int64{bat.ms[2].ID, bat.ms[1].ID}
		locks := []market.Lock{market.LockFor(ids[0], rs[0]), market.LockFor(ids[1], rs[1])}
		effs, err := bat.e.stores.Markets.ExecMarkets(bat.e.ctx, locks, func(sts []*market.State) ([]*market.Effects, error) {
			for _, st := range sts {
				if len(st.Pool) != 3 {
					t.Fatalf("market %d locked with %d markets of its pool, want 3", st.Market.ID, len(st.Pool))
				}
			}
			return market.DecideMarkets(sts, rs)
		})
		if err != nil {
			t.Fatal(err)
		}
		got := append(slices.Clone(effs[0].Results), effs[1].Results...)
		for i := range want {
			if got[i].Err != nil || got[i].Trade.Shares != want[i].Trade.Shares || got[i].Trade.Amount != want[i].Trade.Amount {
				t.Fatalf("request %d: batched %+v (%v), one at a time %+v", i, got[i].Trade, got[i].Err, want[i].Trade)
			}
		}
		for i := range seq.ms {
			s, b := seq.e.market(seq.ms[i].ID), bat.e.market(bat.ms[i].ID)
			if s.QYes != b.QYes || s.QNo != b.QNo || s.Volume != b.Volume {
				t.Fatalf("market %d: one at a time %+v, batched %+v", i, s, b)
			}
		}
		bat.e.audit()
	})

	t.Run("YES on one market resolves the whole pool and pays exactly", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.exclusiveEvent(c, 0.02, 10000, 0.5, 0.3, 0.2)
		ms := ev.Pools[0].Markets
		ann, bob, cat := e.user("ann", 100_000, 0), e.user("bob", 100_000, 0), e.user("cat", 100_000, 0)
		type hold struct {
			u      *account.User
			m      int
			side   market.Side
			amount int64
		}
		holds := []hold{{ann, 1, market.Yes, 5000}, {ann, 0, market.No, 3000}, {bob, 1, market.No, 4000}, {bob, 2, market.Yes, 2000}, {cat, 0, market.Yes, 6000}}
		want := map[int64]int64{}
		for _, h := range holds {
			res, err := e.buy(h.u, ms[h.m], h.side, h.amount)
			if err != nil {
				t.Fatal(err)
			}
			// Market 1 wins: its YES and the NO of every other market pay.
			if (h.m == 1) == (h.side == market.Yes) {
				want[h.u.ID] += res.Trade.Shares
			}
		}
		before := map[int64]int64{}
		for _, u := range []*account.User{ann, bob, cat} {
			before[u.ID] = e.balances(u).Balance
		}
		treasury, escrow := e.treasury(), e.escrowBalance(ms[0].ID)
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[1].PoolID, ms[1].ID, "NO"); !errors.As(err, new(*input.Error)) {
			t.Fatalf("NO alone on a market of an exclusive pool: %v, want invalid input", err)
		}
		if e.market(ms[1].ID).Resolved {
			t.Fatal("a refused NO resolved the market")
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[1].PoolID, ms[1].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		var paid int64
		for _, u := range []*account.User{ann, bob, cat} {
			got := e.balances(u).Balance - before[u.ID]
			if got != want[u.ID] {
				t.Fatalf("%s was paid %d, want %d", u.Name, got, want[u.ID])
			}
			paid += got
		}
		if got := e.treasury() - treasury; got != escrow-paid {
			t.Fatalf("the treasury got %d back, want what the escrow held less the payouts, %d", got, escrow-paid)
		}
		for i, m := range ms {
			got := e.market(m.ID)
			wantSide := market.No
			if i == 1 {
				wantSide = market.Yes
			}
			if !got.Resolved || got.WinningOutcome == nil || *got.WinningOutcome != wantSide {
				t.Fatalf("market %d: resolved %v, winning %v; want %v", i, got.Resolved, got.WinningOutcome, wantSide)
			}
		}
		p, err := e.markets.Pool(e.ctx, ms[0].PoolID)
		if err != nil {
			t.Fatal(err)
		}
		if p.WonSide == nil || *p.WonSide != 1 {
			t.Fatalf("pool won_side %v, want 1", p.WonSide)
		}
		for _, u := range []*account.User{ann, bob, cat} {
			open, err := e.markets.OpenPositions(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(open) != 0 {
				t.Fatalf("%s still holds %d open positions", u.Name, len(open))
			}
		}
		for _, m := range ms {
			if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES"); !errors.Is(err, market.ErrResolved) {
				t.Fatalf("closing market %d of a resolved pool: %v, want ErrResolved", m.ID, err)
			}
		}
		if _, err := e.buy(ann, ms[2], market.Yes, 1000); !errors.Is(err, market.ErrClosed) {
			t.Fatalf("a buy on a resolved pool: %v, want ErrClosed", err)
		}
		e.audit()
	})

	t.Run("VOID on one market voids the whole pool and refunds every net cost", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.exclusiveEvent(c, 0.03, 5000, 0.6, 0.3, 0.1)
		ms := ev.Pools[0].Markets
		ann, bob := e.user("ann", 100_000, 0), e.user("bob", 100_000, 0)
		spent := map[int64]int64{}
		for _, h := range []struct {
			u      *account.User
			m      int
			side   market.Side
			amount int64
		}{{ann, 0, market.Yes, 4000}, {ann, 2, market.No, 2500}, {bob, 1, market.Yes, 3000}, {bob, 0, market.No, 6000}} {
			res, err := e.buy(h.u, ms[h.m], h.side, h.amount)
			if err != nil {
				t.Fatal(err)
			}
			spent[h.u.ID] += res.Trade.Amount
		}
		before := map[int64]int64{ann.ID: e.balances(ann).Balance, bob.ID: e.balances(bob).Balance}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[2].PoolID, ms[2].ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		for _, u := range []*account.User{ann, bob} {
			if got := e.balances(u).Balance - before[u.ID]; got != spent[u.ID] {
				t.Fatalf("%s got %d back, paid %d", u.Name, got, spent[u.ID])
			}
		}
		for i, m := range ms {
			if got := e.market(m.ID); !got.Resolved || !got.Voided {
				t.Fatalf("market %d after a void of its pool: resolved %v, voided %v", i, got.Resolved, got.Voided)
			}
		}
		e.audit()
	})

	t.Run("the operator resolves a market of an exclusive pool as its creator would", func(t *testing.T) {
		e := newEnv(t, newStores)
		ev := e.exclusiveEvent(e.creator(), 0.02, 5000, 0.5, 0.5)
		ms := ev.Pools[0].Markets
		if err := e.markets.Resolve(e.ctx, ms[0].ID, "NO"); !errors.As(err, new(*input.Error)) {
			t.Fatalf("NO alone by the operator: %v, want invalid input", err)
		}
		if err := e.markets.Resolve(e.ctx, ms[0].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		for i, m := range ms {
			got := e.market(m.ID)
			if !got.Resolved || got.ResolvedBy != market.ResolvedByOperator {
				t.Fatalf("market %d: resolved %v by %q, want by the operator", i, got.Resolved, got.ResolvedBy)
			}
		}
		if err := e.markets.Resolve(e.ctx, ms[1].ID, "VOID"); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("voiding a resolved pool: %v, want ErrResolved", err)
		}
		e.audit()
	})

	t.Run("of two concurrent resolutions of one pool exactly one wins", func(t *testing.T) {
		for range 5 {
			e := newEnv(t, newStores)
			c := e.creator()
			ev := e.exclusiveEvent(c, 0, 10000, 0.25, 0.25, 0.25, 0.25)
			ms := ev.Pools[0].Markets
			ann := e.user("ann", 100_000, 0)
			for _, m := range ms {
				if _, err := e.buy(ann, m, market.No, 2000); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range errs {
				wg.Go(func() {
					m := ms[i*2]
					errs[i] = e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "YES")
				})
			}
			wg.Wait()
			won := 0
			for _, err := range errs {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, market.ErrResolved):
					t.Fatalf("a resolution failed: %v", err)
				}
			}
			if won != 1 {
				t.Fatalf("%d resolutions won, want exactly 1 (%v)", won, errs)
			}
			yes := 0
			for _, m := range ms {
				if w := e.market(m.ID).WinningOutcome; w != nil && *w == market.Yes {
					yes++
				}
			}
			if yes != 1 {
				t.Fatalf("%d markets resolved YES, want 1", yes)
			}
			e.audit()
		}
	})

	t.Run("concurrent trades on every market of a pool through the group commit keep the pool whole", func(t *testing.T) {
		e := newEnv(t, newStores)
		ex, _ := lmsr.NewExclusive(20000, []float64{0.4, 0.3, 0.2, 0.1})
		escrow, _ := ex.SubsidyKopecks()
		ms := e.exclusiveEvent(e.creator(), 0.01, 20000, 0.4, 0.3, 0.2, 0.1).Pools[0].Markets
		e.markets.Trader = market.NewBatcher(e.stores.Markets, 16, 0)
		const traders, each = 8, 12
		var wg sync.WaitGroup
		var mu sync.Mutex
		held := [2][]int64{make([]int64, len(ms)), make([]int64, len(ms))} // [side][market]
		for i := range traders {
			u := e.user("t"+itoa(i), 50_000, 0)
			wg.Go(func() {
				for j := range each {
					k, side := (i+j)%len(ms), market.Side(j%2)
					res, err := e.buy(u, ms[k], side, 200+int64(i*10))
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					escrow += res.Trade.Cost
					held[side][k] += res.Trade.Shares
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		// Every trade's cost reached the pool's escrow, the pool's
		// quantities and views agree, and each outcome's quantity moved
		// by exactly what it pays: no trade decided on a stale pool.
		got := e.poolState(ms[0].PoolID, escrow)
		for k := range ms {
			pays := held[market.Yes][k]
			for j := range ms {
				if j != k {
					pays += held[market.No][j]
				}
			}
			if got.Q[k]-ex.Q[k] != pays {
				t.Fatalf("outcome %d moved by %d, its shares pay %d", k, got.Q[k]-ex.Q[k], pays)
			}
		}
	})

	t.Run("a partner bets on a market of an exclusive pool as on any other", func(t *testing.T) {
		e := newEnv(t, newStores)
		if e.partners == nil {
			t.Skip("this store has no partner store")
		}
		p := e.partner("acme", 100_000)
		ms := e.exclusiveEvent(e.creator(), 0.02, 10000, 0.6, 0.4).Pools[0].Markets
		rc, err := e.partners.Bet(e.ctx, p, partner.Bet{ExternalUserID: "u1", MarketID: ms[1].ID, Side: market.No, AmountKopecks: 2000, ClientBetID: "b1"})
		if err != nil {
			t.Fatal(err)
		}
		if rc.SharesDelta <= 0 {
			t.Fatalf("receipt %+v", rc)
		}
		if m := e.market(ms[0].ID); m.QYes == ms[0].QYes {
			t.Fatal("NO on market 1 did not buy outcome 0")
		}
		if _, err := e.partners.Sell(e.ctx, p, partner.Sell{ExternalUserID: "u1", MarketID: ms[1].ID, Side: market.No, Shares: rc.SharesDelta, ClientBetID: "s1"}); err != nil {
			t.Fatal(err)
		}
		e.audit()
	})
}

// treasury is the platform treasury's balance.
func (e *env) treasury() int64 {
	e.t.Helper()
	accts, _, err := e.stores.Accounts.LedgerState(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, a := range accts {
		if a.Ref == account.Treasury {
			return a.Balance
		}
	}
	return 0
}
