package market

import (
	"errors"
	"fmt"
)

// Errors returned by the market service and its stores.
var (
	ErrEventNotFound  = errors.New("market: event not found")
	ErrPoolNotFound   = errors.New("market: pool not found")
	ErrMarketNotFound = errors.New("market: market not found")
	ErrForbidden      = errors.New("market: forbidden")
	// ErrResolved: the market has been resolved already (close twice).
	ErrResolved = errors.New("market: market already resolved")
	// ErrClosed: the market takes no trades (resolved, paused, or outside
	// its pool's trading window).
	ErrClosed = errors.New("market: market closed")
	// ErrPriceMoved: a slippage guard (max cost, min payout) was hit.
	ErrPriceMoved = errors.New("market: price moved past the limit")
	// ErrNoPosition: the user holds no shares on that market and side.
	ErrNoPosition = errors.New("market: no position")
	// ErrInsufficientShares: selling more shares than held.
	ErrInsufficientShares = errors.New("market: insufficient shares")
	// ErrTradeRefused: the market maker refuses the trade (too small to buy
	// a share, or it would push the price past its bound).
	ErrTradeRefused = errors.New("market: trade refused")
	// ErrIdempotencyConflict: an idempotency key was reused for a
	// different request.
	ErrIdempotencyConflict = errors.New("market: idempotency key reused with other parameters")
	// ErrDuplicateKey: a concurrent request recorded the same idempotency
	// key first (on another market); retrying finds its trade.
	ErrDuplicateKey = errors.New("market: idempotency key recorded concurrently")
	// ErrNotProposed: the operator decides on an event that is not a
	// proposal awaiting a decision (a creator's event, or a proposal
	// approved or rejected already).
	ErrNotProposed = errors.New("market: the event is not a proposal awaiting a decision")
	// ErrNotApproved: the event is a proposal the operator has not
	// approved (awaiting a decision, or rejected): it cannot be shown or
	// its markets resolved.
	ErrNotApproved = errors.New("market: the event is a proposal the operator has not approved")
)

// The two sides of the trading window, as ErrClosed says them.
var (
	errNotLive  = fmt.Errorf("%w: trading opens at the pool's live_at", ErrClosed)
	errFinished = fmt.Errorf("%w: trading ended at the pool's finish_at", ErrClosed)
	// errUnapproved: the market's event is a proposal the operator has
	// not approved.
	errUnapproved = fmt.Errorf("%w: its event is a proposal the operator has not approved", ErrClosed)
)
