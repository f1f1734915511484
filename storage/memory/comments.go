package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
)

var _ social.CommentStore = (*Store)(nil)

// commentTables are the comments and reactions; their maps are made on
// first use (callers hold s.mu).
type commentTables struct {
	byID      map[int64]*social.Comment // Author and UserReaction left zero
	top       map[int64][]int64         // event → its top-level comments
	replies   map[int64][]int64         // comment → its replies
	reactions map[reactionKey]social.Reaction
}

type reactionKey struct{ comment, user int64 }

func (s *Store) commentTables() *commentTables {
	t := &s.comments
	if t.byID == nil {
		t.byID = map[int64]*social.Comment{}
		t.top = map[int64][]int64{}
		t.replies = map[int64][]int64{}
		t.reactions = map[reactionKey]social.Reaction{}
	}
	return t
}

// commentView is stored comment c as viewerID reads it: a copy with its
// author as stored now and viewerID's reaction. Callers hold s.mu.
func (s *Store) commentView(c *social.Comment, viewerID int64) *social.Comment {
	out := *c
	if rec, ok := s.users[c.UserID]; ok {
		u := &rec.u
		out.Author = social.Author{ID: u.ID, Name: u.Name, ProfileHidden: u.ProfileHidden}
		if u.Nickname != nil {
			out.Author.Nickname = *u.Nickname
		}
		if u.AvatarURL != nil {
			out.Author.AvatarURL = *u.AvatarURL
		}
	}
	if viewerID != 0 {
		out.UserReaction = s.commentTables().reactions[reactionKey{c.ID, viewerID}]
	}
	return &out
}

// CreateComment implements social.CommentStore.
func (s *Store) CreateComment(_ context.Context, c *social.Comment, n *social.Notification) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.commentTables()
	if _, ok := s.events[c.EventID]; !ok {
		return social.ErrEventNotFound
	}
	var parent *social.Comment
	if c.ParentID != 0 {
		p, ok := t.byID[c.ParentID]
		switch {
		case !ok:
			return social.ErrCommentNotFound
		case p.EventID != c.EventID:
			return social.ErrParentOtherEvent
		case p.ParentID != 0:
			return social.ErrParentIsReply
		}
		parent = p
	}
	if _, ok := s.users[c.UserID]; !ok {
		return account.ErrUserNotFound
	}
	if n != nil {
		if _, ok := s.users[n.UserID]; !ok {
			return account.ErrUserNotFound
		}
	}
	c.ID = s.next("comment")
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	stored := social.Comment{ID: c.ID, EventID: c.EventID, ParentID: c.ParentID, UserID: c.UserID,
		Content: strings.Clone(c.Content), CreatedAt: c.CreatedAt}
	t.byID[c.ID] = &stored
	if parent != nil {
		parent.RepliesCount++
		t.replies[parent.ID] = append(t.replies[parent.ID], c.ID)
	} else {
		t.top[c.EventID] = append(t.top[c.EventID], c.ID)
	}
	entries := []changelog.Entry{social.CommentChange(s.commentView(&stored, 0))}
	if n != nil {
		if n.CreatedAt.IsZero() {
			n.CreatedAt = c.CreatedAt
		}
		added := s.addNotification(*n)
		n.ID = added.ID
		entries = append(entries, social.NotificationChange(added))
	}
	s.logChanges(entries...)
	return nil
}

// Comment implements social.CommentStore.
func (s *Store) Comment(_ context.Context, id, viewerID int64) (*social.Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.commentTables().byID[id]
	if !ok {
		return nil, social.ErrCommentNotFound
	}
	return s.commentView(c, viewerID), nil
}

// EventComments implements social.CommentStore.
func (s *Store) EventComments(_ context.Context, eventID, viewerID int64, limit, offset int) ([]*social.Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.events[eventID]; !ok {
		return nil, social.ErrEventNotFound
	}
	return s.commentPage(s.commentTables().top[eventID], viewerID, limit, offset, true), nil
}

// Replies implements social.CommentStore.
func (s *Store) Replies(_ context.Context, id, viewerID int64, limit, offset int) ([]*social.Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.commentTables()
	if _, ok := t.byID[id]; !ok {
		return nil, social.ErrCommentNotFound
	}
	return s.commentPage(t.replies[id], viewerID, limit, offset, false), nil
}

// commentPage is a page of the comments ids, ordered by creation (ties by
// id), newest first when newestFirst. Callers hold s.mu.
func (s *Store) commentPage(ids []int64, viewerID int64, limit, offset int, newestFirst bool) []*social.Comment {
	t := s.commentTables()
	cs := make([]*social.Comment, 0, len(ids))
	for _, id := range ids {
		cs = append(cs, t.byID[id])
	}
	slices.SortFunc(cs, func(a, b *social.Comment) int {
		c := a.CreatedAt.Compare(b.CreatedAt)
		if c == 0 {
			c = cmp.Compare(a.ID, b.ID)
		}
		if newestFirst {
			return -c
		}
		return c
	})
	out := []*social.Comment{}
	for _, c := range page(cs, limit, offset) {
		out = append(out, s.commentView(c, viewerID))
	}
	return out
}

// SetReaction implements social.CommentStore. The counts change with the
// reactions under the one mutex, so they never disagree.
func (s *Store) SetReaction(_ context.Context, id, userID int64, r social.Reaction) (*social.Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.commentTables()
	c, ok := t.byID[id]
	if !ok {
		return nil, social.ErrCommentNotFound
	}
	if _, ok := s.users[userID]; !ok {
		return nil, account.ErrUserNotFound
	}
	if r != social.ReactionLike && r != social.ReactionDislike && r != social.ReactionNone {
		return nil, &input.Error{Field: "reaction", Reason: "must be like, dislike or none"}
	}
	key := reactionKey{id, userID}
	switch t.reactions[key] {
	case social.ReactionLike:
		c.LikesCount--
	case social.ReactionDislike:
		c.DislikesCount--
	}
	switch r {
	case social.ReactionLike:
		c.LikesCount++
		t.reactions[key] = r
	case social.ReactionDislike:
		c.DislikesCount++
		t.reactions[key] = r
	default:
		delete(t.reactions, key)
	}
	return s.commentView(c, userID), nil
}

// ReactionCounts returns how many likes and dislikes of comment id are
// stored, counted from the reactions themselves rather than read from the
// comment's counts (for tests and audits).
func (s *Store) ReactionCounts(_ context.Context, id int64) (likes, dislikes int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, r := range s.commentTables().reactions {
		if k.comment != id {
			continue
		}
		if r == social.ReactionLike {
			likes++
		} else {
			dislikes++
		}
	}
	return likes, dislikes, nil
}
