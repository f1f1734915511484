package market

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/predictkit/predictkit/input"
)

// Bounds of a user's own trade history.
const (
	// DefaultTradesLimit is a page's size when the caller names none.
	DefaultTradesLimit = 50
	// MaxTradesLimit is the largest page.
	MaxTradesLimit = 100
)

// TradePage is one page of a user's trades, newest first. Next is the
// cursor of the following page, "" on the last.
type TradePage struct {
	Trades []*Trade
	Next   string
}

// UserTrades returns a page of user userID's own trades (buys and sells,
// whatever market), newest (highest id) first: limit of them
// (DefaultTradesLimit when 0, at most MaxTradesLimit), after cursor, which
// is "" for the first page and then the Next of the page before.
//
// Pages are keyset pages: the cursor is the last trade's id (opaque to
// callers), and the next page holds the trades with a smaller id. Trades
// made after the first page was read have larger ids, so they never push
// a trade onto a later page, nor show it twice.
//
// Errors: *input.Error for a limit out of range or a cursor this service
// did not give.
func (s *Service) UserTrades(ctx context.Context, userID int64, limit int, cursor string) (*TradePage, error) {
	if limit == 0 {
		limit = DefaultTradesLimit
	}
	if err := input.InRange("limit", int64(limit), 1, MaxTradesLimit); err != nil {
		return nil, err
	}
	before, err := decodeTradeCursor(cursor)
	if err != nil {
		return nil, err
	}
	ts, err := s.store.UserTrades(ctx, userID, before, limit+1)
	if err != nil {
		return nil, err
	}
	page := &TradePage{Trades: ts}
	if len(ts) > limit {
		page.Trades = ts[:limit]
		page.Next = encodeTradeCursor(page.Trades[limit-1].ID)
	}
	return page, nil
}

// TradesAfter returns a page of market marketID's trade log: the trades
// with an id above after (0 for the first page), oldest first, at most
// limit. The next page starts after the last trade's id; a trade made
// meanwhile has a larger id, so it lands on a later page, never twice.
// A market that does not exist has no trades (ask Market to tell).
func (s *Service) TradesAfter(ctx context.Context, marketID, after int64, limit int) ([]*Trade, error) {
	if limit < 1 {
		return nil, input.Invalid("limit", "must be at least 1")
	}
	return s.store.TradesAfter(ctx, marketID, after, limit)
}

func encodeTradeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("t" + strconv.FormatInt(id, 10)))
}

func decodeTradeCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	bad := input.Invalid("cursor", "must be the next_cursor of an earlier page")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 2 || len(b) > 20 || b[0] != 't' {
		return 0, bad
	}
	digits := string(b[1:])
	if strings.TrimLeft(digits, "0123456789") != "" {
		return 0, bad
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id <= 0 {
		return 0, bad
	}
	return id, nil
}
