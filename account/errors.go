package account

import "errors"

// Errors returned by the account service and its stores.
var (
	ErrUserNotFound       = errors.New("account: user not found")
	ErrEmailTaken         = errors.New("account: email already registered")
	ErrNicknameTaken      = errors.New("account: nickname already taken")
	ErrInvalidCredentials = errors.New("account: invalid email or password")
	ErrUnauthorized       = errors.New("account: missing, unknown or revoked access token")
	ErrInsufficientFunds  = errors.New("account: insufficient funds")
	ErrInvalidAmount      = errors.New("account: amount must be a positive number of kopecks")
)

// InvalidError reports input that breaks a rule of the domain. Field names
// the offending field; the message is safe to show to the client.
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return "account: invalid " + e.Field + ": " + e.Reason }

// ErrInvalid matches every *InvalidError with errors.Is.
var ErrInvalid = errors.New("account: invalid input")

// Is makes errors.Is(err, ErrInvalid) true for an *InvalidError.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, reason string) error { return &InvalidError{Field: field, Reason: reason} }
