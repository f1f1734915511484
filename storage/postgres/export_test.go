package postgres

// Internals the external tests reach.
var (
	Translate = translate
	Retryable = retryable
	Retry     = retry
)

// FeedQueries are the read statements that must walk an index, with
// arguments to plan them with.
var FeedQueries = map[string]struct {
	SQL  string
	Args []any
}{
	"open positions":   {sqlOpenPositions, []any{int64(1)}},
	"closed positions": {sqlClosedPositions, []any{int64(1), int64(20), 0}},
	"closed stats":     {sqlClosedStats, []any{int64(1)}},
	"pnl events":       {sqlPnLEvents, []any{int64(1)}},
	"latest trades":    {sqlLatestTrades, []any{int64(50)}},
	"price history":    {sqlPriceHistory, []any{int64(1), int64(1000)}},
	"trades":           {sqlTrades, []any{int64(1)}},
	"active events":    {sqlActiveEvents, []any{int64(20), 0}},
}
