package reliability

import (
	"fmt"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// making is what a world keeps of the making of markets.
type making struct {
	// later is a service on the same store whose clock is past every
	// challenge deadline: it settles the due proposals.
	later *market.Service
	// owners are the creators of the events that are not the model's
	// creator's (approved proposals), by event id.
	owners map[int64]int64
	// proposals are the model's event proposals, in order.
	proposals []worldProposal
	answers   int
}

type worldProposal struct {
	event, proposer int64
	markets         []int64
}

// setMaking turns proposals on in w (with the model's ante), and with
// challenge the challenge window (with the model's bond).
func (w *world) setMaking(challenge bool) {
	w.markets.Proposals = market.ProposalRules{On: true, AnteKopecks: modelAnte}
	w.making.owners = map[int64]int64{}
	if !challenge {
		return
	}
	w.markets.Challenge, w.markets.DisputeBond = modelChallenge, modelBond
	later := market.NewService(w.store, w.accounts)
	later.Challenge, later.DisputeBond = modelChallenge, modelBond
	later.Now = func() time.Time { return w.markets.Now().Add(modelChallenge + time.Hour) }
	w.making.later = later
}

// ownerOf is the creator of event id.
func (w *world) ownerOf(id int64) int64 {
	if c, ok := w.making.owners[id]; ok {
		return c
	}
	return w.creator.ID
}

// newEventSpec is an event of one pool of markets ms trading in win.
func newEventSpec(name string, ms []newMarket, win window) market.NewEvent {
	np := market.NewPool{Name: "Pool", Margin: ms[0].margin, B: ms[0].b, Exclusive: ms[0].exclusive}
	if win.explicit {
		np.LiveAt, np.FinishAt = &win.live, &win.finish
	}
	for i, m := range ms {
		np.Markets = append(np.Markets, market.NewMarket{Name: fmt.Sprintf("Outcome %d", i), Probability: m.prob, Other: m.other})
	}
	return market.NewEvent{Name: name, Pools: []market.NewPool{np}}
}

// applyMaking runs an operation of ops_making_test.go.
func (w *world) applyMaking(o op) (outcome, error) {
	var out outcome
	var err error
	ctx := w.ctx
	switch o.kind {
	case opPropose:
		var ev *market.Event
		ev, err = w.markets.CreateEvent(ctx, w.users[o.user], newEventSpec(fmt.Sprintf("Proposal %d", len(w.making.proposals)), o.newMarkets, window{}))
		if err == nil {
			if ev.Status != market.StatusProposed {
				return out, fmt.Errorf("a user's event is %q, not a proposal", ev.Status)
			}
			p := worldProposal{event: ev.ID, proposer: w.users[o.user].ID}
			for _, m := range ev.Pools[0].Markets {
				p.markets = append(p.markets, m.ID)
			}
			w.making.proposals = append(w.making.proposals, p)
		}
	case opDecide:
		p := w.making.proposals[o.event]
		if !o.bonus {
			_, err = w.markets.Reject(ctx, p.event, "Not this one", o.void)
			break
		}
		var ev *market.Event
		ev, err = w.markets.Approve(ctx, p.event)
		if err == nil {
			if ev.Status != market.StatusApproved || !ev.IsActive || ev.CreatorID != p.proposer {
				return out, fmt.Errorf("the approved proposal is %q, active %v, of user %d", ev.Status, ev.IsActive, ev.CreatorID)
			}
			w.making.owners[ev.ID] = ev.CreatorID
			w.events = append(w.events, ev.ID)
			for _, m := range ev.Pools[0].Markets {
				w.mkts = append(w.mkts, marketRef{event: ev.ID, pool: ev.Pools[0].ID, id: m.ID})
			}
		}
	case opAddAnswer:
		m := w.mkts[o.market]
		var p *market.Pool
		if p, err = w.markets.Pool(ctx, m.pool); err != nil {
			return out, err
		}
		prob := -1.0
		for _, pm := range p.Markets {
			if pm.Other || (prob < 0 && pm.ID == m.id) {
				prob = pm.YesProbability()
			}
		}
		var nm *market.Market
		nm, err = w.markets.AddAnswer(ctx, w.ownerOf(m.event), o.operator, m.pool, market.NewAnswer{Name: fmt.Sprintf("Answer %d", w.making.answers), Probability: o.frac * prob})
		if err == nil {
			w.making.answers++
			w.mkts = append(w.mkts, marketRef{event: m.event, pool: m.pool, id: nm.ID})
		}
	case opDispute:
		_, err = w.markets.Dispute(ctx, w.users[o.user].ID, w.mkts[o.market].id, "The outcome is wrong")
	case opSettleDue:
		var n int
		n, err = w.making.later.SettleDue(ctx, time.Minute, 1000)
		if err == nil && int64(n) != o.amount {
			return out, fmt.Errorf("the deadlines passed settled %d proposals, the model has %d due", n, o.amount)
		}
		out.Amount = int64(n)
	default:
		return out, fmt.Errorf("unknown operation %d", o.kind)
	}
	return out, err
}

// makingNames names the ledger accounts of the making of markets: the
// antes of proposals, the escrows of proposals not approved, and the
// bonds of disputes.
func (w *world) makingNames(names map[account.Ref]string) {
	for i, p := range w.making.proposals {
		names[account.AnteAccount(p.event)] = fmt.Sprintf("ante of proposal %d", i)
		for j, m := range p.markets {
			names[account.EscrowAccount(m)] = fmt.Sprintf("escrow of market %d of proposal %d", j, i)
			names[account.FeeAccount(m)] = fmt.Sprintf("fees of market %d of proposal %d", j, i)
		}
	}
	for i, m := range w.mkts {
		names[account.DisputeBondAccount(m.id)] = fmt.Sprintf("bonds of market %d", i)
	}
}

// checkProposed checks that market id carries an open proposal of
// outcome, and is not resolved.
func (w *world) checkProposed(id int64, outcome string) error {
	p, err := w.markets.ProposalOf(w.ctx, id)
	if err != nil {
		return err
	}
	m, err := w.markets.Market(w.ctx, id)
	if err != nil {
		return err
	}
	if p == nil || p.Done || p.Outcome != outcome || m.Resolved {
		return fmt.Errorf("a creator's close of market %d with the challenge window left proposal %+v, resolved %v", id, p, m.Resolved)
	}
	return nil
}
