package market

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/social"
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

type posKey struct {
	user int64
	side Side
}

type decision struct {
	market Market
	// base is the State's balances, which the States of a batch share
	// and which are never written; balances holds the accounts this
	// decision has posted to, copied from base first. A copy of all of
	// base per market made a batch over many markets quadratic.
	base      map[account.Ref]int64
	balances  map[account.Ref]int64
	positions map[posKey]*Position
	now       time.Time
	eff       *Effects
	// pool, for a market of an exclusive pool, is every market of the
	// pool as this decision has left it (market is pool[idx], kept in
	// market until the end), and ex their pricer; views and prices are
	// scratch space for what every trade rewrites. nil for a binary
	// market.
	pool   []Market
	idx    int
	ex     lmsr.Exclusive
	views  []lmsr.BinaryView
	prices []float64
}

// escrow is the account that holds the market maker's money: the
// market's escrow, or for an exclusive pool the escrow of its first market,
// which holds the whole pool's.
func (d *decision) escrow() account.Ref {
	if d.pool != nil {
		return account.EscrowAccount(d.pool[0].ID)
	}
	return account.EscrowAccount(d.market.ID)
}

// price is the market's YES price now.
func (d *decision) price() float64 {
	if d.pool != nil {
		return d.ex.Price(d.idx)
	}
	return d.market.YesProbability()
}

// move applies delta shares of side (negative for a sale) to the market
// maker: on an exclusive pool, to the pool's quantities, and then every
// market's q_yes and q_no are the pool's binary views.
func (d *decision) move(side Side, delta int64) error {
	if d.pool == nil {
		if side == Yes {
			d.market.QYes += delta
		} else {
			d.market.QNo += delta
		}
		return nil
	}
	ex := d.ex.With(d.idx, side, delta)
	if err := ex.BinaryViewsInto(d.views); err != nil {
		return err
	}
	if err := ex.PricesInto(d.prices); err != nil {
		return err
	}
	d.ex = ex
	for j, v := range d.views {
		d.pool[j].QYes, d.pool[j].QNo, d.pool[j].Price = v.QYes, v.QNo, d.prices[j]
	}
	d.market.QYes, d.market.QNo, d.market.Price = d.views[d.idx].QYes, d.views[d.idx].QNo, d.prices[d.idx]
	return nil
}

// unmove undoes move(side, delta) exactly: the pool's quantities are
// integers, and its views a function of them.
func (d *decision) unmove(side Side, delta int64) {
	_ = d.move(side, -delta)
}

func (d *decision) userBalances(id int64) account.Balances {
	return account.Balances{Balance: d.balance(account.UserAccount(id)), Bonus: d.balance(account.BonusAccount(id))}
}

// balance is ref's balance as this decision has left it.
func (d *decision) balance(ref account.Ref) int64 {
	if v, ok := d.balances[ref]; ok {
		return v
	}
	return d.base[ref]
}

// post applies postings to the decision's balances, all or none. It
// works in place and undoes a refused set: cloning the balances for every
// trade would cost a batch time quadratic in its size.
func (d *decision) post(ps []account.Posting) error {
	for _, p := range ps {
		for _, ref := range [2]account.Ref{p.From, p.To} {
			if _, ok := d.balances[ref]; !ok {
				d.balances[ref] = d.base[ref]
			}
		}
	}
	for i := range ps {
		if err := account.Apply(d.balances, ps[i:i+1]); err != nil {
			// Apply leaves a refused posting unapplied: undo the ones
			// before it, which fit, so the sums cannot overflow.
			for j := i - 1; j >= 0; j-- {
				d.balances[ps[j].From] += ps[j].Amount
				d.balances[ps[j].To] -= ps[j].Amount
			}
			return err
		}
	}
	return nil
}

func (d *decision) trade(r *Request) (*TradeEffect, error) {
	if err := d.market.refusal(d.now); err != nil {
		return nil, err
	}
	if r.Action == ActionBuy {
		return d.buy(r)
	}
	return d.sell(r)
}

func (d *decision) buy(r *Request) (*TradeEffect, error) {
	user := account.UserAccount(r.UserID)
	payer := user
	if r.UseBonus {
		payer = account.BonusAccount(r.UserID)
	}
	// What the payer can spend: its balance (the bonus balance with
	// use_bonus) and, for a partner's bet, the float that tops it up.
	have := max(d.balance(payer), 0)
	can := have
	topUp := r.Partner != nil && r.Partner.TopUp && !r.UseBonus
	if topUp {
		can = addStat(can, max(d.balance(account.FloatAccount(r.Partner.Key.PartnerID)), 0))
	}
	var q lmsr.Buy
	var err error
	if d.pool != nil {
		q, err = d.ex.BuyForSpend(d.idx, r.Side, r.Amount, d.market.Margin)
	} else {
		q, err = lmsr.BuyForSpend(d.market.Pricer(), r.Side, r.Amount, d.market.Margin)
	}
	if err != nil {
		// The payer needs the charge, not the whole amount, and the
		// charge may be a little less than the amount; but a buy the
		// market maker refuses has no charge. When the payer could not
		// pay the amount either, the money is the payer's problem:
		// insufficient funds, not the price bound or a buy too small.
		if can < r.Amount && (errors.Is(err, lmsr.ErrPriceLimit) || errors.Is(err, lmsr.ErrTooSmall)) {
			return nil, account.ErrInsufficientFunds
		}
		return nil, pricerError(err)
	}
	if r.MaxCost > 0 && q.Charge > r.MaxCost {
		return nil, ErrPriceMoved
	}
	if r.MinShares > 0 && q.Shares < r.MinShares {
		return nil, ErrPriceMoved
	}
	escrow := d.escrow()
	var ps []account.Posting
	if topUp && have < q.Charge {
		float := account.FloatAccount(r.Partner.Key.PartnerID)
		ps = append(ps, account.Posting{From: float, To: user, Amount: q.Charge - have, Reason: "topup", At: d.now})
	}
	ps = append(ps, account.Posting{From: payer, To: escrow, Amount: q.Cost, Reason: "buy", At: d.now})
	if q.Fee > 0 {
		ps = append(ps, account.Posting{From: payer, To: account.FeeAccount(d.market.ID), Amount: q.Fee, Reason: "fee", At: d.now})
	}
	priceBefore := d.price()
	if err := d.move(r.Side, q.Shares); err != nil {
		return nil, pricerError(err)
	}
	if err := d.post(ps); err != nil {
		d.unmove(r.Side, q.Shares)
		return nil, err
	}

	pos := d.positions[posKey{r.UserID, r.Side}]
	if pos == nil {
		pos = &Position{UserID: r.UserID, MarketID: d.market.ID, Side: r.Side, PartnerID: r.partnerID(), CreatedAt: d.now}
		d.positions[posKey{r.UserID, r.Side}] = pos
	}
	// Shares held and their cost basis are bounded by the ledger: the
	// escrow covers the shares, and no balance passes 4 × 10^18
	// (account.MaxExposure). The totals below only ever grow.
	pos.Shares += q.Shares
	pos.CostBasis += q.Charge
	pos.Bought = addStat(pos.Bought, q.Shares)
	pos.Spent = addStat(pos.Spent, q.Charge)
	pos.UseBonus = pos.UseBonus || r.UseBonus
	pos.UpdatedAt = d.now

	d.market.Volume = addStat(d.market.Volume, q.Cost)
	return d.record(r, pos, q.Shares, q.Charge, q.Cost, q.Fee, priceBefore, ps), nil
}

func (d *decision) sell(r *Request) (*TradeEffect, error) {
	pos := d.positions[posKey{r.UserID, r.Side}]
	if pos == nil || pos.Shares == 0 {
		return nil, ErrNoPosition
	}
	if r.Shares > pos.Shares {
		return nil, ErrInsufficientShares
	}
	var q lmsr.Sell
	var err error
	if d.pool != nil {
		q, err = d.ex.SellShares(d.idx, r.Side, r.Shares, d.market.Margin)
	} else {
		q, err = lmsr.SellShares(d.market.Pricer(), r.Side, r.Shares, d.market.Margin)
	}
	if err != nil {
		return nil, pricerError(err)
	}
	if r.MinPayout > 0 && q.Payout < r.MinPayout {
		return nil, ErrPriceMoved
	}
	escrow := d.escrow()
	var ps []account.Posting
	if q.Payout > 0 {
		ps = append(ps, account.Posting{From: escrow, To: account.UserAccount(r.UserID), Amount: q.Payout, Reason: "sell", At: d.now})
	}
	if q.Fee > 0 {
		ps = append(ps, account.Posting{From: escrow, To: account.FeeAccount(d.market.ID), Amount: q.Fee, Reason: "fee", At: d.now})
	}
	if err := d.post(ps); err != nil {
		// The escrow always covers a refund (it holds the subsidy plus every
		// cost paid in); failing here means the ledger is broken.
		return nil, fmt.Errorf("market %d: escrow cannot pay a refund of %d: %w", d.market.ID, q.Refund, err)
	}
	priceBefore := d.price()
	if err := d.move(r.Side, -r.Shares); err != nil {
		// The pricer priced the state after the sale; it cannot be invalid.
		return nil, fmt.Errorf("market %d: %w", d.market.ID, err)
	}

	// The shares leave with their pro-rata part of the cost basis; the last
	// sale takes all that is left, so no kopeck of basis is stranded.
	removed := pos.CostBasis
	if r.Shares < pos.Shares {
		removed = mulDivRound(pos.CostBasis, r.Shares, pos.Shares)
	}
	pos.Shares -= r.Shares
	pos.CostBasis -= removed
	pos.Returned = addStat(pos.Returned, q.Payout)
	pos.UpdatedAt = d.now
	d.eff.PnL = append(d.eff.PnL, PnLEntry{Position: pos, Delta: q.Payout - removed, At: d.now})
	if pos.Shares == 0 {
		closed := d.now
		sold := -1
		pos.ClosedAt, pos.WonSide = &closed, &sold
		delete(d.positions, posKey{r.UserID, r.Side})
	}

	d.market.Volume = addStat(d.market.Volume, q.Refund)
	return d.record(r, pos, r.Shares, q.Payout, q.Refund, q.Fee, priceBefore, ps), nil
}

func (d *decision) record(r *Request, pos *Position, shares, amount, cost, fee int64, priceBefore float64, ps []account.Posting) *TradeEffect {
	after := d.price()
	t := &Trade{
		MarketID: d.market.ID, UserID: r.UserID, Side: r.Side, Action: r.Action,
		Shares: shares, Amount: amount, Cost: cost, Fee: fee,
		PriceBefore: priceBefore, PriceAfter: after, QYes: d.market.QYes, QNo: d.market.QNo,
		UseBonus: r.UseBonus, CreatedAt: d.now,
	}
	if p := r.Partner; p != nil {
		t.PartnerID, t.ClientBetID, t.RequestHash = p.Key.PartnerID, p.Key.ClientBetID, p.Digest
	}
	te := &TradeEffect{
		Trade: t, Position: pos, Postings: ps,
		Price: PricePoint{MarketID: d.market.ID, At: d.now, YesProbability: after, QYes: d.market.QYes, QNo: d.market.QNo},
	}
	if d.pool != nil {
		te.PoolPrices = make([]PricePoint, 0, len(d.pool)-1)
		for j := range d.pool {
			if j != d.idx {
				m := &d.pool[j]
				te.PoolPrices = append(te.PoolPrices, PricePoint{MarketID: m.ID, At: d.now, YesProbability: d.prices[j], QYes: m.QYes, QNo: m.QNo})
			}
		}
	}
	return te
}

func tradeNotification(m *Market, t *Trade) social.Notification {
	return social.Notification{
		UserID: t.UserID, Type: social.TypeTradeExecuted, RelatedID: m.EventID, RelatedType: social.RelatedEvent, CreatedAt: t.CreatedAt,
		Data: social.NotificationData{MarketName: m.Name, Side: t.Side.String(), Action: string(t.Action), Shares: t.Shares, Amount: t.Amount},
	}
}

// pricerError turns a refusal of the market maker into a domain error.
func pricerError(err error) error {
	switch {
	case errors.Is(err, lmsr.ErrTooSmall):
		return fmt.Errorf("%w: amount too small to buy a share", ErrTradeRefused)
	case errors.Is(err, lmsr.ErrPriceLimit):
		return fmt.Errorf("%w: trade would push the price past its bound", ErrTradeRefused)
	case errors.Is(err, lmsr.ErrInvalidAmount), errors.Is(err, lmsr.ErrInvalidQuantity):
		return fmt.Errorf("%w: %v", ErrTradeRefused, err)
	}
	return err
}

// mulDivRound is a*b/c rounded half up, for a, b >= 0 and c > 0, in
// 128-bit arithmetic so that no product overflows; a quotient past int64
// is MaxInt64 (with b <= c it is within a).
func mulDivRound(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	if r >= uint64(c)-r { // 2r >= c, without overflowing 2r
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// addStat adds v >= 0 to a running total that only ever grows and moves
// no money: a market's volume, a position's shares bought, spent and
// returned. Churning a position (buying and selling it over and over)
// grows them without bound, so they stop at MaxInt64 instead of
// wrapping. Balances never need it: account.Apply bounds them.
func addStat(total, v int64) int64 {
	if s, ok := account.Add(total, v); ok {
		return s
	}
	return math.MaxInt64
}

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

// Begin checks the locked market can be resolved: ErrResolved if it was.
func (s Settlement) Begin(m *Market) error {
	if m.Resolved {
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
// holder gets one posting from each account that pays it and one
// market_resolved notification. Holders are paid in the order their first
// position comes in, from Sources by Split. Of a position it reads only
// ID, UserID, Side, Shares, CostBasis, Spent and Returned, and changes
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
	paid := map[int64]int64{}
	var holders []int64
	for _, p := range st.Positions {
		c := *p
		amount := s.Payout(&c)
		if _, seen := paid[c.UserID]; !seen {
			holders = append(holders, c.UserID)
		}
		paid[c.UserID] += amount
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
		parts, err := Split(before, paid[u], sources)
		if err != nil {
			return nil, fmt.Errorf("market %d: %w", m.ID, err)
		}
		before += paid[u]
		for i, amount := range parts {
			if amount > 0 {
				eff.Postings = append(eff.Postings, account.Posting{From: sources[i].From, To: account.UserAccount(u), Amount: amount, Reason: s.Reason(), At: now})
			}
		}
		eff.Notifications = append(eff.Notifications, social.Notification{
			UserID: u, Type: social.TypeMarketResolved, RelatedID: m.EventID, RelatedType: social.RelatedEvent, CreatedAt: now,
			Data: social.NotificationData{MarketName: m.Name, Won: s.outcome(), Amount: paid[u]},
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
