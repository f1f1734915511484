package social

import "errors"

// Errors returned by the social service and its stores.
var (
	// ErrNotificationNotFound: the user has no notification with that id
	// (it does not exist, or it is someone else's).
	ErrNotificationNotFound = errors.New("social: notification not found")
	// ErrEventNotFound: the event to comment on, or whose comments to
	// list, does not exist.
	ErrEventNotFound = errors.New("social: event not found")
	// ErrCommentNotFound: the comment to reply or react to, or whose
	// replies to list, does not exist.
	ErrCommentNotFound = errors.New("social: comment not found")
)

// InvalidError reports input that breaks a rule of the domain (empty or
// oversized content, an unknown reaction, a reply to a comment of another
// event); the message is safe to show to the client.
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return "social: invalid " + e.Field + ": " + e.Reason }

// ErrInvalid matches every *InvalidError with errors.Is.
var ErrInvalid = errors.New("social: invalid input")

// Is makes errors.Is(err, ErrInvalid) true for an *InvalidError.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, reason string) error { return &InvalidError{Field: field, Reason: reason} }

// Refusals of a reply's parent, shared by the service and the stores.
var (
	// ErrParentOtherEvent: parent_id names a comment of another event.
	ErrParentOtherEvent error = &InvalidError{Field: "parent_id", Reason: "is a comment of another event"}
	// ErrParentIsReply: parent_id names a reply; replies are one level
	// deep, so reply to the top-level comment instead.
	ErrParentIsReply error = &InvalidError{Field: "parent_id", Reason: "is a reply; replies are one level deep, reply to its top-level comment"}
)
