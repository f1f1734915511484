package reliability

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"time"

	"github.com/predictkit/predictkit/market"
)

type opKind int

const (
	opDeposit opKind = iota
	opBuy
	opSell
	opPartnerBet
	opPartnerSell
	opFundFloat
	opSetActive
	opSettle
	opNewEvent
	opMoveFinish
)

// op is one operation of the model, on logical names: user 3, market 5,
// partner 1's external user 2.
type op struct {
	kind    opKind
	user    int // user index
	partner int
	ext     int // external user index of a partner
	market  int // market index
	event   int // event index
	side    market.Side
	amount  int64 // buy budget, deposit, float
	shares  int64
	bonus   bool  // use_bonus on a buy, bonus on a deposit, active on show/hide
	guard   int64 // max cost of a buy, min payout of a sell
	betID   string
	won     market.Side
	// void resolves a market VOID instead of won; operator resolves it
	// as the operator rather than as its creator.
	void, operator bool
	// retry names the request an idempotent retry repeats (index in
	// shadow.partnerReqs), -1 for a fresh one.
	retry      int
	conflict   bool
	newMarkets []newMarket
	// window is a new event's trading window (nil times: the defaults,
	// from its creation for a month); at is where a move puts finish_at.
	window window
	at     time.Time
	// frac is an added answer's probability, as a fraction of Other's.
	frac float64
}

// window is a pool's trading window; a zero LiveAt is the default, the
// moment of creation. The model's windows and moves are an hour or more
// from the moment they are made, so that no edge is crossed while the
// model runs: the stores decide by their own clock.
type window struct {
	explicit     bool
	live, finish time.Time
}

// open reports whether w takes trades at now.
func (w window) open(now time.Time) bool { return !now.Before(w.live) && now.Before(w.finish) }

type newMarket struct {
	b      int64
	margin float64
	prob   float64
	// exclusive is the pool's (the same on each of its markets); other
	// marks an exclusive pool's Other market.
	exclusive, other bool
}

func (o op) String() string {
	switch o.kind {
	case opDeposit:
		return fmt.Sprintf("deposit %d to user %d (bonus %v)", o.amount, o.user, o.bonus)
	case opBuy:
		return fmt.Sprintf("user %d buys %s on market %d for %d (bonus %v, max cost %d)", o.user, o.side, o.market, o.amount, o.bonus, o.guard)
	case opSell:
		return fmt.Sprintf("user %d sells %d %s on market %d (min payout %d)", o.user, o.shares, o.side, o.market, o.guard)
	case opPartnerBet, opPartnerSell:
		what := fmt.Sprintf("bets %d on", o.amount)
		if o.kind == opPartnerSell {
			what = fmt.Sprintf("sells %d", o.shares)
		}
		s := fmt.Sprintf("partner %d's user %d %s %s on market %d as %q (guard %d)", o.partner, o.ext, what, o.side, o.market, o.betID, o.guard)
		if o.retry >= 0 {
			s += fmt.Sprintf(" (repeat of request %d", o.retry)
			if o.conflict {
				s += ", other parameters"
			}
			s += ")"
		}
		return s
	case opFundFloat:
		return fmt.Sprintf("fund partner %d's float with %d", o.partner, o.amount)
	case opSetActive:
		return fmt.Sprintf("set event %d active %v", o.event, o.bonus)
	case opSettle:
		by := "its creator"
		if o.operator {
			by = "the operator"
		}
		return fmt.Sprintf("%s resolves market %d %s", by, o.market, o.outcome())
	case opNewEvent:
		return fmt.Sprintf("create event with markets %+v, trading %s", o.newMarkets, o.window)
	case opPropose, opDecide, opAddAnswer, opDispute, opSettleDue:
		s, _ := o.makingString()
		return s
	case opGrowth:
		return fmt.Sprintf("the growth consumer catches up, %d entries per apply", o.amount)
	case opMoveFinish:
		who := "its creator"
		if o.bonus {
			who = "the operator"
		}
		return fmt.Sprintf("%s moves the finish_at of market %d's pool to %s", who, o.market, o.at.Format(time.RFC3339))
	}
	return fmt.Sprintf("op %d", o.kind)
}

// outcome is how a settlement resolves its market: "YES", "NO" or "VOID".
func (o op) outcome() string {
	if o.void {
		return "VOID"
	}
	return o.won.String()
}

// holder is who holds a position or a balance: user `user` (partner < 0)
// or partner `partner`'s external user `user`.
type holder struct {
	partner, user int
}

func (h holder) String() string {
	if h.partner < 0 {
		return fmt.Sprintf("user %d", h.user)
	}
	return fmt.Sprintf("partner %d's user %d", h.partner, h.user)
}

type posKey struct {
	h      holder
	market int
	side   market.Side
}

func (w window) String() string {
	if !w.explicit {
		return "from creation for a month"
	}
	return w.live.Format(time.RFC3339) + ".." + w.finish.Format(time.RFC3339)
}

type shadowMarket struct {
	event int
	// exclusive markets resolve with their pool (the event's one pool).
	exclusive bool
	resolved  bool
	trades    int // trades executed on it
	window    window
	// other marks an exclusive pool's Other market; split a market of a
	// pool an answer was added to; res its proposed resolution.
	other, split bool
	res          *shadowResolution
}

// tradable reports whether m takes trades now.
func (m shadowMarket) tradable() bool {
	return !m.resolved && !m.res.open() && m.window.open(time.Now())
}

type partnerReq struct {
	op       op
	accepted bool
}

// shadow is what the receipts say the world should hold, kept apart from
// any store: balances of users, sub-accounts and floats, open positions,
// trades per market. The generator reads it to pick operations that mean
// something (selling what one holds, repeating a real request).
type shadow struct {
	balance map[holder]int64
	bonus   map[holder]int64
	// subs are the partners' users that have bet: they, and only they,
	// have a sub-account.
	subs   map[holder]bool
	floats []int64
	pos    map[posKey]int64
	// net is what an open position cost (charges, fees included) minus
	// what its sales paid: what a void refunds it, floored at 0.
	net map[posKey]int64
	// bonusPos and bonusNet are the part of pos and net that bonus money
	// bought and is (docs/bonus.md): a sale returns the bonus shares'
	// part of its proceeds to the bonus balance, a void the bonus net
	// cost first.
	bonusPos, bonusNet map[posKey]int64
	markets            []shadowMarket
	events             int
	// partnerReqs are every partner request sent, in order.
	partnerReqs []partnerReq
	nextBet     int
	// proposals are the event proposals; challenge is whether a
	// creator's close proposes (ops_making_test.go).
	proposals []shadowProposal
	challenge bool
	// growth is what the growth consumer owes (growth_test.go).
	growth shadowGrowth
}

func newShadow() *shadow {
	s := &shadow{balance: map[holder]int64{}, bonus: map[holder]int64{}, subs: map[holder]bool{}, floats: make([]int64, modelPartners), pos: map[posKey]int64{}, net: map[posKey]int64{},
		bonusPos: map[posKey]int64{}, bonusNet: map[posKey]int64{}}
	s.initGrowth()
	return s
}

// live lists the markets that take trades now.
func (s *shadow) live() []int {
	var out []int
	for i, m := range s.markets {
		if m.tradable() {
			out = append(out, i)
		}
	}
	return out
}

// held lists h's open positions in a fixed order.
func (s *shadow) held(h holder) []posKey {
	var out []posKey
	for m := range s.markets {
		for _, side := range []market.Side{market.Yes, market.No} {
			k := posKey{h, m, side}
			if s.pos[k] > 0 {
				out = append(out, k)
			}
		}
	}
	return out
}

// gen picks operations from a seeded source.
type gen struct {
	r *rand.Rand
}

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

// logUniform is an integer in [1, max] whose logarithm is uniform: small
// and large amounts alike.
func (g *gen) logUniform(maxV int64) int64 {
	return max(1, int64(math.Exp(g.r.Float64()*math.Log(float64(maxV)))))
}

func (g *gen) side() market.Side {
	if g.r.IntN(2) == 0 {
		return market.Yes
	}
	return market.No
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// newMarkets are one or two markets of a new event: liquidity from thin
// (trades hit the price bounds) to deep, margins from none to the
// maximum.
func (g *gen) newMarkets() []newMarket {
	bs := []int64{500, 5_000, 50_000, 1_000_000}
	margins := []float64{0, 0.01, 0.025, 0.2}
	b, m := bs[g.r.IntN(len(bs))], margins[g.r.IntN(len(margins))]
	if g.chance(0.3) {
		// An exclusive pool of 2 to 4 markets whose probabilities, in
		// hundredths from 0.02 up, sum to 1.
		out := make([]newMarket, 2+g.r.IntN(3))
		left := 100
		for i := range out {
			p := left
			if rest := len(out) - 1 - i; rest > 0 {
				p = 2 + g.r.IntN(left-2*rest-1)
			}
			left -= p
			out[i] = newMarket{b: b, margin: m, prob: float64(p) / 100, exclusive: true}
		}
		out[len(out)-1].other = g.chance(0.5)
		return out
	}
	out := make([]newMarket, 1+g.r.IntN(2))
	for i := range out {
		out[i] = newMarket{b: b, margin: m, prob: float64(2+g.r.IntN(97)) / 100}
	}
	return out
}

// market picks a live market, now and then any market (resolved ones
// and those outside their window included).
func (g *gen) market(s *shadow) int {
	live := s.live()
	if len(live) == 0 || g.chance(0.08) {
		return g.r.IntN(len(s.markets))
	}
	return live[g.r.IntN(len(live))]
}

// next returns the next operation for the state s.
func (g *gen) next(s *shadow) op {
	o := op{retry: -1}
	if len(s.live()) < liveMarkets {
		o.kind, o.newMarkets, o.window = opNewEvent, g.newMarkets(), g.window()
		return o
	}
	if g.chance(0.1) && g.making(s, &o) {
		return o
	}
	if g.chance(0.04) {
		g.growthOp(&o)
		return o
	}
	switch x := g.r.Float64(); {
	case x < 0.10:
		o.kind, o.user, o.bonus = opDeposit, g.r.IntN(modelUsers), g.chance(0.25)
		o.amount = g.logUniform(50_000)
		if g.chance(0.02) {
			o.amount = -g.r.Int64N(2) // 0 or -1: refused
		}
	case x < 0.38:
		o.kind, o.user, o.market, o.side = opBuy, g.r.IntN(modelUsers), g.market(s), g.side()
		o.amount, o.bonus = g.logUniform(30_000), g.chance(0.2)
		if g.chance(0.08) {
			o.guard = max(1, o.amount/2) // likely to refuse: the charge is close to the amount
		}
		if g.chance(0.01) {
			o.amount = 0
		}
	case x < 0.58:
		o.kind, o.user = opSell, g.r.IntN(modelUsers)
		g.sellOf(s, &o, holder{-1, o.user})
	case x < 0.72:
		o.kind, o.partner, o.ext, o.market, o.side = opPartnerBet, g.r.IntN(modelPartners), g.r.IntN(modelExternal), g.market(s), g.side()
		o.amount = g.logUniform(20_000)
		if g.chance(0.05) {
			o.guard = max(1, o.amount/3)
		}
		o.betID = s.newBetID()
	case x < 0.80:
		o.kind, o.partner, o.ext = opPartnerSell, g.r.IntN(modelPartners), g.r.IntN(modelExternal)
		g.sellOf(s, &o, holder{o.partner, o.ext})
		o.betID = s.newBetID()
	case x < 0.91 && len(s.partnerReqs) > 0:
		// A partner repeats an earlier request: after a timeout (same
		// parameters), or by mistake (same id, other parameters).
		i := g.r.IntN(len(s.partnerReqs))
		o = s.partnerReqs[i].op
		o.retry, o.conflict = i, g.chance(0.25)
		if o.conflict {
			switch g.r.IntN(3) {
			case 0:
				o.amount++
				o.shares++
			case 1:
				o.side = o.side.Opposite()
			default:
				m := g.market(s)
				if m == o.market {
					o.side = o.side.Opposite()
				}
				o.market = m
			}
		}
	case x < 0.93:
		o.kind, o.partner, o.amount = opFundFloat, g.r.IntN(modelPartners), g.logUniform(200_000)
	case x < 0.945:
		o.kind, o.event, o.bonus = opSetActive, g.r.IntN(s.events), g.chance(0.5)
	case x < 0.96:
		g.moveFinish(s, &o)
	default:
		o.kind, o.won = opSettle, g.side()
		o.void, o.operator = g.chance(0.3), g.chance(0.3)
		o.market = g.market(s)
		if g.chance(0.9) {
			live := s.live()
			o.market = live[g.r.IntN(len(live))]
		}
		o.void = o.void && !s.markets[o.market].split
	}
	return o
}

// window is a new event's trading window: mostly open (the defaults, or
// an explicit window around now), sometimes not yet open or over.
func (g *gen) window() window {
	now := time.Now().UTC().Truncate(time.Second)
	switch x := g.r.Float64(); {
	case x < 0.35:
		return window{}
	case x < 0.7:
		return window{true, now.Add(-time.Hour), now.AddDate(0, 0, 1+g.r.IntN(30))}
	case x < 0.85:
		live := now.AddDate(0, 0, 10+g.r.IntN(20))
		return window{true, live, live.AddDate(0, 0, 1+g.r.IntN(30))}
	default:
		finish := now.AddDate(0, 0, -1-g.r.IntN(30))
		return window{true, finish.AddDate(0, 0, -1-g.r.IntN(30)), finish}
	}
}

// moveFinish fills a move of a pool's finish_at, by its creator or the
// operator, mostly of a pool outside its window: mostly later or earlier
// in the future (which reopens a pool that is over), sometimes into the
// past or before live_at, now and then on a pool whose market is
// resolved.
func (g *gen) moveFinish(s *shadow, o *op) {
	o.kind, o.bonus = opMoveFinish, g.chance(0.3)
	var unresolved, closed []int
	for i, m := range s.markets {
		if !m.resolved {
			unresolved = append(unresolved, i)
			if !m.tradable() {
				closed = append(closed, i)
			}
		}
	}
	switch x := g.r.Float64(); {
	case x < 0.5 && len(closed) > 0:
		o.market = closed[g.r.IntN(len(closed))]
	case x < 0.85 && len(unresolved) > 0:
		o.market = unresolved[g.r.IntN(len(unresolved))]
	default:
		o.market = g.r.IntN(len(s.markets))
	}
	now := time.Now().UTC().Truncate(time.Second)
	switch x := g.r.Float64(); {
	case x < 0.1:
		o.at = now.Add(-time.Duration(1+g.r.IntN(48)) * time.Hour)
	case x < 0.2 && s.markets[o.market].window.explicit:
		o.at = s.markets[o.market].window.live.Add(-time.Hour)
	default:
		o.at = now.Add(time.Duration(1+g.r.IntN(60*24)) * time.Hour)
	}
}

// sellOf fills a sale by h: mostly of a position h holds (part of it,
// all of it, or one share more than it), sometimes of nothing.
func (g *gen) sellOf(s *shadow, o *op, h holder) {
	held := s.held(h)
	if len(held) == 0 || g.chance(0.1) {
		o.market, o.side, o.shares = g.market(s), g.side(), g.logUniform(5_000)
		return
	}
	k := held[g.r.IntN(len(held))]
	o.market, o.side = k.market, k.side
	n := s.pos[k]
	switch x := g.r.Float64(); {
	case x < 0.3:
		o.shares = n
	case x < 0.35:
		o.shares = n + 1
	default:
		o.shares = 1 + g.r.Int64N(n)
	}
	if g.chance(0.04) {
		o.guard = math.MaxInt32 // a payout no sale reaches
	}
}

func (s *shadow) newBetID() string {
	s.nextBet++
	return fmt.Sprintf("bet-%d", s.nextBet)
}

// expect is what the model knows an operation must answer without asking
// any store; ok is false where it cannot tell.
func (s *shadow) expect(o op) (want string, ok bool) {
	switch o.kind {
	case opDeposit:
		if o.amount <= 0 {
			return "invalid:amount_kopecks", true
		}
		return "", true
	case opFundFloat, opGrowth:
		return "", true
	case opSetActive:
		return "", true
	case opSettle:
		// won_side is read before the market's state: NO alone on an
		// exclusive pool is invalid input, resolved or not.
		if s.markets[o.market].exclusive && !o.void && o.won == market.No {
			return "invalid:won_side", true
		}
		if s.markets[o.market].resolved || !o.operator && s.markets[o.market].res.open() {
			return "market_resolved", true
		}
		return "", true
	case opPropose, opDecide, opAddAnswer, opDispute, opSettleDue:
		return s.expectMaking(o)
	case opMoveFinish:
		m := s.markets[o.market]
		if !o.at.After(time.Now()) || !o.at.After(m.window.live) {
			return "invalid:finish_at", true
		}
		for _, other := range s.markets {
			if other.event == m.event && other.resolved {
				return "market_resolved", true
			}
			if other.event == m.event && other.res.open() {
				return "", false
			}
		}
		return "", true
	case opSell:
		if !s.markets[o.market].tradable() {
			return "market_closed", true
		}
		n := s.pos[posKey{holder{-1, o.user}, o.market, o.side}]
		if n == 0 {
			return "no_position", true
		}
		if o.shares > n {
			return "insufficient_shares", true
		}
	case opBuy:
		if o.amount > 0 && !s.markets[o.market].tradable() {
			return "market_closed", true
		}
	case opPartnerBet, opPartnerSell:
		if o.retry >= 0 && s.partnerReqs[o.retry].accepted {
			if o.conflict {
				return "idempotency_conflict", true
			}
			return "", true // replayed
		}
		// A fresh request, or the repeat of a refused one, which runs
		// afresh: a sale for a user without a sub-account is refused
		// before the market is looked at.
		if o.kind == opPartnerSell && !s.subs[holder{o.partner, o.ext}] {
			return "no_account", true
		}
		if !s.markets[o.market].tradable() {
			return "market_closed", true
		}
	}
	return "", false
}

// record updates the shadow with the outcome of o, and returns the
// holders whose balances it says changed.
func (s *shadow) record(o op, out outcome) []holder {
	if o.kind == opPartnerBet || o.kind == opPartnerSell {
		if o.retry < 0 {
			s.partnerReqs = append(s.partnerReqs, partnerReq{op: o, accepted: out.ok()})
		} else if out.ok() && !out.Replayed {
			// A refused request recorded nothing: its repeat ran afresh,
			// with the parameters it was sent with this time.
			ran := o
			ran.retry, ran.conflict = -1, false
			s.partnerReqs[o.retry] = partnerReq{op: ran, accepted: true}
		}
	}
	if o.kind == opNewEvent && out.ok() {
		s.addEvent(o.newMarkets, o.window)
		return nil
	}
	if !out.ok() || out.Replayed {
		return nil
	}
	switch o.kind {
	case opDeposit:
		h := holder{-1, o.user}
		if o.bonus {
			s.bonus[h] += o.amount
		} else {
			s.balance[h] += o.amount
		}
		return []holder{h}
	case opBuy:
		h := holder{-1, o.user}
		if o.bonus {
			s.bonus[h] -= out.Amount
		} else {
			s.balance[h] -= out.Amount
		}
		s.opened(posKey{h, o.market, o.side}, out.Shares, out.Amount)
		s.countVolume(o, out)
		if o.bonus {
			s.bonusPos[posKey{h, o.market, o.side}] += out.Shares
			s.bonusNet[posKey{h, o.market, o.side}] += out.Amount
		}
		s.markets[o.market].trades++
		return []holder{h}
	case opSell:
		h := holder{-1, o.user}
		k := posKey{h, o.market, o.side}
		toBonus := s.soldBonus(k, out.Shares, out.Amount)
		s.bonus[h] += toBonus
		s.balance[h] += out.Amount - toBonus
		s.sold(k, out.Shares, out.Amount)
		s.countVolume(o, out)
		s.markets[o.market].trades++
		return []holder{h}
	case opPartnerBet:
		h := holder{o.partner, o.ext}
		s.subs[h] = true
		// Paid from the sub-account first, the rest from the float.
		if have := s.balance[h]; have >= out.Amount {
			s.balance[h] -= out.Amount
		} else {
			s.floats[o.partner] -= out.Amount - have
			s.balance[h] = 0
		}
		s.opened(posKey{h, o.market, o.side}, out.Shares, out.Amount)
		s.markets[o.market].trades++
		return []holder{h}
	case opPartnerSell:
		h := holder{o.partner, o.ext}
		s.balance[h] += out.Amount
		s.sold(posKey{h, o.market, o.side}, -out.Shares, out.Amount) // shares_delta < 0
		s.markets[o.market].trades++
		return []holder{h}
	case opFundFloat:
		s.floats[o.partner] += o.amount
	case opMoveFinish:
		ev := s.markets[o.market].event
		for i := range s.markets {
			if s.markets[i].event == ev {
				s.markets[i].window.finish = o.at
			}
		}
	case opSettle:
		return s.recordSettle(o)
	case opGrowth:
		return s.recordGrowth()
	case opPropose, opDecide, opAddAnswer, opDispute, opSettleDue:
		return s.recordMaking(o)
	}
	return nil
}

// opened adds a buy of shares for charge to position k.
func (s *shadow) opened(k posKey, shares, charge int64) {
	s.pos[k] += shares
	s.net[k] += charge
}

// sold takes a sale of shares for payout from position k; a position
// sold to zero is closed, and a later buy opens a new one.
func (s *shadow) sold(k posKey, shares, payout int64) {
	s.pos[k] -= shares
	s.net[k] -= payout
	if s.pos[k] == 0 {
		s.drop(k)
	}
}

// drop forgets position k.
func (s *shadow) drop(k posKey) {
	delete(s.pos, k)
	delete(s.net, k)
	delete(s.bonusPos, k)
	delete(s.bonusNet, k)
}

// soldBonus is what of a sale of shares of position k for payout returns
// to the bonus balance, and takes the bonus shares sold out of k: the sale
// takes bonus shares in their proportion of the position (all that are
// left when it sells out), rounded half up, and pays them the same
// proportion of the payout, rounded half up.
func (s *shadow) soldBonus(k posKey, shares, payout int64) int64 {
	held, bonus := s.pos[k], s.bonusPos[k]
	if bonus == 0 {
		return 0
	}
	sold := bonus
	if shares < held {
		sold = halfUp(bonus, shares, held)
		sold = min(max(sold, shares-(held-bonus)), bonus, shares)
	}
	toBonus := halfUp(payout, sold, shares)
	s.bonusPos[k] -= sold
	s.bonusNet[k] -= toBonus
	return toBonus
}

// halfUp is a·b/c rounded half up, in big integers.
func halfUp(a, b, c int64) int64 {
	n := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	n.Mul(n, big.NewInt(2)).Add(n, big.NewInt(c))
	return n.Quo(n, big.NewInt(2*c)).Int64()
}
