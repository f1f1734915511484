package market

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/predictkit/predictkit/input"
)

// Following an event: a user who follows one is told of what changes its
// outcome or its terms (each market's resolution, answers added later,
// the creator's amendments) as holders are, whether or not they hold a
// position; a user who does both is told once (docs/people-and-following.md).

// Bounds of the list of followed events.
const (
	// DefaultFollowingLimit is a page's size when the caller names none.
	DefaultFollowingLimit = 20
	// MaxFollowingLimit is the largest page.
	MaxFollowingLimit = 50
)

// Followed is one event a user follows, and since when.
type Followed struct {
	EventID int64
	At      time.Time
}

// FollowCursor is where a page of followed events starts: after the
// follow at At of event EventID, in the list's order (newest follow
// first, ties by event id descending). The zero value starts at the top.
type FollowCursor Followed

// FollowStore keeps who follows which event (implemented by
// storage/memory and storage/postgres, in market.Store). The stores also
// tell followers of resolutions, answers and amendments, in the
// transactions that make them (Settle, SettlePool, AddAnswer through
// AnswerState.Followers, AddAmendment).
type FollowStore interface {
	// Follow records that userID follows eventID since at; a second
	// follow keeps the first time. ErrEventNotFound, nothing written.
	Follow(ctx context.Context, userID, eventID int64, at time.Time) error
	// Unfollow forgets it; not following is no error.
	Unfollow(ctx context.Context, userID, eventID int64) error
	// Following returns up to limit of the events userID follows, newest
	// follow first (ties by event id descending), after cursor.
	Following(ctx context.Context, userID int64, after FollowCursor, limit int) ([]Followed, error)
}

// FollowPage is a page of followed events. Next is the cursor of the
// following page, "" on the last.
type FollowPage struct {
	Events []*Event
	// At is when each of Events was followed.
	At   []time.Time
	Next string
}

// Follow makes userID a follower of event eventID, at once or again
// (idempotent). ErrEventNotFound: the event does not exist (as GET
// /events/{id} answers).
func (s *Service) Follow(ctx context.Context, userID, eventID int64) error {
	return s.store.Follow(ctx, userID, eventID, s.Now())
}

// Unfollow stops userID following event eventID (idempotent).
// ErrEventNotFound for an event that does not exist.
func (s *Service) Unfollow(ctx context.Context, userID, eventID int64) error {
	if _, err := s.store.Event(ctx, eventID); err != nil {
		return err
	}
	return s.store.Unfollow(ctx, userID, eventID)
}

// Following returns a page of the events userID follows, newest follow
// first: limit of them (DefaultFollowingLimit when 0, at most
// MaxFollowingLimit), after cursor ("" for the first page, then the Next
// of the page before). Keyset pages: a follow made after the first page
// was read never pushes an event onto a later page. *input.Error for a
// limit out of range or a cursor this service did not give.
func (s *Service) Following(ctx context.Context, userID int64, limit int, cursor string) (*FollowPage, error) {
	if limit == 0 {
		limit = DefaultFollowingLimit
	}
	if err := input.InRange("limit", int64(limit), 1, MaxFollowingLimit); err != nil {
		return nil, err
	}
	after, err := decodeFollowCursor(cursor)
	if err != nil {
		return nil, err
	}
	fs, err := s.store.Following(ctx, userID, after, limit+1)
	if err != nil {
		return nil, err
	}
	page := &FollowPage{Events: []*Event{}}
	if len(fs) > limit {
		fs = fs[:limit]
		page.Next = encodeFollowCursor(FollowCursor(fs[limit-1]))
	}
	for _, f := range fs {
		e, err := s.Event(ctx, f.EventID)
		if err != nil {
			return nil, err
		}
		page.Events = append(page.Events, e)
		page.At = append(page.At, f.At)
	}
	return page, nil
}

func encodeFollowCursor(c FollowCursor) string {
	s := "f" + strconv.FormatInt(c.At.UnixMicro(), 10) + "." + strconv.FormatInt(c.EventID, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

func decodeFollowCursor(c string) (FollowCursor, error) {
	if c == "" {
		return FollowCursor{}, nil
	}
	bad := input.Invalid("cursor", "must be the next_cursor of an earlier page")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 4 || len(b) > 48 || b[0] != 'f' {
		return FollowCursor{}, bad
	}
	at, id, ok := strings.Cut(string(b[1:]), ".")
	if !ok {
		return FollowCursor{}, bad
	}
	micros, err1 := strconv.ParseInt(at, 10, 64)
	eventID, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || eventID <= 0 || micros < 0 {
		return FollowCursor{}, bad
	}
	return FollowCursor{EventID: eventID, At: time.UnixMicro(micros).UTC()}, nil
}
