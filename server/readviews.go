package server

// Public reads kept in memory (docs/read-views.md). The answers of the
// public read routes (the events feed, an event, a pool, a market, the
// latest trades, a leaderboard page, a market's recent candles) are kept
// rendered, keyed by path and normalized query, with their ETag and the
// change-log seq they reflect. A follower of the change log marks stale
// what each entry touches, so that any server's trades reach this one's
// views within milliseconds; a successful write through this server marks
// everything stale before its answer leaves, so that a client reads its
// own writes; and an answer is rendered again at least every
// Config.ReadViews, for the changes the change log does not carry.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"
	"golang.org/x/sync/singleflight"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
)

// HeaderLastEventID is the answer header of a public read that names the
// change-log seq the answer reflects: a client that opens the stream with
// Last-Event-ID set to it and applies every message has the state.
const HeaderLastEventID = "Predictkit-Last-Event-Id"

// viewCacheControl is the Cache-Control of a public read: shared caches
// may keep it a second, and serve it a few more while they revalidate.
const viewCacheControl = "public, max-age=1, stale-while-revalidate=5"

// maxViews bounds the answers kept: a feed's queries are the client's to
// choose. Past it, stale answers are dropped first, then any.
const maxViews = 4096

// ReadViewsModule keeps the public reads in memory (readViews) and, from
// start to stop, follows the change log for them.
var ReadViewsModule = fx.Module("readviews", fx.Provide(newReadViews))

// tagKind is what a view tag names.
type tagKind uint8

const (
	tagMarket tagKind = iota + 1
	tagPool
	tagEvent
	tagCandles
	tagFeed
	tagLatest
	tagLeaderboard
)

// viewTag is something a change may touch and a view may show: a market,
// a pool, an event, a market's candles, or one of the public lists.
type viewTag struct {
	kind tagKind
	id   int64
}

// tagState is when a tag was last touched: the views' clock at the
// change, and the seq of the last entry that touched it.
type tagState struct {
	stamp uint64
	seq   int64
}

// view is a kept answer.
type view struct {
	body  []byte // never written to once kept
	ctype string
	etag  string
	// seq is the change-log seq the answer reflects; -1 when unknown.
	seq int64
	// at is the views' clock when the render began: the view is stale
	// once a tag it shows, or everything, was touched after.
	at      uint64
	tags    []viewTag
	expires time.Time
}

// rendered is what one render of a view produced, shared by the misses
// that waited on it.
type rendered struct {
	v      *view
	status int
	ctype  string
	body   []byte
	err    error
}

// readViews is the public reads kept in memory. Its zero generation
// serves nothing from memory until the follower runs: a server built but
// never started (tests driving the app directly) renders every read, as
// it cannot hear of the changes another writer makes to the store.
type readViews struct {
	ttl     time.Duration
	log     ChangeLog // nil when the store keeps no change log
	markets *market.Service
	metrics *Metrics
	logger  *slog.Logger

	following atomic.Bool
	renders   singleflight.Group

	mu     sync.RWMutex
	clock  uint64
	global uint64 // stamp of the last change to everything
	pos    int64  // the follower has applied the log up to here
	since  int64  // from here: tags tell of no entry before
	tags   map[viewTag]tagState
	views  map[string]*view
}

func newReadViews(cfg Config, store Store, markets *market.Service, metrics *Metrics, logger *slog.Logger) *readViews {
	v := &readViews{ttl: cfg.ReadViews, markets: markets, metrics: metrics, logger: logger,
		tags: map[viewTag]tagState{}, views: map[string]*view{}}
	if cl, ok := store.(ChangeLog); ok {
		v.log = cl
	}
	return v
}

// viewRoutes are the routes whose answers are kept, by template, with
// what an answer shows; keep is false for a request whose answer is
// rendered every time (a bad id is the handler's 400; candles with a
// from or a to).
var viewRoutes = map[string]func(c *fiber.Ctx) (tags []viewTag, keep bool){
	"/api/v1/events":               fixedTag(tagFeed),
	"/api/v1/market/trades/latest": fixedTag(tagLatest),
	"/api/v1/leaderboard":          fixedTag(tagLeaderboard),
	"/api/v1/events/:id":           idTag(tagEvent, "id"),
	"/api/v1/pools/:id":            idTag(tagPool, "id"),
	"/api/v1/markets/:market_id":   idTag(tagMarket, "market_id"),
	"/api/v1/markets/:market_id/candles": func(c *fiber.Ctx) ([]viewTag, bool) {
		tags, keep := candleTag(c)
		// Only the windows that end now are read again and again.
		return tags, keep && c.Query("from") == "" && c.Query("to") == ""
	},
}

var candleTag = idTag(tagCandles, "market_id")

func fixedTag(k tagKind) func(*fiber.Ctx) ([]viewTag, bool) {
	tags := []viewTag{{kind: k}}
	return func(*fiber.Ctx) ([]viewTag, bool) { return tags, true }
}

func idTag(k tagKind, param string) func(*fiber.Ctx) ([]viewTag, bool) {
	return func(c *fiber.Ctx) ([]viewTag, bool) {
		id, err := strconv.ParseInt(c.Params(param), 10, 64)
		if err != nil || id <= 0 {
			return nil, false
		}
		return []viewTag{{kind: k, id: id}}, true
	}
}

// entryTags calls f with each tag entry e touches.
func entryTags(e *changelog.Entry, f func(viewTag)) {
	switch e.Type {
	case changelog.Trade, changelog.Price, changelog.MarketResolved, changelog.AnswerAdded:
		if e.MarketID > 0 {
			f(viewTag{tagMarket, e.MarketID})
			f(viewTag{tagCandles, e.MarketID})
		}
		if e.PoolID > 0 {
			f(viewTag{tagPool, e.PoolID})
		}
		if e.EventID > 0 {
			f(viewTag{tagEvent, e.EventID})
		}
		f(viewTag{kind: tagFeed})
		f(viewTag{kind: tagLatest})
		f(viewTag{kind: tagLeaderboard})
	case changelog.Comment:
		if e.EventID > 0 {
			f(viewTag{tagEvent, e.EventID})
		}
	}
}

// wrap returns the handler of route method path: a kept view for a public
// read, a handler that marks every view stale after a successful write,
// next itself otherwise.
func (v *readViews) wrap(method, path string, next fiber.Handler) fiber.Handler {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		tagsOf, ok := viewRoutes[path]
		if !ok {
			return next
		}
		return func(c *fiber.Ctx) error {
			tags, keep := tagsOf(c)
			if !keep {
				return v.answer(c, path, v.render(c, path, next, tags))
			}
			return v.serve(c, path, tags, next)
		}
	}
	return func(c *fiber.Ctx) error {
		err := next(c)
		if err == nil && c.Response().StatusCode() < http.StatusBadRequest {
			// Before the answer leaves: its client's next read is fresh.
			v.touchAll()
		}
		return err
	}
}

// on reports whether views are served from memory now.
func (v *readViews) on() bool { return v.ttl > 0 && v.following.Load() }

// serve answers a public read from memory when it may, else renders it.
func (v *readViews) serve(c *fiber.Ctx, route string, tags []viewTag, next fiber.Handler) error {
	if !v.on() {
		r := v.render(c, route, next, tags)
		return v.answer(c, route, r)
	}
	key := viewKey(c)
	v.mu.RLock()
	kept, global := v.views[key], v.global
	fresh := kept != nil && v.freshLocked(kept)
	v.mu.RUnlock()
	if fresh {
		v.metrics.readViews.WithLabelValues(route, "hit").Inc()
		return v.answer(c, route, &rendered{v: kept})
	}
	v.metrics.readViews.WithLabelValues(route, "miss").Inc()
	// A miss joins only a render that began after the last write through
	// this server, so that it reads that write.
	res, _, _ := v.renders.Do(key+"@"+strconv.FormatUint(global, 10), func() (any, error) {
		v.metrics.readViews.WithLabelValues(route, "render").Inc()
		r := v.render(c, route, next, tags)
		if r.v != nil {
			v.keep(key, r.v)
		}
		return r, nil
	})
	return v.answer(c, route, res.(*rendered))
}

// freshLocked reports whether kept may be served: nothing it shows was
// touched since its render began, and it is younger than the setting.
func (v *readViews) freshLocked(kept *view) bool {
	if v.global > kept.at {
		return false
	}
	for _, t := range kept.tags {
		if v.tags[t].stamp > kept.at {
			return false
		}
	}
	return v.markets.Now().Before(kept.expires)
}

// exactRoutes are the views a client cannot apply an entry to twice
// without noticing: the latest trades carry no trade ids, and a candle
// adds up its trades. Their answers are labelled only when the label is
// exact.
var exactRoutes = map[string]bool{"/api/v1/market/trades/latest": true, "/api/v1/markets/:market_id/candles": true}

// renderTries is how many times a render runs while the change log moves
// under it, touching what it shows, before it settles for a conservative
// label (or none).
const renderTries = 3

// render runs the handler and, for a 200, makes the answer a view,
// labelled with the seq it reflects.
//
// The label is bracketed: the log's last seq before the handler reads
// (l1) and after (l2). Every entry up to l1 was committed before the
// reads began, so the answer reflects at least l1; it may reflect some of
// the entries after l1 up to l2, never one after l2. When l1 == l2, or
// when the follower has applied the log up to l2 and no entry after l1
// touched what the view shows, the answer is exactly the state at l2.
// Otherwise the handler runs again, up to renderTries times. Should the
// log still move under it, the answer is labelled l1: a client that
// streams from l1 gets again some entries the answer already shows, which
// it recognizes (a trade, a comment and an added answer by their ids) or
// which set what they tell of (a price, a resolution), so the state it
// ends with is still exact. The exactRoutes' answers are then not
// labelled at all, nor kept: their next read tries again.
func (v *readViews) render(c *fiber.Ctx, route string, next fiber.Handler, tags []viewTag) *rendered {
	for try := 1; ; try++ {
		v.mu.RLock()
		at := v.clock
		v.mu.RUnlock()
		l1, known := v.last(c.UserContext())
		if err := next(c); err != nil {
			return &rendered{err: err}
		}
		resp := c.Response()
		r := &rendered{status: resp.StatusCode(), ctype: string(resp.Header.ContentType()), body: bytes.Clone(resp.Body())}
		if r.status != http.StatusOK {
			return r
		}
		seq := int64(-1)
		if known {
			l2, ok := v.last(c.UserContext())
			switch {
			case ok && (l2 == l1 || v.untouched(tags, l1, l2)):
				seq = l2
			case try < renderTries:
				resp.ResetBody()
				continue
			case !exactRoutes[route]:
				seq = l1
			}
		}
		sum := sha256.Sum256(r.body)
		r.v = &view{body: r.body, ctype: r.ctype, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, seq: seq, at: at, tags: tags}
		if v.ttl > 0 {
			r.v.expires = v.markets.Now().Add(v.ttl)
		}
		return r
	}
}

// last is the change log's last seq; ok is false without a change log
// or when it cannot be read.
func (v *readViews) last(ctx context.Context) (int64, bool) {
	if v.log == nil {
		return 0, false
	}
	b, err := v.log.ChangeBounds(ctx)
	if err != nil {
		return 0, false
	}
	return b.Last, true
}

// followerWait is how many milliseconds a render waits for the follower
// to reach the log's end.
const followerWait = 2 * followGap / time.Millisecond

// untouched reports whether the follower knows that no entry after l1 up
// to l2 touched tags.
func (v *readViews) untouched(tags []viewTag, l1, l2 int64) bool {
	if !v.following.Load() {
		return false
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	// The follower is a few milliseconds behind the log at most: wait
	// for it rather than render again.
	for range followerWait {
		if v.pos >= l2 {
			break
		}
		v.mu.RUnlock()
		time.Sleep(time.Millisecond)
		v.mu.RLock()
	}
	if v.pos < l2 || l1 < v.since {
		return false
	}
	for _, t := range tags {
		if v.tags[t].seq > l1 {
			return false
		}
	}
	return true
}

// keep stores a rendered view, unless something it shows was touched
// while it rendered (it would be stale at once).
func (v *readViews) keep(key string, kept *view) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.following.Load() || kept.seq < 0 || !v.freshLocked(kept) {
		return
	}
	if _, ok := v.views[key]; !ok && len(v.views) >= maxViews {
		for k, old := range v.views {
			if !v.freshLocked(old) {
				delete(v.views, k)
			}
		}
		for k := range v.views {
			if len(v.views) < maxViews {
				break
			}
			delete(v.views, k)
		}
	}
	v.views[key] = kept
}

// answer writes r: an error goes to the route's error table, a status
// other than 200 as the handler wrote it, a view with its headers (304
// when the client holds it already).
func (v *readViews) answer(c *fiber.Ctx, route string, r *rendered) error {
	if r.err != nil {
		return r.err
	}
	if r.v == nil {
		c.Status(r.status)
		c.Response().Header.SetContentType(r.ctype)
		c.Response().SetBodyRaw(r.body)
		return nil
	}
	h := &c.Response().Header
	h.Set(fiber.HeaderETag, r.v.etag)
	if len(h.Peek(fiber.HeaderCacheControl)) == 0 { // a request with credentials is no-store (headerPolicy)
		h.Set(fiber.HeaderCacheControl, viewCacheControl)
	}
	if r.v.seq >= 0 {
		h.Set(HeaderLastEventID, strconv.FormatInt(r.v.seq, 10))
	}
	if etagMatch(c.Get(fiber.HeaderIfNoneMatch), r.v.etag) {
		v.metrics.readViews.WithLabelValues(route, "not_modified").Inc()
		c.Status(http.StatusNotModified)
		c.Response().ResetBody()
		return nil
	}
	c.Status(http.StatusOK)
	h.SetContentType(r.v.ctype)
	c.Response().SetBodyRaw(r.v.body)
	return nil
}

// viewKey is the request's path and query, normalized as the handlers
// read it: the first value of each parameter, empty ones left out
// (c.Query reads both as absent), sorted by name.
func viewKey(c *fiber.Ctx) string {
	args := c.Request().URI().QueryArgs()
	if args.Len() == 0 {
		return c.Path()
	}
	type pair struct{ k, v string }
	var ps []pair
	args.VisitAll(func(k, val []byte) {
		if len(val) == 0 || slices.ContainsFunc(ps, func(p pair) bool { return p.k == string(k) }) {
			return
		}
		ps = append(ps, pair{string(k), string(val)})
	})
	slices.SortFunc(ps, func(a, b pair) int { return strings.Compare(a.k, b.k) })
	var b strings.Builder
	b.WriteString(c.Path())
	for i, p := range ps {
		b.WriteByte("?&"[min(i, 1)])
		b.WriteString(url.QueryEscape(p.k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p.v))
	}
	return b.String()
}

// touchAll marks every view stale: a write through this server.
func (v *readViews) touchAll() {
	v.mu.Lock()
	v.clock++
	v.global = v.clock
	v.mu.Unlock()
}

// apply marks stale what es touch: the follower's delivery.
func (v *readViews) apply(es []changelog.Entry) error {
	if len(es) == 0 {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clock++
	for i := range es {
		seq := es[i].Seq
		entryTags(&es[i], func(t viewTag) { v.tags[t] = tagState{stamp: v.clock, seq: seq} })
	}
	v.pos = es[len(es)-1].Seq
	v.mu.Unlock()
	// A hot market commits hundreds of times a second, and on PostgreSQL
	// each wake-up is a read of the log: gather a gap's worth instead.
	time.Sleep(followGap)
	v.mu.Lock()
	return nil
}

// followGap is the least time between two reads of the change log by the
// follower: how much later than the log a view may learn of another
// server's change, at most, besides the read itself.
const followGap = 25 * time.Millisecond

// restart forgets every view and follows the log again from last.
func (v *readViews) restart(last int64) {
	v.mu.Lock()
	v.clock++
	v.global = v.clock
	v.pos, v.since = last, last
	clear(v.views)
	clear(v.tags)
	v.mu.Unlock()
	v.following.Store(true)
}
