package storagetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// proposalAnte is the ante of the proposals of this suite.
const proposalAnte = 10000

// proposalEnv is an env whose market service takes proposals.
func proposalEnv(t *testing.T, newStores func(*testing.T) Stores) *env {
	e := newEnv(t, newStores)
	e.markets.Proposals = market.ProposalRules{On: true, AnteKopecks: proposalAnte}
	return e
}

// proposal is the event of one pool of len(probs) markets that
// proposer proposes, exclusive when asked.
func proposal(exclusive bool, b int64, probs ...float64) market.NewEvent {
	np := market.NewPool{Name: "Winner", Rules: "Official result", Margin: 0.02, B: b, Exclusive: exclusive}
	for i, p := range probs {
		np.Markets = append(np.Markets, market.NewMarket{Name: "Outcome " + itoa(i), Probability: p})
	}
	return market.NewEvent{Name: "Proposed", Pools: []market.NewPool{np}}
}

// propose has u propose ne and checks what a pending proposal is.
func (e *env) propose(u *account.User, ne market.NewEvent) *market.Event {
	e.t.Helper()
	ev, err := e.markets.CreateEvent(e.ctx, u, ne)
	if err != nil {
		e.t.Fatalf("propose: %v", err)
	}
	got, err := e.markets.Event(e.ctx, ev.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	if got.Status != market.StatusProposed || got.Proposal == nil || got.Proposal.Ante != proposalAnte || got.CreatorID != u.ID || got.IsActive {
		e.t.Fatalf("read back: status %q, proposal %+v, creator %d, active %v", got.Status, got.Proposal, got.CreatorID, got.IsActive)
	}
	for _, p := range got.Pools {
		for _, m := range p.Markets {
			if !m.Unapproved {
				e.t.Fatalf("market %d of a proposal is not unapproved", m.ID)
			}
		}
	}
	return got
}

// subsidyOf is what the escrows of ev's markets hold.
func (e *env) subsidyOf(ev *market.Event) int64 {
	var sum int64
	for _, p := range ev.Pools {
		for _, m := range p.Markets {
			sum += e.escrowBalance(m.ID)
		}
	}
	return sum
}

// testProposals: a proposal holds its ante and no subsidy, cannot be
// shown, traded or resolved; approval and rejection move exactly the
// money they say, once, with the proposer's notification, and the
// creator's load counts approved events only.
func testProposals(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a proposal holds the ante, posts no subsidy and cannot be shown, traded or resolved", func(t *testing.T) {
		e := proposalEnv(t, newStores)
		u := e.user("proposer", 50000, 0)
		treasury := e.accountBalance(account.Treasury)
		ev := e.propose(u, proposal(false, 10000, 0.5, 0.3))
		if b := e.balances(u); b.Balance != 50000-proposalAnte {
			t.Fatalf("balance = %d, want %d", b.Balance, 50000-proposalAnte)
		}
		if got := e.accountBalance(account.AnteAccount(ev.ID)); got != proposalAnte {
			t.Fatalf("ante account = %d, want %d", got, proposalAnte)
		}
		if tr := e.accountBalance(account.Treasury); tr != treasury || e.subsidyOf(ev) != 0 {
			t.Fatalf("the proposal moved the treasury from %d to %d, escrows %d", treasury, tr, e.subsidyOf(ev))
		}
		m := ev.Pools[0].Markets[0]
		if _, err := e.buy(u, m, market.Yes, 1000); !errors.Is(err, market.ErrClosed) {
			t.Fatalf("buy on a proposal: err = %v, want ErrClosed", err)
		}
		if err := e.markets.SetActive(e.ctx, u.ID, ev.ID, ptr(true)); !errors.Is(err, market.ErrNotApproved) {
			t.Fatalf("activate a proposal: err = %v, want ErrNotApproved", err)
		}
		if err := e.markets.Resolve(e.ctx, m.ID, "YES"); !errors.Is(err, market.ErrNotApproved) {
			t.Fatalf("resolve a proposal's market: err = %v, want ErrNotApproved", err)
		}
		if feed, err := e.markets.Events(e.ctx, 100, 0); err != nil || len(feed) != 0 {
			t.Fatalf("feed = %d events (%v), want none", len(feed), err)
		}
		e.audit()
	})

	t.Run("a proposal without the ante is refused and writes nothing; the bonus does not count", func(t *testing.T) {
		e := proposalEnv(t, newStores)
		u := e.user("short", proposalAnte-1, 1_000_000)
		_, err := e.markets.CreateEvent(e.ctx, u, proposal(false, 10000, 0.5))
		if !errors.Is(err, account.ErrInsufficientFunds) {
			t.Fatalf("err = %v, want ErrInsufficientFunds", err)
		}
		if b := e.balances(u); b.Balance != proposalAnte-1 || b.Bonus != 1_000_000 {
			t.Fatalf("balances = %+v after a refused proposal", b)
		}
		if q, err := e.markets.EventsByStatus(e.ctx, market.StatusProposed, 100, 0); err != nil || len(q) != 0 {
			t.Fatalf("queue = %d (%v), want empty", len(q), err)
		}
		if n := len(e.escrows()); n != 0 {
			t.Fatalf("%d markets after a refused proposal", n)
		}
		e.audit()
	})

	t.Run("without proposals a user who is not a creator is refused", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("plain", 50000, 0)
		if _, err := e.markets.CreateEvent(e.ctx, u, proposal(false, 10000, 0.5)); !errors.Is(err, market.ErrForbidden) {
			t.Fatalf("err = %v, want ErrForbidden", err)
		}
	})

	mixed := proposal(true, 30000, 0.6, 0.3, 0.1)
	mixed.Pools = append([]market.NewPool{proposal(false, 20000, 0.5, 0.3).Pools[0]}, mixed.Pools...)
	mixed.Pools = append(mixed.Pools, proposal(false, 10000, 0.7).Pools[0])
	for name, ne := range map[string]market.NewEvent{
		"approval of a binary pool":                               proposal(false, 20000, 0.5, 0.3),
		"approval of an exclusive pool":                           proposal(true, 20000, 0.5, 0.3, 0.2),
		"approval of binary, exclusive and binary pools together": mixed,
	} {
		t.Run(name+" posts the subsidy a creator's event would, returns the ante, lists the event and notifies", func(t *testing.T) {
			e := proposalEnv(t, newStores)
			u := e.user("proposer", 50000, 0)
			c := e.creator()
			same, err := e.markets.CreateEvent(e.ctx, c, ne)
			if err != nil {
				t.Fatal(err)
			}
			ev := e.propose(u, ne)
			treasury := e.accountBalance(account.Treasury)
			got, err := e.markets.Approve(e.ctx, ev.ID)
			if err != nil {
				t.Fatalf("approve: %v", err)
			}
			if got.Status != market.StatusApproved || !got.IsActive || got.Proposal == nil || got.Proposal.DecidedAt == nil {
				t.Fatalf("approved: status %q, active %v, proposal %+v", got.Status, got.IsActive, got.Proposal)
			}
			want := e.subsidyOf(same)
			if sub := e.subsidyOf(got); sub != want || e.accountBalance(account.Treasury) != treasury-want {
				t.Fatalf("subsidy %d, treasury moved by %d; want %d", sub, treasury-e.accountBalance(account.Treasury), want)
			}
			for i, p := range got.Pools {
				for j, m := range p.Markets {
					if g, w := e.escrowBalance(m.ID), e.escrowBalance(same.Pools[i].Markets[j].ID); g != w {
						t.Fatalf("pool %d market %d escrows %d, the creator's same market %d", i, j, g, w)
					}
				}
			}
			if b := e.balances(u); b.Balance != 50000 || e.accountBalance(account.AnteAccount(ev.ID)) != 0 {
				t.Fatalf("balance %d, ante account %d after approval", b.Balance, e.accountBalance(account.AnteAccount(ev.ID)))
			}
			read, err := e.markets.Event(e.ctx, ev.ID)
			if err != nil || read.Status != market.StatusApproved || !read.IsActive || read.Pools[0].Markets[0].Unapproved {
				t.Fatalf("read back: %+v, %v", read, err)
			}
			if notes := e.notesOf(u, social.TypeProposalApproved); len(notes) != 1 || notes[0].RelatedID != ev.ID || notes[0].Data.Amount != proposalAnte {
				t.Fatalf("notifications: %+v", notes)
			}
			trader := e.user("trader", 100000, 0)
			if _, err := e.buy(trader, read.Pools[0].Markets[0], market.Yes, 5000); err != nil {
				t.Fatalf("buy after approval: %v", err)
			}
			if feed, _ := e.markets.Events(e.ctx, 100, 0); len(feed) != 1 || feed[0].ID != ev.ID {
				t.Fatalf("feed = %d events, want the approved one", len(feed))
			}
			if _, err := e.markets.Approve(e.ctx, ev.ID); !errors.Is(err, market.ErrNotProposed) {
				t.Fatalf("approve twice: err = %v, want ErrNotProposed", err)
			}
			if _, err := e.markets.Reject(e.ctx, ev.ID, "late", true); !errors.Is(err, market.ErrNotProposed) {
				t.Fatalf("reject after approval: err = %v, want ErrNotProposed", err)
			}
			e.audit()
		})
	}

	for _, refund := range []bool{true, false} {
		name := "a rejection without refund gives the ante to the treasury"
		if refund {
			name = "a refunded rejection gives the ante back"
		}
		t.Run(name+", once, and notifies with the reason", func(t *testing.T) {
			e := proposalEnv(t, newStores)
			u := e.user("proposer", 50000, 0)
			ev := e.propose(u, proposal(false, 10000, 0.5))
			treasury := e.accountBalance(account.Treasury)
			got, err := e.markets.Reject(e.ctx, ev.ID, "  Duplicate of another event  ", refund)
			if err != nil {
				t.Fatalf("reject: %v", err)
			}
			if got.Status != market.StatusRejected || got.IsActive || got.Proposal.Reason != "Duplicate of another event" || got.Proposal.Refunded != refund {
				t.Fatalf("rejected: status %q, active %v, proposal %+v", got.Status, got.IsActive, got.Proposal)
			}
			wantBalance, wantTreasury := int64(50000-proposalAnte), treasury+proposalAnte
			if refund {
				wantBalance, wantTreasury = 50000, treasury
			}
			if b := e.balances(u); b.Balance != wantBalance || e.accountBalance(account.Treasury) != wantTreasury || e.accountBalance(account.AnteAccount(ev.ID)) != 0 {
				t.Fatalf("balance %d (want %d), treasury %d (want %d)", b.Balance, wantBalance, e.accountBalance(account.Treasury), wantTreasury)
			}
			notes := e.notesOf(u, social.TypeProposalRejected)
			if len(notes) != 1 || notes[0].Data.Excerpt != "Duplicate of another event" || (notes[0].Data.Amount == proposalAnte) != refund {
				t.Fatalf("notifications: %+v", notes)
			}
			read, _ := e.markets.Event(e.ctx, ev.ID)
			if read.Status != market.StatusRejected || !read.Pools[0].Markets[0].Unapproved || read.Proposal.DecidedAt == nil {
				t.Fatalf("read back: status %q, proposal %+v", read.Status, read.Proposal)
			}
			if _, err := e.buy(u, read.Pools[0].Markets[0], market.Yes, 1000); !errors.Is(err, market.ErrClosed) {
				t.Fatalf("buy on a rejected proposal: err = %v", err)
			}
			for what, err := range map[string]error{
				"reject twice":            second(e.markets.Reject(e.ctx, ev.ID, "again", true)),
				"approve after rejection": second(e.markets.Approve(e.ctx, ev.ID)),
			} {
				if !errors.Is(err, market.ErrNotProposed) {
					t.Fatalf("%s: err = %v, want ErrNotProposed", what, err)
				}
			}
			if b := e.balances(u); b.Balance != wantBalance {
				t.Fatalf("the refused second decision moved the balance to %d", b.Balance)
			}
			e.audit()
		})
	}

	t.Run("deciding on a creator's event or on none is refused", func(t *testing.T) {
		e := proposalEnv(t, newStores)
		ev := e.event(e.creator(), 0, 10000, 0.5)
		if _, err := e.markets.Approve(e.ctx, ev.ID); !errors.Is(err, market.ErrNotProposed) {
			t.Fatalf("approve a creator's event: %v", err)
		}
		if _, err := e.markets.Reject(e.ctx, ev.ID, "no", false); !errors.Is(err, market.ErrNotProposed) {
			t.Fatalf("reject a creator's event: %v", err)
		}
		if _, err := e.markets.Approve(e.ctx, ev.ID+1000); !errors.Is(err, market.ErrEventNotFound) {
			t.Fatalf("approve no event: %v", err)
		}
		e.audit()
	})

	t.Run("the queue lists proposals oldest first, and the load counts approved events only", func(t *testing.T) {
		e := proposalEnv(t, newStores)
		u := e.user("proposer", 100000, 0)
		a := e.propose(u, proposal(false, 10000, 0.5))
		b := e.propose(u, proposal(false, 10000, 0.4))
		c := e.propose(u, proposal(false, 10000, 0.3))
		q, err := e.markets.EventsByStatus(e.ctx, market.StatusProposed, 100, 0)
		if err != nil || len(q) != 3 || q[0].ID != a.ID || q[1].ID != b.ID || q[2].ID != c.ID {
			t.Fatalf("queue: %d events (%v)", len(q), err)
		}
		if got := e.creatorLoad(u); got != (market.CreatorLoad{}) {
			t.Fatalf("load with three proposals = %+v, want none", got)
		}
		if _, err := e.markets.Approve(e.ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.markets.Reject(e.ctx, c.ID, "no", false); err != nil {
			t.Fatal(err)
		}
		want := market.CreatorLoad{OpenEvents: 1, SubsidyKopecks: e.subsidyOf(b)}
		if got := e.creatorLoad(u); got != want {
			t.Fatalf("load = %+v, want %+v", got, want)
		}
		if q, _ := e.markets.EventsByStatus(e.ctx, market.StatusProposed, 100, 0); len(q) != 1 || q[0].ID != a.ID {
			t.Fatalf("queue after deciding two: %d events", len(q))
		}
		if q, _ := e.markets.EventsByStatus(e.ctx, market.StatusRejected, 100, 0); len(q) != 1 || q[0].ID != c.ID {
			t.Fatalf("rejected: %d events", len(q))
		}
		e.audit()
	})

	t.Run("an approval past the proposer's limits is refused and writes nothing", func(t *testing.T) {
		e := proposalEnv(t, newStores)
		e.markets.Creators = market.CreatorRules{MaxOpenEvents: 1}
		u := e.user("proposer", 100000, 0)
		a := e.propose(u, proposal(false, 10000, 0.5))
		b := e.propose(u, proposal(false, 10000, 0.5))
		if _, err := e.markets.Approve(e.ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		treasury := e.accountBalance(account.Treasury)
		if _, err := e.markets.Approve(e.ctx, b.ID); !errors.Is(err, market.ErrCreatorLimit) {
			t.Fatalf("second approval: err = %v, want ErrCreatorLimit", err)
		}
		read, _ := e.markets.Event(e.ctx, b.ID)
		if read.Status != market.StatusProposed || e.accountBalance(account.Treasury) != treasury || e.accountBalance(account.AnteAccount(b.ID)) != proposalAnte {
			t.Fatalf("the refused approval wrote: status %q", read.Status)
		}
		e.audit()
	})

	t.Run("of concurrent decisions on one proposal exactly one wins", func(t *testing.T) {
		e := proposalEnv(t, newStores)
		u := e.user("proposer", 50000, 0)
		ev := e.propose(u, proposal(false, 10000, 0.5))
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Go(func() {
				if i%2 == 0 {
					_, errs[i] = e.markets.Approve(e.ctx, ev.ID)
				} else {
					_, errs[i] = e.markets.Reject(e.ctx, ev.ID, "race", true)
				}
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, market.ErrNotProposed):
				t.Fatalf("err = %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d decisions won, want 1", won)
		}
		if b := e.balances(u); b.Balance != 50000 {
			t.Fatalf("balance = %d: the ante came back other than once", b.Balance)
		}
		e.audit()
	})
}

// second is the error of a two-value call.
func second[T any](_ T, err error) error { return err }
