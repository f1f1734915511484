package market

import (
	"context"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/social"
)

// Store is what the market service needs from storage. Implementations:
// storage/memory and storage/postgres; storage/storagetest holds the suite
// both pass.
type Store interface {
	// ProposalStore keeps the challenge window's proposals and disputes
	// (proposal.go).
	ProposalStore
	// FollowStore keeps who follows which event (follows.go).
	FollowStore
	// CreateEvent stores e with its pools and markets and sets every ID and
	// CreatedAt. In the same transaction it posts each market's Subsidy
	// from the platform treasury to the market's escrow. e.Tags must
	// each name a tag (*UnknownTagError, and nothing is written).
	CreateEvent(ctx context.Context, e *Event, subsidies []int64) error
	// CreateEventLimited is CreateEvent under a creator's limits. In the
	// same transaction, before anything is written, it waits for every
	// other CreateEventLimited of e.CreatorID to finish (PostgreSQL locks
	// the creator's users row), reads the creator's CreatorLoad and calls
	// check with it (after e.Tags are found to exist); when check fails,
	// nothing is written and its error is returned. So of concurrent creations by one creator, each sees the
	// others that committed.
	CreateEventLimited(ctx context.Context, e *Event, subsidies []int64, check func(CreatorLoad) error) error
	// ProposeEvent stores proposal e (Status StatusProposed, Proposal
	// set; CreatorID is the proposer) as CreateEvent does, with every
	// market Unapproved, but posts no subsidy: in the same transaction it
	// posts e.Proposal.Ante, when positive, from the proposer's account
	// to the event's ante account (account.AnteAccount), reason
	// ReasonAnte, and keeps e.Proposal.Subsidies for the approval.
	// account.ErrInsufficientFunds when the proposer's balance is short,
	// *UnknownTagError; nothing is written then.
	ProposeEvent(ctx context.Context, e *Event) error
	// DecideProposal decides on event id in one transaction: it locks the
	// event (ErrEventNotFound), then its creator as CreateEventLimited
	// does and reads the creator's CreatorLoad, then the event's markets,
	// and calls decide with the event as locked (pools and markets
	// included) and the load; if decide fails, nothing is written and its
	// error is returned. Otherwise it writes the outcome: the event's
	// status, IsActive and Proposal's decision (DecidedAt, Reason,
	// Refunded), the markets' Unapproved (set unless approved), the
	// postings, checked on the locked balances (account.Apply's errors,
	// and nothing written), and the notification with its change-log
	// entry. It returns the event as written. decide may be called more
	// than once.
	DecideProposal(ctx context.Context, id int64, decide func(*Event, CreatorLoad) (*ProposalOutcome, error)) (*Event, error)
	// EventsByStatus returns the events of status with their pools and
	// markets, oldest (lowest id) first.
	EventsByStatus(ctx context.Context, status string, limit, offset int) ([]*Event, error)
	// Event returns event id with its pools, markets and amendments.
	// ErrEventNotFound.
	Event(ctx context.Context, id int64) (*Event, error)
	// ActiveEvents returns active events, newest first, with their
	// amendments.
	ActiveEvents(ctx context.Context, limit, offset int) ([]*Event, error)
	// Feed returns a page of the public feed (see FeedQuery): active
	// events that match q, in q.Sort's order, after q.After or q.Offset
	// of them, at most q.Limit, each with its pools, markets, amendments,
	// Stats and every market's Sparkline (market.Sparkline over the hourly
	// candles from q.Since). Search words match the event's name, its
	// pools' names and rules and its markets' names, all in English or
	// all in Russian (PostgreSQL: full-text search with each language's
	// stemming; memory: FeedMatches).
	Feed(ctx context.Context, q FeedQuery) ([]*Event, error)
	// SetEventActive shows or hides event id. ErrEventNotFound.
	SetEventActive(ctx context.Context, id int64, active bool) error
	// Pool returns pool id with its markets. ErrPoolNotFound.
	Pool(ctx context.Context, id int64) (*Pool, error)
	// Market returns market id. ErrMarketNotFound.
	Market(ctx context.Context, id int64) (*Market, error)
	// EditEvent writes edit (see EventEdit), in one transaction: it
	// locks the event (ErrEventNotFound), then its markets in ascending id
	// order as trades lock them, reads whether any of them has a trade and
	// calls edit.Decide; unless it refuses, it replaces the names and tags
	// given and, when edit.Pools is set, posts each old market's escrow
	// back to the treasury (ReasonSubsidyRefund), deletes the old pools
	// and markets, calls edit.Check with the creator's load under the
	// creator's lock, and stores the new ones as CreateEvent does, their
	// subsidies posted from the treasury. It returns the event as written
	// (with its amendments).
	EditEvent(ctx context.Context, edit EventEdit) (*Event, error)
	// AddAmendment stores a (ErrEventNotFound), setting its ID, and in the
	// same transaction a copy of note for every user with an open position
	// on an unresolved market of the event, with the UserID and CreatedAt
	// (a.CreatedAt) set.
	AddAmendment(ctx context.Context, a *Amendment, note social.Notification) error
	// Tags returns every tag, ascending by slug, each with Events set.
	Tags(ctx context.Context) ([]Tag, error)
	// PutTag creates tag t.Slug or renames it to t's names, sets t.Events
	// and reports whether it created the tag.
	PutTag(ctx context.Context, t *Tag) (created bool, err error)

	// Exec is the money path. In one transaction it locks market
	// lock.MarketID (ErrMarketNotFound if it does not exist), then the
	// ledger accounts of lock.Accounts in ascending id order, loads them
	// and the open positions lock asks for into a State, calls decide, and
	// writes the Effects it returns; if decide fails, nothing is written
	// and its error is returned. decide may be called more than once when
	// the store retries a serialization failure or deadlock, so it must
	// have no side effects. On success the IDs of new trades and positions
	// are set in the returned Effects.
	Exec(ctx context.Context, lock Lock, decide func(*State) (*Effects, error)) (*Effects, error)
	// ExecMarkets is Exec over several markets in one transaction: how
	// trades on different markets share one commit. It locks the markets
	// of locks in ascending id order, then the accounts of every lock in
	// ascending id order, and calls decide once with a State per lock, in
	// the order of locks. A market that does not exist fails nothing: its
	// State has a nil Market, and its Effects must be nil. Every State's
	// Balances is the same map, holding every account the call locked;
	// decide must not change it. Locks name distinct markets. decide
	// returns one Effects per State (nil for none); the same retry rules
	// as Exec apply.
	ExecMarkets(ctx context.Context, locks []Lock, decide func([]*State) ([]*Effects, error)) ([]*Effects, error)

	// Settle resolves market marketID as s says, in one transaction:
	// it locks the market (ErrMarketNotFound), calls s.Begin (whose error,
	// ErrResolved, it returns with nothing written), then s.Chunk with
	// the market's open positions, the escrow's balance and those of their
	// holders, and s.Finish with the escrow's and the treasury's balances,
	// and writes the Effects of each. A store may pass the positions in one
	// chunk or in several (a holder's positions never split across
	// chunks), so that it holds no more than a chunk in memory. Or it may
	// settle in bulk what Chunk decides one position at a time: pay the
	// holders, in ascending user id, what Payout says, from Sources as
	// Split divides it, and leave the closed positions, their
	// realizations and the holders' market_resolved notifications to be
	// read from the resolved market, provided that every read returns
	// what Chunk would have written (storage/storagetest checks it).
	Settle(ctx context.Context, marketID int64, s Settlement) error
	// SettlePool resolves exclusive pool poolID as a whole, in one
	// transaction: it locks the pool's markets in ascending id order
	// (ErrPoolNotFound if there is no such pool), loads every open
	// position of each, the balances of the pool's escrow (its first
	// market's), the treasury and every holder, calls
	// DecidePoolSettlement (whose error, ErrResolved, it returns with
	// nothing written) and writes the Effects; or it settles each market
	// of the pool in bulk, as Settle may, in the order and with the
	// Settlements of PoolSettlement.Plan. Of two concurrent resolutions
	// of one pool, the second finds it resolved.
	SettlePool(ctx context.Context, poolID int64, ps PoolSettlement) error
	// AddAnswer adds an answer to exclusive pool poolID, in one
	// transaction: it locks the pool's markets in ascending id order
	// (ErrPoolNotFound if there is no such pool), loads every open
	// position of the pool, the balances of the pool's escrow (its first
	// market's) and the treasury, and the event's name, takes the new
	// market's id, calls decide (whose error it returns with nothing
	// written) and writes the AnswerEffects: the new market, the other
	// markets' new state, the positions, the postings, the notifications,
	// and the change log's entries (AnswerChanges). It returns the
	// AnswerEffects with the ids of new positions set.
	AddAnswer(ctx context.Context, poolID int64, decide func(*AnswerState) (*AnswerEffects, error)) (*AnswerEffects, error)
	// MoveFinish moves the end of pool id's trading window, in one
	// transaction: it locks the pool's markets in ascending id order
	// (ErrPoolNotFound if the pool does not exist), calls move.Decide with
	// the pool and its markets as locked, and, unless it refuses (its error
	// is returned and nothing is written), sets the finish_at of the pool
	// and of each of its markets to move.At. It returns the pool as
	// written, with its markets.
	MoveFinish(ctx context.Context, id int64, move FinishMove) (*Pool, error)
	// TradeByKey returns the trade recorded under idempotency key k, or
	// nil and no error when there is none.
	TradeByKey(ctx context.Context, k Key) (*Trade, error)
	// SubAccountID returns the user id of partner sub-account sa, or 0
	// and no error when it does not exist.
	SubAccountID(ctx context.Context, sa SubAccount) (int64, error)

	// OpenPositions returns user id's open positions, newest first.
	OpenPositions(ctx context.Context, userID int64) ([]*PositionDetail, error)
	// ClosedPositions returns user id's closed positions, most recently
	// closed first (ties by id, descending).
	ClosedPositions(ctx context.Context, userID int64, limit, offset int) ([]*PositionDetail, error)
	// ClosedStats returns how many closed positions user id has and the
	// largest positive PnL among them (0 if none).
	ClosedStats(ctx context.Context, userID int64) (count int64, biggestWin int64, err error)
	// PnLEvents returns user id's realizations, oldest first.
	PnLEvents(ctx context.Context, userID int64) ([]PnLEvent, error)
	// LatestTrades returns the most recent trades on markets of active
	// events, newest first.
	LatestTrades(ctx context.Context, limit int) ([]*FeedTrade, error)
	// PriceHistory returns market id's price points, oldest first, at most
	// limit of the most recent ones.
	PriceHistory(ctx context.Context, marketID int64, limit int) ([]PricePoint, error)
	// Trades returns market id's trade log, oldest first.
	Trades(ctx context.Context, marketID int64) ([]*Trade, error)
	// TradesAfter returns market id's trades with an id above after,
	// oldest (lowest id) first, at most limit of them: a keyset page of
	// the trade log. Its cost must not grow with the market's number of
	// trades (PostgreSQL walks the index on (market_id, id)).
	TradesAfter(ctx context.Context, marketID, after int64, limit int) ([]*Trade, error)
	// UserTrades returns user userID's trades, newest (highest id) first,
	// at most limit of them, only those with an id below before when
	// before is positive. Its cost must not grow with the user's number of
	// trades (PostgreSQL walks an index on (user_id, id)).
	UserTrades(ctx context.Context, userID, before int64, limit int) ([]*Trade, error)
	// Candles returns market id's rolled-up candles of the interval of
	// width width (that of one of CandleIntervals) that start in
	// [from, to), newest first, at most limit. The store keeps them as it
	// writes trades: each price point a write records goes into its
	// market's candle of every interval (see CandleBatch, Candle.Merge).
	// A market with no price points, or none at all, has no candles.
	Candles(ctx context.Context, marketID int64, width time.Duration, from, to time.Time, limit int) ([]Candle, error)
	// Escrows returns, for every market, its state and its escrow balance.
	Escrows(ctx context.Context) ([]EscrowState, error)
}

// Lock says what Exec locks and loads.
type Lock struct {
	MarketID int64
	// Accounts are the ledger accounts decide reads and posts to, besides
	// the market's escrow and fee account, which are always loaded. The
	// treasury is not (only settlement posts to it), so that trades on
	// different markets share no ledger row.
	Accounts []account.Ref
	// Users whose open positions on the market to load.
	Users []int64
	// Keys are idempotency keys whose trades, if any exist already, are
	// loaded into State.Existing.
	Keys []Key
	// Pool, for a market of an exclusive pool, lists every market of the
	// pool in ascending id order (the market itself included): the store
	// locks them all, in that order with the other markets it locks, and
	// loads them into State.Pool, because a trade on one market moves
	// every market of the pool. LockFor adds the pool's escrow (that of
	// Pool[0]) to Accounts. Nil for a market of a non-exclusive pool.
	Pool []int64
	// SubAccounts are partner sub-accounts the requests trade for. The
	// store loads their ids into State.SubAccounts, and their balances and
	// open positions with the rest. One that does not exist yet it creates
	// provisionally, because it needs the id to lock the sub-account's
	// ledger accounts, and lists it in State.NewSubAccounts: the decision
	// says in Effects.DropSubAccounts which of those no trade used, and the
	// store deletes them again, so a refused first bet leaves nothing.
	SubAccounts []SubAccount
}

// SubAccount names a partner's user by the partner's own id for it.
type SubAccount struct {
	PartnerID  int64
	ExternalID string
}

// State is what decide sees: the locked market and accounts.
type State struct {
	Market *Market
	// Pool holds the markets of Lock.Pool as locked, in its order; nil
	// for a market of a non-exclusive pool.
	Pool []*Market
	// Balances of every loaded account; an account with no postings yet is
	// present with 0.
	Balances map[account.Ref]int64
	// Positions are the open positions loaded.
	Positions []*Position
	// Existing are the trades already recorded under Lock.Keys.
	Existing map[Key]*Trade
	// SubAccounts are the user ids of Lock.SubAccounts.
	SubAccounts map[SubAccount]int64
	// NewSubAccounts are those of SubAccounts' ids that this operation
	// created (see Lock.SubAccounts).
	NewSubAccounts map[int64]bool
	Now            time.Time
}

// Effects is what a decision changes; the store writes it all or nothing.
type Effects struct {
	// Market is the market's new state; nil when unchanged.
	Market *Market
	// Pool, after a trade on a market of an exclusive pool, holds the new
	// state of every market of the pool (Market's among them), in
	// State.Pool's order: every trade changes every market's q_no.
	Pool []*Market
	// PoolWonSide, when set, becomes the pool's won_side unless it has one.
	PoolWonSide *int
	// Positions are every position created (ID 0) or changed, closing
	// included.
	Positions []*Position
	// Trades are the executed trades, in order.
	Trades []*TradeEffect
	// Postings that belong to no trade (settlement).
	Postings []account.Posting
	// PnL are realized profits and losses.
	PnL []PnLEntry
	// Notifications tell users what happened (trade_executed,
	// market_resolved); they are written in the same transaction.
	Notifications []social.Notification
	// Results has one entry per request of a trade batch, in order.
	Results []Result
	// DropSubAccounts are sub-accounts of State.NewSubAccounts that no
	// trade used: the store deletes them with their empty ledger accounts.
	DropSubAccounts []int64
}

// TradeEffect is one executed trade with what it moved.
type TradeEffect struct {
	Trade    *Trade
	Position *Position
	// Postings get Trade.ID as their TradeID when written.
	Postings []account.Posting
	Price    PricePoint
	// PoolPrices, for a trade on a market of an exclusive pool, are the
	// price points of the pool's other markets, which the trade moved;
	// they get Trade.ID as their TradeID when written.
	PoolPrices []PricePoint
}

// PnLEntry is a realization of a position (which may be new in the same
// Effects, hence the pointer).
type PnLEntry struct {
	Position *Position
	Delta    int64
	At       time.Time
}

// Result is the outcome of one request of a batch: a trade, or why not.
type Result struct {
	Trade *Trade
	Err   error
	// Balances are the trader's balances after the batch's trades up to
	// and including this one.
	Balances account.Balances
	// Market is the market's state right after this trade.
	Market Market
	// Replayed is set when the request repeated an idempotency key that had
	// executed already: Trade is that original trade and nothing ran.
	Replayed bool
}

// EscrowState is one market's escrow as the audit sees it.
type EscrowState struct {
	Market  Market
	Balance int64
}
