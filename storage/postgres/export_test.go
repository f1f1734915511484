package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/leaderboard"
	"github.com/predictkit/predictkit/market"
)

// Internals the external tests reach.
var (
	Translate = translate
	Retryable = retryable
	Retry     = retry

	ParseAuthChange = parseAuthChange

	SQLAddressOwners = sqlAddressOwners
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
	"user trades":      {sqlUserTrades, []any{int64(1), int64(1 << 40), 51}},
	"trades after":     {sqlTradesAfter, []any{int64(1), int64(1000), 5000}},
	"active events":    {sqlActiveEvents, []any{int64(20), 0}},
	"candles":          {sqlCandles, []any{int64(1), int32(60), time.Unix(0, 0), time.Unix(1<<32, 0), 1500}},
	"changes":          {sqlChanges, []any{int64(1000), 1000}},
}

// The statements of a settlement's credits, for their plan.
var (
	SettleCreatePay   = sqlCreatePay
	SettleCreditPlans = sqlCreditPlans
	SettleCredit      = sqlCredit
)

// SetCachedAccountID makes the money path believe ref has id.
func SetCachedAccountID(s *Store, ref account.Ref, id int64) {
	s.accountIDs.remember(map[account.Ref]int64{ref: id}, nil)
}

// CachedAccountID is the id the money path remembers for ref, if any.
func CachedAccountID(s *Store, ref account.Ref) (int64, bool) {
	ids, ok := s.accountIDs.lookup([]account.Ref{ref})
	if !ok {
		return 0, false
	}
	return ids[0], true
}

// TradeLookups are the money path's look-ups by key, with the settings a
// trade's transaction runs them under and arguments to plan them with.
var (
	TradePlans   = sqlTradePlans
	TradeLookups = map[string]struct {
		SQL  string
		Args []any
	}{
		"sub-account positions": {sqlLockPositions, []any{[]int64{}, []int64{}, []int64{1, 1}, []string{"a", "b"}, []int64{1, 2}}},
		"user positions":        {sqlLockPositions, []any{[]int64{1, 2}, []int64{1, 2}, []int64{}, []string{}, []int64{}}},
		"trades by key":         {sqlTradesByKey, []any{[]int64{1, 1}, []string{"a", "b"}}},
		"sub-accounts":          {sqlSubAccounts, []any{[]int64{1, 1}, []string{"a", "b"}}},
		"sub-account creation":  {sqlCreateSubAccounts, []any{[]int64{1, 1}, []string{"a", "b"}, time.Unix(0, 0)}},
		"accounts to create":    {sqlEnsureAccounts, []any{[]string{"user"}, []int64{1}, []int64{1, 1}, []string{"a", "b"}}},
		"accounts to lock":      {sqlLockAccounts, []any{[]string{"user"}, []int64{1}, []int64{1, 1}, []string{"a", "b"}}},
	}
)

// QueueCandles queues the statement a write of tes adds to roll their
// price points up into candles.
var QueueCandles = queueCandles

// PruneChangesIn is Store.PruneChanges in transactions of batch entries.
func PruneChangesIn(s *Store, ctx context.Context, before time.Time, batch int) (int, error) {
	return s.pruneChanges(ctx, before, batch)
}

// WokenChangeFeed is the store's change feed polling only when
// WatchChanges wakes it.
func WokenChangeFeed(s *Store) changelog.Feed {
	return &changelog.Poller{Log: s, Woken: s.changed.Wait, Interval: time.Hour}
}

// SetUnloggedTrades makes s write trades without their change-log
// entries, to measure what the log costs.
func SetUnloggedTrades(s *Store, unlogged bool) { s.unloggedTrades = unlogged }

// SettlementChecksPostings says whether s's settlements check their
// holders' postings' accounts themselves (settlechecks.go).
func (s *Store) SettlementChecksPostings(ctx context.Context) bool {
	return s.settlementChecksPostings(ctx)
}

// SetLeaderboardBeforeCommit sets the hook the leaderboard's consumer
// runs before it commits, and returns a function that removes it.
func SetLeaderboardBeforeCommit(f func() error) func() {
	leaderboardBeforeCommit = f
	return func() { leaderboardBeforeCommit = nil }
}

// LeaderboardFromBuckets reads a board summed from the day buckets,
// whatever the periods' totals hold.
func (s *Store) LeaderboardFromBuckets(ctx context.Context, q leaderboard.Query) ([]leaderboard.Row, error) {
	return s.leaderboard(ctx, q, true)
}

// SetBoardToday sets the day the consumer sums the periods' totals for,
// and returns a function that puts the clock back.
func SetBoardToday(day time.Time) func() {
	old := boardToday
	boardToday = func() time.Time { return day }
	return func() { boardToday = old }
}

// UpdatePositions writes ps on tx with the statement a trade writes the
// positions it changed with.
func UpdatePositions(ctx context.Context, tx pgx.Tx, ps ...*market.Position) error {
	order := make([]int64, len(ps))
	byID := make(map[int64]*market.Position, len(ps))
	for i, p := range ps {
		order[i], byID[p.ID] = p.ID, p
	}
	_, err := tx.Exec(ctx, sqlUpdatePositions, updatePositionArgs(order, byID)...)
	return err
}

// SetStatsBeforeCommit sets the hook the statistics' consumer runs
// before it commits; the returned function removes it.
func SetStatsBeforeCommit(f func() error) func() {
	statsBeforeCommit = f
	return func() { statsBeforeCommit = nil }
}

// SetSettlePace sets the store's settlement chunk and share, as
// WithSettlementChunks does, for benchmarks that compare paces on one
// store.
func (s *Store) SetSettlePace(chunk int, share float64) { s.chunk, s.share = chunk, share }
