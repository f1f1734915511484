package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
)

// profileParts is what a profile reads from the store besides the user
// record: balances, open positions valued at the markets' prices, the
// most recent closed positions and the figures.
type profileParts struct {
	balances account.Balances
	open     []market.OpenPosition
	closed   *market.ClosedPage
	stats    market.Stats
}

// profileMemo keeps each user's profileParts for GET /auth/me, so that a
// user who reads the profile again reads memory instead of four queries.
// The user record is not kept: it comes from the authentication, as
// fresh as the authentication cache's.
//
// A user's parts are dropped, before anyone could read them stale here,
// by:
//   - a change-log entry addressed to the user (balance, notification,
//     deposit, withdrawal) or placed in a pool where the user holds an
//     open position (a trade or a price moves its value, a resolution
//     closes it);
//   - a write the user made through this server, before its answer
//     leaves (writeHook), so the user's own reads see it;
//   - an account invalidation (account.Service.Invalidated);
//   - a write made through this server by no user (the operator, a
//     partner, a webhook), which drops every user's parts.
//
// Whatever the log does not carry (an operator's SQL, names edited on
// another server) lasts at most ttl, the authentication cache's lifetime.
// The memo is on only while the authentication cache is (set) and the
// change log is followed (setLive); off, it keeps nothing.
//
// A read of the store that began before an invalidation that concerns
// it is not kept (counters n, users, pools, all), nor one older than ttl.
//
// The log is followed a moment behind its commits, so a kept profile is
// served only when the memo has applied every entry up to the log's
// last (get's head, one read of a one-row table): a change committed
// before the request, on this server or another, by a request or a
// background consumer (the growth rules' rewards), is never missed.
type profileMemo struct {
	mu   sync.Mutex
	ttl  time.Duration
	live bool
	// n counts invalidations; users and pools hold n at the last
	// invalidation of each, all at the last drop of everything.
	n            uint64
	all          uint64
	users, pools map[int64]uint64
	kept         map[int64]*memoized
	// byPool lists the users whose kept parts value positions in a pool.
	byPool map[int64]map[int64]struct{}
	// swept is n at the previous sweep: the counters up to it concern no
	// read that may still be kept.
	swept uint64
	// applied is the last sequence number of the log the memo applied.
	applied int64
}

type memoized struct {
	parts profileParts
	// at is when the read of the parts began.
	at    time.Time
	pools []int64
}

func newProfileMemo() *profileMemo {
	return &profileMemo{users: map[int64]uint64{}, pools: map[int64]uint64{}, kept: map[int64]*memoized{}, byPool: map[int64]map[int64]struct{}{}}
}

// memoRead is a read of the store in progress, to pass to put.
type memoRead struct {
	n     uint64
	began time.Time
}

// get returns user id's kept parts, or false and the read to pass to put
// once the parts are read. head is the log's last sequence number, read
// before: parts are served only when every entry up to it was applied. A
// nil memo keeps nothing.
func (m *profileMemo) get(id int64, head int64, now time.Time) (profileParts, bool, memoRead) {
	if m == nil {
		return profileParts{}, false, memoRead{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := memoRead{n: m.n, began: now}
	if !m.on() || m.applied < head {
		return profileParts{}, false, r
	}
	if e, ok := m.kept[id]; ok && now.Sub(e.at) < m.ttl {
		return e.parts, true, r
	}
	return profileParts{}, false, r
}

// put keeps user id's parts read in r, unless the memo is off, r is ttl
// old, or something that concerns them was invalidated since r began.
func (m *profileMemo) put(id int64, p profileParts, r memoRead, now time.Time) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.on() || now.Sub(r.began) >= m.ttl || m.all > r.n || m.users[id] > r.n {
		return
	}
	var pools []int64
	for _, o := range p.open {
		if m.pools[o.PoolID] > r.n {
			return
		}
		pools = append(pools, o.PoolID)
	}
	m.drop(id)
	m.kept[id] = &memoized{parts: p, at: r.began, pools: pools}
	for _, pool := range pools {
		us := m.byPool[pool]
		if us == nil {
			us = map[int64]struct{}{}
			m.byPool[pool] = us
		}
		us[id] = struct{}{}
	}
}

func (m *profileMemo) on() bool { return m.live && m.ttl > 0 }

// drop forgets user id's kept parts; the caller holds mu.
func (m *profileMemo) drop(id int64) {
	e, ok := m.kept[id]
	if !ok {
		return
	}
	delete(m.kept, id)
	for _, pool := range e.pools {
		delete(m.byPool[pool], id)
	}
}

// user drops user id's parts.
func (m *profileMemo) user(id int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.invalidateUser(id)
}

func (m *profileMemo) invalidateUser(id int64) {
	m.n++
	m.users[id] = m.n
	m.drop(id)
}

func (m *profileMemo) invalidatePool(pool int64) {
	m.n++
	m.pools[pool] = m.n
	for id := range m.byPool[pool] {
		m.drop(id)
	}
	delete(m.byPool, pool)
}

// everyone drops every user's parts.
func (m *profileMemo) everyone() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropAll()
}

func (m *profileMemo) dropAll() {
	m.n++
	m.all = m.n
	clear(m.kept)
	clear(m.byPool)
}

// set turns the memo on for ttl, or off for 0 (authCache.set).
func (m *profileMemo) set(ttl time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ttl = max(ttl, 0)
	m.dropAll()
}

// setLive says whether the change log is followed, from after on.
func (m *profileMemo) setLive(live bool, after int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live, m.applied = live, after
	m.dropAll()
}

// serving reports whether the memo may serve or keep anything.
func (m *profileMemo) serving() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.on()
}

// apply drops what the entries make stale: the parts of the user an
// entry is addressed to, and of the users with open positions in its
// pool. An entry placed on a market but no pool drops everything.
func (m *profileMemo) apply(es []changelog.Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range es {
		m.applied = max(m.applied, e.Seq)
		if e.UserID != 0 {
			m.invalidateUser(e.UserID)
		}
		switch {
		case e.PoolID != 0:
			m.invalidatePool(e.PoolID)
		case e.MarketID != 0:
			m.dropAll()
		}
	}
}

// sweep forgets expired parts and the counters no kept read can need
// any more. Sweeps must be at least ttl apart: a read that began before
// the previous sweep is then too old to be kept, whatever the counters
// up to that sweep said.
func (m *profileMemo) sweep(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, e := range m.kept {
		if now.Sub(e.at) >= m.ttl {
			m.drop(id)
		}
	}
	for pool, us := range m.byPool {
		if len(us) == 0 {
			delete(m.byPool, pool)
		}
	}
	for _, c := range []map[int64]uint64{m.users, m.pools} {
		for id, n := range c {
			if n <= m.swept {
				delete(c, id)
			}
		}
	}
	m.swept = m.n
}

// profileMemoCache puts the memo among the authentication caches: it is
// on while they are (cacheAuth), for as long. Its invalidations come from
// account.Service.Invalidated, which the caches' feed passes through.
func profileMemoCache(p *profiles) authCacheOut {
	if p.memo == nil {
		return authCacheOut{Cache: authCache{set: func(time.Duration) {}, invalidate: func(account.Invalidation) {}}}
	}
	return authCacheOut{Cache: authCache{set: p.memo.set, invalidate: func(account.Invalidation) {}}}
}

// profileFeedIn is the feed the memo follows: the stream's, where the
// server has one.
type profileFeedIn struct {
	fx.In
	Feed StreamFeed `optional:"true"`
}

// followProfileChanges keeps the memo told of the change log from the
// server's start to its stop, and sweeps it every Config.AuthCache. The
// memo is live only while the log is followed: when the feed fails it is
// off until it follows again, from the log's end.
func followProfileChanges(lc fx.Lifecycle, cfg Config, store Store, p *profiles, accounts *account.Service, in profileFeedIn, log *slog.Logger) {
	m := p.memo
	cl, ok := store.(ChangeLog)
	if m == nil || !ok {
		return
	}
	accounts.Invalidated = func(inv account.Invalidation) {
		switch {
		case inv.All:
			m.everyone()
		case inv.UserID != 0:
			m.user(inv.UserID)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Go(func() { followProfiles(ctx, m, cl, in.Feed, time.Second, log) })
			wg.Go(func() {
				t := time.NewTicker(cfg.AuthCache)
				defer t.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case now := <-t.C:
						m.sweep(now)
					}
				}
			})
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			return nil
		},
	})
}

// followProfiles follows feed from the log's end, again after retry
// whenever it fails, until ctx is done.
func followProfiles(ctx context.Context, m *profileMemo, bounds changelog.Reader, feed changelog.Feed, retry time.Duration, log *slog.Logger) {
	for ctx.Err() == nil {
		b, err := bounds.ChangeBounds(ctx)
		if err == nil {
			m.setLive(true, b.Last)
			err = feed.Follow(ctx, b.Last, func(es []changelog.Entry) error {
				m.apply(es)
				return nil
			})
			m.setLive(false, 0)
		}
		if ctx.Err() != nil {
			return
		}
		log.Warn("profile memo off until the change log can be followed again", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
}

type writeHookOut struct {
	fx.Out
	Hook writeHook `group:"write_hooks"`
}

// profileWrites drops from the memo what a write through this server may
// have changed. The writes a trading key may make (tradeRoutes: trades,
// notifications read) change their user's parts, and other users' only
// through prices, which the change log tells of (apply). Any other write
// that succeeded drops everyone's parts: it may have moved money or
// closed positions of users other than its maker (a transfer, a
// resolution, an operator's grant, a partner's trade), and the log would
// tell of it a moment after the answer. A user's failed write drops the
// user's parts.
func profileWrites(p *profiles) writeHookOut {
	return writeHookOut{Hook: func(c *fiber.Ctx, err error) {
		if p.memo == nil {
			return
		}
		u, byUser := c.Locals(localUser).(*account.User)
		route, _ := c.Locals(localRoute).(string)
		switch ok := err == nil && c.Response().StatusCode() < http.StatusBadRequest; {
		case byUser && (!ok || tradeRoutes[c.Method()+" "+route]):
			p.memo.user(u.ID)
		case ok:
			p.memo.everyone()
		}
	}}
}
