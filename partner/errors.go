package partner

import (
	"errors"

	"github.com/predictkit/predictkit/market"
)

// Errors returned by the partner service and its store.
var (
	// ErrUnauthorized: the key is missing or belongs to no partner.
	ErrUnauthorized = errors.New("partner: missing or unknown partner key")
	// ErrDisabled: the key's partner has been disabled by the operator.
	ErrDisabled = errors.New("partner: partner disabled")
	// ErrNotFound: no partner has that id (operator endpoints).
	ErrNotFound = errors.New("partner: partner not found")
	// ErrNoAccount: the user has no sub-account, or no shares on that
	// market and side.
	ErrNoAccount = errors.New("partner: no sub-account or no position")
	// ErrIdempotencyConflict: the client_bet_id was used before for a
	// different request.
	ErrIdempotencyConflict = market.ErrIdempotencyConflict
)
