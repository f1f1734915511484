package server

// Rate limits shared by the fleet. With Config.RedisURL every budget of
// ratelimit.go, and the failed passwords per account of loginlimit.go,
// lives in Redis (GCRA, github.com/go-redis/redis_rate), so that N
// instances behind a load balancer grant one budget, not N. Each Redis
// call has redisTimeout; a call that fails makes every limit fall back
// to this instance's own buckets (which start full) for redisBackoff,
// after which one request tries Redis again, and so on until it answers:
// a Redis that is down or slow costs one short wait per backoff, not one
// per request, and never refuses a request by itself.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.uber.org/fx"
)

// RateLimitModule provides the shared budgets' Redis (RedisLimits, nil
// without Config.RedisURL).
var RateLimitModule = fx.Module("ratelimit",
	fx.Provide(newRedisLimits, provideLoginFailures),
)

const (
	// redisTimeout bounds one call to Redis: a slow Redis delays a
	// limited request by at most this much before it falls back.
	redisTimeout = 50 * time.Millisecond
	// redisBackoff is how long the limits stay per instance after a
	// failed call before one request tries Redis again.
	redisBackoff = time.Second
	// redisKeyPrefix namespaces the keys: predictkit:rl:<limit>:<key>
	// (redis_rate adds its own "rate:" in front).
	redisKeyPrefix = "predictkit:rl:"
)

// RedisLimits is the Redis that shares the rate limits' budgets, and
// whether it answers: while it does not, every limit counts in this
// instance's buckets, which a warning in the log (once per outage), the
// gauge predictkit_ratelimit_shared and /readyz say. Its methods work on
// a nil *RedisLimits (no Redis configured: always per instance).
type RedisLimits struct {
	client  *redis.Client
	gcra    *redis_rate.Limiter
	addr    string
	log     *slog.Logger
	now     func() time.Time
	timeout time.Duration
	backoff time.Duration
	prefix  string // of every key: redisKeyPrefix (tests: one of their own)

	shared    prometheus.Gauge
	fallbacks prometheus.Counter

	down atomic.Bool // the fast path's view of mu's state

	mu      sync.Mutex
	retryAt time.Time // while down: when a request may try Redis again
	since   time.Time // when the current state began
	lastErr string
}

// newRedisLimits connects to cfg.RedisURL (lazily: the first call
// dials), or returns nil when it is empty.
func newRedisLimits(cfg Config, metrics *Metrics, log *slog.Logger, lc fx.Lifecycle) (*RedisLimits, error) {
	if cfg.RedisURL == "" {
		return nil, nil
	}
	opt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, errors.New("PREDICTKIT_REDIS_URL: not a Redis URL") // Validate said why
	}
	r := newRedisLimitsFrom(opt, log, cfg.Now)
	if metrics != nil {
		metrics.reg.MustRegister(r.shared, r.fallbacks)
	}
	lc.Append(fx.Hook{
		// Start reports a Redis that does not answer at once, in the
		// log and on /readyz, but starts anyway: the limits work per
		// instance meanwhile.
		OnStart: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			if err := r.client.Ping(ctx).Err(); err != nil {
				r.failed(err)
			} else {
				r.log.Info("rate limits: budgets are shared through Redis", slog.String("redis", r.addr))
			}
			return nil
		},
		OnStop: func(context.Context) error { return r.client.Close() },
	})
	return r, nil
}

// quietRedis silences go-redis's own logger, which prints plain lines
// to stderr for every failed dial: RedisLimits logs an outage once.
var quietRedis sync.Once

type nopRedisLog struct{}

func (nopRedisLog) Printf(context.Context, string, ...any) {}

// newRedisLimitsFrom returns the RedisLimits of opt, with its own
// (unregistered) metrics.
func newRedisLimitsFrom(opt *redis.Options, log *slog.Logger, now func() time.Time) *RedisLimits {
	quietRedis.Do(func() { redis.SetLogger(nopRedisLog{}) })
	if now == nil {
		now = time.Now
	}
	// Calls are bounded by their context (redisTimeout), not by
	// go-redis's default 3 s read and 5 s dial timeouts.
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = time.Second, time.Second, time.Second
	client := redis.NewClient(opt)
	r := &RedisLimits{client: client, gcra: redis_rate.NewLimiter(client), addr: opt.Addr, log: log,
		now: now, timeout: redisTimeout, backoff: redisBackoff, prefix: redisKeyPrefix, since: now(),
		shared: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "predictkit_ratelimit_shared",
			Help: "1 while the rate limits' budgets are shared through Redis (PREDICTKIT_REDIS_URL); 0 while Redis does not answer and each instance counts its own.",
		}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "predictkit_ratelimit_fallbacks_total",
			Help: "Rate limit checks this instance decided with its own buckets because Redis did not answer.",
		}),
	}
	r.shared.Set(1)
	return r
}

// use reports whether a check should ask Redis: always while it
// answers, and while it does not, once per backoff (the caller then
// probes it; the others go on per instance).
func (r *RedisLimits) use() bool {
	if r == nil {
		return false
	}
	if !r.down.Load() {
		return true
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down.Load() {
		return true
	}
	if now.Before(r.retryAt) {
		return false
	}
	r.retryAt = now.Add(r.backoff)
	return true
}

// failed records a call that failed: the limits are per instance until
// the backoff has passed. The first failure of an outage is logged.
func (r *RedisLimits) failed(err error) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retryAt, r.lastErr = now.Add(r.backoff), err.Error()
	if r.down.Load() {
		return
	}
	r.down.Store(true)
	r.since = now
	r.shared.Set(0)
	r.log.Warn("rate limits: Redis does not answer; each instance counts its own budgets until it does",
		slog.String("redis", r.addr), slog.String("error", err.Error()))
}

// answered records a call that succeeded: the budgets are shared again.
func (r *RedisLimits) answered() {
	if !r.down.Load() {
		return
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down.Load() {
		return
	}
	r.down.Store(false)
	r.log.Info("rate limits: Redis answers again; budgets are shared", slog.String("redis", r.addr),
		slog.Duration("outage", now.Sub(r.since)))
	r.since, r.lastErr = now, ""
	r.shared.Set(1)
}

// fellBack counts a check decided per instance.
func (r *RedisLimits) fellBack() {
	if r != nil {
		r.fallbacks.Inc()
	}
}

// RedisStatus is the shared budgets' state, for /readyz.
type RedisStatus struct {
	// Status is "ok" while the budgets are shared, "degraded" while
	// Redis does not answer and each instance counts its own.
	Status string    `json:"status"`
	Since  time.Time `json:"since"`
	Error  string    `json:"error,omitempty"`
}

// Status returns the state, first probing Redis when it is down and
// due for a try, so that a probe sees it come back without traffic.
func (r *RedisLimits) Status(ctx context.Context) RedisStatus {
	if r == nil {
		return RedisStatus{}
	}
	if r.down.Load() && r.use() {
		ctx, cancel := context.WithTimeout(ctx, r.timeout)
		err := r.client.Ping(ctx).Err()
		cancel()
		if err != nil {
			r.failed(err)
		} else {
			r.answered()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := RedisStatus{Status: "ok", Since: r.since.UTC(), Error: r.lastErr}
	if r.down.Load() {
		s.Status = "degraded"
	}
	return s
}

// redisLimiter is one limit's budgets in Redis: GCRA of rate N per Per
// with bursts of N, as the in-process limiter, keyed
// predictkit:rl:<name>:<key>.
type redisLimiter struct {
	r      *RedisLimits
	limit  redis_rate.Limit
	prefix string
}

func (r *RedisLimits) budget(name string, rate Rate) *redisLimiter {
	return &redisLimiter{r: r, prefix: r.prefix + name + ":",
		limit: redis_rate.Limit{Rate: rate.N, Burst: rate.N, Period: rate.Per}}
}

// Allow spends one request of key's budget.
func (l *redisLimiter) Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, l.r.timeout)
	defer cancel()
	res, err := l.r.gcra.Allow(ctx, l.prefix+key, l.limit)
	if err != nil {
		return false, 0, err
	}
	if res.Allowed == 0 {
		return false, res.RetryAfter, nil
	}
	return true, 0, nil
}

// Refund gives back a request Allow spent. GCRA keeps only the time the
// bucket is full again, which Redis drops once it is past; a refund that
// would make the bucket full deletes the key instead (a request another
// instance spent in between is then forgotten too: at most one).
func (l *redisLimiter) Refund(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, l.r.timeout)
	defer cancel()
	res, err := l.r.gcra.AllowN(ctx, l.prefix+key, l.limit, -1)
	if err == nil && res.ResetAfter <= 0 {
		err = l.r.gcra.Reset(ctx, l.prefix+key)
	}
	return err
}

// Reset forgets key's spending: its bucket is full.
func (l *redisLimiter) Reset(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, l.r.timeout)
	defer cancel()
	return l.r.gcra.Reset(ctx, l.prefix+key)
}

// fleetLimiter is a limit shared through Redis while it answers, and
// this instance's own buckets while it does not.
type fleetLimiter struct {
	shared *redisLimiter
	local  *limiter
}

func (f *fleetLimiter) Allow(ctx context.Context, key string) (bool, time.Duration, error) {
	r := f.shared.r
	if r.use() {
		ok, wait, err := f.shared.Allow(ctx, key)
		if err == nil {
			r.answered()
			return ok, wait, nil
		}
		r.failed(err)
	}
	r.fellBack()
	return f.local.Allow(ctx, key)
}

// Refund gives the request back where the limits count now: at a change
// of state that is not where it was spent, and the refund is lost (a
// bucket that was not spent cannot be refunded).
func (f *fleetLimiter) Refund(ctx context.Context, key string) error {
	if f.shared.r.down.Load() {
		return f.local.Refund(ctx, key)
	}
	return f.shared.Refund(ctx, key)
}
