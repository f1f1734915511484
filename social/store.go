package social

import "context"

// CommentStore keeps comments and reactions. Implementations:
// storage/memory and storage/postgres; storage/storagetest holds the suite
// both pass.
//
// Every read takes a viewerID: the user whose reaction fills
// Comment.UserReaction (0 for an anonymous reader, who has none). Authors
// are returned as stored, hidden or not: masking is the Service's.
type CommentStore interface {
	// CreateComment stores c and sets c.ID (and c.CreatedAt when zero). In
	// the same transaction it adds one to the parent's RepliesCount when c
	// is a reply, and stores n (when not nil) with n.CreatedAt defaulting
	// to c's; both are written, or neither. The event must exist
	// (ErrEventNotFound); a reply's parent must exist
	// (ErrCommentNotFound), belong to the same event and be a top-level
	// comment (*input.Error).
	CreateComment(ctx context.Context, c *Comment, n *Notification) error
	// Comment returns comment id with its author. ErrCommentNotFound.
	Comment(ctx context.Context, id, viewerID int64) (*Comment, error)
	// EventComments returns the top-level comments of event eventID,
	// newest first (ties by id, descending). ErrEventNotFound.
	EventComments(ctx context.Context, eventID, viewerID int64, limit, offset int) ([]*Comment, error)
	// Replies returns the replies to comment id, oldest first (ties by id,
	// ascending). ErrCommentNotFound.
	Replies(ctx context.Context, id, viewerID int64, limit, offset int) ([]*Comment, error)
	// SetReaction sets userID's reaction to comment id (ReactionNone
	// removes it) and returns the comment as userID now sees it. A user
	// has at most one reaction per comment, and LikesCount and
	// DislikesCount always equal the number of stored reactions of each
	// kind, also under concurrent calls. ErrCommentNotFound.
	SetReaction(ctx context.Context, id, userID int64, r Reaction) (*Comment, error)
}
