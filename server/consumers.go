package server

import (
	"context"
	"sync"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/changelog"
)

// changeWaker is a store that says when entries may have been committed
// (storage/postgres), so that a consumer need not wait for its next look.
type changeWaker interface {
	ChangesCommitted() <-chan struct{}
}

// appendWaker is a store whose change log says when it was appended to
// (storage/memory). Only a consumer with work to do on that store asks
// to be woken so: the others would wake on every trade for nothing.
type appendWaker interface {
	ChangesAppended() <-chan struct{}
}

// runConsumer runs c from the server's start to its stop (the
// leaderboard, the growth rules, the statistics, the Telegram sender).
// Unless c is woken already, the store's commits wake it when the store
// tells of them (storage/postgres); c's Interval stays the look of last
// resort. warm, when set, runs before the
// server listens (a failure is logged and left to the loop to retry);
// beside runs next to c for as long.
func runConsumer(lc fx.Lifecycle, store Store, c *changelog.Consumer, warm func(context.Context), beside ...func(context.Context)) {
	if w, ok := store.(changeWaker); ok && c.Woken == nil {
		c.Woken = w.ChangesCommitted
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(start context.Context) error {
			if warm != nil {
				warm(start)
			}
			wg.Go(func() { c.Run(ctx) })
			for _, f := range beside {
				wg.Go(func() { f(ctx) })
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
