package market

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/lmsr"
)

// Limits on what an event may hold.
const (
	MaxNameLen         = 200
	MaxRulesLen        = 10000
	MaxPools           = 20
	MaxMarketsPerPool  = 50
	MinLiquidity       = 100
	MaxLiquidity       = 1_000_000_000_000
	MaxMargin          = 0.2
	MinProbability     = 0.01
	MaxProbability     = 0.99
	LatestTradesLimit  = 50
	ClosedInProfile    = 20
	MaxPageSize        = 100
	PriceHistoryLimit  = 1000
	DefaultEventsLimit = 20
)

// Users is what the market service needs to know of users.
type Users interface {
	User(ctx context.Context, id int64) (*account.User, error)
}

// Service is the market use cases. It is safe for concurrent use.
type Service struct {
	store Store
	users Users
	// Trader executes trades: Direct by default; a *Batcher for group
	// commit.
	Trader Trader
	// Now is the clock, in microseconds (what every store keeps); tests
	// replace it.
	Now func() time.Time

	// pools maps a market id to the markets of its exclusive pool,
	// ascending (nil for a market of a non-exclusive pool), for the
	// Lock of its trades. Neither a pool's markets nor whether it is
	// exclusive ever change, so an entry never goes stale, and every
	// process may keep its own; a market's first trade here reads it.
	pools sync.Map
}

// NewService returns a Service on store.
func NewService(store Store, users Users) *Service {
	return &Service{store: store, users: users, Trader: Direct{store}, Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// NewEvent is what a creator submits to publish an event.
type NewEvent struct {
	Name   string
	NameRu string
	Pools  []NewPool
}

// NewPool is a pool of a NewEvent.
type NewPool struct {
	Name, NameRu, Rules, RulesRu string
	Margin                       float64
	B                            int64
	LiveAt, FinishAt             *time.Time
	// Exclusive prices the pool's markets as one n-outcome LMSR (at
	// least 2 markets, probabilities summing to 1 within
	// lmsr.ExclusiveSumTolerance).
	Exclusive bool
	Markets   []NewMarket
}

// NewMarket is a market of a NewPool.
type NewMarket struct {
	Name, NameRu    string
	Probability     float64
	YesName, NoName string
}

// CreateEvent publishes an event for creator (inactive until activated):
// each market's LMSR opens at its probability and the platform treasury
// escrows its worst-case loss. ErrForbidden if creator may not create
// events; *input.Error.
func (s *Service) CreateEvent(ctx context.Context, creator *account.User, in NewEvent) (*Event, error) {
	if creator == nil || !creator.IsCreator {
		return nil, ErrForbidden
	}
	now := s.Now()
	name, err := text("name", in.Name, true, MaxNameLen)
	if err != nil {
		return nil, err
	}
	nameRu, err := text("name_ru", in.NameRu, false, MaxNameLen)
	if err != nil {
		return nil, err
	}
	if len(in.Pools) == 0 || len(in.Pools) > MaxPools {
		return nil, input.Invalid("pools", fmt.Sprintf("must hold 1 to %d pools", MaxPools))
	}
	e := &Event{Name: name, NameRu: nameRu, CreatorID: creator.ID, CreatedAt: now}
	var subsidies []int64
	for i, np := range in.Pools {
		f := func(field string) string { return fmt.Sprintf("pools[%d].%s", i, field) }
		p := &Pool{Margin: np.Margin, B: np.B, LiveAt: now, FinishAt: now.AddDate(0, 1, 0), Exclusive: np.Exclusive}
		if p.Name, err = text(f("name"), np.Name, true, MaxNameLen); err != nil {
			return nil, err
		}
		if p.NameRu, err = text(f("name_ru"), np.NameRu, false, MaxNameLen); err != nil {
			return nil, err
		}
		if p.Rules, err = longText(f("rules"), np.Rules, MaxRulesLen); err != nil {
			return nil, err
		}
		if p.RulesRu, err = longText(f("rules_ru"), np.RulesRu, MaxRulesLen); err != nil {
			return nil, err
		}
		if math.IsNaN(np.Margin) || np.Margin < 0 || np.Margin > MaxMargin {
			return nil, input.Invalid(f("margin"), fmt.Sprintf("must be 0 to %g", MaxMargin))
		}
		if np.B < MinLiquidity || np.B > MaxLiquidity {
			return nil, input.Invalid(f("lmsr_b_kopecks"), fmt.Sprintf("must be %d to %d", MinLiquidity, int64(MaxLiquidity)))
		}
		// Stores keep microseconds: the window decided is the window kept.
		if np.LiveAt != nil {
			p.LiveAt = np.LiveAt.UTC().Truncate(time.Microsecond)
		}
		if np.FinishAt != nil {
			p.FinishAt = np.FinishAt.UTC().Truncate(time.Microsecond)
		}
		if !p.FinishAt.After(p.LiveAt) {
			return nil, input.Invalid(f("finish_at"), "must be after live_at")
		}
		if len(np.Markets) == 0 || len(np.Markets) > MaxMarketsPerPool {
			return nil, input.Invalid(f("markets"), fmt.Sprintf("must hold 1 to %d markets", MaxMarketsPerPool))
		}
		if np.Exclusive && len(np.Markets) < 2 {
			return nil, input.Invalid(f("markets"), fmt.Sprintf("an exclusive pool must hold 2 to %d markets", MaxMarketsPerPool))
		}
		for j, nm := range np.Markets {
			g := func(field string) string { return fmt.Sprintf("pools[%d].markets[%d].%s", i, j, field) }
			m := &Market{OutcomeIndex: j, B: np.B, Margin: np.Margin, LiveAt: p.LiveAt, FinishAt: p.FinishAt, Exclusive: np.Exclusive, CreatedAt: now}
			if m.Name, err = text(g("name"), nm.Name, true, MaxNameLen); err != nil {
				return nil, err
			}
			if m.NameRu, err = text(g("name_ru"), nm.NameRu, false, MaxNameLen); err != nil {
				return nil, err
			}
			if m.YesName, err = text(g("yes_name"), nm.YesName, false, MaxNameLen); err != nil {
				return nil, err
			}
			if m.NoName, err = text(g("no_name"), nm.NoName, false, MaxNameLen); err != nil {
				return nil, err
			}
			if m.YesName == "" {
				m.YesName = "Yes"
			}
			if m.NoName == "" {
				m.NoName = "No"
			}
			if math.IsNaN(nm.Probability) || nm.Probability < MinProbability || nm.Probability > MaxProbability {
				return nil, input.Invalid(g("probability"), fmt.Sprintf("must be %g to %g", MinProbability, MaxProbability))
			}
			p.Markets = append(p.Markets, m)
			if np.Exclusive {
				continue // priced together below
			}
			qy, qn, err := lmsr.InitialQ(np.B, nm.Probability)
			if err != nil {
				return nil, input.Invalid(g("probability"), err.Error())
			}
			m.QYes, m.QNo, m.Q0Yes, m.Q0No = qy, qn, qy, qn
			sub, err := lmsr.SubsidyKopecks(m.Pricer())
			if err != nil {
				return nil, input.Invalid(g("probability"), err.Error())
			}
			subsidies = append(subsidies, sub)
		}
		if np.Exclusive {
			sub, err := openExclusive(p, np.Markets)
			if err != nil {
				return nil, input.Invalid(f("markets"), err.Error())
			}
			// One escrow for the pool, its first market's.
			subsidies = append(subsidies, sub)
			subsidies = append(subsidies, make([]int64, len(p.Markets)-1)...)
		}
		e.Pools = append(e.Pools, p)
	}
	// What the event escrows, summed with checked arithmetic: at most
	// MaxEventSubsidy. Whether the treasury can escrow it is the store's
	// to check, under its lock (account.Apply: account.ErrBalanceLimit).
	var escrow int64
	for _, sub := range subsidies {
		var ok bool
		if escrow, ok = account.Add(escrow, sub); !ok || escrow > MaxEventSubsidy {
			return nil, input.Invalid("pools", fmt.Sprintf("the markets would escrow more than %d kopecks, the most one event may: lower lmsr_b_kopecks or hold fewer markets", int64(MaxEventSubsidy)))
		}
	}
	if err := s.store.CreateEvent(ctx, e, subsidies); err != nil {
		if errors.Is(err, account.ErrBalanceLimit) {
			return nil, input.Invalid("pools", fmt.Sprintf("the platform's treasury cannot escrow another %d kopecks: its subsidies would pass their bound of %d kopecks; lower lmsr_b_kopecks or hold fewer markets", escrow, int64(account.MaxExposure)))
		}
		return nil, err
	}
	return e, nil
}

// openExclusive opens the markets of exclusive pool p at the
// probabilities of ms as one lmsr.Exclusive and returns the pool's
// subsidy: its worst-case loss, escrowed once for the pool.
func openExclusive(p *Pool, ms []NewMarket) (int64, error) {
	probs := make([]float64, len(ms))
	sum := 0.0
	for j, nm := range ms {
		probs[j] = nm.Probability
		sum += nm.Probability
	}
	if math.Abs(sum-1) > lmsr.ExclusiveSumTolerance {
		return 0, fmt.Errorf("the probabilities of an exclusive pool's markets must sum to 1 (within %g); they sum to %g", lmsr.ExclusiveSumTolerance, sum)
	}
	ex, err := lmsr.NewExclusive(p.B, probs)
	if err != nil {
		return 0, err
	}
	sub, err := ex.SubsidyKopecks()
	if err != nil {
		return 0, err
	}
	for j, v := range ex.BinaryViews() {
		m := p.Markets[j]
		m.QYes, m.QNo, m.Q0Yes, m.Q0No = v.QYes, v.QNo, v.QYes, v.QNo
	}
	return sub, nil
}

// text is v trimmed, when it follows the text rule (input.Text: UTF-8,
// no control characters), is not empty if required, and holds at most
// maxLen characters.
func text(field, v string, required bool, maxLen int) (string, error) {
	return checkText(input.Text, field, v, required, maxLen)
}

// longText is text for the fields that document line breaks and tabs
// (a pool's rules).
func longText(field, v string, maxLen int) (string, error) {
	return checkText(input.MultilineText, field, v, false, maxLen)
}

func checkText(rule func(field, s string) error, field, v string, required bool, maxLen int) (string, error) {
	v = strings.TrimSpace(v)
	if err := rule(field, v); err != nil {
		return "", err
	}
	if required && v == "" {
		return "", input.Invalid(field, "is required")
	}
	if utf8.RuneCountInString(v) > maxLen {
		return "", input.Invalid(field, fmt.Sprintf("must be at most %d characters", maxLen))
	}
	return v, nil
}

// SetActive shows (active) or hides an event in the public feed. Checks
// in order: ErrEventNotFound, ErrForbidden (caller is not the creator),
// *input.Error (active is nil).
func (s *Service) SetActive(ctx context.Context, callerID, eventID int64, active *bool) error {
	e, err := s.store.Event(ctx, eventID)
	if err != nil {
		return err
	}
	if e.CreatorID != callerID {
		return ErrForbidden
	}
	if active == nil {
		return input.Invalid("is_active", "must be true or false")
	}
	return s.store.SetEventActive(ctx, eventID, *active)
}

// Event returns one event. An inactive event is unlisted, not secret: it is
// reachable by id. ErrEventNotFound.
func (s *Service) Event(ctx context.Context, id int64) (*Event, error) {
	e, err := s.store.Event(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, p := range e.Pools {
		PricePool(p)
	}
	return e, nil
}

// PricePool sets the Price of every market of p, if p is exclusive, from
// the whole pool: the prices sum to 1.
func PricePool(p *Pool) {
	if !p.Exclusive || len(p.Markets) < 2 {
		return
	}
	ex, _, err := PoolPricer(p, p.Markets[0].ID)
	if err != nil {
		return
	}
	prices := ex.Prices()
	if prices == nil {
		return
	}
	// PoolPricer orders the outcomes by market id.
	ms := slices.SortedFunc(slices.Values(p.Markets), func(a, b *Market) int { return cmpInt(a.ID, b.ID) })
	for j, m := range ms {
		m.Price = prices[j]
	}
}

// Events returns the public feed: active events, newest first.
func (s *Service) Events(ctx context.Context, limit, offset int) ([]*Event, error) {
	if limit <= 0 {
		limit = DefaultEventsLimit
	}
	limit = min(limit, MaxPageSize)
	es, err := s.store.ActiveEvents(ctx, limit, max(offset, 0))
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		for _, p := range e.Pools {
			PricePool(p)
		}
	}
	return es, nil
}

// Pool returns one pool with its markets. ErrPoolNotFound.
func (s *Service) Pool(ctx context.Context, id int64) (*Pool, error) {
	p, err := s.store.Pool(ctx, id)
	if err != nil {
		return nil, err
	}
	PricePool(p)
	return p, nil
}

// Market returns one market. ErrMarketNotFound.
func (s *Service) Market(ctx context.Context, id int64) (*Market, error) {
	m, err := s.store.Market(ctx, id)
	if err != nil || !m.Exclusive {
		return m, err
	}
	p, err := s.store.Pool(ctx, m.PoolID)
	if err != nil {
		return nil, err
	}
	PricePool(p)
	for _, pm := range p.Markets {
		if pm.ID == m.ID {
			// The pool's read, so that the price and the quantities agree.
			return pm, nil
		}
	}
	return m, nil
}

// Quote is what a trade would do now, without trading.
type Quote struct {
	MarketID int64
	Side     Side
	Action   Action
	Shares   int64
	// Amount is the charge of a buy or the payout of a sell (fee
	// included); Cost the LMSR cost or refund; Fee the margin.
	Amount, Cost, Fee int64
	AvgPriceBps       int64
	PriceBefore       float64
	PriceAfter        float64
}

// QuoteBuy prices a buy for amount kopecks. ErrMarketNotFound, ErrClosed,
// ErrTradeRefused, *input.Error.
func (s *Service) QuoteBuy(ctx context.Context, marketID int64, side Side, amount int64) (*Quote, error) {
	r := Request{Action: ActionBuy, Side: side, Amount: amount}
	if err := r.Check(); err != nil {
		return nil, err
	}
	m, err := s.tradable(ctx, marketID)
	if err != nil {
		return nil, err
	}
	if m.Exclusive {
		ex, i, err := s.poolPricer(ctx, m)
		if err != nil {
			return nil, err
		}
		b, err := ex.BuyForSpend(i, side, amount, m.Margin)
		if err != nil {
			return nil, pricerError(err)
		}
		return poolQuote(m, ex, i, side, ActionBuy, b.Shares, b.Charge, b.Cost, b.Fee), nil
	}
	b, err := lmsr.BuyForSpend(m.Pricer(), side, amount, m.Margin)
	if err != nil {
		return nil, pricerError(err)
	}
	return quote(m, side, ActionBuy, b.Shares, b.Charge, b.Cost, b.Fee), nil
}

// QuoteSell prices a sale of shares. ErrMarketNotFound, ErrClosed,
// ErrTradeRefused, *input.Error.
func (s *Service) QuoteSell(ctx context.Context, marketID int64, side Side, shares int64) (*Quote, error) {
	r := Request{Action: ActionSell, Side: side, Shares: shares}
	if err := r.Check(); err != nil {
		return nil, err
	}
	m, err := s.tradable(ctx, marketID)
	if err != nil {
		return nil, err
	}
	if m.Exclusive {
		ex, i, err := s.poolPricer(ctx, m)
		if err != nil {
			return nil, err
		}
		q, err := ex.SellShares(i, side, shares, m.Margin)
		if err != nil {
			return nil, pricerError(err)
		}
		return poolQuote(m, ex, i, side, ActionSell, shares, q.Payout, q.Refund, q.Fee), nil
	}
	q, err := lmsr.SellShares(m.Pricer(), side, shares, m.Margin)
	if err != nil {
		return nil, pricerError(err)
	}
	return quote(m, side, ActionSell, shares, q.Payout, q.Refund, q.Fee), nil
}

// poolPricer reads the exclusive pool of m and returns it as one
// lmsr.Exclusive, with m's index in it.
func (s *Service) poolPricer(ctx context.Context, m *Market) (lmsr.Exclusive, int, error) {
	p, err := s.store.Pool(ctx, m.PoolID)
	if err != nil {
		return lmsr.Exclusive{}, 0, err
	}
	return PoolPricer(p, m.ID)
}

// PoolPricer returns exclusive pool p as one lmsr.Exclusive, its outcomes
// in ascending market id, and the index of market id among them. It
// prices from the markets' q_yes, the pool's state; q_no is derived.
func PoolPricer(p *Pool, id int64) (lmsr.Exclusive, int, error) {
	ms := slices.SortedFunc(slices.Values(p.Markets), func(a, b *Market) int { return cmpInt(a.ID, b.ID) })
	ex := lmsr.Exclusive{B: p.B, Q: make([]int64, len(ms))}
	idx := -1
	for j, m := range ms {
		ex.Q[j] = m.QYes
		if m.ID == id {
			idx = j
		}
	}
	if idx < 0 || len(ms) < 2 {
		return lmsr.Exclusive{}, 0, fmt.Errorf("market %d: not in exclusive pool %d", id, p.ID)
	}
	return ex, idx, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func poolQuote(m *Market, ex lmsr.Exclusive, i int, side Side, a Action, shares, amount, cost, fee int64) *Quote {
	delta := shares
	if a == ActionSell {
		delta = -shares
	}
	q := &Quote{MarketID: m.ID, Side: side, Action: a, Shares: shares, Amount: amount, Cost: cost, Fee: fee,
		PriceBefore: ex.Price(i), PriceAfter: ex.With(i, side, delta).Price(i)}
	if shares > 0 {
		q.AvgPriceBps = (amount*10000 + shares/2) / shares
	}
	return q
}

func (s *Service) tradable(ctx context.Context, marketID int64) (*Market, error) {
	m, err := s.store.Market(ctx, marketID)
	if err != nil {
		return nil, err
	}
	if err := m.refusal(s.Now()); err != nil {
		return nil, err
	}
	return m, nil
}

func quote(m *Market, side Side, a Action, shares, amount, cost, fee int64) *Quote {
	after := *m
	delta := shares
	if a == ActionSell {
		delta = -shares
	}
	if side == Yes {
		after.QYes += delta
	} else {
		after.QNo += delta
	}
	q := &Quote{MarketID: m.ID, Side: side, Action: a, Shares: shares, Amount: amount, Cost: cost, Fee: fee,
		PriceBefore: m.YesProbability(), PriceAfter: after.YesProbability()}
	if shares > 0 {
		q.AvgPriceBps = (amount*10000 + shares/2) / shares
	}
	return q
}

// Execute is the one way into the money path, for users and partners
// alike: it checks r, runs it on market id through s.Trader and returns
// its result; a refused trade returns its reason as the error.
// ErrMarketNotFound, ErrClosed, ErrPriceMoved, ErrNoPosition,
// ErrInsufficientShares, ErrTradeRefused, account.ErrInsufficientFunds,
// ErrIdempotencyConflict, *input.Error.
//
// A request with an idempotency key (a PartnerOrder's) runs at most once:
// a repeat returns the original trade with Result.Replayed set and runs
// nothing, and a repeat with other parameters is ErrIdempotencyConflict
// (idempotency.go has the steps).
func (s *Service) Execute(ctx context.Context, marketID int64, r Request) (*Result, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	if k, ok := r.key(); ok {
		prev, err := s.store.TradeByKey(ctx, k)
		if err != nil {
			return nil, err
		}
		if prev != nil {
			return outcome(repeat(prev, r.Partner.Digest), nil)
		}
	}
	if p := r.Partner; p != nil && r.UserID == 0 && r.Action == ActionSell {
		// A sale needs shares, which a partner's user without a
		// sub-account cannot hold: it is refused before anything is
		// locked, and no sub-account is made for it.
		id, err := s.store.SubAccountID(ctx, p.subAccount())
		if err != nil {
			return nil, err
		}
		if id == 0 {
			return nil, ErrNoPosition
		}
		r.UserID = id
	}
	pool, err := s.poolOf(ctx, marketID)
	if err != nil {
		return nil, err
	}
	r.Pool = pool
	return outcome(s.Trader.Trade(ctx, marketID, r))
}

// poolOf returns the markets of the exclusive pool of market id, for
// Request.Pool: nil for a market of a non-exclusive pool.
// ErrMarketNotFound.
func (s *Service) poolOf(ctx context.Context, id int64) ([]int64, error) {
	if v, ok := s.pools.Load(id); ok {
		return v.([]int64), nil
	}
	m, err := s.store.Market(ctx, id)
	if err != nil {
		return nil, err
	}
	var ids []int64
	if m.Exclusive {
		p, err := s.store.Pool(ctx, m.PoolID)
		if err != nil {
			return nil, err
		}
		for _, pm := range p.Markets {
			ids = append(ids, pm.ID)
		}
		slices.Sort(ids)
		for _, pm := range ids {
			s.pools.Store(pm, ids)
		}
	}
	s.pools.Store(id, ids)
	return ids, nil
}

// outcome is a Trader's answer as Execute returns it: a refusal becomes
// the error.
func outcome(res Result, err error) (*Result, error) {
	switch {
	case err != nil:
		return nil, err
	case res.Err != nil:
		return nil, res.Err
	}
	return &res, nil
}

// Close resolves a market for the creator of its event, with the outcome
// wonSide: "YES" or "NO" (the winning side), or "VOID". Positions are
// settled exactly once (see Settlement). Checks in order:
// ErrMarketNotFound (also when the ids do not belong together),
// ErrForbidden (caller is not the event's creator), *input.Error (bad
// wonSide, or NO on a market of an exclusive pool), ErrResolved. On a
// market of an exclusive pool, YES or VOID resolves the whole pool (see
// settle).
func (s *Service) Close(ctx context.Context, callerID, eventID, poolID, marketID int64, wonSide string) error {
	m, err := s.store.Market(ctx, marketID)
	if err != nil {
		return err
	}
	if m.PoolID != poolID || m.EventID != eventID {
		return ErrMarketNotFound
	}
	e, err := s.store.Event(ctx, eventID)
	if errors.Is(err, ErrEventNotFound) {
		return ErrMarketNotFound
	} else if err != nil {
		return err
	}
	if e.CreatorID != callerID {
		return ErrForbidden
	}
	st, err := ParseSettlement(wonSide, ResolvedByCreator)
	if err != nil {
		return err
	}
	return s.settle(ctx, m, st)
}

// Resolve resolves any market for the operator, as Close does for a
// creator: for a market whose creator is gone, or to get ahead of a wrong
// resolution. The market records that the operator resolved it. Checks in
// order: *input.Error (bad wonSide), ErrMarketNotFound, *input.Error (NO
// on a market of an exclusive pool), ErrResolved.
func (s *Service) Resolve(ctx context.Context, marketID int64, wonSide string) error {
	st, err := ParseSettlement(wonSide, ResolvedByOperator)
	if err != nil {
		return err
	}
	m, err := s.store.Market(ctx, marketID)
	if err != nil {
		return err
	}
	return s.settle(ctx, m, st)
}

// settle resolves market m as st says. A market of an exclusive pool
// resolves its whole pool: YES on it resolves every other market NO, and
// VOID voids them all; NO alone names no winner and is invalid input.
func (s *Service) settle(ctx context.Context, m *Market, st Settlement) error {
	if !m.Exclusive {
		return s.store.Settle(ctx, m.ID, st)
	}
	if !st.Void && st.Won != Yes {
		return input.Invalid("won_side", "a market of an exclusive pool resolves with YES, which resolves every other market of the pool NO, or VOID, which voids the pool")
	}
	ps := PoolSettlement{Void: st.Void, By: st.By}
	if !st.Void {
		ps.Winner = m.ID
	}
	return s.store.SettlePool(ctx, m.PoolID, ps)
}

// OpenPosition is an open position valued at the current price.
type OpenPosition struct {
	*PositionDetail
	// Value is what selling the whole position now would pay (after the
	// margin); 0 when the market maker would refuse the sale.
	Value         int64
	UnrealizedPnL int64
}

// OpenPositions returns user id's open positions, valued now.
func (s *Service) OpenPositions(ctx context.Context, userID int64) ([]OpenPosition, error) {
	ps, err := s.store.OpenPositions(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]OpenPosition, len(ps))
	pools := map[int64]*Pool{}
	for i, p := range ps {
		var v int64
		if m := p.Market; m != nil && m.Exclusive && !m.Resolved {
			pool, ok := pools[m.PoolID]
			if !ok {
				if pool, err = s.store.Pool(ctx, m.PoolID); err != nil {
					return nil, err
				}
				pools[m.PoolID] = pool
			}
			v = PoolValue(pool, m, p.Side, p.Shares)
		} else {
			v = Value(p.Market, p.Side, p.Shares)
		}
		out[i] = OpenPosition{PositionDetail: p, Value: v, UnrealizedPnL: v - p.CostBasis}
	}
	return out, nil
}

// PoolValue is Value for market m of exclusive pool p: what selling
// shares of side would pay now, priced by the whole pool.
func PoolValue(p *Pool, m *Market, side Side, shares int64) int64 {
	if m == nil || shares <= 0 || m.Resolved {
		return 0
	}
	ex, i, err := PoolPricer(p, m.ID)
	if err != nil {
		return 0
	}
	q, err := ex.SellShares(i, side, shares, m.Margin)
	if err != nil {
		return 0
	}
	return q.Payout
}

// Value is what selling shares of side on m would pay now, after the
// margin; 0 if the market is resolved or the market maker would refuse.
func Value(m *Market, side Side, shares int64) int64 {
	if m == nil || shares <= 0 || m.Resolved {
		return 0
	}
	q, err := lmsr.SellShares(m.Pricer(), side, shares, m.Margin)
	if err != nil {
		return 0
	}
	return q.Payout
}

// ClosedPage is a page of closed positions.
type ClosedPage struct {
	Positions []*PositionDetail
	HasMore   bool
}

// ClosedPositions returns a page of user id's closed positions, most
// recently closed first. limit is capped at MaxPageSize; limit <= 0 means
// ClosedInProfile.
func (s *Service) ClosedPositions(ctx context.Context, userID int64, limit, offset int) (*ClosedPage, error) {
	if limit <= 0 {
		limit = ClosedInProfile
	}
	limit = min(limit, MaxPageSize)
	offset = max(offset, 0)
	ps, err := s.store.ClosedPositions(ctx, userID, limit+1, offset)
	if err != nil {
		return nil, err
	}
	page := &ClosedPage{Positions: ps}
	if len(ps) > limit {
		page.Positions, page.HasMore = ps[:limit], true
	}
	return page, nil
}

// Stats are a user's closed-position figures for the profile.
type Stats struct {
	TotalPredictions int64
	BiggestWin       int64
}

// Stats returns user id's closed-position figures.
func (s *Service) Stats(ctx context.Context, userID int64) (Stats, error) {
	n, w, err := s.store.ClosedStats(ctx, userID)
	return Stats{TotalPredictions: n, BiggestWin: w}, err
}

// LatestTrades returns the public feed: the LatestTradesLimit most recent
// trades on markets of active events, newest first.
func (s *Service) LatestTrades(ctx context.Context) ([]*FeedTrade, error) {
	return s.store.LatestTrades(ctx, LatestTradesLimit)
}

// History returns market id's price history, oldest first: the opening
// price, then one point per trade (the most recent PriceHistoryLimit).
// ErrMarketNotFound.
func (s *Service) History(ctx context.Context, marketID int64) ([]PricePoint, error) {
	m, err := s.store.Market(ctx, marketID)
	if err != nil {
		return nil, err
	}
	pts, err := s.store.PriceHistory(ctx, marketID, PriceHistoryLimit)
	if err != nil {
		return nil, err
	}
	if len(pts) < PriceHistoryLimit {
		open := PricePoint{MarketID: m.ID, At: m.CreatedAt, QYes: m.Q0Yes, QNo: m.Q0No}
		open.YesProbability = (&Market{B: m.B, QYes: m.Q0Yes, QNo: m.Q0No}).YesProbability()
		if m.Exclusive {
			p, err := s.store.Pool(ctx, m.PoolID)
			if err != nil {
				return nil, err
			}
			for _, pm := range p.Markets {
				pm.QYes = pm.Q0Yes
			}
			if ex, i, err := PoolPricer(p, m.ID); err == nil {
				open.YesProbability = ex.Price(i)
			}
		}
		pts = append([]PricePoint{open}, pts...)
	}
	return pts, nil
}

// ChartPoint is a point of the PnL chart: cumulative realized P&L, kopecks.
type ChartPoint struct {
	At  time.Time
	PnL int64
}

// PnLChart returns user id's cumulative realized P&L: a point at
// registration with 0, then one per realization, oldest first. A hidden
// profile is account.ErrUserNotFound to everyone but its owner (viewerID 0
// is an anonymous viewer).
func (s *Service) PnLChart(ctx context.Context, viewerID, userID int64) ([]ChartPoint, error) {
	u, err := s.users.User(ctx, userID)
	if err != nil {
		return nil, err
	}
	if u.ProfileHidden && viewerID != userID {
		return nil, account.ErrUserNotFound
	}
	evs, err := s.store.PnLEvents(ctx, userID)
	if err != nil {
		return nil, err
	}
	pts := make([]ChartPoint, 0, len(evs)+1)
	pts = append(pts, ChartPoint{At: u.CreatedAt})
	var sum int64
	for _, e := range evs {
		// Realized P&L is bounded by the money a user can hold or lose,
		// which the ledger bounds; should it pass int64 still, the chart
		// stops at the end of the range instead of wrapping.
		var ok bool
		if sum, ok = account.Add(sum, e.Delta); !ok {
			sum = math.MaxInt64
			if e.Delta < 0 {
				sum = math.MinInt64
			}
		}
		pts = append(pts, ChartPoint{At: e.At, PnL: sum})
	}
	return pts, nil
}

// AuditEscrows checks that every market's escrow covers the payout of its
// larger side (or, once resolved, is empty) and returns the problems found.
// An exclusive pool has one escrow, its first market's: it must cover
// the payout of whichever market wins, the largest q_yes − q0_yes of the
// pool (see docs/exclusive-pools.md), and the escrows of its other markets
// stay empty.
func (s *Service) AuditEscrows(ctx context.Context) ([]string, error) {
	es, err := s.store.Escrows(ctx)
	if err != nil {
		return nil, err
	}
	return AuditEscrows(es), nil
}

// AuditEscrows is the audit of Service.AuditEscrows on escrow states es.
func AuditEscrows(es []EscrowState) []string {
	var problems []string
	type pool struct {
		lead, held int64
		need       int64
		resolved   bool
		escrows    []EscrowState
	}
	var pools map[int64]*pool
	var poolOrder []int64
	for _, e := range es {
		m := e.Market
		if m.Exclusive {
			if pools == nil {
				pools = map[int64]*pool{}
			}
			p := pools[m.PoolID]
			if p == nil {
				p = &pool{lead: m.ID, resolved: true}
				pools[m.PoolID] = p
				poolOrder = append(poolOrder, m.PoolID)
			}
			p.lead = min(p.lead, m.ID)
			p.held, _ = account.Add(p.held, e.Balance)
			p.need = max(p.need, m.Outstanding(Yes))
			p.resolved = p.resolved && m.Resolved
			p.escrows = append(p.escrows, e)
			continue
		}
		if m.Resolved {
			if e.Balance != 0 {
				problems = append(problems, fmt.Sprintf("market %d: resolved but escrow holds %d", m.ID, e.Balance))
			}
			continue
		}
		need := max(m.Outstanding(Yes), m.Outstanding(No))
		if e.Balance < need {
			problems = append(problems, fmt.Sprintf("market %d: escrow %d does not cover %d", m.ID, e.Balance, need))
		}
	}
	for _, id := range poolOrder {
		p := pools[id]
		for _, e := range p.escrows {
			if m := e.Market; m.ID != p.lead && e.Balance != 0 {
				problems = append(problems, fmt.Sprintf("market %d: of exclusive pool %d, whose escrow is market %d's, but its own holds %d", m.ID, id, p.lead, e.Balance))
			}
		}
		switch {
		case p.resolved && p.held != 0:
			problems = append(problems, fmt.Sprintf("exclusive pool %d: resolved but its escrow holds %d", id, p.held))
		case !p.resolved && p.held < p.need:
			problems = append(problems, fmt.Sprintf("exclusive pool %d: escrow %d does not cover %d, the payout of its largest outcome", id, p.held, p.need))
		}
	}
	return problems
}
