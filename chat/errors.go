package chat

import "errors"

// Errors returned by the chat service and its store.
var (
	// ErrSessionNotFound: no session has that secret or public id, or the
	// caller may not use it: a user's session without that user (a secret
	// alone, or with another user), or an anonymous session that a
	// signed-in caller has not claimed (see Caller).
	ErrSessionNotFound = errors.New("chat: session not found")
	// ErrSessionClosed: the session was closed by an operator; it takes no
	// more messages or escalations.
	ErrSessionClosed = errors.New("chat: session closed")
	// ErrNotifyFailed: the operator could not be notified; the session
	// was not escalated and the call may be retried.
	ErrNotifyFailed = errors.New("chat: operator notification failed")
)
