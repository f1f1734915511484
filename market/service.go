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
	// Creators bounds what creators may do (creator_limits.go); the zero
	// value bounds nothing.
	Creators CreatorRules
	// Challenge, when positive, makes a creator's close propose its
	// outcome, final after this long unless disputed (proposal.go);
	// DisputeBond is what a dispute holds, kopecks.
	Challenge   time.Duration
	DisputeBond int64
	// Proposals say whether users who are not creators may propose
	// events (proposals.go); the zero value allows none.
	Proposals ProposalRules

	// pools maps a market id to the markets of its exclusive pool,
	// ascending (nil for a market of a non-exclusive pool), for the
	// Lock of its trades. Neither a pool's markets nor whether it is
	// exclusive ever change, so an entry never goes stale, and every
	// process may keep its own; a market's first trade here reads it.
	pools sync.Map
	// creators maps a market id to its event's creator, which never
	// changes (see creatorOf).
	creators sync.Map
}

// NewService returns a Service on store.
func NewService(store Store, users Users) *Service {
	return &Service{store: store, users: users, Trader: Direct{store}, Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// NewEvent is what a creator submits to publish an event.
type NewEvent struct {
	Name   string
	NameRu string
	// Tags are slugs of tags the operator keeps (at most
	// MaxTagsPerEvent, none repeated).
	Tags  []string
	Pools []NewPool
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
	// Other marks the Other market of an exclusive pool (at most one per
	// pool): answers added later take their probability out of it.
	Other bool
}

// CreateEvent publishes an event for creator (inactive until activated):
// each market's LMSR opens at its probability and the platform treasury
// escrows its worst-case loss. ErrForbidden if creator may not create
// events; *input.Error; ErrCreatorLimit past s.Creators' limits.
//
// With s.Proposals on, a user who is not a creator proposes the event
// instead (see propose): it is created proposed, holding the ante.
func (s *Service) CreateEvent(ctx context.Context, creator *account.User, in NewEvent) (*Event, error) {
	if creator == nil {
		return nil, ErrForbidden
	}
	if !creator.IsCreator {
		if !s.Proposals.On {
			return nil, ErrForbidden
		}
		return s.propose(ctx, creator, in)
	}
	e, subsidies, escrow, err := s.buildEvent(creator.ID, in)
	if err != nil {
		return nil, err
	}
	if err := s.storeEvent(ctx, e, subsidies, escrow); err != nil {
		return nil, createRefusal(err, escrow, e.Tags)
	}
	return e, nil
}

// createRefusal is the error of a store's refusal of an event that
// escrows escrow kopecks and carries tags.
func createRefusal(err error, escrow int64, tags []string) error {
	if errors.Is(err, account.ErrBalanceLimit) {
		return input.Invalid("pools", fmt.Sprintf("the platform's treasury cannot escrow another %d kopecks: its subsidies would pass their bound of %d kopecks; lower lmsr_b_kopecks or hold fewer markets", escrow, int64(account.MaxExposure)))
	}
	return tagRefusal(err, tags)
}

// buildEvent checks in and builds the event creator creatorID would
// create with it: the event (status approved), the subsidy of each of
// its markets in order (pool by pool; an exclusive pool's is its first
// market's, the others' 0) and their sum. It writes nothing.
// *input.Error.
func (s *Service) buildEvent(creatorID int64, in NewEvent) (e *Event, subsidies []int64, escrow int64, err error) {
	now := s.Now()
	name, err := text("name", in.Name, true, MaxNameLen)
	if err != nil {
		return nil, nil, 0, err
	}
	nameRu, err := text("name_ru", in.NameRu, false, MaxNameLen)
	if err != nil {
		return nil, nil, 0, err
	}
	tags, err := checkEventTags(in.Tags)
	if err != nil {
		return nil, nil, 0, err
	}
	o, err := openPools(now, in.Pools)
	if err != nil {
		return nil, nil, 0, err
	}
	e = &Event{Name: name, NameRu: nameRu, CreatorID: creatorID, Status: StatusApproved, CreatedAt: now, Tags: tags, Pools: o.pools}
	return e, o.subsidies, o.escrow, nil
}

// opened is what openPools checked and opened.
type opened struct {
	pools []*Pool
	// subsidies are each market's, counting pool by pool (an exclusive
	// pool's is its first market's); escrow is their checked sum.
	subsidies []int64
	escrow    int64
}

// openPools checks the pools of a new event (or of an edit that
// replaces an event's pools) and opens their markets at now.
// *input.Error.
func openPools(now time.Time, in []NewPool) (*opened, error) {
	if len(in) == 0 || len(in) > MaxPools {
		return nil, input.Invalid("pools", fmt.Sprintf("must hold 1 to %d pools", MaxPools))
	}
	var (
		e         = &Event{}
		subsidies []int64
		escrow    int64
		err       error
	)
	for i, np := range in {
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
			m := &Market{OutcomeIndex: j, B: np.B, Margin: np.Margin, LiveAt: p.LiveAt, FinishAt: p.FinishAt, Exclusive: np.Exclusive, Other: nm.Other, CreatedAt: now}
			if err := checkOther(np, j, g("other")); err != nil {
				return nil, err
			}
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
	for _, sub := range subsidies {
		var ok bool
		if escrow, ok = account.Add(escrow, sub); !ok || escrow > MaxEventSubsidy {
			return nil, input.Invalid("pools", fmt.Sprintf("the markets would escrow more than %d kopecks, the most one event may: lower lmsr_b_kopecks or hold fewer markets", int64(MaxEventSubsidy)))
		}
	}
	return &opened{pools: e.Pools, subsidies: subsidies, escrow: escrow}, nil
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
// *input.Error (active is nil), ErrNotApproved (showing a proposal the
// operator has not approved).
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
	if e.Status != StatusApproved && *active {
		return ErrNotApproved
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
