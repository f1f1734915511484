// Package market is the trading core of predictkit: events that hold pools,
// pools that hold binary YES/NO markets priced by an LMSR market maker,
// positions, trades, settlement and the public feeds.
//
// Every change of money goes through one shape, lock → decide → write: a
// Store locks and loads what an operation touches, hands that State to a
// pure decision function of this package, and writes the Effects it returns
// in the same transaction, or nothing. The business rules therefore exist
// once, for every store, and a store may re-run a decision when it retries.
//
// Units: money is int64 kopecks; one share pays one kopeck if its side
// wins (100 shares = 1 token = 1 RUB); b and q are in shares; prices in
// basis points are per token (10000 bps = 1 RUB).
package market

import (
	"time"

	"github.com/predictkit/predictkit/lmsr"
	"github.com/predictkit/predictkit/social"
)

// Side is YES or NO.
type Side = lmsr.Side

// The two sides of a binary market.
const (
	Yes = lmsr.Yes
	No  = lmsr.No
)

// ParseSide reads "YES"/"yes" or "NO"/"no".
func ParseSide(s string) (Side, bool) {
	switch s {
	case "YES", "yes", "Yes":
		return Yes, true
	case "NO", "no", "No":
		return No, true
	}
	return 0, false
}

// Event is a real-world happening people bet on: it holds pools.
type Event struct {
	ID        int64
	Name      string
	NameRu    string
	CreatorID int64
	IsActive  bool
	// Status is StatusApproved for an event a creator made, else that of
	// a proposal (StatusProposed, then StatusApproved or StatusRejected:
	// see Propose and docs/proposals.md).
	Status    string
	CreatedAt time.Time
	// Proposal is what the event holds as a proposal; nil for an event a
	// creator made.
	Proposal *Proposal
	// Tags are the slugs of the tags the event carries, in the order
	// its creator gave them; never nil on a read.
	Tags  []string
	Pools []*Pool
	// Amendments are the notes its creator added (amend.go), oldest
	// first; never nil on a read of Event or ActiveEvents.
	Amendments []Amendment
	// Stats is set on the events of the feed (Service.Feed) only.
	Stats *FeedStats
}

// Pool groups the markets of one question (for example "who wins the
// match": one market per team). Its margin is the platform fee on trades.
type Pool struct {
	ID       int64
	EventID  int64
	Name     string
	NameRu   string
	Rules    string
	RulesRu  string
	WonSide  *int // outcome_index of the market that resolved YES
	Margin   float64
	LiveAt   time.Time
	FinishAt time.Time
	// B is the liquidity of every market of the pool, kopecks.
	B int64
	// Exclusive pools are priced by one n-outcome LMSR: exactly one of
	// their markets resolves YES (docs/exclusive-pools.md).
	Exclusive bool
	Markets   []*Market
}

// MarketType of every market predictkit makes.
const MarketTypeLMSR = "lmsr"

// Market is one binary market, priced by an LMSR market maker.
type Market struct {
	ID           int64
	PoolID       int64
	EventID      int64
	Name         string
	NameRu       string
	YesName      string
	NoName       string
	OutcomeIndex int
	// B is the LMSR liquidity; QYes and QNo the market maker's quantities
	// (shares). Q0Yes and Q0No are the quantities it opened with: the
	// shares held by traders on a side are Q − Q0.
	B, QYes, QNo int64
	Q0Yes, Q0No  int64
	// Volume is the sum of LMSR cost and refund of every trade (fees
	// excluded), kopecks.
	Volume int64
	// Margin is the pool's margin, copied here because every trade needs it.
	Margin float64
	// LiveAt and FinishAt are the pool's trading window, copied here
	// because every trade checks it (see Tradable).
	LiveAt, FinishAt time.Time
	// Exclusive is the pool's: the market is outcome OutcomeIndex of one
	// n-outcome LMSR. QYes is then the outcome's quantity and QNo the
	// quantity of its complement, b·ln Σ_{j≠i} e^{q_j/b} rounded, which
	// every trade on any market of the pool changes; Q0Yes is the opening
	// quantity. The pool's escrow is its first market's (lowest id).
	Exclusive bool
	// Other marks the Other market of an exclusive pool, the outcome
	// "none of the answers listed": answers added later
	// (Service.AddAnswer) take their probability out of it. At most one
	// per pool.
	Other bool
	// PoolMarkets, on a market of an exclusive pool that has had an
	// answer added, is how many markets the pool has; 0 for a pool that
	// never had one, whose markets never changed. A trade that locked a
	// different number of the pool's markets fails with ErrPoolChanged.
	PoolMarkets int
	// Price, on a market of an exclusive pool, is its outcome's price in
	// the pool as the service computed it from the whole pool (the pool's
	// prices sum to 1); 0 when unknown. Stores do not keep it.
	Price float64
	// Sparkline is the market's YES price hour by hour over the feed's
	// window (see Sparkline), set on the feed's events only.
	Sparkline []float64

	Paused bool
	// Unapproved is set while the market's event is not approved (a
	// proposal awaiting the operator, or a rejected one): the market
	// takes no trade and cannot be resolved, and its escrow is empty.
	Unapproved bool
	Resolved   bool
	// Settling is set while a store pays the market's holders in several
	// transactions (a large market on PostgreSQL): the market takes no
	// trade and no second resolution, and turns Resolved when the last
	// holder is paid.
	Settling bool
	// WinningOutcome is the side that won, nil while unresolved and when
	// the market was voided.
	WinningOutcome *Side
	// Voided is set when the market resolved VOID (N/A): no side won and
	// every position got its net cost back.
	Voided     bool
	CreatedAt  time.Time
	ResolvedAt *time.Time
	// ResolvedBy is who resolved the market; empty while unresolved.
	ResolvedBy Resolver
}

// Resolver is who resolved a market: the creator of its event or the
// operator.
type Resolver string

// The resolvers of a market.
const (
	ResolvedByCreator  Resolver = "creator"
	ResolvedByOperator Resolver = "operator"
)

// OutcomeVoid is the outcome of a voided market, as the API spells it
// beside "YES" and "NO".
const OutcomeVoid = social.OutcomeVoid

// Outcome is how m resolved: "YES", "NO" or "VOID"; "" while unresolved.
func (m *Market) Outcome() string {
	switch {
	case m.Voided:
		return OutcomeVoid
	case m.WinningOutcome != nil:
		return m.WinningOutcome.String()
	}
	return ""
}

// Pricer is the market maker's state.
func (m *Market) Pricer() lmsr.Binary {
	return lmsr.Binary{B: float64(m.B), QYes: float64(m.QYes), QNo: float64(m.QNo)}
}

// YesProbability is the instantaneous price of YES, 0..1.
// On a market of an exclusive pool it is Price when set, else the binary
// price of (QYes, QNo), within 0.125/b of it.
func (m *Market) YesProbability() float64 {
	if m.Exclusive && m.Price > 0 {
		return m.Price
	}
	return m.Pricer().Price(Yes)
}

// Outstanding is how many shares traders hold on side s: what the escrow
// pays if s wins. On a market of an exclusive pool it is meaningful for
// YES only, where it is what the pool pays if the market wins (its YES
// shares and the NO shares of every other market of the pool).
func (m *Market) Outstanding(s Side) int64 {
	if s == Yes {
		return m.QYes - m.Q0Yes
	}
	return m.QNo - m.Q0No
}

// Tradable reports whether the market accepts trades (and quotes) at
// now: it is neither resolved nor paused, and now is inside its pool's
// trading window.
func (m *Market) Tradable(now time.Time) bool { return m.refusal(now) == nil }

// refusal is why the market takes no trade at now, an ErrClosed; nil when
// it takes them. The window is LiveAt <= now < FinishAt.
func (m *Market) refusal(now time.Time) error {
	switch {
	case m.Unapproved:
		return errUnapproved
	case m.Resolved, m.Paused, m.Settling:
		return ErrClosed
	case now.Before(m.LiveAt):
		return errNotLive
	case !now.Before(m.FinishAt):
		return errFinished
	}
	return nil
}

// Position is a user's holding on one side of one market. A position is
// open while it holds shares; it is closed when sold to zero or when the
// market resolves, and is then a closed position with its P&L.
type Position struct {
	ID       int64
	UserID   int64
	MarketID int64
	Side     Side
	// Shares held now.
	Shares int64
	// CostBasis is what the shares held now cost, kopecks (fees included);
	// a partial sale removes its pro-rata part.
	CostBasis int64
	// Bought and Spent are every share ever bought into this position and
	// what they cost; Returned is everything it paid back (sales, payout).
	Bought   int64
	Spent    int64
	Returned int64
	// UseBonus is set once any buy into the position paid with bonus
	// money.
	UseBonus bool
	// BonusShares is how many of Shares bonus money bought (0 ≤
	// BonusShares ≤ Shares): a sale returns to the bonus balance the part
	// of its proceeds these shares are of the shares sold, so that bonus
	// money never becomes withdrawable by a sale (docs/bonus.md).
	BonusShares int64
	// BonusNet is the bonus money still in the position: what its buys
	// with bonus cost (fees included) minus what its sales returned to the
	// bonus balance; negative once bonus shares sold at a profit. A void
	// refunds up to it to the bonus balance (Settlement.BonusPayout).
	BonusNet int64
	// PartnerID is set when a partner opened the position for its user.
	PartnerID int64
	CreatedAt time.Time
	UpdatedAt time.Time
	// ClosedAt and WonSide are set when the position is closed; WonSide is
	// one of the WonSide constants.
	ClosedAt *time.Time
	WonSide  *int
}

// The WonSide of a closed position: how it closed.
const (
	WonSideSold = -1 // sold to zero before the market resolved
	WonSideNo   = 0  // the market resolved NO
	WonSideYes  = 1  // the market resolved YES
	WonSideVoid = 2  // the market was voided: the position got its net cost back
)

// Open reports whether p still holds shares.
func (p *Position) Open() bool { return p.ClosedAt == nil }

// AvgPriceBps is the average price paid per token, basis points: 10000 is
// a full token's payout.
func (p *Position) AvgPriceBps() int64 {
	if p.Bought == 0 {
		return 0
	}
	return mulDivRound(p.Spent, 10000, p.Bought) // Spent*10000 passes int64 past 9.2 × 10^14 kopecks
}

// PnL is what a closed position returned minus what it cost.
func (p *Position) PnL() int64 { return p.Returned - p.Spent }

// Action is buy or sell.
type Action string

// Trade actions.
const (
	ActionBuy  Action = "buy"
	ActionSell Action = "sell"
)

// Trade is one executed buy or sell, as the trade log keeps it.
type Trade struct {
	ID       int64
	MarketID int64
	UserID   int64
	Side     Side
	Action   Action
	Shares   int64
	// Amount is what changed hands with the trader: the charge of a buy
	// (fee included) or the payout of a sell, kopecks.
	Amount int64
	// Cost is the LMSR cost (buy) or refund (sell) before the fee.
	Cost int64
	Fee  int64
	// PriceBefore and PriceAfter are the YES probability around the trade.
	PriceBefore float64
	PriceAfter  float64
	QYes, QNo   int64
	UseBonus    bool
	PartnerID   int64
	// ClientBetID is the partner's idempotency key, when a partner traded,
	// and RequestHash a digest of the request it came with, to tell a
	// repeat from a conflicting reuse of the key.
	ClientBetID string
	RequestHash string
	CreatedAt   time.Time
}

// AvgPriceBps is the trade's average price per token, basis points.
func (t *Trade) AvgPriceBps() int64 {
	if t.Shares == 0 {
		return 0
	}
	return (t.Amount*10000 + t.Shares/2) / t.Shares
}

// PricePoint is one point of a market's price history.
type PricePoint struct {
	MarketID       int64
	At             time.Time
	YesProbability float64
	QYes, QNo      int64
	TradeID        int64
}

// PnLEvent is one realization of profit or loss for a user: a sale or a
// settlement. The PnL chart is their running sum.
type PnLEvent struct {
	UserID     int64
	PositionID int64
	At         time.Time
	Delta      int64
}

// PositionDetail is a position with the names of what it is on.
type PositionDetail struct {
	Position
	EventID    int64
	EventName  string
	PoolID     int64
	PoolName   string
	MarketName string
	// Market is the market's current state (to value an open position).
	Market *Market
}

// FeedTrade is an item of the public latest-trades feed.
type FeedTrade struct {
	Trade
	TraderName   string
	TraderAvatar *string
	EventName    string
	MarketName   string
}
