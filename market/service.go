package market

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
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
	Markets                      []NewMarket
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
		p := &Pool{Margin: np.Margin, B: np.B, LiveAt: now, FinishAt: now.AddDate(0, 1, 0)}
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
		for j, nm := range np.Markets {
			g := func(field string) string { return fmt.Sprintf("pools[%d].markets[%d].%s", i, j, field) }
			m := &Market{OutcomeIndex: j, B: np.B, Margin: np.Margin, LiveAt: p.LiveAt, FinishAt: p.FinishAt, CreatedAt: now}
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
			p.Markets = append(p.Markets, m)
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
	return s.store.Event(ctx, id)
}

// Events returns the public feed: active events, newest first.
func (s *Service) Events(ctx context.Context, limit, offset int) ([]*Event, error) {
	if limit <= 0 {
		limit = DefaultEventsLimit
	}
	limit = min(limit, MaxPageSize)
	return s.store.ActiveEvents(ctx, limit, max(offset, 0))
}

// Pool returns one pool with its markets. ErrPoolNotFound.
func (s *Service) Pool(ctx context.Context, id int64) (*Pool, error) {
	return s.store.Pool(ctx, id)
}

// Market returns one market. ErrMarketNotFound.
func (s *Service) Market(ctx context.Context, id int64) (*Market, error) {
	return s.store.Market(ctx, id)
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
	q, err := lmsr.SellShares(m.Pricer(), side, shares, m.Margin)
	if err != nil {
		return nil, pricerError(err)
	}
	return quote(m, side, ActionSell, shares, q.Payout, q.Refund, q.Fee), nil
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
	return outcome(s.Trader.Trade(ctx, marketID, r))
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
// wonSide), ErrResolved.
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
	return s.store.Settle(ctx, marketID, st)
}

// Resolve resolves any market for the operator, as Close does for a
// creator: for a market whose creator is gone, or to get ahead of a wrong
// resolution. The market records that the operator resolved it. Checks in
// order: *input.Error (bad wonSide), ErrMarketNotFound, ErrResolved.
func (s *Service) Resolve(ctx context.Context, marketID int64, wonSide string) error {
	st, err := ParseSettlement(wonSide, ResolvedByOperator)
	if err != nil {
		return err
	}
	return s.store.Settle(ctx, marketID, st)
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
	for i, p := range ps {
		v := Value(p.Market, p.Side, p.Shares)
		out[i] = OpenPosition{PositionDetail: p, Value: v, UnrealizedPnL: v - p.CostBasis}
	}
	return out, nil
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
func (s *Service) AuditEscrows(ctx context.Context) ([]string, error) {
	es, err := s.store.Escrows(ctx)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, e := range es {
		m := e.Market
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
	return problems, nil
}
