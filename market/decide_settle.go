package market

import (
	"errors"
	"fmt"
	"maps"
	"math"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
)

// DecideSettlement resolves the market in st as s says: every open
// position is closed, its holder paid (winners a kopeck a share, or, for a
// void, its net cost back), and what is left in the escrow returns to the
// treasury. ErrResolved if the market was resolved already. It is
// Settlement's three steps on a State that holds every open position at
// once, and the balances of the escrow, the fee account, the treasury and
// every holder: a store that settles in one chunk.
func DecideSettlement(st *State, s Settlement) (*Effects, error) {
	if err := s.Begin(st.Market); err != nil {
		return nil, err
	}
	eff, err := s.Chunk(st)
	if err != nil {
		return nil, err
	}
	after := maps.Clone(st.Balances)
	if err := account.Apply(after, eff.Postings); err != nil {
		return nil, fmt.Errorf("market %d: the settlement's payments do not apply: %w", st.Market.ID, err)
	}
	fin, err := s.Finish(&State{Market: st.Market, Balances: after, Now: st.Now})
	if err != nil {
		return nil, err
	}
	eff.Postings = append(eff.Postings, fin.Postings...)
	eff.Market, eff.PoolWonSide = fin.Market, fin.PoolWonSide
	return eff, nil
}

// Settlement is the decisions of resolving a market, in three pure steps,
// so that a store may stream a market's positions in chunks inside one
// transaction (see Store.Settle) and hold no more than a chunk in memory.
//
// A resolution pays each share of the side Won one kopeck from the
// escrow. A void (Void) pays every open position its net cost, what it
// spent (fees included) minus what its sales returned, floored at 0: from
// the escrow while it lasts, then from the market's fee account, then
// from the treasury, because the escrow alone need not cover it (fees went
// to the fee account, and sellers who sold at a profit before the void
// keep it). Either way what is left in the escrow then returns to the
// treasury.
type Settlement struct {
	// Won is the winning side of a resolution; a void ignores it.
	Won Side
	// Void resolves the market as N/A: no side wins.
	Void bool
	// By is who resolves the market; the zero value is the event's
	// creator.
	By Resolver
	// Escrow, when set, is the account that pays instead of the
	// market's escrow: an exclusive pool's, its first market's.
	Escrow account.Ref
	// Keep leaves what is left in the escrow there: the markets of an
	// exclusive pool share one escrow, which the last of them to settle
	// empties.
	Keep bool
}

// escrow is the account that pays the holders of market m.
func (s Settlement) escrow(m *Market) account.Ref {
	if s.Escrow != (account.Ref{}) {
		return s.Escrow
	}
	return account.EscrowAccount(m.ID)
}

// ParseSettlement returns the Settlement with which who resolves a
// market with outcome "YES", "NO" or "VOID" (upper case). Any other
// outcome is invalid input of won_side.
func ParseSettlement(outcome string, who Resolver) (Settlement, error) {
	switch outcome {
	case "YES":
		return Settlement{Won: Yes, By: who}, nil
	case "NO":
		return Settlement{Won: No, By: who}, nil
	case OutcomeVoid:
		return Settlement{Void: true, By: who}, nil
	}
	return Settlement{}, input.Invalid("won_side", "must be YES, NO or VOID")
}

// resolver is s.By, the creator when unset.
func (s Settlement) resolver() Resolver {
	if s.By == "" {
		return ResolvedByCreator
	}
	return s.By
}

// wonSide is the WonSide of the positions s closes.
func (s Settlement) wonSide() int {
	switch {
	case s.Void:
		return WonSideVoid
	case s.Won == Yes:
		return WonSideYes
	}
	return WonSideNo
}

// outcome is how s resolves the market, as notifications say it.
func (s Settlement) outcome() string {
	if s.Void {
		return OutcomeVoid
	}
	return s.Won.String()
}

// Payout is what s pays position p: a kopeck a share of the winning
// side, or, for a void, its net cost floored at 0. (Spent and Returned
// stop at MaxInt64 rather than wrap; a position would need some 10^8
// trades of the largest size to get there.) A store that settles in SQL
// computes the same; storage/storagetest holds both stores to it.
func (s Settlement) Payout(p *Position) int64 {
	if s.Void {
		return max(p.Spent-p.Returned, 0)
	}
	if p.Side == s.Won {
		return p.Shares
	}
	return 0
}

// BonusPayout is the part of Payout(p) that goes to the holder's bonus
// balance: for a void, the bonus money still in the position
// (p.BonusNet) up to the refund, so that bonus money stays bonus; 0 for
// a resolution, whose winnings are paid to the balance. The bonus part
// comes first: when the position's bonus and other money disagree in sign
// (one sold at a profit), the refund goes to the bonus before the
// balance, which then never gets back more than its own net cost. A store
// that settles in SQL computes the same (storage/storagetest).
func (s Settlement) BonusPayout(p *Position) int64 {
	if !s.Void {
		return 0
	}
	return min(max(p.BonusNet, 0), s.Payout(p))
}

// Begin checks the locked market can be resolved: ErrResolved if it was,
// or if its settlement is under way (Settling).
func (s Settlement) Begin(m *Market) error {
	if m.Resolved || m.Settling {
		return ErrResolved
	}
	if !s.Void && s.Won != Yes && s.Won != No {
		return fmt.Errorf("market %d: settlement names side %d", m.ID, s.Won)
	}
	return nil
}

// Chunk closes the open positions in st and pays their holders; st holds
// the balances of the escrow and the fee account as the chunks before
// left them (the treasury's is not needed: Finish checks it). A store
// passes all positions of one holder in the same chunk, so that each
// holder gets one posting from each account that pays it into each of its
// accounts paid (user, and for a void's bonus money, bonus) and one
// market_resolved notification. Holders are paid in the order their first
// position comes in, from Sources by Split, each its bonus part
// (BonusPayout) to its bonus account first and then the rest to its user
// account, as if they were two holders paid one after the other. Of a
// position it reads only ID, UserID, Side, Shares, CostBasis, Spent,
// Returned and BonusNet, and changes
// only Returned, CostBasis, ClosedAt, WonSide and UpdatedAt: a store may
// load and write just those.
//
// Each position's realization (its PnL entry) is what it is paid minus
// its cost basis, so a position's entries always sum to its PnL,
// Returned − Spent: a winner's is its payout over what it paid, and a
// voided position's PnL ends at 0, or at the profit its sales made if
// they returned more than it cost.
func (s Settlement) Chunk(st *State) (*Effects, error) {
	m, now := st.Market, st.Now
	eff := &Effects{}
	wonSide := s.wonSide()
	paid, bonus := map[int64]int64{}, map[int64]int64{}
	var holders []int64
	for _, p := range st.Positions {
		c := *p
		amount := s.Payout(&c)
		if _, seen := paid[c.UserID]; !seen {
			holders = append(holders, c.UserID)
		}
		paid[c.UserID] += amount
		bonus[c.UserID] += s.BonusPayout(&c)
		c.Returned = addStat(c.Returned, amount)
		eff.PnL = append(eff.PnL, PnLEntry{Position: &c, Delta: amount - c.CostBasis, At: now})
		c.CostBasis = 0
		c.ClosedAt = &now
		ws := wonSide
		c.WonSide = &ws
		c.UpdatedAt = now
		eff.Positions = append(eff.Positions, &c)
	}
	sources := s.Sources(m, st.Balances)
	var before int64
	for _, u := range holders {
		for _, to := range [2]struct {
			ref    account.Ref
			amount int64
		}{{account.BonusAccount(u), bonus[u]}, {account.UserAccount(u), paid[u] - bonus[u]}} {
			if to.amount == 0 {
				continue
			}
			parts, err := Split(before, to.amount, sources)
			if err != nil {
				return nil, fmt.Errorf("market %d: %w", m.ID, err)
			}
			before += to.amount
			for i, amount := range parts {
				if amount > 0 {
					eff.Postings = append(eff.Postings, account.Posting{From: sources[i].From, To: to.ref, Amount: amount, Reason: s.Reason(), At: now})
				}
			}
		}
		eff.Notifications = append(eff.Notifications, social.Notification{
			UserID: u, Type: social.TypeMarketResolved, RelatedID: m.EventID, RelatedType: social.RelatedEvent, CreatedAt: now,
			Data: social.NotificationData{MarketName: m.Name, MarketNameRu: m.NameRu, Won: s.outcome(), Amount: paid[u]},
		})
	}
	return eff, nil
}

// Source is an account that pays a settlement's holders, and the most it
// pays: Cap kopecks, or, when Cap is negative, whatever is asked (the
// treasury).
type Source struct {
	From account.Ref
	Cap  int64
}

// Sources are the accounts that pay the holders of market m, in the order
// they pay, each capped by its balance in balances (a negative balance
// pays nothing): the escrow while it lasts and, for a void, then the
// market's fee account while it lasts, then the treasury, uncapped.
func (s Settlement) Sources(m *Market, balances map[account.Ref]int64) []Source {
	escrow := s.escrow(m)
	out := []Source{{From: escrow, Cap: max(balances[escrow], 0)}}
	if s.Void {
		fees := account.FeeAccount(m.ID)
		out = append(out, Source{From: fees, Cap: max(balances[fees], 0)}, Source{From: account.Treasury, Cap: -1})
	}
	return out
}

// Reason is the reason of the postings that pay a settlement's holders:
// "payout" for a resolution, "refund" for a void.
func (s Settlement) Reason() string {
	if s.Void {
		return "refund"
	}
	return "payout"
}

// errShort is Split's error when the sources cannot pay what is owed: a
// broken invariant (every escrow covers its market's larger side), not a
// refusal a caller could meet.
var errShort = errors.New("the escrow is short of paying the holders")

// Split says what each of sources pays a holder who is owed amount when
// the holders paid before it were owed before in all. The sources pay in
// order, each up to its cap: laid end to end they cover the kopecks from
// 0 on, source i the range after the caps of those before it, and a
// holder gets from each source the part of [before, before+amount) that
// falls in its range. So holders paid one after another draw on each
// source as one greedy walk would, and Split(0, total, sources) is what
// each source pays in all. It fails when capped sources cannot cover
// before+amount.
func Split(before, amount int64, sources []Source) ([]int64, error) {
	parts := make([]int64, len(sources))
	end, ok := account.Add(before, amount)
	if !ok || before < 0 || amount < 0 {
		return nil, fmt.Errorf("market: settlement amounts %d after %d", amount, before)
	}
	var lo int64
	for i, src := range sources {
		hi := int64(math.MaxInt64)
		if src.Cap >= 0 {
			if h, ok := account.Add(lo, src.Cap); ok {
				hi = h
			}
		}
		parts[i] = max(0, min(end, hi)-max(before, lo))
		if lo = hi; lo >= end {
			return parts, nil
		}
	}
	return nil, fmt.Errorf("%w: %d kopecks", errShort, end-lo)
}

// Finish runs after every chunk: st holds the escrow's and the treasury's
// balances as the chunks left them. What is left in the escrow returns to
// the treasury and the market (and, when YES won, its pool) records the
// result. A void whose refunds would take the treasury past
// -account.MaxExposure is refused.
func (s Settlement) Finish(st *State) (*Effects, error) {
	m := *st.Market
	now := st.Now
	escrow := s.escrow(&m)
	eff := &Effects{}
	if t := st.Balances[account.Treasury]; t < -account.MaxExposure {
		return nil, fmt.Errorf("market %d: the refunds would take the treasury to %d: %w", m.ID, t, account.ErrBalanceLimit)
	}
	if left := st.Balances[escrow]; left > 0 && !s.Keep {
		eff.Postings = append(eff.Postings, account.Posting{From: escrow, To: account.Treasury, Amount: left, Reason: "settlement_leftover", At: now})
	} else if left < 0 {
		return nil, fmt.Errorf("market %d: escrow is %d after paying the winners", m.ID, left)
	}
	m.Resolved = true
	m.Paused = false // a proposal paused it (proposal.go); resolved says the rest
	m.ResolvedAt = &now
	m.ResolvedBy = s.resolver()
	if s.Void {
		m.Voided = true
	} else {
		w := s.Won
		m.WinningOutcome = &w
		if w == Yes {
			idx := m.OutcomeIndex
			eff.PoolWonSide = &idx
		}
	}
	eff.Market = &m
	return eff, nil
}

// PoolSettlement resolves an exclusive pool as a whole: market Winner
// YES and every other market of the pool NO, or, with Void, every market
// of the pool void. (NO alone on a market of an exclusive pool names no
// winner, and is refused before it gets here.)
type PoolSettlement struct {
	Winner int64
	Void   bool
	// By is who resolves the pool; the zero value is the event's creator.
	By Resolver
}

// DecidePoolSettlement settles the markets of an exclusive pool in one
// go, as ps says: sts holds one State per market of the pool, in
// ascending id order, each with every open position of its market, all
// sharing one Balances map that holds the pool's escrow (its first
// market's), every market's fee account, the treasury and every holder's
// account. The markets settle one after another with their Settlement
// steps, each paying from the pool's escrow (a void's refunds then from
// the market's fee account, then the treasury); the last returns what is
// left in the escrow to the treasury. ErrResolved, with no Effects, if any
// market of the pool was resolved (a pool resolves whole, so that means
// all of them were). The Effects are one per State.
func DecidePoolSettlement(sts []*State, ps PoolSettlement) ([]*Effects, error) {
	if len(sts) < 2 {
		return nil, fmt.Errorf("market: an exclusive pool of %d markets", len(sts))
	}
	ms := make([]*Market, len(sts))
	for i, st := range sts {
		ms[i] = st.Market
	}
	settle, err := ps.Plan(ms)
	if err != nil {
		return nil, err
	}
	balances := maps.Clone(sts[0].Balances)
	effs := make([]*Effects, len(sts))
	for i, st := range sts {
		c := *st
		c.Balances = balances
		eff, err := DecideSettlement(&c, settle[i])
		if err != nil {
			return nil, err
		}
		if err := account.Apply(balances, eff.Postings); err != nil {
			return nil, fmt.Errorf("market %d: the pool's settlement does not apply: %w", st.Market.ID, err)
		}
		effs[i] = eff
	}
	return effs, nil
}

// Plan returns the Settlement of each of ms, the markets of one exclusive
// pool in ascending id order as locked, that settle the pool as ps says,
// in that order: each pays from the pool's escrow (its first market's),
// and all but the last leave what is left in it there. ErrResolved if any
// market of the pool was resolved (a pool resolves whole, so that means
// all of them were).
func (ps PoolSettlement) Plan(ms []*Market) ([]Settlement, error) {
	if len(ms) < 2 {
		return nil, fmt.Errorf("market: an exclusive pool of %d markets", len(ms))
	}
	escrow := account.EscrowAccount(ms[0].ID)
	settle := make([]Settlement, len(ms))
	won := ps.Void
	for i, m := range ms {
		if m == nil || !m.Exclusive || m.PoolID != ms[0].PoolID || i > 0 && m.ID <= ms[i-1].ID {
			return nil, fmt.Errorf("market: a pool settlement needs the markets of one exclusive pool in id order")
		}
		s := Settlement{Won: No, Void: ps.Void, By: ps.By, Escrow: escrow, Keep: i < len(ms)-1}
		if !ps.Void && m.ID == ps.Winner {
			s.Won, won = Yes, true
		}
		if err := s.Begin(m); err != nil {
			return nil, err
		}
		settle[i] = s
	}
	if !won {
		return nil, fmt.Errorf("market: market %d is not in pool %d", ps.Winner, ms[0].PoolID)
	}
	return settle, nil
}
