package server

import (
	"sync/atomic"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// demoClock is the clock of the services and of the in-memory store
// while the demo data is seeded: it reads the time set last, so that the
// demo records two weeks of history (users who registered then, trades
// made day after day, a market resolved yesterday) through the one money
// path and ledger every trade takes, rather than by writing past records
// by hand. Unset, it is the real clock; it is unset once the demo data is
// in, before the server listens.
type demoClock struct {
	at atomic.Pointer[time.Time]
}

func (c *demoClock) now() time.Time {
	if t := c.at.Load(); t != nil {
		return *t
	}
	return time.Now().UTC().Truncate(time.Microsecond)
}

// set makes the clock read t (UTC, microseconds, as stores keep times).
func (c *demoClock) set(t time.Time) {
	t = t.UTC().Truncate(time.Microsecond)
	c.at.Store(&t)
}

// reset makes the clock the real one again.
func (c *demoClock) reset() { c.at.Store(nil) }

// clockSetter is a store whose clock the demo may set: the in-memory
// store (storage/memory's SetClock).
type clockSetter interface {
	SetClock(func() time.Time)
}

// installDemoClock puts a demoClock behind the services' clocks and the
// store's, or returns nil when the store keeps its own (the demo data is
// then seeded at the current time). It runs while the application is
// built, before any start hook: no goroutine reads those clocks yet.
func installDemoClock(store Store, accounts *account.Service, markets *market.Service, comments *social.Service) *demoClock {
	cs, ok := store.(clockSetter)
	if !ok {
		return nil
	}
	c := &demoClock{}
	cs.SetClock(c.now)
	accounts.Now = c.now
	markets.Now = c.now
	comments.Now = c.now
	return c
}
