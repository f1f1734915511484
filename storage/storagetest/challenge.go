package storagetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// challengeEnv is an env whose market service proposes on close, with a
// clock the test moves.
type challengeEnv struct {
	*env
	mu  sync.Mutex
	now time.Time
}

const testBond = 10000

func newChallengeEnv(t *testing.T, newStores func(*testing.T) Stores) *challengeEnv {
	e := &challengeEnv{env: newEnv(t, newStores), now: time.Now().UTC().Truncate(time.Microsecond)}
	e.markets.Now = func() time.Time {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.now
	}
	e.markets.Challenge, e.markets.DisputeBond = time.Hour, testBond
	return e
}

// advance moves the clock by d.
func (e *challengeEnv) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

// notesOf are u's notifications of type typ.
func (e *env) notesOf(u *account.User, typ string) []*social.Notification {
	e.t.Helper()
	ns, err := e.stores.Markets.(social.NotificationStore).Notifications(e.ctx, u.ID, false, -1, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*social.Notification
	for _, n := range ns {
		if n.Type == typ {
			out = append(out, n)
		}
	}
	return out
}

// proposed closes m for its creator c with outcome won, under the
// challenge window, and checks it answered nil.
func (e *challengeEnv) proposed(c *account.User, ev *market.Event, m *market.Market, won string) {
	e.t.Helper()
	if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, won); err != nil {
		e.t.Fatalf("close %s: %v", won, err)
	}
}

func testChallenge(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a creator's close proposes: trading stops, a second close is refused, holders hear of it, and no money moves", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		yes, no, other := e.user("yes", 100000, 0), e.user("no", 100000, 0), e.user("other", 100000, 0)
		e.must(e.buy(yes, m, market.Yes, 5000))
		e.must(e.buy(no, m, market.No, 3000))
		before := e.ledgerOf(m)
		e.proposed(c, ev, m, "YES")
		got := e.market(m.ID)
		if got.Resolved || !got.Paused || got.Tradable(e.markets.Now()) {
			t.Fatalf("after the proposal: resolved %v paused %v", got.Resolved, got.Paused)
		}
		if _, err := e.buy(other, m, market.Yes, 1000); !errors.Is(err, market.ErrClosed) {
			t.Fatalf("a buy under the proposal: %v, want ErrClosed", err)
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "NO"); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("a second close: %v, want ErrResolved", err)
		}
		p, err := e.markets.ProposalOf(e.ctx, m.ID)
		if err != nil || p == nil {
			t.Fatalf("proposal: %v %v", p, err)
		}
		if p.Outcome != "YES" || p.By != c.ID || !p.ChallengeUntil.Equal(e.markets.Now().Add(time.Hour)) || p.Disputed || p.Done || p.MarketName != m.Name {
			t.Fatalf("proposal %+v", p)
		}
		for _, u := range []*account.User{yes, no} {
			ns := e.notesOf(u, social.TypeResolutionProposed)
			if len(ns) != 1 || ns[0].Data.Won != "YES" || ns[0].RelatedID != ev.ID || ns[0].Data.Until == "" {
				t.Fatalf("user %d's proposal notifications: %+v", u.ID, ns)
			}
		}
		if ns := e.notesOf(other, social.TypeResolutionProposed); len(ns) != 0 {
			t.Fatalf("a user without a position was told: %+v", ns)
		}
		if after := e.ledgerOf(m); after != before {
			t.Fatalf("the proposal moved money: %+v -> %+v", before, after)
		}
		e.audit()
	})

	t.Run("a dispute is refused without a proposal, without a position, twice, without the bond, or after the window, and changes nothing", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.5)
		m, plain := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		holder, poor, outsider := e.user("holder", 100000, 0), e.user("poor", 5000, 0), e.user("outsider", 100000, 0)
		e.must(e.buy(holder, m, market.Yes, 5000))
		e.must(e.buy(holder, plain, market.Yes, 5000))
		e.must(e.buy(poor, m, market.No, 4000))
		if _, err := e.markets.Dispute(e.ctx, holder.ID, plain.ID, "wrong"); !errors.Is(err, market.ErrNoProposal) {
			t.Fatalf("a dispute without a proposal: %v", err)
		}
		e.proposed(c, ev, m, "YES")
		cases := []struct {
			name string
			u    *account.User
			want error
		}{
			{"a user without a position", outsider, market.ErrNotHolder},
			{"a holder without the bond", poor, account.ErrInsufficientFunds},
		}
		for _, tc := range cases {
			b := e.balances(tc.u)
			if _, err := e.markets.Dispute(e.ctx, tc.u.ID, m.ID, "wrong"); !errors.Is(err, tc.want) {
				t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
			}
			if e.balances(tc.u) != b {
				t.Fatalf("%s: the refusal moved money", tc.name)
			}
		}
		if _, err := e.markets.Dispute(e.ctx, holder.ID, m.ID, "  "); err == nil {
			t.Fatal("an empty reason was taken")
		}
		b := e.balances(holder)
		d, err := e.markets.Dispute(e.ctx, holder.ID, m.ID, "The match was abandoned")
		if err != nil {
			t.Fatal(err)
		}
		if d.Bond != testBond || e.balances(holder).Balance != b.Balance-testBond || e.accountBalance(market.BondAccount(m.ID)) != testBond {
			t.Fatalf("the bond: dispute %+v, balance %d -> %d, held %d", d, b.Balance, e.balances(holder).Balance, e.accountBalance(market.BondAccount(m.ID)))
		}
		if _, err := e.markets.Dispute(e.ctx, holder.ID, m.ID, "again"); !errors.Is(err, market.ErrAlreadyDisputed) {
			t.Fatalf("a second dispute: %v", err)
		}
		if p, _ := e.markets.ProposalOf(e.ctx, m.ID); p == nil || !p.Disputed {
			t.Fatalf("the proposal is not disputed: %+v", p)
		}
		e.advance(time.Hour)
		rich := e.user("late", 100000, 0)
		e.must(e.buy(rich, plain, market.No, 1000))
		if _, err := e.markets.Dispute(e.ctx, poor.ID, m.ID, "late"); !errors.Is(err, market.ErrChallengeOver) {
			t.Fatalf("a dispute at the deadline: %v", err)
		}
		if e.accountBalance(market.BondAccount(m.ID)) != testBond {
			t.Fatal("a refused dispute moved the bond account")
		}
		e.audit()
	})

	t.Run("an undisputed proposal settles at its deadline exactly once, however many workers claim it", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		yes := e.user("yes", 100000, 0)
		r := e.must(e.buy(yes, m, market.Yes, 5000))
		e.proposed(c, ev, m, "YES")
		if n, err := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 0 || err != nil {
			t.Fatalf("before the deadline the worker ended %d: %v", n, err)
		}
		e.advance(time.Hour)
		b := e.balances(yes)
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		for range 4 {
			wg.Go(func() {
				n, err := e.markets.SettleDue(e.ctx, time.Minute, 10)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if total != 1 {
			t.Fatalf("the workers ended %d proposals, want 1", total)
		}
		got := e.market(m.ID)
		if !got.Resolved || got.Outcome() != "YES" || got.ResolvedBy != market.ResolvedByCreator || got.Paused {
			t.Fatalf("after the deadline: %+v", got)
		}
		if paid := e.balances(yes).Balance - b.Balance; paid != r.Trade.Shares {
			t.Fatalf("the holder was paid %d, want %d", paid, r.Trade.Shares)
		}
		if p, _ := e.markets.ProposalOf(e.ctx, m.ID); p == nil || !p.Done || p.Final != "YES" {
			t.Fatalf("the proposal after settling: %+v", p)
		}
		e.advance(time.Hour)
		if n, err := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 0 || err != nil {
			t.Fatalf("a later round ended %d: %v", n, err)
		}
		if len(e.resolvedNotes(yes)) != 1 {
			t.Fatalf("the holder got %d market_resolved notifications", len(e.resolvedNotes(yes)))
		}
		e.audit()
	})

	t.Run("a claim is exclusive until its lease passes, then taken again, and a claimed proposal takes no dispute", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		yes := e.user("yes", 100000, 0)
		e.must(e.buy(yes, m, market.Yes, 5000))
		e.proposed(c, ev, m, "NO")
		at := e.markets.Now().Add(time.Hour)
		ps, err := e.stores.Markets.ClaimProposals(e.ctx, at, time.Minute, 10)
		if err != nil || len(ps) != 1 || ps[0].MarketID != m.ID {
			t.Fatalf("first claim: %v %v", ps, err)
		}
		if ps, err := e.stores.Markets.ClaimProposals(e.ctx, at.Add(30*time.Second), time.Minute, 10); err != nil || len(ps) != 0 {
			t.Fatalf("a claim within the lease: %v %v", ps, err)
		}
		if _, err := e.markets.Dispute(e.ctx, yes.ID, m.ID, "wrong"); !errors.Is(err, market.ErrChallengeOver) {
			t.Fatalf("a dispute of a claimed proposal: %v", err)
		}
		// The claim "died": nothing settled. After the lease another worker
		// takes it and settles.
		if e.market(m.ID).Resolved {
			t.Fatal("a claim alone resolved the market")
		}
		e.advance(time.Hour + 2*time.Minute)
		if n, err := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 1 || err != nil {
			t.Fatalf("after the lease the worker ended %d: %v", n, err)
		}
		if got := e.market(m.ID); !got.Resolved || got.Outcome() != "NO" {
			t.Fatalf("after the retry: %+v", got)
		}
		e.audit()
	})

	t.Run("a disputed proposal waits for the operator, whose outcome returns the bonds when it differs and keeps them when it agrees", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5, 0.5)
		upheld, rejected := ev.Pools[0].Markets[0], ev.Pools[0].Markets[1]
		a, b := e.user("a", 100000, 0), e.user("b", 100000, 0)
		for _, m := range []*market.Market{upheld, rejected} {
			e.must(e.buy(a, m, market.No, 5000))
			e.must(e.buy(b, m, market.Yes, 5000))
			e.proposed(c, ev, m, "YES")
			if _, err := e.markets.Dispute(e.ctx, a.ID, m.ID, "NO won"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.markets.Dispute(e.ctx, b.ID, upheld.ID, "void it"); err != nil {
			t.Fatal(err)
		}
		e.advance(2 * time.Hour)
		if n, err := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 0 || err != nil {
			t.Fatalf("the worker ended %d disputed proposals: %v", n, err)
		}
		q, err := e.markets.DisputedProposals(e.ctx)
		if err != nil || len(q) != 2 || len(q[0].Disputes)+len(q[1].Disputes) != 3 {
			t.Fatalf("the queue: %+v %v", q, err)
		}
		treasury := e.treasury()
		ab, bb := e.balances(a).Balance, e.balances(b).Balance
		aRefund := e.refundsDue(upheld, a)[a.ID]
		bRefund := e.refundsDue(upheld, b)[b.ID]
		if err := e.markets.Resolve(e.ctx, upheld.ID, "VOID"); err != nil {
			t.Fatal(err)
		}
		if got := e.balances(a).Balance - ab; got != testBond+aRefund {
			t.Fatalf("a got %d back, want its bond %d and refund %d", got, testBond, aRefund)
		}
		if got := e.balances(b).Balance - bb; got != testBond+bRefund {
			t.Fatalf("b got %d back, want its bond %d and refund %d", got, testBond, bRefund)
		}
		if e.accountBalance(market.BondAccount(upheld.ID)) != 0 {
			t.Fatal("bonds left behind")
		}
		treasury = e.treasury() - treasury // the void's leftovers and refunds
		ab = e.balances(a).Balance
		if err := e.markets.Resolve(e.ctx, rejected.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if e.balances(a).Balance != ab {
			t.Fatal("a rejected dispute's bond came back")
		}
		if e.accountBalance(market.BondAccount(rejected.ID)) != 0 {
			t.Fatal("a kept bond stayed in the bond account")
		}
		ns := e.notesOf(a, social.TypeDisputeResolved)
		if len(ns) != 2 {
			t.Fatalf("a's dispute notifications: %+v", ns)
		}
		backs := map[string]int64{}
		for _, n := range ns {
			backs[n.Data.Won] = n.Data.Amount
		}
		if backs["VOID"] != testBond || backs["YES"] != 0 {
			t.Fatalf("the notifications say %v", backs)
		}
		if q, _ := e.markets.DisputedProposals(e.ctx); len(q) != 0 {
			t.Fatalf("the queue after the decisions: %+v", q)
		}
		if n, err := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 0 || err != nil {
			t.Fatalf("the worker after the decisions ended %d: %v", n, err)
		}
		_ = treasury
		e.audit()
	})

	t.Run("an exclusive pool's proposal covers the pool: every market stops, any of them takes disputes, the operator's winner ends it", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		c := e.creator()
		ev := e.exclusiveEvent(c, 0.02, 20000, 0.5, 0.3, 0.2)
		ms := ev.Pools[0].Markets
		h := e.user("h", 100000, 0)
		e.must(e.buy(h, ms[2], market.Yes, 5000))
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[0].PoolID, ms[0].ID, "NO"); err == nil {
			t.Fatal("NO on a market of an exclusive pool was proposed")
		}
		e.proposed(c, ev, ms[0], "YES")
		for _, m := range ms {
			if !e.market(m.ID).Paused {
				t.Fatalf("market %d trades on", m.ID)
			}
			p, err := e.markets.ProposalOf(e.ctx, m.ID)
			if err != nil || p == nil || p.MarketID != ms[0].ID || p.OutcomeFor(m) != map[bool]string{true: "YES", false: "NO"}[m.ID == ms[0].ID] {
				t.Fatalf("market %d's proposal: %+v %v", m.ID, p, err)
			}
		}
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, ms[1].PoolID, ms[1].ID, "YES"); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("a second close on another market of the pool: %v", err)
		}
		if _, err := e.markets.Dispute(e.ctx, h.ID, ms[2].ID, "outcome 2 won"); err != nil {
			t.Fatal(err)
		}
		b := e.balances(h).Balance
		if err := e.markets.Resolve(e.ctx, ms[2].ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if got := e.balances(h).Balance - b; got <= testBond {
			t.Fatalf("the winner got %d, want its bond and payout", got)
		}
		if p, _ := e.markets.ProposalOf(e.ctx, ms[1].ID); p == nil || !p.Done || p.Final != "NO" {
			t.Fatalf("the pool's proposal: %+v", p)
		}
		e.audit()
	})

	t.Run("a resolution whose bonds were not settled (the operator's call died after the settlement) is finished by the worker", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		h := e.user("h", 100000, 0)
		e.must(e.buy(h, m, market.No, 5000))
		e.proposed(c, ev, m, "YES")
		if _, err := e.markets.Dispute(e.ctx, h.ID, m.ID, "NO won"); err != nil {
			t.Fatal(err)
		}
		// The settlement alone, as if the process died before the bonds.
		if err := e.stores.Markets.Settle(e.ctx, m.ID, market.Settlement{Won: market.No, By: market.ResolvedByOperator}); err != nil {
			t.Fatal(err)
		}
		if e.accountBalance(market.BondAccount(m.ID)) != testBond {
			t.Fatal("the bond moved without the proposal's end")
		}
		b := e.balances(h).Balance
		if n, err := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 1 || err != nil {
			t.Fatalf("the worker ended %d: %v", n, err)
		}
		if got := e.balances(h).Balance - b; got != testBond {
			t.Fatalf("the disputer got %d back, want the bond %d", got, testBond)
		}
		if n, err := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 0 || err != nil {
			t.Fatalf("a second round ended %d: %v", n, err)
		}
		e.audit()
	})

	t.Run("without a bond a dispute still stops the settlement and its disputer hears the decision", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		e.markets.DisputeBond = 0
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		h := e.user("h", 100000, 0)
		e.must(e.buy(h, m, market.No, 5000))
		e.proposed(c, ev, m, "YES")
		b := e.balances(h)
		d, err := e.markets.Dispute(e.ctx, h.ID, m.ID, "NO won")
		if err != nil || d.Bond != 0 || e.balances(h) != b {
			t.Fatalf("a dispute without a bond: %+v %v", d, err)
		}
		e.advance(2 * time.Hour)
		if n, _ := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 0 || e.market(m.ID).Resolved {
			t.Fatal("a disputed proposal settled by itself")
		}
		if err := e.markets.Resolve(e.ctx, m.ID, "YES"); err != nil {
			t.Fatal(err)
		}
		if ns := e.notesOf(h, social.TypeDisputeResolved); len(ns) != 1 || ns[0].Data.Won != "YES" || ns[0].Data.Amount != 0 {
			t.Fatalf("the disputer's notifications: %+v", ns)
		}
		e.audit()
	})

	t.Run("a proposal stands when the window is turned off: the creator cannot close over it, and it still settles at its deadline", func(t *testing.T) {
		e := newChallengeEnv(t, newStores)
		c := e.creator()
		ev := e.event(c, 0.02, 20000, 0.5)
		m := ev.Pools[0].Markets[0]
		h := e.user("h", 100000, 0)
		r := e.must(e.buy(h, m, market.Yes, 5000))
		e.proposed(c, ev, m, "YES")
		e.markets.Challenge = 0
		if err := e.markets.Close(e.ctx, c.ID, ev.ID, m.PoolID, m.ID, "NO"); !errors.Is(err, market.ErrResolved) {
			t.Fatalf("a close over the proposal: %v", err)
		}
		e.advance(time.Hour)
		b := e.balances(h).Balance
		if n, err := e.markets.SettleDue(e.ctx, time.Minute, 10); n != 1 || err != nil {
			t.Fatalf("the worker ended %d: %v", n, err)
		}
		if got := e.balances(h).Balance - b; got != r.Trade.Shares || e.market(m.ID).Outcome() != "YES" {
			t.Fatalf("paid %d, outcome %q", got, e.market(m.ID).Outcome())
		}
		e.audit()
	})
}
