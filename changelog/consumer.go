package changelog

import (
	"context"
	"log/slog"
	"time"
)

// Consumer keeps something derived from the change log caught up with it
// (the leaderboard, the growth rules, the statistics): Apply applies the
// entries after its cursor, up to about limit of them, and moves the
// cursor in the same transaction, so that a crash neither loses nor
// repeats an entry.
type Consumer struct {
	// Name is what the logs call it.
	Name string
	// Apply applies what follows the cursor and returns how many entries
	// it applied (0 when it was caught up).
	Apply func(ctx context.Context, limit int) (int, error)
	// Woken, when set, returns a channel closed when new entries may have
	// been committed; the consumer also looks every Interval.
	Woken func() <-chan struct{}
	// Interval is how often the consumer looks for entries when nothing
	// wakes it, and how long it waits after a failure (default 1 s).
	Interval time.Duration
	// Batch is about how many entries one Apply takes (default 1000).
	Batch int
	// Gap is the least time between two applies when the first found
	// fewer than Batch entries (default 0: none). On a busy market,
	// applying after every commit makes the database do the consumer's
	// work once per batch of trades, beside the trades themselves;
	// waiting lets one apply take many commits' entries at the price of
	// being up to Gap late.
	Gap time.Duration
	Log *slog.Logger
}

// Run applies entries until ctx is done. A failure is logged and tried
// again after Interval: what it keeps only trails further meanwhile, and
// nothing is lost, since the cursor moves only with what was applied.
func (c *Consumer) Run(ctx context.Context) {
	interval, batch := c.Interval, c.Batch
	if interval <= 0 {
		interval = time.Second
	}
	if batch <= 0 {
		batch = 1000
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	failing := false
	for {
		var woken <-chan struct{}
		if c.Woken != nil {
			woken = c.Woken()
		}
		n, err := c.Apply(ctx, batch)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if !failing && c.Log != nil {
				c.Log.Warn(c.Name+": applying the change log failed; retrying", "err", err)
			}
			failing = true
		default:
			if failing && c.Log != nil {
				c.Log.Info(c.Name + ": applying the change log again")
			}
			failing = false
			if n >= batch {
				continue // more may be waiting
			}
			if n > 0 && c.Gap > 0 {
				// Let the entries of the next commits gather.
				t.Reset(c.Gap)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				continue
			}
			if n > 0 {
				continue
			}
		}
		t.Reset(interval)
		select {
		case <-ctx.Done():
			return
		case <-woken:
		case <-t.C:
		}
	}
}
