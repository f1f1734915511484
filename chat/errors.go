package chat

import "errors"

// Errors returned by the chat service and its store.
var (
	// ErrSessionNotFound: no session has that secret or public id (or the
	// caller signed in as someone else than the session's owner).
	ErrSessionNotFound = errors.New("chat: session not found")
	// ErrSessionClosed: the session was closed by an operator; it takes no
	// more messages or escalations.
	ErrSessionClosed = errors.New("chat: session closed")
	// ErrNotifyFailed: the operator could not be notified; the session
	// was not escalated and the call may be retried.
	ErrNotifyFailed = errors.New("chat: operator notification failed")
)

// InvalidError reports a field of a request that breaks a rule; the
// message is safe to show to the client.
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return "chat: invalid " + e.Field + ": " + e.Reason }

// ErrInvalid matches every *InvalidError with errors.Is.
var ErrInvalid = errors.New("chat: invalid input")

// Is makes errors.Is(err, ErrInvalid) true for an *InvalidError.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, reason string) error { return &InvalidError{Field: field, Reason: reason} }
