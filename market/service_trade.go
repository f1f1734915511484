package market

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/predictkit/predictkit/lmsr"
)

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
// ErrIdempotencyConflict, *input.Error; ErrForbidden for a creator's
// trade on their own event when s.Creators.NoOwnTrades.
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
	if err := s.checkOwnTrade(ctx, marketID, r); err != nil {
		return nil, err
	}
	pool, err := s.poolOf(ctx, marketID)
	if err != nil {
		return nil, err
	}
	r.Pool = pool
	res, err := outcome(s.Trader.Trade(ctx, marketID, r))
	if pool != nil && errors.Is(err, ErrPoolChanged) {
		// An answer was added to the pool since its list was read.
		for _, id := range pool {
			s.pools.Delete(id)
		}
		if r.Pool, err = s.poolOf(ctx, marketID); err != nil {
			return nil, err
		}
		return outcome(s.Trader.Trade(ctx, marketID, r))
	}
	return res, err
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
