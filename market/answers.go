package market

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/social"
)

// Answers added later: an exclusive pool's Other market ("none of the
// answers listed") gives part of its probability to a new answer
// (lmsr.SplitOther; docs/answer-split.md has the pricer's side and "On
// the platform" this side).

var (
	// ErrNoNewAnswer: the pool takes no new answer, because it has no
	// Other market (a binary pool has none), or it is resolved or paused
	// (a creator's proposed resolution pauses it). HTTP 409
	// invalid_state.
	ErrNoNewAnswer = errors.New("market: the pool takes no new answer")
	// ErrPoolChanged: a trade locked an exclusive pool's markets from a
	// list that an answer added since made stale. Service.Execute reads
	// the list again and runs the trade once more; nothing was written.
	ErrPoolChanged = errors.New("market: the pool's markets changed")
)

// NewAnswer is an answer added to a pool with an Other market.
type NewAnswer struct {
	Name, NameRu string
	// Probability is the new answer's YES probability, taken out of
	// Other's: above 0 and below Other's current probability.
	Probability float64
}

// AnswerState is what an answer's decision sees, as the store locked it.
type AnswerState struct {
	// Markets are every market of the pool, locked in ascending id order.
	Markets []*Market
	// Positions are every open position on them, ascending id.
	Positions []*Position
	// Escrow is the balance of the pool's escrow (that of Markets[0]),
	// Treasury the platform treasury's.
	Escrow, Treasury int64
	// EventName names the pool's event in the holders' notifications.
	EventName string
	// Followers are the users who follow the pool's event: those who hold
	// no position in the pool are told too (follows.go).
	Followers []int64
	// MarketID is the id the new market takes.
	MarketID int64
	Now      time.Time
}

// AnswerEffects is what adding an answer changes; the store writes it all
// or nothing.
type AnswerEffects struct {
	// Market is the new market, ID set (AnswerState.MarketID).
	Market *Market
	// Markets are the pool's other markets as they are now, in
	// AnswerState.Markets' order: every q_no view, Other's q_yes and
	// q0_yes, and every PoolMarkets changed.
	Markets []*Market
	// Positions are the positions changed (ID set) or created (ID 0), in
	// order. A changed one may hold another market and side than when it
	// was loaded: a NO on Other becomes a YES (see DecideAnswer).
	Positions []*Position
	// Postings hold the escrow's top-up from the treasury (reason
	// "subsidy"), if it needs one.
	Postings []account.Posting
	// Notifications tell every holder of a position in the pool and
	// every follower of its event (answer_added), once each.
	Notifications []social.Notification
	// Split is the pricer's split.
	Split lmsr.Split
}

// TopUp is what the split added to the pool's escrow from the treasury.
func (e *AnswerEffects) TopUp() int64 {
	var t int64
	for _, p := range e.Postings {
		t += p.Amount
	}
	return t
}

// checkOther checks market j of np's Other flag: only on an exclusive
// pool, at most once per pool.
func checkOther(np NewPool, j int, field string) error {
	if !np.Markets[j].Other {
		return nil
	}
	if !np.Exclusive {
		return input.Invalid(field, "only a market of an exclusive pool may be its Other answer")
	}
	for _, nm := range np.Markets[:j] {
		if nm.Other {
			return input.Invalid(field, "a pool has at most one Other answer")
		}
	}
	return nil
}

// AddAnswer adds an answer to pool poolID, taking in.Probability out of
// its Other market's probability, for the event's creator (callerID) or,
// with operator, for the operator. It returns the new market. Checks in
// order: ErrPoolNotFound, ErrForbidden (not the creator), *input.Error
// (name, name_ru, probability out of (0, 1)), then under the pool's lock
// ErrNoNewAnswer (no Other market, or resolved) and *input.Error
// (probability not below Other's); account.ErrBalanceLimit when the
// treasury cannot top the escrow up.
func (s *Service) AddAnswer(ctx context.Context, callerID int64, operator bool, poolID int64, in NewAnswer) (*Market, error) {
	p, err := s.store.Pool(ctx, poolID)
	if err != nil {
		return nil, err
	}
	if !operator {
		e, err := s.store.Event(ctx, p.EventID)
		if err != nil {
			return nil, err
		}
		if e.CreatorID != callerID {
			return nil, ErrForbidden
		}
	}
	if in.Name, err = text("name", in.Name, true, MaxNameLen); err != nil {
		return nil, err
	}
	if in.NameRu, err = text("name_ru", in.NameRu, false, MaxNameLen); err != nil {
		return nil, err
	}
	if pr := in.Probability; math.IsNaN(pr) || pr <= 0 || pr >= 1 {
		return nil, input.Invalid("probability", "must be above 0 and below the Other answer's YES probability")
	}
	eff, err := s.store.AddAnswer(ctx, poolID, func(st *AnswerState) (*AnswerEffects, error) {
		return DecideAnswer(st, in)
	})
	if err != nil {
		return nil, err
	}
	for _, m := range eff.Markets {
		s.pools.Delete(m.ID) // this process's list of the pool is stale
	}
	return s.Market(ctx, eff.Market.ID)
}

// DecideAnswer decides adding answer in to the pool st holds:
//
//   - the split: lmsr.SplitOther of the pool's quantities (q_yes in
//     ascending id order) and its claims q − q0, checked against the
//     claims of the open positions, Other's outcome taking in.Probability
//     out;
//   - the new market, appended (the next outcome index, the next id) with
//     the split's q and q0, and the pool's other markets with their new
//     q_no views, Other's q_yes and q0_yes (Split.Q0);
//   - every position as Split.MapHolding maps its holding: YES on Other
//     also gets a YES on the new answer with the same shares; a NO on
//     Other becomes a YES on every old market but Other, its own row
//     moving to the first of them (ascending id) on which the holder has
//     no YES yet and the rest going into the holder's YES positions
//     there, or new ones; every other position stays as it is;
//   - each mapped holding's money (cost basis, spent, returned) divided
//     among the positions it becomes (divideHolding), so that each sum
//     stays exactly what it was;
//   - the escrow's top-up from the treasury, Split.TopUp;
//   - an answer_added notification to every holder.
//
// ErrNoNewAnswer (no Other market; a market resolved or paused; 50
// markets already); ErrNotApproved (a proposal the operator has not
// approved); *input.Error for a probability not below Other's.
func DecideAnswer(st *AnswerState, in NewAnswer) (*AnswerEffects, error) {
	ms := st.Markets
	if len(ms) < 2 || !ms[0].Exclusive {
		return nil, ErrNoNewAnswer
	}
	other, next := -1, 0
	idx := make(map[int64]int, len(ms))
	for i, m := range ms {
		if m.Resolved || m.Paused || m.Settling {
			return nil, ErrNoNewAnswer
		}
		if m.Unapproved {
			return nil, ErrNotApproved
		}
		if i > 0 && m.ID <= ms[i-1].ID {
			return nil, fmt.Errorf("market: pool %d not locked in id order", m.PoolID)
		}
		if m.Other {
			other = i
		}
		next = max(next, m.OutcomeIndex+1)
		idx[m.ID] = i
	}
	if other < 0 {
		return nil, ErrNoNewAnswer
	}
	n := len(ms)
	if n >= MaxMarketsPerPool {
		return nil, ErrNoNewAnswer
	}
	q := make([]int64, n)
	claims := make([]int64, n)
	for i, m := range ms {
		q[i], claims[i] = m.QYes, m.QYes-m.Q0Yes
	}
	holdings := make([]lmsr.Holding, len(st.Positions))
	for k, p := range st.Positions {
		i, ok := idx[p.MarketID]
		if !ok || !p.Open() {
			return nil, fmt.Errorf("market: position %d is not an open position of the pool", p.ID)
		}
		holdings[k] = lmsr.Holding{Market: i, Side: p.Side, Shares: p.Shares}
	}
	held, err := lmsr.Claims(n, holdings)
	if err != nil {
		return nil, fmt.Errorf("market: pool %d: %w", ms[0].PoolID, err)
	}
	if !slices.Equal(held, claims) {
		return nil, fmt.Errorf("market: pool %d: its positions claim %v, its quantities %v", ms[0].PoolID, held, claims)
	}
	ex := lmsr.Exclusive{B: ms[0].B, Q: q}
	split, err := lmsr.SplitOther(ex, claims, other, in.Probability)
	if errors.Is(err, lmsr.ErrInvalidProbability) {
		po := ex.Price(other)
		return nil, input.Invalid("probability", fmt.Sprintf("must be above 0 and below the Other answer's YES probability, %.6f", po))
	} else if err != nil {
		return nil, input.Invalid("probability", err.Error())
	}
	views := split.Pool.BinaryViews()
	prices := split.Pool.Prices()
	if views == nil || prices == nil {
		return nil, input.Invalid("probability", "the pool cannot be split at this probability")
	}

	o := ms[other]
	nm := &Market{ID: st.MarketID, PoolID: o.PoolID, EventID: o.EventID, Name: in.Name, NameRu: in.NameRu,
		YesName: "Yes", NoName: "No", OutcomeIndex: next, B: o.B, Margin: o.Margin,
		LiveAt: o.LiveAt, FinishAt: o.FinishAt, Exclusive: true, CreatedAt: st.Now,
		QYes: split.Pool.Q[n], QNo: views[n].QNo, Q0Yes: split.Q0[n], Q0No: views[n].QNo, PoolMarkets: n + 1}
	eff := &AnswerEffects{Market: nm, Split: split}
	for i, m := range ms {
		c := *m
		c.QYes, c.QNo, c.Q0Yes, c.PoolMarkets = split.Pool.Q[i], views[i].QNo, split.Q0[i], n+1
		eff.Markets = append(eff.Markets, &c)
	}

	// Positions: the holder's open YES positions by market, which a NO on
	// Other's parts go into.
	yes := map[[2]int64]*Position{}
	var moved []*Position // NO on Other, in order
	for _, p := range st.Positions {
		if p.Side == Yes {
			c := *p
			yes[[2]int64{p.UserID, p.MarketID}] = &c
		} else if p.MarketID == o.ID {
			moved = append(moved, p)
		}
	}
	var changed []*Position
	touch := func(p *Position) {
		if !slices.Contains(changed, p) {
			changed = append(changed, p)
		}
	}
	for _, p := range st.Positions {
		if p.Side == Yes && p.MarketID == o.ID {
			kept := yes[[2]int64{p.UserID, p.MarketID}]
			kept.Shares, kept.CostBasis, kept.Bought, kept.Spent, kept.Returned, kept.BonusShares, kept.BonusNet = 0, 0, 0, 0, 0, 0, 0
			np := &Position{UserID: p.UserID, MarketID: nm.ID, Side: Yes, UseBonus: p.UseBonus, PartnerID: p.PartnerID, CreatedAt: st.Now}
			divideHolding(p, []*Position{kept, np}, []float64{prices[other], prices[n]}, st.Now)
			touch(kept)
			changed = append(changed, np)
		}
	}
	for _, p := range moved {
		var targets []*Position
		var weights []float64
		var row *Position // p's row, moved to the first target without a YES
		for i, m := range ms {
			if i == other {
				continue
			}
			k := [2]int64{p.UserID, m.ID}
			t := yes[k]
			if t == nil && row == nil {
				c := *p
				c.MarketID, c.Side, c.Shares, c.CostBasis, c.Bought, c.Spent, c.Returned, c.BonusShares, c.BonusNet = m.ID, Yes, 0, 0, 0, 0, 0, 0, 0
				row, t = &c, &c
				yes[k] = t
			} else if t == nil {
				t = &Position{UserID: p.UserID, MarketID: m.ID, Side: Yes, UseBonus: p.UseBonus, PartnerID: p.PartnerID, CreatedAt: st.Now}
				yes[k] = t
			}
			targets, weights = append(targets, t), append(weights, prices[i])
		}
		if row == nil {
			// The holder has a YES on every target: p's row closes, empty.
			c := *p
			c.Shares, c.CostBasis, c.Bought, c.Spent, c.Returned, c.BonusShares, c.BonusNet = 0, 0, 0, 0, 0, 0, 0
			now, sold := st.Now, WonSideSold
			c.ClosedAt, c.WonSide, c.UpdatedAt = &now, &sold, st.Now
			changed = append(changed, &c)
		} else {
			// p's row first: it takes the rounding's remainder.
			at := slices.Index(targets, row)
			targets[0], targets[at] = targets[at], targets[0]
			weights[0], weights[at] = weights[at], weights[0]
		}
		divideHolding(p, targets, weights, st.Now)
		for _, t := range targets {
			touch(t)
		}
	}
	eff.Positions = changed

	if top := split.TopUp(st.Escrow); top > 0 {
		escrow := account.EscrowAccount(ms[0].ID)
		eff.Postings = append(eff.Postings, account.Posting{From: account.Treasury, To: escrow,
			Amount: top, Reason: "subsidy", At: st.Now})
		if err := account.Apply(map[account.Ref]int64{account.Treasury: st.Treasury, escrow: st.Escrow}, eff.Postings); err != nil {
			return nil, err
		}
	}

	seen := map[int64]bool{}
	users := make([]int64, 0, len(st.Positions)+len(st.Followers))
	for _, p := range st.Positions {
		users = append(users, p.UserID)
	}
	holders := len(users)
	for i, u := range append(users, st.Followers...) {
		if seen[u] {
			continue
		}
		seen[u] = true
		eff.Notifications = append(eff.Notifications, social.Notification{UserID: u, Type: social.TypeAnswerAdded,
			RelatedID: nm.EventID, RelatedType: social.RelatedEvent, CreatedAt: st.Now,
			Data: social.NotificationData{EventName: st.EventName, MarketName: nm.Name, MarketNameRu: nm.NameRu, Other: o.Name, OtherRu: o.NameRu, Following: i >= holders}})
	}
	slices.SortFunc(eff.Notifications, func(a, b social.Notification) int { return cmpInt(a.UserID, b.UserID) })
	return eff, nil
}

// divideHolding adds what holding h becomes to targets, each of which
// gets h's shares (a mapped holding keeps its share count in every
// position it becomes) and Bought, and a part of h's money:
//
//   - CostBasis and Returned are divided in proportion to the targets'
//     weights (their prices after the split), rounded down, the
//     remainder going to targets[0];
//   - h's net cost, Spent − Returned, likewise when it is not negative,
//     all of it to targets[0] otherwise; each target's Spent is its
//     Returned plus its net cost;
//   - BonusShares is added whole, like Shares, and BonusNet divided as
//     the net cost is, so that a bonus-bought holding stays bonus in
//     every position it becomes.
//
// So the parts of each sum add up to it exactly, and a void, which
// refunds each position its net cost floored at 0, refunds the parts
// together what it refunded h (unless a part goes into a position with a
// negative net cost of its own: see docs/answer-split.md).
func divideHolding(h *Position, targets []*Position, weights []float64, now time.Time) {
	w := make([]int64, len(weights))
	for i, x := range weights {
		w[i] = max(1, int64(math.Round(x*1e9)))
	}
	basis := divide(h.CostBasis, w)
	ret := divide(h.Returned, w)
	net := make([]int64, len(w))
	if d := h.Spent - h.Returned; d >= 0 {
		net = divide(d, w)
	} else {
		net[0] = d
	}
	// The bonus money likewise: every target holds h's bonus shares, and
	// h's bonus net cost is divided as its net cost is.
	bonusNet := make([]int64, len(w))
	if h.BonusNet >= 0 {
		bonusNet = divide(h.BonusNet, w)
	} else {
		bonusNet[0] = h.BonusNet
	}
	for i, t := range targets {
		t.Shares += h.Shares
		t.BonusShares += h.BonusShares
		t.BonusNet = addNet(t.BonusNet, bonusNet[i])
		t.Bought += h.Bought
		t.CostBasis += basis[i]
		t.Returned += ret[i]
		t.Spent += ret[i] + net[i]
		t.UseBonus = t.UseBonus || h.UseBonus
		t.UpdatedAt = now
	}
}

// divide splits a ≥ 0 in proportion to the positive weights w, each part
// rounded down and the remainder added to the first: the parts sum to a.
func divide(a int64, w []int64) []int64 {
	out := make([]int64, len(w))
	var total big.Int
	for _, x := range w {
		total.Add(&total, big.NewInt(x))
	}
	var sum int64
	for i, x := range w {
		var p big.Int
		p.Mul(big.NewInt(a), big.NewInt(x))
		p.Quo(&p, &total)
		out[i] = p.Int64()
		sum += out[i]
	}
	out[0] += a - sum
	return out
}
