package market

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/social"
)

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
	if r.UseBonus {
		pos.BonusShares += q.Shares
		pos.BonusNet = addNet(pos.BonusNet, q.Charge)
	}
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
	// Bonus money stays bonus: the bonus-bought shares among those sold
	// return their part of the proceeds to the bonus balance.
	bonusSold := soldBonusShares(pos, r.Shares)
	toBonus := bonusPart(q.Payout, bonusSold, r.Shares)
	var ps []account.Posting
	if toBonus > 0 {
		ps = append(ps, account.Posting{From: escrow, To: account.BonusAccount(r.UserID), Amount: toBonus, Reason: "sell", At: d.now})
	}
	if q.Payout > toBonus {
		ps = append(ps, account.Posting{From: escrow, To: account.UserAccount(r.UserID), Amount: q.Payout - toBonus, Reason: "sell", At: d.now})
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
	pos.BonusShares -= bonusSold
	pos.BonusNet = addNet(pos.BonusNet, -toBonus)
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
		Data: social.NotificationData{MarketName: m.Name, MarketNameRu: m.NameRu, Side: t.Side.String(), Action: string(t.Action), Shares: t.Shares, Amount: t.Amount},
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

// soldBonusShares is how many of the shares a sale of sold shares of pos
// takes are bonus-bought: the sale takes bonus and other shares in their
// proportion, rounded half up (ties to the bonus), and all that are left
// when it sells everything; never more than either kind holds.
func soldBonusShares(pos *Position, sold int64) int64 {
	if pos.BonusShares <= 0 || pos.Shares <= 0 {
		return 0
	}
	if sold >= pos.Shares {
		return pos.BonusShares
	}
	b := mulDivRound(pos.BonusShares, sold, pos.Shares)
	return min(max(b, sold-(pos.Shares-pos.BonusShares)), pos.BonusShares, sold)
}

// bonusPart is the part of a sale's payout that returns to the bonus
// balance: payout × bonusSold / sold rounded half up (ties to the bonus),
// so the two parts always sum to the payout and neither is negative.
func bonusPart(payout, bonusSold, sold int64) int64 {
	if bonusSold <= 0 || payout <= 0 || sold <= 0 {
		return 0
	}
	if bonusSold >= sold {
		return payout
	}
	return mulDivRound(payout, bonusSold, sold)
}

// addNet adds v to a position's bonus net cost, which may go either way,
// stopping at the ends of int64 instead of wrapping.
func addNet(total, v int64) int64 {
	if s, ok := account.Add(total, v); ok {
		return s
	}
	if v > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
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
