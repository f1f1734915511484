package account

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/predictkit/predictkit/input"
)

// Bounds of the operator's user search.
const (
	// DefaultSearchLimit is a page's size when the operator names none.
	DefaultSearchLimit = 20
	// MaxSearchLimit is the largest page.
	MaxSearchLimit = 100
	// MaxSearchQuery is the longest query, in characters.
	MaxSearchQuery = 200
)

// UserQuery is what a store's SearchUsers selects: users whose e-mail,
// name or nickname contains Text (compared case-insensitively, the text
// taken literally: '%' and '_' are characters like any other), or whose
// id is ID; an empty Text with ID 0 selects every user. Only users with
// an id below Before are selected when Before is positive. The answer is
// ordered by id, newest (highest) first, and holds at most Limit users.
type UserQuery struct {
	Text   string
	ID     int64
	Before int64
	Limit  int
}

// Matches reports whether u is selected by q's text or id (Before and
// Limit aside): the meaning every store implements.
func (q UserQuery) Matches(u *User) bool {
	if q.Text == "" && q.ID == 0 {
		return true
	}
	if q.ID != 0 && u.ID == q.ID {
		return true
	}
	if q.Text == "" {
		return false
	}
	t := strings.ToLower(q.Text)
	if strings.Contains(strings.ToLower(u.Email), t) || strings.Contains(strings.ToLower(u.Name), t) {
		return true
	}
	return u.Nickname != nil && strings.Contains(strings.ToLower(*u.Nickname), t)
}

// UserPage is one page of a user search. Next is the cursor of the
// following page, "" on the last page.
type UserPage struct {
	Users []*User
	Next  string
}

// SearchUsers is the operator's user search: users whose e-mail, name or
// nickname contains query (case-insensitively, by substring), or whose
// id is query when it is an integer; an empty query lists every user.
// Users come newest first (by id, descending), limit of them
// (DefaultSearchLimit when 0, at most MaxSearchLimit); cursor is "" for
// the first page, then the Next of the page before. The cursor is opaque
// to callers (it is the last id, base64url-encoded), so a page never
// repeats or skips a user however many register meanwhile.
//
// Errors: *input.Error for a query that breaks the text rule or is
// longer than MaxSearchQuery, a limit out of range, a cursor this service
// did not give.
func (s *Service) SearchUsers(ctx context.Context, query string, limit int, cursor string) (*UserPage, error) {
	if err := input.Text("query", query); err != nil {
		return nil, err
	}
	query = strings.TrimSpace(query)
	if utf8.RuneCountInString(query) > MaxSearchQuery {
		return nil, input.Invalid("query", "must be at most "+strconv.Itoa(MaxSearchQuery)+" characters")
	}
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	if err := input.InRange("limit", int64(limit), 1, MaxSearchLimit); err != nil {
		return nil, err
	}
	before, err := decodeUserCursor(cursor)
	if err != nil {
		return nil, err
	}
	q := UserQuery{Text: query, Before: before, Limit: limit + 1}
	if id, err := strconv.ParseInt(query, 10, 64); err == nil && id > 0 {
		q.ID = id
	}
	users, err := s.store.SearchUsers(ctx, q)
	if err != nil {
		return nil, err
	}
	page := &UserPage{Users: users}
	if len(users) > limit {
		page.Users = users[:limit]
		page.Next = encodeUserCursor(page.Users[limit-1].ID)
	}
	return page, nil
}

func encodeUserCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(id, 10)))
}

func decodeUserCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 || len(b) > 19 || strings.TrimLeft(string(b), "0123456789") != "" {
		return 0, input.Invalid("cursor", "must be the next_cursor of an earlier page")
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || id <= 0 {
		return 0, input.Invalid("cursor", "must be the next_cursor of an earlier page")
	}
	return id, nil
}
