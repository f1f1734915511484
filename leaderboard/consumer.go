package leaderboard

import (
	"context"
	"log/slog"
	"time"

	"github.com/predictkit/predictkit/changelog"
)

// Applier is a store whose buckets follow the change log
// (storage/postgres): each call applies the entries after its cursor, up
// to about limit of them, and moves the cursor in the same transaction.
type Applier interface {
	// ApplyLeaderboard applies what follows the cursor and returns how
	// many entries it applied (0 when it was caught up).
	ApplyLeaderboard(ctx context.Context, limit int) (int, error)
}

// Consumer keeps an Applier's board caught up with the change log.
type Consumer struct {
	Store Applier
	// Woken, when set, returns a channel closed when new entries may have
	// been committed; the consumer also looks every Interval.
	Woken func() <-chan struct{}
	// Interval is how often the consumer looks for entries when nothing
	// wakes it, and how long it waits after a failure (default 1 s).
	Interval time.Duration
	// Batch is about how many entries one transaction applies (default
	// 1000): a transaction's entries are never split, so one of more
	// entries is applied whole.
	Batch int
	// Gap is the least time between two applies when the first found
	// fewer than Batch entries (default 0: none). On a busy market,
	// applying after every commit makes the database do the board's
	// work once per batch of trades, beside the trades themselves;
	// waiting lets one apply take many commits' entries at the price of
	// a board up to Gap late.
	Gap time.Duration
	Log *slog.Logger
}

// Run applies entries until ctx is done. A failure is logged and tried
// again after Interval: the board only trails further meanwhile, and
// nothing is lost, since the cursor moves only with what was applied.
func (c *Consumer) Run(ctx context.Context) {
	cc := changelog.Consumer{Name: "leaderboard", Apply: c.Store.ApplyLeaderboard, Woken: c.Woken,
		Interval: c.Interval, Batch: c.Batch, Gap: c.Gap, Log: c.Log}
	cc.Run(ctx)
}
