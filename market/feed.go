package market

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/predictkit/predictkit/input"
)

// The feed's sorts (FeedQuery.Sort).
const (
	// SortTrending orders by the volume of the last 24 hours
	// (FeedStats.Volume24h), largest first; the default.
	SortTrending = "trending"
	// SortNew orders by creation, newest (highest id) first.
	SortNew = "new"
	// SortClosing orders by ClosesAt, soonest first.
	SortClosing = "closing"
	// SortVolume orders by all-time volume (FeedStats.Volume), largest
	// first.
	SortVolume = "volume"
)

// The feed's status filters (FeedQuery.Status).
const (
	// FeedOpen lists events with a market not resolved yet; the default.
	FeedOpen = "open"
	// FeedResolved lists events whose every market is resolved.
	FeedResolved = "resolved"
	// FeedAll lists both.
	FeedAll = "all"
)

// Feed limits.
const (
	// MaxFeedQueryLen is the longest a search text may be, in bytes.
	MaxFeedQueryLen = 200
	// MaxFeedWords is how many words of a search text count; the rest
	// are ignored.
	MaxFeedWords = 8
	// SparklineHours is how many hourly points a sparkline has at most:
	// the current hour and the 23 before it.
	SparklineHours = 24
)

// FeedQuery asks for a page of the public feed: listed (active) events,
// filtered and sorted. Ties of every sort go by id, in the sort's
// direction, so that every event has one place.
type FeedQuery struct {
	// Words are the search's words (FeedWords of the text), all of which
	// an event's English texts or its Russian texts must hold; the last
	// one may be the start of a word. None: no search.
	Words  []string
	Tag    string
	Sort   string
	Status string
	Limit  int
	// Offset skips that many events (the old paging); After continues
	// after a cursor. Not both.
	Offset int
	After  *FeedCursor
	// Since is the start of the 24-hour window: the start of the hour
	// SparklineHours-1 hours before the current one.
	Since time.Time
}

// FeedCursor is where a page ended: the last event's sort key and id.
// Key is Volume24h (trending), Volume (volume), ClosesAt in Unix
// microseconds (closing), 0 (new).
type FeedCursor struct {
	Sort string
	Key  int64
	ID   int64
}

// FeedStats is what the feed adds to an event.
type FeedStats struct {
	// Volume is the amount of every trade on the event's markets (what
	// buyers paid, fees included, and what sellers received), kopecks:
	// the sum of its candles' volumes. Volume24h is that of the trades in
	// the window that starts at FeedQuery.Since.
	Volume, Volume24h int64
	// ClosesAt is the earliest end of trading among the event's markets
	// not resolved yet; when every market is resolved, the latest end of
	// trading of any.
	ClosesAt time.Time
}

// Key is e's sort key under sort, as FeedCursor holds it.
func (st *FeedStats) Key(sort string) int64 {
	switch sort {
	case SortTrending:
		return st.Volume24h
	case SortVolume:
		return st.Volume
	case SortClosing:
		return st.ClosesAt.UnixMicro()
	}
	return 0
}

// Encode is the cursor as the API gives it: opaque, URL-safe.
func (c FeedCursor) Encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte("f1:" + c.Sort + ":" + strconv.FormatInt(c.Key, 10) + ":" + strconv.FormatInt(c.ID, 10)))
}

// ParseFeedCursor reads a cursor Encode made for sort. A cursor of
// another sort, or not a cursor at all, is an *input.Error.
func ParseFeedCursor(s, sort string) (*FeedCursor, error) {
	bad := input.Invalid("cursor", "is not a cursor of this feed's sort (pass next_cursor as it came)")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 4 || parts[0] != "f1" || parts[1] != sort {
		return nil, bad
	}
	key, err1 := strconv.ParseInt(parts[2], 10, 64)
	id, err2 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || id <= 0 || (sort != SortClosing && key < 0) {
		return nil, bad
	}
	return &FeedCursor{Sort: sort, Key: key, ID: id}, nil
}

// FeedWords splits a search text into its words: runs of letters and
// digits, lower-cased, at most MaxFeedWords. Everything else separates
// words, so no character of the text has a meaning of its own.
func FeedWords(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) > MaxFeedWords {
		words = words[:MaxFeedWords]
	}
	return words
}

// FeedRequest is the feed's parameters as a client gives them; empty
// means the default.
type FeedRequest struct {
	Text, Tag, Sort, Status, Cursor string
	Limit, Offset                   int
}

// feedQuery checks r and makes the store's query of it.
func (s *Service) feedQuery(r FeedRequest) (FeedQuery, error) {
	q := FeedQuery{Sort: r.Sort, Status: r.Status, Tag: r.Tag}
	if q.Sort == "" {
		q.Sort = SortTrending
	}
	switch q.Sort {
	case SortTrending, SortNew, SortClosing, SortVolume:
	default:
		return q, input.Invalid("sort", "must be one of trending, new, closing, volume")
	}
	if q.Status == "" {
		q.Status = FeedOpen
	}
	switch q.Status {
	case FeedOpen, FeedResolved, FeedAll:
	default:
		return q, input.Invalid("status", "must be one of open, resolved, all")
	}
	if q.Tag != "" && !ValidSlug(q.Tag) {
		return q, input.Invalid("tag", slugRule)
	}
	if len(r.Text) > MaxFeedQueryLen {
		return q, input.Invalid("q", fmt.Sprintf("must be at most %d bytes", MaxFeedQueryLen))
	}
	if err := input.Text("q", r.Text); err != nil {
		return q, err
	}
	q.Words = FeedWords(r.Text)
	q.Limit = r.Limit
	if q.Limit <= 0 {
		q.Limit = DefaultEventsLimit
	}
	q.Limit = min(q.Limit, MaxPageSize)
	q.Offset = max(r.Offset, 0)
	if r.Cursor != "" {
		if q.Offset > 0 {
			return q, input.Invalid("cursor", "cannot be used with offset")
		}
		c, err := ParseFeedCursor(r.Cursor, q.Sort)
		if err != nil {
			return q, err
		}
		q.After = c
	}
	q.Since = FloorTime(s.Now(), time.Hour).Add(-(SparklineHours - 1) * time.Hour)
	return q, nil
}

// FeedPage is a page of the feed: events with their FeedStats and the
// sparklines of their markets, and the cursor of the next page ("" when
// no event follows).
type FeedPage struct {
	Events []*Event
	Next   string
}

// Feed returns a page of the public feed (FeedRequest): the listed events
// that match, each with Stats set and every market's Sparkline. Checks:
// *input.Error for a bad sort, status, tag, text or cursor. A tag no
// event carries (or that does not exist) finds nothing.
func (s *Service) Feed(ctx context.Context, r FeedRequest) (*FeedPage, error) {
	q, err := s.feedQuery(r)
	if err != nil {
		return nil, err
	}
	// One more than the page: whether it exists says whether there is a
	// next page, so that the last page has no cursor.
	limit := q.Limit
	q.Limit++
	es, err := s.store.Feed(ctx, q)
	if err != nil {
		return nil, err
	}
	more := len(es) > limit
	if more {
		es = es[:limit]
	}
	page := &FeedPage{Events: es}
	for _, e := range es {
		for _, p := range e.Pools {
			PricePool(p)
			for _, m := range p.Markets {
				// The last point is the price now: the store's is that of
				// the last trade, which an answer added later may have
				// moved since.
				if n := len(m.Sparkline); n > 0 && !m.Resolved {
					m.Sparkline[n-1] = m.YesProbability()
				}
			}
		}
	}
	if n := len(es); more && n > 0 && es[n-1].Stats != nil {
		last := es[n-1]
		page.Next = FeedCursor{Sort: q.Sort, Key: last.Stats.Key(q.Sort), ID: last.ID}.Encode()
	}
	return page, nil
}

// FeedMatches reports whether texts hold every word of words, the last
// possibly as the start of a word: the memory store's search, which
// matches a word when one of the texts' words starts with it, or with the
// word less a short ending (so "кубка" finds "кубок" as PostgreSQL's
// stemmers do for such cases; the stores agree on whole words and
// prefixes, and may differ on inflections).
func FeedMatches(words []string, texts ...string) bool {
	if len(words) == 0 {
		return true
	}
	var have []string
	for _, t := range texts {
		have = append(have, FeedWords(t)...)
	}
	for i, w := range words {
		last := i == len(words)-1
		found := false
		for _, h := range have {
			if h == w || (last && strings.HasPrefix(h, w)) || sameStem(h, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// sameStem reports whether a and b differ only by endings of at most two
// letters after a common part of at least four.
func sameStem(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	n := 0
	for n < len(ra) && n < len(rb) && ra[n] == rb[n] {
		n++
	}
	return n >= 4 && len(ra)-n <= 2 && len(rb)-n <= 2
}

// Sparkline makes a market's points for the window that starts at since:
// one per hour, the close of the market's hourly candle of that hour or
// the last close before it (before, if the market traded before the
// window), oldest first. Hours before the market was created are left
// out; hours before its first known price take the open of its first
// candle, and with no candle at all, current. At most SparklineHours
// points. hours are the market's hourly candles that start at or after
// since, oldest first.
func Sparkline(since time.Time, created time.Time, before *float64, hours []Candle, current float64) []float64 {
	out := make([]float64, 0, SparklineHours)
	var last float64
	known := before != nil
	if known {
		last = *before
	} else if len(hours) > 0 {
		last = hours[0].Open
	} else {
		last = current
	}
	j := 0
	for h := range SparklineHours {
		start := since.Add(time.Duration(h) * time.Hour)
		for j < len(hours) && !hours[j].Start.After(start) {
			last = hours[j].Close
			j++
		}
		if !start.Add(time.Hour).After(created) {
			continue
		}
		if math.IsNaN(last) {
			last = current
		}
		out = append(out, last)
	}
	return out
}
