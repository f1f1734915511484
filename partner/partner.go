// Package partner is predictkit's B2B channel: a partner (a bookmaker, an
// app) places bets and sells for its own users through platform
// sub-accounts keyed by the partner's external user id.
//
// Partners retry on every timeout, so every bet and sell carries the
// partner's client_bet_id: (partner, client_bet_id) executes at most once.
// A repeat with the same parameters gets the original receipt back; a
// repeat with other parameters is ErrIdempotencyConflict. The key is
// recorded on the trade itself, in the same transaction as the money
// movement, so there is no window in which the money moved but the key
// was not recorded, or the other way round.
//
// A bet is paid from the sub-account's balance first and the rest from the
// partner's float; a sell's payout stays on the sub-account. Sub-accounts
// are created by the first bet that executes. One partner never sees or
// reaches another partner's sub-accounts: the same external id under two
// partners is two sub-accounts.
//
// Units are those of the partner API: money in kopecks, shares with 100
// shares = 1 token, prices in basis points (10000 bps = 1 RUB).
package partner

import (
	"time"

	"github.com/predictkit/predictkit/market"
)

// Partner is a business that trades for its users.
type Partner struct {
	ID        int64
	Name      string
	Disabled  bool
	CreatedAt time.Time
	// KeyExpiresAt is set by PartnerByKey when the key that found the
	// partner is one a rotation replaced: it works until then (see
	// Service.RotateKey).
	KeyExpiresAt *time.Time
}

// Bet asks to buy shares of one side of a market for a partner's user,
// spending at most AmountKopecks.
type Bet struct {
	ExternalUserID string
	MarketID       int64
	Side           market.Side
	AmountKopecks  int64
	ClientBetID    string
	// MaxCostKopecks, when set, refuses the bet if it would cost more.
	MaxCostKopecks int64
}

// Sell asks to sell Shares of one side of a market for a partner's user.
type Sell struct {
	ExternalUserID string
	MarketID       int64
	Side           market.Side
	Shares         int64
	ClientBetID    string
	// MinPayoutKopecks, when set, refuses the sale if it would pay less.
	MinPayoutKopecks int64
}

// Receipt is the outcome of an accepted bet or sell; a repeat of the same
// request gets the same receipt.
type Receipt struct {
	ClientBetID    string
	ExternalUserID string
	UserID         int64
	MarketID       int64
	// Direction is "buy_yes", "buy_no", "sell_yes" or "sell_no".
	Direction string
	// CostKopecks is what a bet cost (fee included); PayoutKopecks what a
	// sell paid. SharesDelta is positive for a bet, negative for a sell.
	CostKopecks   int64
	PayoutKopecks int64
	SharesDelta   int64
	TradeID       int64
	// Replayed is true when this receipt answers a repeat: nothing ran.
	Replayed bool
}

// Position is a sub-account's open position as the partner sees it.
type Position struct {
	MarketID int64
	Side     market.Side
	Shares   int64
	// AvgPriceBps is the average price paid per token.
	AvgPriceBps int64
	// ValueKopecks is what selling the whole position now would pay.
	ValueKopecks int64
}

// State is one partner user's sub-account.
type State struct {
	ExternalUserID string
	// Exists is false when the user has never bet: then UserID and the
	// balances are 0 and Positions is empty.
	Exists               bool
	UserID               int64
	BalanceKopecks       int64
	OpenPositionsKopecks int64
	Positions            []Position
}
