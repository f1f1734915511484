package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/changelog"
)

// The change log's upkeep: both stores write an entry for every trade,
// price, resolution, comment, notification and balance change in the
// transaction that makes it; live streams read them. This module prunes
// the entries older than Config.StreamRetention and, on PostgreSQL, keeps
// the LISTEN connection that wakes the readers when another transaction
// (here or on another server) commits entries.

// ChangeLog is a store that keeps the change log (storage/memory and
// storage/postgres do).
type ChangeLog interface {
	changelog.Reader
	ChangeFeed() changelog.Feed
	PruneChanges(ctx context.Context, before time.Time) (int, error)
}

// ChangeWatcher is a store whose ChangeFeed is woken by announcements it
// must listen for (storage/postgres).
type ChangeWatcher interface {
	WatchChanges(ctx context.Context, live func(error)) error
}

// ChangesModule runs the change log's upkeep in the background while the
// server runs.
var ChangesModule = fx.Module("changes", fx.Invoke(runChanges))

// pruneEvery is how often the change log is pruned.
const pruneEvery = time.Minute

func runChanges(lc fx.Lifecycle, cfg Config, store Store, log *slog.Logger) {
	cl, ok := store.(ChangeLog)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Go(func() { pruneChanges(ctx, cl, cfg.StreamRetention, pruneEvery, time.Now, log) })
			if w, ok := store.(ChangeWatcher); ok {
				wg.Go(func() { watchChanges(ctx, w, log) })
			}
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			return nil
		},
	})
}

// pruneChanges drops the entries older than retention at once and then
// every interval, until ctx is done. A failure is logged and tried again
// at the next turn: entries are only kept longer meanwhile.
func pruneChanges(ctx context.Context, cl ChangeLog, retention, interval time.Duration, now func() time.Time, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := cl.PruneChanges(ctx, now().Add(-retention))
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Warn("change log: pruning failed", "err", err)
		case n > 0:
			log.Debug("change log: pruned", "entries", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// watchChanges keeps the store's announcements of new entries coming
// until ctx is done, and says when they stop and start again: meanwhile
// live streams learn of new entries only by polling, once a second.
func watchChanges(ctx context.Context, w ChangeWatcher, log *slog.Logger) {
	lost := false
	_ = w.WatchChanges(ctx, func(err error) {
		switch {
		case err == nil:
			if lost {
				log.Info("change log: receiving announcements of new entries again")
			}
			lost = false
		case ctx.Err() == nil && !lost:
			log.Warn("change log: announcements of new entries lost; streams poll until they are back", "err", err)
			lost = true
		}
	})
}
