package social

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/predictkit/predictkit/input"
)

// Comment is a comment on an event, or a reply to one. Replies are one
// level deep: a reply's ParentID names a top-level comment, and a reply
// has no replies of its own.
type Comment struct {
	ID      int64
	EventID int64
	// ParentID is the comment this one replies to; 0 for a top-level
	// comment.
	ParentID int64
	UserID   int64
	// Content is the text as the author wrote it, trimmed of surrounding
	// white space; nothing in it is interpreted or removed (clients escape
	// it when they display it).
	Content       string
	LikesCount    int64
	DislikesCount int64
	RepliesCount  int64
	CreatedAt     time.Time
	// Author is the author as stored; Service masks a hidden profile
	// before anyone but the author sees it.
	Author Author
	// UserReaction is the reaction of the user the comment was read for
	// (the viewer), or ReactionNone.
	UserReaction Reaction
}

// Author is what a comment shows of its author.
type Author struct {
	ID            int64
	Name          string
	Nickname      string // "" when the user has none
	ProfileHidden bool
	AvatarURL     string // "" when the user has none
}

// AnonymousName is the name a hidden author shows to others.
const AnonymousName = "Anonymous"

// masked is a as someone other than the author sees it: a hidden profile
// shows the name "Anonymous" and no nickname or avatar. The id and the
// profile_hidden flag stay, so that clients can tell the author's own
// comments apart and know why the name is missing.
func (a Author) masked(viewerID int64) Author {
	if !a.ProfileHidden || a.ID == viewerID {
		return a
	}
	return Author{ID: a.ID, Name: AnonymousName, ProfileHidden: true}
}

// Reaction is a user's reaction to a comment.
type Reaction string

// The reactions. ReactionNone is no reaction: setting it removes the
// user's reaction.
const (
	ReactionNone    Reaction = ""
	ReactionLike    Reaction = "like"
	ReactionDislike Reaction = "dislike"
)

// ParseReaction reads "like", "dislike" or "none" (removes a reaction).
func ParseReaction(s string) (Reaction, error) {
	switch s {
	case "like":
		return ReactionLike, nil
	case "dislike":
		return ReactionDislike, nil
	case "none":
		return ReactionNone, nil
	}
	return ReactionNone, input.Invalid("reaction", "must be like, dislike or none")
}

// Limits of comments and their pages.
const (
	// MaxContentChars is the longest comment, in characters (Unicode code
	// points) after trimming.
	MaxContentChars = 2000
	// DefaultPageSize is the page size of comment and notification lists
	// when none (or 0) is asked for; MaxPageSize caps it.
	DefaultPageSize = 50
	MaxPageSize     = 100
	// ExcerptChars is how much of a reply a comment_reply notification
	// quotes, in characters.
	ExcerptChars = 140
	// MaxUnread is how many unread notifications Service.Unread returns
	// at most: the newest ones.
	MaxUnread = 100
)

// CheckContent returns content trimmed of surrounding white space, or an
// *input.Error: empty once trimmed, not valid UTF-8, a NUL or another
// control character but line breaks and tabs (the text rule,
// input.MultilineText), or more than MaxContentChars characters.
func CheckContent(content string) (string, error) {
	if !utf8.ValidString(content) {
		return "", input.Invalid("content", "must be valid UTF-8")
	}
	content = strings.TrimSpace(content)
	switch {
	case content == "":
		return "", input.Invalid("content", "must not be empty")
	case strings.ContainsRune(content, 0):
		return "", input.Invalid("content", "must not contain NUL characters")
	case !input.IsMultilineText(content):
		return "", input.Invalid("content", input.ReasonControl)
	case utf8.RuneCountInString(content) > MaxContentChars:
		return "", input.Invalid("content", "must be at most 2000 characters")
	}
	return content, nil
}

// Page brings a requested page to what stores are asked for: a limit of 0
// or less is DefaultPageSize, over MaxPageSize is MaxPageSize; a negative
// offset is 0.
func Page(limit, offset int) (int, int) {
	if limit <= 0 {
		limit = DefaultPageSize
	}
	return min(limit, MaxPageSize), max(offset, 0)
}

// excerpt is the first ExcerptChars characters of s, with "…" when it was
// cut.
func excerpt(s string) string {
	n := 0
	for i := range s {
		if n == ExcerptChars {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
