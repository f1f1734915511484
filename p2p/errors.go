package p2p

import (
	"errors"

	"github.com/predictkit/predictkit/account"
)

// Errors returned by the p2p service and its store.
var (
	// ErrNotFound: no ad has that id (or, publicly, it is not approved).
	ErrNotFound = errors.New("p2p: ad not found")
	// ErrUserNotFound: the user an ad or a stats record names does not
	// exist. It is account.ErrUserNotFound.
	ErrUserNotFound = account.ErrUserNotFound
)

// InvalidError reports a query parameter or a field of a request that
// breaks a rule; the message is safe to show to the client.
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return "p2p: invalid " + e.Field + ": " + e.Reason }

// ErrInvalid matches every *InvalidError with errors.Is.
var ErrInvalid = errors.New("p2p: invalid input")

// Is makes errors.Is(err, ErrInvalid) true for an *InvalidError.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, reason string) error { return &InvalidError{Field: field, Reason: reason} }
