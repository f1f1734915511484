package server

// What the MCP tool search_events asks of the events listing: the
// parameters of GET /api/v1/events?q=&tag=&sort=&status=&limit=&cursor=
// (decisions.md, "Finding and following"). eventFinder is the seam: the
// listing's own search, when a module provides one, answers the tool with
// the same results as the HTTP route; feedFinder answers it from the
// public feed as it is.

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/predictkit/predictkit/market"
)

// eventQuery is one search of the events listing. Its fields are checked
// (checkEventQuery) before a finder sees them.
type eventQuery struct {
	// Q is free text; "" matches every event.
	Q string
	// Tag is a tag's slug; "" is every tag.
	Tag string
	// Sort is trending (the default), new, closing or volume.
	Sort string
	// Status is open (the default), resolved or all.
	Status string
	// Limit is 1 to market.MaxPageSize.
	Limit int
	// Cursor is the Next of the previous page; "" is the first page.
	Cursor string
}

// eventPage is a page of events.
type eventPage struct {
	Events []*market.Event
	// Next is the cursor of the next page, "" on the last.
	Next string
	// Sort is the order the page is in: the query's, or the one the
	// finder could give.
	Sort string
}

// eventFinder answers a search of the events listing. A cursor it did
// not give is input.ErrInvalid (badRequest).
type eventFinder interface {
	FindEvents(ctx context.Context, q eventQuery) (eventPage, error)
}

// Sorts and statuses of the listing.
var (
	eventSorts    = []string{"trending", "new", "closing", "volume"}
	eventStatuses = []string{"open", "resolved", "all"}
)

// checkEventQuery fills q's defaults and refuses what the listing does
// not take, with the HTTP route's invalid_request details.
func checkEventQuery(q *eventQuery) error {
	if q.Sort == "" {
		q.Sort = "trending"
	}
	if q.Status == "" {
		q.Status = "open"
	}
	if q.Limit == 0 {
		q.Limit = market.DefaultEventsLimit
	}
	switch {
	case !oneOf(q.Sort, eventSorts):
		return badRequest("sort", "must be one of "+strings.Join(eventSorts, ", "))
	case !oneOf(q.Status, eventStatuses):
		return badRequest("status", "must be one of "+strings.Join(eventStatuses, ", "))
	case q.Limit < 1 || q.Limit > market.MaxPageSize:
		return badRequest("limit", "must be an integer from 1 to "+strconv.Itoa(market.MaxPageSize))
	case len(q.Q) > 200:
		return badRequest("q", "must be at most 200 characters")
	}
	return nil
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// feedFinder searches the public feed (Service.Events: the active events,
// newest first) by scanning it: it keeps the events whose names, rules
// or answers, in either language, hold every word of Q (case folded),
// that carry Tag, and whose markets are all resolved (resolved), not all
// resolved (open), or either (all). Its pages are in the feed's order,
// which it reports as the "new" sort whatever the query asked. A call
// scans at most feedScanPages pages of the feed; its cursor is where the
// scan stopped, so a search over a long feed goes on in the next call.
type feedFinder struct{ markets *market.Service }

const feedScanPages = 20

func (f feedFinder) FindEvents(ctx context.Context, q eventQuery) (eventPage, error) {
	offset, err := feedCursorOffset(q.Cursor)
	if err != nil {
		return eventPage{}, err
	}
	words := strings.Fields(strings.ToLower(q.Q))
	out := eventPage{Sort: "new", Events: []*market.Event{}}
	for range feedScanPages {
		es, err := f.markets.Events(ctx, market.MaxPageSize, offset)
		if err != nil {
			return eventPage{}, err
		}
		for i, e := range es {
			if !feedMatch(e, words, q.Tag, q.Status) {
				continue
			}
			out.Events = append(out.Events, e)
			if len(out.Events) == q.Limit {
				if i+1 < len(es) || len(es) == market.MaxPageSize {
					out.Next = feedCursor(offset + i + 1)
				}
				return out, nil
			}
		}
		if len(es) < market.MaxPageSize {
			return out, nil
		}
		offset += len(es)
	}
	out.Next = feedCursor(offset)
	return out, nil
}

// feedMatch reports whether e is one feedFinder keeps.
func feedMatch(e *market.Event, words []string, tag, status string) bool {
	if tag != "" && !oneOf(tag, e.Tags) {
		return false
	}
	resolved, markets := 0, 0
	var text strings.Builder
	text.WriteString(e.Name + "\n" + e.NameRu)
	for _, p := range e.Pools {
		text.WriteString("\n" + p.Name + "\n" + p.NameRu + "\n" + p.Rules + "\n" + p.RulesRu)
		for _, m := range p.Markets {
			text.WriteString("\n" + m.Name + "\n" + m.NameRu)
			markets++
			if m.Resolved {
				resolved++
			}
		}
	}
	switch {
	case status == "open" && markets > 0 && resolved == markets:
		return false
	case status == "resolved" && (markets == 0 || resolved < markets):
		return false
	}
	lower := strings.ToLower(text.String())
	for _, w := range words {
		if !strings.Contains(lower, w) {
			return false
		}
	}
	return true
}

// feedCursor is the opaque cursor of a scan resuming at offset.
func feedCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("f" + strconv.Itoa(offset)))
}

func feedCursorOffset(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil && len(raw) > 1 && raw[0] == 'f' {
		if n, err := strconv.Atoi(string(raw[1:])); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, badRequest("cursor", "is not one this server gave")
}
