package social

import (
	"context"
	"errors"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
)

// Service is the social use cases: comments, replies, reactions and the
// reader's side of notifications. It is safe for concurrent use.
type Service struct {
	comments      CommentStore
	notifications NotificationStore
	// Now is the clock, in microseconds (what every store keeps); tests
	// replace it.
	Now func() time.Time
}

// NewService returns a Service. A single storage value usually serves as
// both stores (storage/memory and storage/postgres do).
func NewService(comments CommentStore, notifications NotificationStore) *Service {
	return &Service{comments: comments, notifications: notifications,
		Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// Post stores a comment by author on event eventID, or a reply to
// comment parentID (when not 0), and returns it as its author sees it.
// The content is stored trimmed (see CheckContent). A reply to someone
// else's comment notifies that comment's author (comment_reply) in the
// same transaction; replying to oneself notifies no one.
//
// Errors: *input.Error (content; a parent of another event, or a
// parent that is itself a reply); ErrEventNotFound; ErrCommentNotFound
// (no such parent).
func (s *Service) Post(ctx context.Context, author *account.User, eventID int64, content string, parentID int64) (*Comment, error) {
	content, err := CheckContent(content)
	if err != nil {
		return nil, err
	}
	c := &Comment{EventID: eventID, ParentID: parentID, UserID: author.ID, Content: content, CreatedAt: s.Now()}
	var n *Notification
	if parentID != 0 {
		// The store checks the event and the parent, in that order, as it
		// writes; the parent is read here only to address the notification.
		// Comments are never moved or deleted, so it is still the parent
		// the store sees.
		parent, err := s.comments.Comment(ctx, parentID, 0)
		switch {
		case err == nil:
			if parent.EventID == eventID && parent.ParentID == 0 {
				n = replyNotification(author, parent, c)
			}
		case !errors.Is(err, ErrCommentNotFound):
			return nil, err
		}
	}
	if err := s.comments.CreateComment(ctx, c, n); err != nil {
		return nil, err
	}
	c.Author = Author{ID: author.ID, Name: author.Name, Nickname: deref(author.Nickname), ProfileHidden: author.ProfileHidden, AvatarURL: deref(author.AvatarURL)}
	return c, nil
}

// replyNotification is the comment_reply notification of reply c by
// author to parent, or nil when authors reply to themselves. It points at
// the parent (related_type comment, related_id the parent's id): the
// reader's own comment, whose replies list the new one.
func replyNotification(author *account.User, parent, c *Comment) *Notification {
	if parent.UserID == author.ID {
		return nil
	}
	return &Notification{
		UserID: parent.UserID, Type: TypeCommentReply, RelatedID: parent.ID, RelatedType: RelatedComment, CreatedAt: c.CreatedAt,
		Data: NotificationData{Author: author.DisplayName(), Excerpt: excerpt(c.Content), EventID: parent.EventID},
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// EventComments returns a page of event eventID's top-level comments,
// newest first, as viewerID (0: anonymous) sees them. The page is brought
// to range by Page. ErrEventNotFound.
func (s *Service) EventComments(ctx context.Context, viewerID, eventID int64, limit, offset int) ([]*Comment, error) {
	limit, offset = Page(limit, offset)
	cs, err := s.comments.EventComments(ctx, eventID, viewerID, limit, offset)
	return mask(cs, viewerID), err
}

// Replies returns a page of the replies to comment id, oldest first, as
// viewerID sees them. ErrCommentNotFound.
func (s *Service) Replies(ctx context.Context, viewerID, id int64, limit, offset int) ([]*Comment, error) {
	limit, offset = Page(limit, offset)
	cs, err := s.comments.Replies(ctx, id, viewerID, limit, offset)
	return mask(cs, viewerID), err
}

// React sets userID's reaction to comment id (ReactionNone removes it) and
// returns the comment as userID sees it. ErrCommentNotFound, *input.Error
// for an unknown reaction.
func (s *Service) React(ctx context.Context, userID, id int64, r Reaction) (*Comment, error) {
	if r != ReactionLike && r != ReactionDislike && r != ReactionNone {
		return nil, input.Invalid("reaction", "must be like, dislike or none")
	}
	c, err := s.comments.SetReaction(ctx, id, userID, r)
	if err != nil {
		return nil, err
	}
	c.Author = c.Author.masked(userID)
	return c, nil
}

func mask(cs []*Comment, viewerID int64) []*Comment {
	for _, c := range cs {
		c.Author = c.Author.masked(viewerID)
	}
	return cs
}

// Unread returns user userID's unread notifications, newest first: the
// MaxUnread newest ones.
func (s *Service) Unread(ctx context.Context, userID int64) ([]*Notification, error) {
	return s.notifications.Notifications(ctx, userID, true, MaxUnread, 0)
}

// Notifications returns a page of user userID's notifications, read or
// not, newest first; the page is brought to range by Page.
func (s *Service) Notifications(ctx context.Context, userID int64, limit, offset int) ([]*Notification, error) {
	limit, offset = Page(limit, offset)
	return s.notifications.Notifications(ctx, userID, false, limit, offset)
}

// MarkRead marks user userID's notification id read (again, if it was).
// ErrNotificationNotFound when userID has no such notification, someone
// else's included.
func (s *Service) MarkRead(ctx context.Context, userID, id int64) error {
	return s.notifications.MarkRead(ctx, userID, id)
}

// MarkAllRead marks every notification of userID read and returns how
// many were unread.
func (s *Service) MarkAllRead(ctx context.Context, userID int64) (int64, error) {
	return s.notifications.MarkAllRead(ctx, userID)
}
