package market

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
)

// MaxTradeKopecks bounds the money of one trade (10^11 kopecks, a billion
// RUB) and MaxTradeShares its shares, far below where int64 sums could
// overflow.
const (
	MaxTradeKopecks = 100_000_000_000
	MaxTradeShares  = 100_000_000_000
)

// MaxEventSubsidy bounds what one event may escrow: the sum of its
// markets' subsidies, 10^15 kopecks (10^13 RUB). The largest market
// (b = 10^12 at an opening probability of 0.01 or 0.99) escrows about
// 4.6 × 10^12, so an event may hold about 200 of those, or every market
// it may hold at b = 10^12 and 50/50 (about 6.9 × 10^11 each). The
// treasury may escrow account.MaxExposure in all: 2,000 events of the
// largest size.
const MaxEventSubsidy = 1_000_000_000_000_000

// Request is one trade a trader asks for.
type Request struct {
	// UserID is the trader; 0 for a partner's trade whose sub-account the
	// store finds (Partner.ExternalID).
	UserID int64
	Side   Side
	Action Action
	// Amount is the budget of a buy in kopecks (fee included); Shares the
	// shares of a sell.
	Amount int64
	Shares int64
	// UseBonus pays a buy from the bonus balance.
	UseBonus bool
	// MaxCost refuses a buy whose charge would exceed it; MinShares one
	// that would buy fewer shares; MinPayout a sell that would pay less.
	// Zero means no guard.
	MaxCost   int64
	MinShares int64
	MinPayout int64
	// Partner, when set, makes this a partner's trade for one of its
	// users.
	Partner *PartnerOrder
	// Pool is what LockFor puts in Lock.Pool: the markets of the
	// exclusive pool the traded market belongs to, ascending, or nil.
	// Service.Execute sets it; every request of a batch on one market
	// carries the same.
	Pool []int64
}

// PartnerOrder is what makes a Request a partner's trade for one of its
// users.
type PartnerOrder struct {
	// Key is the partner's idempotency key; Key.PartnerID is the partner.
	Key Key
	// Digest fingerprints the request's parameters: a repeat of Key with
	// another digest is refused (ErrIdempotencyConflict).
	Digest string
	// ExternalID is the partner's id for its user. The store finds the
	// user's sub-account by it, and creates it on the user's first trade.
	ExternalID string
	// TopUp pays whatever the user's balance lacks for a buy from the
	// partner's float, by moving it to the user's balance first.
	TopUp bool
}

// partnerID is the partner r trades for, 0 for none.
func (r *Request) partnerID() int64 {
	if r.Partner == nil {
		return 0
	}
	return r.Partner.Key.PartnerID
}

// subAccount names the sub-account p trades for.
func (p *PartnerOrder) subAccount() SubAccount {
	return SubAccount{PartnerID: p.Key.PartnerID, ExternalID: p.ExternalID}
}

// Check validates r on its own, before any state is read: the bounds of
// amounts and shares, the guards, the side. Service.Execute calls it once
// for every request; DecideTrades takes checked requests.
func (r *Request) Check() error {
	switch r.Action {
	case ActionBuy:
		if err := input.InRange("amount_kopecks", r.Amount, 1, MaxTradeKopecks); err != nil {
			return err
		}
		if err := input.InRange("max_cost_kopecks", r.MaxCost, 0, math.MaxInt64); err != nil {
			return err
		}
		if err := input.InRange("min_shares", r.MinShares, 0, math.MaxInt64); err != nil {
			return err
		}
	case ActionSell:
		if err := input.InRange("shares", r.Shares, 1, MaxTradeShares); err != nil {
			return err
		}
		if err := input.InRange("min_payout_kopecks", r.MinPayout, 0, math.MaxInt64); err != nil {
			return err
		}
		if r.UseBonus {
			return input.Invalid("use_bonus", "applies to buys only")
		}
	default:
		return input.Invalid("action", "must be buy or sell")
	}
	if r.Side != Yes && r.Side != No {
		return input.Invalid("side", "must be YES or NO")
	}
	return nil
}

// LockFor returns the Lock a batch of requests on market id needs.
func LockFor(marketID int64, reqs []Request) Lock {
	l := Lock{MarketID: marketID}
	if len(reqs) > 0 && len(reqs[0].Pool) > 0 {
		l.Pool = reqs[0].Pool
		if lead := l.Pool[0]; lead != marketID {
			l.Accounts = append(l.Accounts, account.EscrowAccount(lead))
		}
	}
	seen := map[int64]bool{}
	subs := map[SubAccount]bool{}
	for i := range reqs {
		r := &reqs[i]
		if k, ok := r.key(); ok {
			l.Keys = append(l.Keys, k)
		}
		if p := r.Partner; p != nil {
			if p.TopUp {
				l.Accounts = append(l.Accounts, account.FloatAccount(p.Key.PartnerID))
			}
			if r.UserID == 0 {
				if sa := p.subAccount(); !subs[sa] {
					subs[sa] = true
					l.SubAccounts = append(l.SubAccounts, sa)
				}
				continue
			}
		}
		l.Accounts = append(l.Accounts, account.UserAccount(r.UserID), account.BonusAccount(r.UserID))
		if !seen[r.UserID] {
			seen[r.UserID] = true
			l.Users = append(l.Users, r.UserID)
		}
	}
	return l
}

// DecideTrades applies reqs, which have passed Request.Check, in order to
// st and returns the effects. Each request is accepted or refused on its
// own: a refusal leaves no trace and never fails its neighbours. A request
// whose idempotency key was recorded already (st.Existing, or earlier in
// the batch) is answered as a repeat. DecideTrades never returns an error
// for a refused request; it returns one only when the whole batch cannot
// run.
func DecideTrades(st *State, reqs []Request) (*Effects, error) {
	eff, err := decideTrades(st, reqs)
	if err != nil {
		return nil, err
	}
	eff.DropSubAccounts = unusedSubAccounts(st.NewSubAccounts, eff)
	return eff, nil
}

// decideTrades is DecideTrades without the sub-accounts to drop, which a
// batch over several markets decides once for all of them.
func decideTrades(st *State, reqs []Request) (*Effects, error) {
	d := decision{
		market:    *st.Market,
		base:      st.Balances,
		balances:  map[account.Ref]int64{},
		positions: map[posKey]*Position{},
		now:       st.Now,
		eff:       &Effects{Results: make([]Result, len(reqs))},
	}
	if st.Market.Exclusive || st.Pool != nil {
		if err := d.openPool(st); err != nil {
			return nil, err
		}
	}
	for _, p := range st.Positions {
		c := *p
		d.positions[posKey{c.UserID, c.Side}] = &c
	}
	changed := map[*Position]bool{}
	done := map[Key]*Trade{}
	for i := range reqs {
		// A copy: decide may run again on a retry, so reqs stays untouched.
		r := reqs[i]
		if r.UserID == 0 && r.Partner != nil {
			r.UserID = st.SubAccounts[r.Partner.subAccount()]
		}
		k, keyed := r.key()
		if keyed {
			prev := done[k]
			if prev == nil {
				prev = st.Existing[k]
			}
			if prev != nil {
				res := repeat(prev, r.Partner.Digest)
				if res.Trade != nil {
					res.Balances = d.userBalances(prev.UserID)
				}
				res.Market = d.market
				d.eff.Results[i] = res
				continue
			}
		}
		var te *TradeEffect
		var err error
		if r.UserID == 0 {
			err = fmt.Errorf("market: request names no user")
		} else {
			te, err = d.trade(&r)
		}
		res := Result{Err: err, Balances: d.userBalances(r.UserID)}
		if err == nil {
			if keyed {
				done[k] = te.Trade
			}
			d.eff.Trades = append(d.eff.Trades, te)
			d.eff.Notifications = append(d.eff.Notifications, tradeNotification(&d.market, te.Trade))
			res.Trade = te.Trade
			if !changed[te.Position] {
				changed[te.Position] = true
				d.eff.Positions = append(d.eff.Positions, te.Position)
			}
		}
		res.Market = d.market
		d.eff.Results[i] = res
	}
	if len(d.eff.Trades) > 0 {
		m := d.market
		d.eff.Market = &m
		if d.pool != nil {
			d.pool[d.idx] = d.market
			d.eff.Pool = make([]*Market, len(d.pool))
			for j := range d.pool {
				c := d.pool[j]
				d.eff.Pool[j] = &c
			}
		}
	}
	return d.eff, nil
}

// openPool readies d to trade on a market of an exclusive pool: the
// pool's markets, as st.Pool holds them, are one lmsr.Exclusive. A pool
// that was not locked whole fails the batch: deciding on part of it would
// price against stale quantities.
func (d *decision) openPool(st *State) error {
	m := st.Market
	if !m.Exclusive || len(st.Pool) < 2 {
		return fmt.Errorf("market %d: exclusive pool locked with %d markets", m.ID, len(st.Pool))
	}
	if m.PoolMarkets > 0 && len(st.Pool) != m.PoolMarkets {
		return fmt.Errorf("market %d: %w: locked %d of its pool's %d markets", m.ID, ErrPoolChanged, len(st.Pool), m.PoolMarkets)
	}
	d.idx = -1
	d.pool = make([]Market, len(st.Pool))
	q := make([]int64, len(st.Pool))
	for j, pm := range st.Pool {
		if pm == nil || pm.PoolID != m.PoolID || !pm.Exclusive || j > 0 && pm.ID <= st.Pool[j-1].ID {
			return fmt.Errorf("market %d: its exclusive pool was not locked whole, in id order", m.ID)
		}
		if pm.ID == m.ID {
			d.idx = j
		}
		d.pool[j] = *pm
		q[j] = pm.QYes
	}
	if d.idx < 0 {
		return fmt.Errorf("market %d: not among the markets of its locked pool", m.ID)
	}
	d.ex = lmsr.Exclusive{B: m.B, Q: q}
	d.views = make([]lmsr.BinaryView, len(q))
	d.prices = make([]float64, len(q))
	if err := d.ex.PricesInto(d.prices); err != nil {
		return fmt.Errorf("market %d: %w", m.ID, err)
	}
	for j := range d.pool {
		d.pool[j].Price = d.prices[j]
	}
	d.market = d.pool[d.idx]
	return nil
}

// unusedSubAccounts are the sub-accounts of created that no trade of effs
// is for, ascending: a refused first bet must leave no sub-account behind.
func unusedSubAccounts(created map[int64]bool, effs ...*Effects) []int64 {
	if len(created) == 0 {
		return nil
	}
	used := map[int64]bool{}
	for _, eff := range effs {
		if eff == nil {
			continue
		}
		for _, te := range eff.Trades {
			used[te.Trade.UserID] = true
		}
	}
	var out []int64
	for id := range created {
		if !used[id] {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// DecideMarkets is DecideTrades over several markets in one transaction
// (Store.ExecMarkets): it applies reqs[i] to sts[i], market after market,
// carrying balances and idempotency keys from each to the next, so the
// batch decides exactly as running the markets' batches one after another
// would. The States share one Balances map (see ExecMarkets), which is
// not changed. A State with a nil Market (no such market) gets nil
// Effects and leaves its requests unanswered: the caller reports
// ErrMarketNotFound for them.
func DecideMarkets(sts []*State, reqs [][]Request) ([]*Effects, error) {
	if len(sts) != len(reqs) {
		return nil, fmt.Errorf("market: %d states for %d request lists", len(sts), len(reqs))
	}
	effs := make([]*Effects, len(sts))
	var balances map[account.Ref]int64
	var keys map[Key]*Trade
	// pools holds the markets of each exclusive pool as the batch's
	// trades so far left them: two markets of one pool in a batch decide
	// one after the other on the same pool.
	var pools map[int64][]*Market
	for i, st := range sts {
		if st.Market == nil {
			continue
		}
		s := *st
		if balances != nil {
			s.Balances = balances
		}
		if keys != nil {
			s.Existing = keys
		}
		if moved, ok := pools[st.Market.PoolID]; ok && st.Pool != nil {
			s.Pool = moved
			for _, pm := range moved {
				if pm.ID == st.Market.ID {
					s.Market = pm
				}
			}
		}
		eff, err := decideTrades(&s, reqs[i])
		if err != nil {
			return nil, err
		}
		effs[i] = eff
		if eff.Pool != nil {
			if pools == nil {
				pools = map[int64][]*Market{}
			}
			pools[st.Market.PoolID] = eff.Pool
		}
		if len(eff.Trades) == 0 || i == len(sts)-1 {
			continue
		}
		if balances == nil {
			balances = maps.Clone(st.Balances)
		}
		for _, te := range eff.Trades {
			if err := account.Apply(balances, te.Postings); err != nil {
				return nil, fmt.Errorf("market %d: a decided trade does not apply: %w", st.Market.ID, err)
			}
			if k, ok := te.Trade.IdempotencyKey(); ok {
				if keys == nil {
					keys = maps.Clone(st.Existing)
					if keys == nil {
						keys = map[Key]*Trade{}
					}
				}
				keys[k] = te.Trade
			}
		}
	}
	// A sub-account made for the batch is kept if a trade on any market
	// used it; the first market's Effects carry the rest.
	var created map[int64]bool
	for _, st := range sts {
		for id := range st.NewSubAccounts {
			if created == nil {
				created = map[int64]bool{}
			}
			created[id] = true
		}
	}
	if drop := unusedSubAccounts(created, effs...); len(drop) > 0 {
		for _, eff := range effs {
			if eff != nil {
				eff.DropSubAccounts = drop
				break
			}
		}
	}
	return effs, nil
}
