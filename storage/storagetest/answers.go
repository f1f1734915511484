package storagetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/webhook"
)

// Answers added later (market.Service.AddAnswer, Store.AddAnswer): the
// split keeps every holder's claim in every outcome, on both stores.

// otherEvent creates an active event with one exclusive pool of
// len(probs) markets, market other marked Other (none when other < 0).
func (e *env) otherEvent(creator *account.User, margin float64, b int64, other int, probs ...float64) *market.Event {
	e.t.Helper()
	np := market.NewPool{Name: "Winner", Margin: margin, B: b, Exclusive: true}
	for i, p := range probs {
		np.Markets = append(np.Markets, market.NewMarket{Name: "Outcome " + itoa(i), Probability: p, Other: i == other})
	}
	ev, err := e.markets.CreateEvent(e.ctx, creator, market.NewEvent{Name: "Answers", Pools: []market.NewPool{np}})
	if err != nil {
		e.t.Fatalf("create event: %v", err)
	}
	if err := e.markets.SetActive(e.ctx, creator.ID, ev.ID, ptr(true)); err != nil {
		e.t.Fatal(err)
	}
	return ev
}

// poolMarkets reads pool id's markets in ascending id order.
func (e *env) poolMarkets(id int64) []*market.Market {
	e.t.Helper()
	p, err := e.markets.Pool(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	ms := slices.Clone(p.Markets)
	slices.SortFunc(ms, func(a, b *market.Market) int { return cmpInt64(a.ID, b.ID) })
	return ms
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// splitScenario is one random pool with an Other market, random trades
// by a few users, and an answer added: built the same way from its seed
// in every fresh store it runs in.
type splitScenario struct {
	seed  uint64
	n     int // markets before the split
	other int
	users []*account.User
	pool  int64
	// creator made the event.
	creator *account.User
	// before are the users' open positions before the split, by user
	// index; markets by index in the pool's id order.
	before [][]heldPosition
	pNew   float64
	added  *market.Market
}

type heldPosition struct {
	market      int
	side        market.Side
	shares, net int64 // net: spent − returned
}

// build runs the scenario up to the split (with split) or to just before
// it.
func (sc *splitScenario) build(e *env, split bool) {
	e.t.Helper()
	rng := rand.New(rand.NewPCG(sc.seed, 0x5eed))
	sc.n = 2 + rng.IntN(4)
	sc.other = rng.IntN(sc.n)
	probs := make([]float64, sc.n)
	sum := 0.0
	for i := range probs {
		probs[i] = 0.1 + rng.Float64()
		sum += probs[i]
	}
	for i := range probs {
		probs[i] /= sum
	}
	b := int64(500 + rng.IntN(20000))
	margin := []float64{0, 0.02}[rng.IntN(2)]
	sc.creator = e.creator()
	ev := e.otherEvent(sc.creator, margin, b, sc.other, probs...)
	sc.pool = ev.Pools[0].ID
	ms := e.poolMarkets(sc.pool)
	sc.users = nil
	for i := range 4 {
		sc.users = append(sc.users, e.user("holder"+itoa(i), 1_000_000, 0))
	}
	type key struct{ u, m int }
	held := map[key]int64{}
	sides := map[key]market.Side{}
	for range 14 {
		u, m := rng.IntN(len(sc.users)), rng.IntN(sc.n)
		side := []market.Side{market.Yes, market.No}[rng.IntN(2)]
		k := key{u, m}
		if h := held[k]; h > 1 && rng.IntN(4) == 0 {
			shares := 1 + rng.Int64N(h-1)
			if _, err := e.sell(sc.users[u], ms[m], sides[k], shares); err == nil {
				held[k] -= shares
			}
			continue
		}
		if h := held[k]; h > 0 {
			side = sides[k] // one side per market and user, as most do
		}
		res, err := e.buy(sc.users[u], ms[m], side, int64(100+rng.IntN(6000)))
		if err == nil {
			held[k] += res.Trade.Shares
			sides[k] = side
		}
	}
	sc.pNew = 0
	ms = e.poolMarkets(sc.pool)
	po := ms[sc.other].YesProbability()
	sc.pNew = po * (0.02 + 0.96*rng.Float64())
	sc.before = make([][]heldPosition, len(sc.users))
	index := map[int64]int{}
	for i, m := range ms {
		index[m.ID] = i
	}
	for i, u := range sc.users {
		ps, err := e.stores.Markets.OpenPositions(e.ctx, u.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, p := range ps {
			sc.before[i] = append(sc.before[i], heldPosition{market: index[p.MarketID], side: p.Side, shares: p.Shares, net: p.Spent - p.Returned})
		}
	}
	if !split {
		return
	}
	m, err := e.markets.AddAnswer(e.ctx, ev.CreatorID, false, sc.pool, market.NewAnswer{Name: "New answer", NameRu: "Новый ответ", Probability: sc.pNew})
	if err != nil {
		e.t.Fatalf("seed %d: add an answer at %v (Other at %v): %v", sc.seed, sc.pNew, po, err)
	}
	sc.added = m
}

// pays is what user i's positions before the split pay if old outcome k
// wins (k = -1: a void refunds each position its net cost, floored at 0).
func (sc *splitScenario) pays(i, k int) int64 {
	var sum int64
	for _, h := range sc.before[i] {
		switch {
		case k < 0:
			sum += max(h.net, 0)
		case (h.side == market.Yes) == (h.market == k):
			sum += h.shares
		}
	}
	return sum
}

// negative reports whether user i held a position with a negative net
// cost (sold for more than it cost) before the split.
func (sc *splitScenario) negative(i int) bool {
	for _, h := range sc.before[i] {
		if h.net < 0 {
			return true
		}
	}
	return false
}

func (e *env) totalBalance(u *account.User) int64 {
	e.t.Helper()
	b := e.balances(u)
	return b.Balance + b.Bonus
}

func testAnswers(t *testing.T, newStores func(*testing.T) Stores) {
	seeds := []uint64{1, 2, 3, 4}
	t.Run("after a split every holder is paid in every outcome what the old holdings paid, to the kopeck", func(t *testing.T) {
		for _, seed := range seeds {
			sc := &splitScenario{seed: seed}
			// Outcome n+1 stands for a void of the pool.
			probe := newEnv(t, newStores)
			sc.build(probe, true)
			probe.audit()
			n := sc.n
			for k := 0; k <= n+1; k++ {
				t.Run(fmt.Sprintf("seed %d, outcome %d of %d", seed, k, n+1), func(t *testing.T) {
					e := newEnv(t, newStores)
					sc := &splitScenario{seed: seed}
					sc.build(e, true)
					e.audit()
					ms := e.poolMarkets(sc.pool)
					if len(ms) != n+1 || ms[n].ID != sc.added.ID || !ms[sc.other].Other || ms[n].Other {
						t.Fatalf("after the split the pool reads %d markets, the new one %d, want %d markets, the new one %d last", len(ms), ms[len(ms)-1].ID, n+1, sc.added.ID)
					}
					before := make([]int64, len(sc.users))
					for i, u := range sc.users {
						before[i] = e.totalBalance(u)
					}
					old, outcome := k, "YES"
					target := ms[min(k, n)]
					switch {
					case k == n:
						old = sc.other // the new answer was part of Other
					case k == n+1:
						old, outcome = -1, "VOID"
					}
					if err := e.markets.Resolve(e.ctx, target.ID, outcome); err != nil {
						t.Fatal(err)
					}
					for i, u := range sc.users {
						got := e.totalBalance(u) - before[i]
						want := sc.pays(i, old)
						if k == n+1 {
							// A void refunds each position its net cost; a part of
							// a NO on Other merged into a YES with a negative net
							// cost refunds less (docs/answer-split.md), never more.
							if got > want || got < want && !sc.negative(i) {
								t.Errorf("user %d: the void refunded %d, the holdings before the split %d", i, got, want)
							}
							continue
						}
						if got != want {
							t.Errorf("user %d: outcome %d paid %d, the holdings before the split paid %d in outcome %d", i, k, got, want, old)
						}
					}
					e.audit()
				})
			}
		}
	})

	t.Run("a split moves no user's money and tops the escrow up from the treasury as a subsidy", func(t *testing.T) {
		for _, seed := range seeds {
			e := newEnv(t, newStores)
			sc := &splitScenario{seed: seed}
			sc.build(e, false)
			ms := e.poolMarkets(sc.pool)
			escrow, treasury := e.escrowBalance(ms[0].ID), e.treasury()
			load := e.creatorLoad(sc.creator)
			users := make([]int64, len(sc.users))
			for i, u := range sc.users {
				users[i] = e.totalBalance(u)
			}
			m, err := e.markets.AddAnswer(e.ctx, 0, true, sc.pool, market.NewAnswer{Name: "Late", Probability: sc.pNew})
			if err != nil {
				t.Fatal(err)
			}
			top := e.escrowBalance(ms[0].ID) - escrow
			if top < 0 || treasury-e.treasury() != top {
				t.Fatalf("seed %d: the escrow grew by %d and the treasury gave %d", seed, top, treasury-e.treasury())
			}
			// The top-up is a subsidy of the creator's open event.
			if got := e.creatorLoad(sc.creator).SubsidyKopecks - load.SubsidyKopecks; got != top {
				t.Fatalf("seed %d: the creator's subsidy load grew by %d, the top-up was %d", seed, got, top)
			}
			for i, u := range sc.users {
				if got := e.totalBalance(u); got != users[i] {
					t.Fatalf("seed %d: user %d's balance went from %d to %d", seed, i, users[i], got)
				}
			}
			if m.OutcomeIndex != sc.n || m.Other || !m.Exclusive {
				t.Fatalf("seed %d: the new market reads %+v", seed, m)
			}
			if d := m.YesProbability() - sc.pNew; d > 1e-3 || d < -1e-3 {
				t.Fatalf("seed %d: the new answer opens at %v, asked %v", seed, m.YesProbability(), sc.pNew)
			}
			e.audit()
		}
	})

	t.Run("a split refuses a probability at or above Other's, a pool without Other, a resolved pool, and writes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.otherEvent(c, 0, 10000, 2, 0.5, 0.3, 0.2)
		plain := e.otherEvent(c, 0, 10000, -1, 0.5, 0.5)
		binary := e.event(c, 0, 10000, 0.5)
		done := e.otherEvent(c, 0, 10000, 1, 0.6, 0.4)
		if err := e.markets.Resolve(e.ctx, e.poolMarkets(done.Pools[0].ID)[0].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		u := e.user("holder", 100000, 0)
		ms := e.poolMarkets(ev.Pools[0].ID)
		if _, err := e.buy(u, ms[0], market.Yes, 3000); err != nil {
			t.Fatal(err)
		}
		treasury := e.treasury()
		po := e.poolMarkets(ev.Pools[0].ID)[2].YesProbability()
		for _, tc := range []struct {
			name string
			pool int64
			p    float64
			want error
		}{
			{"at Other's probability", ev.Pools[0].ID, po, input.ErrInvalid},
			{"above Other's probability", ev.Pools[0].ID, po + 0.1, input.ErrInvalid},
			{"at zero", ev.Pools[0].ID, 0, input.ErrInvalid},
			{"on a pool without Other", plain.Pools[0].ID, 0.1, market.ErrNoNewAnswer},
			{"on a binary pool", binary.Pools[0].ID, 0.1, market.ErrNoNewAnswer},
			{"on a resolved pool", done.Pools[0].ID, 0.1, market.ErrNoNewAnswer},
			{"on no pool", 1 << 40, 0.1, market.ErrPoolNotFound},
		} {
			_, err := e.markets.AddAnswer(e.ctx, c.ID, false, tc.pool, market.NewAnswer{Name: "X", Probability: tc.p})
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
			}
		}
		if _, err := e.markets.AddAnswer(e.ctx, u.ID, false, ev.Pools[0].ID, market.NewAnswer{Name: "X", Probability: 0.1}); !errors.Is(err, market.ErrForbidden) {
			t.Errorf("by another user: got %v, want ErrForbidden", err)
		}
		if got := len(e.poolMarkets(ev.Pools[0].ID)); got != 3 || e.treasury() != treasury {
			t.Fatalf("after the refusals the pool has %d markets and the treasury moved by %d", got, e.treasury()-treasury)
		}
		e.audit()
	})

	t.Run("a trade priced from a list of the pool read before the split reads it again and prices the whole pool", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.otherEvent(c, 0, 10000, 1, 0.7, 0.3)
		u := e.user("holder", 100000, 0)
		ms := e.poolMarkets(ev.Pools[0].ID)
		// Another instance: its own service, its own list of the pool.
		other := market.NewService(e.stores.Markets, e.accounts)
		if _, err := other.Execute(e.ctx, ms[0].ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.markets.AddAnswer(e.ctx, c.ID, false, ev.Pools[0].ID, market.NewAnswer{Name: "Late", Probability: 0.1}); err != nil {
			t.Fatal(err)
		}
		res, err := other.Execute(e.ctx, ms[0].ID, market.Request{UserID: u.ID, Side: market.No, Action: market.ActionBuy, Amount: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Trade.Shares <= 0 {
			t.Fatalf("the trade bought %d shares", res.Trade.Shares)
		}
		sum := 0.0
		for _, m := range e.poolMarkets(ev.Pools[0].ID) {
			sum += m.YesProbability()
		}
		if sum < 1-1e-9 || sum > 1+1e-9 {
			t.Fatalf("after the trade the pool's prices sum to %v", sum)
		}
		e.audit()
	})

	t.Run("a partner with a webhook whose users hold positions in the pool is told of the answer, once", func(t *testing.T) {
		if newStores(t).Webhooks == nil {
			t.Skip("this store has no webhook store")
		}
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.otherEvent(c, 0, 10000, 2, 0.5, 0.3, 0.2)
		ms := e.poolMarkets(ev.Pools[0].ID)
		a, b, quiet := e.partner("A", 1_000_000), e.partner("B", 1_000_000), e.partner("Quiet", 1_000_000)
		e.hook(a)
		e.hook(quiet)
		e.dispatch()
		e.bet(a, "alice", ms[2], market.No, 2000)
		e.bet(a, "bob", ms[0], market.Yes, 1000)
		e.bet(b, "carol", ms[2], market.Yes, 1000)
		m, err := e.markets.AddAnswer(e.ctx, c.ID, false, ev.Pools[0].ID, market.NewAnswer{Name: "Cid", Probability: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		e.dispatch()
		e.dispatch()
		var got []*webhook.Delivery
		for _, d := range e.log(a.ID) {
			if d.Type == webhook.AnswerAdded {
				got = append(got, d)
			}
		}
		if len(got) != 1 || got[0].MarketID != m.ID || got[0].EventID != ev.ID || got[0].Status != webhook.Pending {
			t.Fatalf("partner A's market.answer_added deliveries: %+v, want one for market %d", got, m.ID)
		}
		if ds := e.log(quiet.ID); len(ds) != 0 {
			t.Fatalf("a partner without positions in the pool got %+v", ds)
		}
	})

	t.Run("an answer added while trades run on the pool leaves every claim equal to q − q0 and the audits holding", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.otherEvent(c, 0.01, 10000, 3, 0.4, 0.3, 0.2, 0.1)
		ms := e.poolMarkets(ev.Pools[0].ID)
		traders := make([]*account.User, 4)
		for i := range traders {
			traders[i] = e.user("trader"+itoa(i), 1_000_000, 0)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for i, u := range traders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 10 {
					side := []market.Side{market.Yes, market.No}[(i+j)%2]
					if _, err := e.buy(u, ms[(i+j)%len(ms)], side, 500); err != nil && !errors.Is(err, market.ErrPoolChanged) {
						errs <- err
					}
				}
			}()
		}
		// The trades may push Other's price below the answer's before it
		// lands (a refusal that changes nothing): ask again for less.
		for p := 0.03; ; p /= 4 {
			_, err := e.markets.AddAnswer(e.ctx, c.ID, false, ev.Pools[0].ID, market.NewAnswer{Name: "Late", Probability: p})
			var ie *input.Error
			if err == nil {
				break
			}
			if !errors.As(err, &ie) || p < 1e-6 {
				t.Fatal(err)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("a trade failed: %v", err)
		}
		after := e.poolMarkets(ev.Pools[0].ID)
		idx := map[int64]int{}
		for i, m := range after {
			idx[m.ID] = i
		}
		var hs []lmsr.Holding
		for _, u := range traders {
			ps, err := e.stores.Markets.OpenPositions(e.ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				hs = append(hs, lmsr.Holding{Market: idx[p.MarketID], Side: p.Side, Shares: p.Shares})
			}
		}
		claims, err := lmsr.Claims(len(after), hs)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range after {
			if claims[i] != m.QYes-m.Q0Yes {
				t.Fatalf("outcome %d: the positions claim %d, q − q0 is %d", i, claims[i], m.QYes-m.Q0Yes)
			}
		}
		e.audit()
	})

	t.Run("holders are notified and the change log tells of the answer and the new prices", func(t *testing.T) {
		e := newEnv(t, newStores)
		c := e.creator()
		ev := e.otherEvent(c, 0, 10000, 2, 0.5, 0.3, 0.2)
		ms := e.poolMarkets(ev.Pools[0].ID)
		a, b := e.user("a", 100000, 0), e.user("b", 100000, 0)
		e.user("bystander", 100000, 0)
		if _, err := e.buy(a, ms[2], market.No, 2000); err != nil {
			t.Fatal(err)
		}
		if _, err := e.buy(b, ms[2], market.Yes, 2000); err != nil {
			t.Fatal(err)
		}
		var from int64
		if e.stores.Changes != nil {
			bd, err := e.stores.Changes.ChangeBounds(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			from = bd.Last
		}
		m, err := e.markets.AddAnswer(e.ctx, c.ID, false, ev.Pools[0].ID, market.NewAnswer{Name: "Cid", Probability: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []*account.User{a, b} {
			store, ok := e.stores.Markets.(social.NotificationStore)
			if !ok {
				break
			}
			ns, err := store.Notifications(e.ctx, u.ID, false, 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(ns) == 0 || ns[0].Type != social.TypeAnswerAdded || ns[0].Data.MarketName != "Cid" || ns[0].Data.Other != "Outcome 2" {
				t.Fatalf("user %d's newest notification is not answer_added for Cid after Outcome 2", u.ID)
			}
		}
		// a's NO on Other became YES on outcomes 0 and 1; b's YES on Other
		// also YES on Cid.
		pa, _ := e.stores.Markets.OpenPositions(e.ctx, a.ID)
		pb, _ := e.stores.Markets.OpenPositions(e.ctx, b.ID)
		if len(pa) != 2 || len(pb) != 2 {
			t.Fatalf("after the split a holds %d positions and b %d, want 2 and 2", len(pa), len(pb))
		}
		for _, p := range pa {
			if p.Side != market.Yes || p.MarketID == ms[2].ID || p.MarketID == m.ID {
				t.Fatalf("a holds %+v", p.Position)
			}
		}
		if e.stores.Changes == nil {
			return
		}
		es, err := e.stores.Changes.Changes(e.ctx, from, 100)
		if err != nil {
			t.Fatal(err)
		}
		var types []changelog.Type
		for _, en := range es {
			types = append(types, en.Type)
		}
		want := []changelog.Type{changelog.AnswerAdded, changelog.Price, changelog.Price, changelog.Price, changelog.Price, changelog.Notification, changelog.Notification}
		if !slices.Equal(types, want) || es[0].MarketID != m.ID || es[0].PoolID != ev.Pools[0].ID {
			t.Fatalf("the change log after the split: %v (first %+v), want %v for market %d", types, es[0], want, m.ID)
		}
	})
}
