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

// InvalidError reports a field of a request that breaks a rule; the
// message is safe to show to the partner.
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return "partner: invalid " + e.Field + ": " + e.Reason }

// ErrInvalid matches every *InvalidError with errors.Is.
var ErrInvalid = errors.New("partner: invalid input")

// Is makes errors.Is(err, ErrInvalid) true for an *InvalidError.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, reason string) error { return &InvalidError{Field: field, Reason: reason} }
