package reliability

import (
	"fmt"
	"time"

	"github.com/predictkit/predictkit/market"
)

// Making markets in the money model:
// event proposals with an ante that the operator approves or rejects,
// answers added to exclusive pools with an Other market, and, on the
// seeds that run with a challenge window, a creator's close that only
// proposes, disputes with a bond, the operator's decision and the
// settlement of due proposals.

// The model's settings of the making of markets.
const (
	modelAnte = 2_000 // a proposal's ante
	modelBond = 3_000 // a dispute's bond
	// modelChallenge is the challenge window on the seeds that have one:
	// long enough that no deadline passes while the model runs on the
	// stores' clock; the settlement of due proposals runs on a service
	// whose clock is past every deadline.
	modelChallenge = 6 * time.Hour
)

const (
	opPropose   opKind = iota + 100 // a user who is not a creator proposes an event
	opDecide                        // the operator approves or rejects a proposal
	opAddAnswer                     // an answer added to a pool, taking from its Other
	opDispute                       // a holder disputes a proposed resolution
	opSettleDue                     // the deadlines pass: undisputed proposals settle
)

// challengeSeed reports whether seed runs with a challenge window.
func challengeSeed(seed uint64) bool { return seed%2 == 0 }

// shadowProposal is an event proposal of the model.
type shadowProposal struct {
	user     int
	markets  []newMarket
	decided  bool
	approved bool
}

// shadowResolution is a creator's proposed resolution, shared by every
// market of an exclusive pool.
type shadowResolution struct {
	market    int // the market closed
	won       market.Side
	void      bool
	disputers []int // users, in order
	done      bool
}

// open reports whether r is a resolution proposed and not yet final.
func (r *shadowResolution) open() bool { return r != nil && !r.done }

// makingString names the operations of this file.
func (o op) makingString() (string, bool) {
	switch o.kind {
	case opPropose:
		return fmt.Sprintf("user %d proposes an event with markets %+v", o.user, o.newMarkets), true
	case opDecide:
		what := "approves"
		if !o.bonus {
			what = fmt.Sprintf("rejects (refund %v)", o.void)
		}
		return fmt.Sprintf("the operator %s proposal %d", what, o.event), true
	case opAddAnswer:
		who := "its creator"
		if o.operator {
			who = "the operator"
		}
		return fmt.Sprintf("%s adds an answer to market %d's pool at %.3f of Other's probability", who, o.market, o.frac), true
	case opDispute:
		return fmt.Sprintf("user %d disputes the resolution of market %d", o.user, o.market), true
	case opSettleDue:
		return "the challenge deadlines pass: due proposals settle", true
	}
	return "", false
}

// making picks an operation of this file, or none (false) when the state
// has nothing for it.
func (g *gen) making(s *shadow, o *op) bool {
	x := g.r.Float64()
	switch {
	case !s.challenge:
		x *= 0.5 // none of the challenge window's
	case g.chance(0.4):
		x = 0.5 + 0.5*x // more of the challenge window's
	}
	switch {
	case x < 0.2:
		o.kind, o.user, o.newMarkets = opPropose, g.r.IntN(modelUsers), g.newMarkets()
		return true
	case x < 0.33:
		var pending []int
		for i, p := range s.proposals {
			if !p.decided {
				pending = append(pending, i)
			}
		}
		if len(s.proposals) == 0 {
			return false
		}
		o.kind, o.event = opDecide, g.r.IntN(len(s.proposals))
		if len(pending) > 0 && g.chance(0.9) {
			o.event = pending[g.r.IntN(len(pending))]
		}
		o.bonus, o.void = g.chance(0.6), g.chance(0.5) // approve; refund of a rejection
		return true
	case x < 0.5:
		var others []int
		for i, m := range s.markets {
			if m.other && !m.resolved && !m.res.open() {
				others = append(others, i)
			}
		}
		o.kind, o.operator = opAddAnswer, g.chance(0.3)
		o.market = g.r.IntN(len(s.markets))
		if len(others) > 0 && g.chance(0.85) {
			o.market = others[g.r.IntN(len(others))]
		}
		o.frac = 0.05 + 0.9*g.r.Float64()
		if g.chance(0.1) {
			o.frac = 1 + 0.5*g.r.Float64() // at or above Other's: refused
		}
		return true
	}
	var proposed []int
	for i, m := range s.markets {
		if m.res.open() {
			proposed = append(proposed, i)
		}
	}
	live := s.live()
	switch x := g.r.Float64(); {
	case (len(proposed) == 0 || x < 0.15) && len(live) > 0:
		// Its creator closes a live market: a proposal.
		o.kind, o.won, o.void = opSettle, g.side(), g.chance(0.2)
		o.market = live[g.r.IntN(len(live))]
		if s.markets[o.market].exclusive {
			o.won = market.Yes
		}
		o.void = o.void && !s.markets[o.market].split
	case x < 0.65:
		o.kind, o.user, o.market = opDispute, g.r.IntN(modelUsers), g.r.IntN(len(s.markets))
		if len(proposed) > 0 && g.chance(0.9) {
			o.market = proposed[g.r.IntN(len(proposed))]
			// Mostly a holder of the pool.
			if hs := s.holdersOf(o.market); len(hs) > 0 && g.chance(0.8) {
				o.user = hs[g.r.IntN(len(hs))]
			}
		}
	case x < 0.85 && len(proposed) > 0:
		// The operator decides a proposed market (disputed or not).
		o.kind, o.operator, o.won, o.void = opSettle, true, g.side(), g.chance(0.2)
		o.market = proposed[g.r.IntN(len(proposed))]
		if s.markets[o.market].exclusive {
			o.won = market.Yes
		}
		if s.markets[o.market].split {
			o.void = false
		}
	default:
		// The stores must settle as many as the model has due.
		o.kind = opSettleDue
		seen := map[*shadowResolution]bool{}
		for _, i := range proposed {
			if r := s.markets[i].res; len(r.disputers) == 0 && !seen[r] {
				seen[r] = true
				o.amount++
			}
		}
	}
	return true
}

// pool lists the markets that resolve with market i: its exclusive pool's,
// or i alone.
func (s *shadow) pool(i int) []int {
	if !s.markets[i].exclusive {
		return []int{i}
	}
	var out []int
	for j, m := range s.markets {
		if m.event == s.markets[i].event {
			out = append(out, j)
		}
	}
	return out
}

// holdersOf lists the users with an open position in market i's pool.
func (s *shadow) holdersOf(i int) []int {
	var out []int
	for u := range modelUsers {
		if s.holds(u, i) {
			out = append(out, u)
		}
	}
	return out
}

func (s *shadow) holds(u, i int) bool {
	for _, j := range s.pool(i) {
		for _, side := range []market.Side{market.Yes, market.No} {
			if s.pos[posKey{holder{-1, u}, j, side}] > 0 {
				return true
			}
		}
	}
	return false
}

// expectMaking is expect for the operations of this file.
func (s *shadow) expectMaking(o op) (string, bool) {
	switch o.kind {
	case opPropose:
		if s.balance[holder{-1, o.user}] < modelAnte {
			return "insufficient_funds", true
		}
		return "", true
	case opDecide:
		if s.proposals[o.event].decided {
			return "not_proposed", true
		}
		return "", true
	case opAddAnswer:
		m := s.markets[o.market]
		takes := m.exclusive && s.hasOther(o.market) && !m.resolved && !m.res.open()
		switch {
		case takes && o.frac >= 1:
			return "invalid:probability", true
		case !takes && o.frac < 1:
			return "no_new_answer", true
		case takes:
			return "", true
		}
		return "", false // refused, by the input's check or the pool's
	case opDispute:
		r := s.markets[o.market].res
		switch {
		case !r.open():
			return "no_proposal", true
		case !s.holds(o.user, o.market):
			return "not_holder", true
		}
		for _, u := range r.disputers {
			if u == o.user {
				return "already_disputed", true
			}
		}
		if s.balance[holder{-1, o.user}] < modelBond {
			return "insufficient_funds", true
		}
		return "", true
	case opSettleDue:
		return "", true
	}
	return "", false
}

// hasOther reports whether market i's pool has an Other market.
func (s *shadow) hasOther(i int) bool {
	for _, j := range s.pool(i) {
		if s.markets[j].other {
			return true
		}
	}
	return false
}

// recordMaking is record for the operations of this file (accepted).
func (s *shadow) recordMaking(o op) []holder {
	switch o.kind {
	case opPropose:
		h := holder{-1, o.user}
		s.balance[h] -= modelAnte
		s.proposals = append(s.proposals, shadowProposal{user: o.user, markets: o.newMarkets})
		return []holder{h}
	case opDecide:
		p := &s.proposals[o.event]
		p.decided, p.approved = true, o.bonus
		h := holder{-1, p.user}
		if o.bonus {
			s.addEvent(p.markets, window{})
		}
		if o.bonus || o.void {
			s.balance[h] += modelAnte
		}
		return []holder{h}
	case opAddAnswer:
		s.split(o.market)
	case opDispute:
		r := s.markets[o.market].res
		r.disputers = append(r.disputers, o.user)
		h := holder{-1, o.user}
		s.balance[h] -= modelBond
		return []holder{h}
	case opSettleDue:
		var paid []holder
		seen := map[*shadowResolution]bool{}
		for _, m := range s.markets {
			r := m.res
			if !r.open() || seen[r] || len(r.disputers) > 0 {
				continue
			}
			seen[r] = true
			paid = append(paid, s.settle(r.market, r.won, r.void)...)
			r.done = true
		}
		return paid
	}
	return nil
}

// addEvent adds an event of markets ms trading in window w.
func (s *shadow) addEvent(ms []newMarket, w window) {
	if !w.explicit {
		// From its creation, which came after the op was made, for a
		// month.
		w.finish = time.Now().AddDate(0, 1, 0).Add(-time.Hour)
	}
	for _, m := range ms {
		s.markets = append(s.markets, shadowMarket{event: s.events, exclusive: m.exclusive, other: m.other, window: w})
	}
	s.events++
}

// split adds an answer to market i's pool: the new market trades in the
// pool's window, and every claim is kept (docs/answer-split.md): a YES on
// Other also holds as many YES on the new answer; a NO on Other becomes
// as many YES on every other old market of the pool. Cost bases are the
// platform's choice, so the pool is never voided by the model after a
// split (what a void refunds depends on them).
func (s *shadow) split(i int) {
	old := s.pool(i)
	other := -1
	for _, j := range old {
		if s.markets[j].other {
			other = j
		}
		s.markets[j].split = true
	}
	base := s.markets[i]
	s.markets = append(s.markets, shadowMarket{event: base.event, exclusive: true, window: base.window, split: true})
	n := len(s.markets) - 1
	for k, shares := range s.pos {
		if k.market != other || shares == 0 {
			continue
		}
		// Bonus shares follow the shares they are part of.
		bonus := s.bonusPos[k]
		if k.side == market.Yes {
			s.pos[posKey{k.h, n, market.Yes}] += shares
			s.bonusPos[posKey{k.h, n, market.Yes}] += bonus
			continue
		}
		s.drop(k)
		for _, j := range old {
			if j != other {
				s.pos[posKey{k.h, j, market.Yes}] += shares
				s.bonusPos[posKey{k.h, j, market.Yes}] += bonus
			}
		}
	}
}

// settle resolves market i (its pool, if exclusive) won or void and pays
// every position of it; it returns the holders paid.
func (s *shadow) settle(i int, won market.Side, void bool) []holder {
	// A market of an exclusive pool resolves the pool: it YES (or VOID),
	// every other market NO (or VOID).
	wins := map[int]market.Side{i: won}
	for _, j := range s.pool(i) {
		if j != i {
			wins[j] = market.No
		}
	}
	for j := range wins {
		s.markets[j].resolved = true
	}
	var paid []holder
	for k, n := range s.pos {
		side, ok := wins[k.market]
		if !ok || n == 0 {
			continue
		}
		switch {
		case void:
			// Its net cost back, floored at 0: a position whose sales
			// paid more than it cost keeps that and gets nothing. The
			// bonus money in it goes back to the bonus balance first.
			refund := max(s.net[k], 0)
			toBonus := min(max(s.bonusNet[k], 0), refund)
			s.bonus[k.h] += toBonus
			s.balance[k.h] += refund - toBonus
			paid = append(paid, k.h)
		case k.side == side:
			s.balance[k.h] += n
			paid = append(paid, k.h)
		}
		s.drop(k)
	}
	// A proposed resolution ends with the market: its bonds go back to
	// the disputers when the outcome differs from the proposal.
	if r := s.markets[i].res; r.open() {
		final := "VOID"
		if !void {
			final = wins[r.market].String()
		}
		proposed := "VOID"
		if !r.void {
			proposed = r.won.String()
		}
		for _, u := range r.disputers {
			if final != proposed {
				s.balance[holder{-1, u}] += modelBond
			}
			paid = append(paid, holder{-1, u}) // checked either way
		}
		r.done = true
	}
	return paid
}

// recordSettle records an accepted settlement: with the challenge window,
// a creator's close proposes its outcome and pauses the pool.
func (s *shadow) recordSettle(o op) []holder {
	if s.challenge && !o.operator {
		r := &shadowResolution{market: o.market, won: o.won, void: o.void}
		for _, j := range s.pool(o.market) {
			s.markets[j].res = r
		}
		return nil
	}
	return s.settle(o.market, o.won, o.void)
}
