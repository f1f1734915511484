package server

// What the MCP tool search_events asks of the events listing: the
// parameters of GET /api/v1/events?q=&tag=&sort=&status=&limit=&cursor=
// (docs/feed-and-search.md). eventFinder is the seam; feedFinder, the
// public feed's search, answers the tool with the HTTP route's results.

import (
	"context"
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

// feedFinder answers the search from the public feed (Service.Feed), so
// that the tool finds what GET /api/v1/events finds, in the same order,
// with the same cursors.
type feedFinder struct{ markets *market.Service }

func (f feedFinder) FindEvents(ctx context.Context, q eventQuery) (eventPage, error) {
	p, err := f.markets.Feed(ctx, market.FeedRequest{Text: q.Q, Tag: q.Tag, Sort: q.Sort, Status: q.Status, Cursor: q.Cursor, Limit: q.Limit})
	if err != nil {
		return eventPage{}, err
	}
	return eventPage{Events: p.Events, Next: p.Next, Sort: q.Sort}, nil
}
