package social

import (
	"errors"

	"github.com/predictkit/predictkit/input"
)

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

// Refusals of a reply's parent, shared by the service and the stores.
var (
	// ErrParentOtherEvent: parent_id names a comment of another event.
	ErrParentOtherEvent error = &input.Error{Field: "parent_id", Reason: "is a comment of another event"}
	// ErrParentIsReply: parent_id names a reply; replies are one level
	// deep, so reply to the top-level comment instead.
	ErrParentIsReply error = &input.Error{Field: "parent_id", Reason: "is a reply; replies are one level deep, reply to its top-level comment"}
)
