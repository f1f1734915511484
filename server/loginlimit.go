package server

// The limit of failed logins per account. The limits by client address
// (ratelimit.go) bound what one address can try, but not what many can
// try against one account: an attacker with many addresses (an IPv6
// range, a botnet) could guess one password at the rate of all of them.
// So failures are also counted per account, keyed by the e-mail a login
// names, as Login compares e-mails (trimmed, lower case), whether or not
// an account has it: the answer is the same either way and tells nothing
// of which e-mails are registered.
//
// Config.LoginFailuresPerAccount failures within loginFailureWindow make
// every further attempt at that account 429 rate_limited, from any
// address and even with the right password (else the limit would stop
// nothing), with Retry-After saying when the oldest failure leaves the
// window. A success, or a password reset, clears the account's count.
//
// The count lives in this process's memory, as do the limits by address:
// behind a load balancer each server counts on its own, so N servers let
// N times the failures through. It is bounded (maxLoginAccounts keys, at
// most LoginFailuresPerAccount times each), so that a flood of made-up
// e-mails cannot grow it without end.
//
// With Config.RedisURL the count is shared through Redis instead, as the
// other limits are (ratelimit_redis.go), in the shape redis_rate keeps:
// a GCRA bucket of LoginFailuresPerAccount failures that gets one back
// every loginFailureWindow/LoginFailuresPerAccount (a success still
// clears it, and an attempt that is neither is refunded). It lets the
// same number through in the long run (10 per 15 minutes by default) and
// the same burst, but not as a sliding window: once an account is
// limited, the next attempt may come after 90 s (one failure's share of
// the window), not after the oldest failure's 15 minutes; one more
// failure limits it again. While Redis does not answer, the count is the
// in-process one.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
)

// loginFailureWindow is how long a failed login counts against its
// account.
const loginFailureWindow = 15 * time.Minute

// maxLoginFailuresPerAccount bounds Config.LoginFailuresPerAccount, and so
// the failures remembered per account.
const maxLoginFailuresPerAccount = 100

// maxLoginAccounts bounds the accounts whose failures are remembered.
// Past it the counts that limit nothing yet are dropped first: a flood of
// made-up e-mails, one failure each, cannot push out a count that has
// reached the limit unless every remembered count has.
const maxLoginAccounts = 100_000

// loginFailures counts the failed logins of each account in the last
// loginFailureWindow. Its methods do nothing on a nil *loginFailures (the
// limit is off).
type loginFailures struct {
	n      int
	window time.Duration
	now    func() time.Time
	max    int

	mu sync.Mutex
	// fails holds each account's failures, and attempts under way, within
	// the window: their times in Unix nanoseconds, oldest first, at most
	// n of them.
	fails     map[string][]int64
	nextSweep time.Time

	// shared counts through Redis while it answers (nil: never).
	shared *redisLimiter
}

// provideLoginFailures is newLoginFailures, shared through Redis when
// shared is not nil.
func provideLoginFailures(cfg Config, shared *RedisLimits) *loginFailures {
	l := newLoginFailures(cfg)
	if l != nil && shared != nil {
		l.shared = shared.budget("login-failures", Rate{N: l.n, Per: l.window})
	}
	return l
}

// newLoginFailures returns the per-account limit of cfg, or nil when
// cfg.LoginFailuresPerAccount is 0 (off).
func newLoginFailures(cfg Config) *loginFailures {
	if cfg.LoginFailuresPerAccount <= 0 {
		return nil
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &loginFailures{n: cfg.LoginFailuresPerAccount, window: loginFailureWindow, now: now, max: maxLoginAccounts, fails: map[string][]int64{}}
}

// loginKey is the key of the account an e-mail names: the e-mail as
// Login compares it. ok is false for no e-mail at all, or one longer than
// any account's.
func loginKey(email string) (key string, ok bool) {
	key = strings.ToLower(strings.TrimSpace(email))
	return key, key != "" && len(key) <= account.MaxEmailLen
}

// begin counts an attempt at key's account as a failure until end says
// otherwise, so that concurrent attempts cannot pass the limit together;
// ok is false, with how long until the next attempt may start, when the
// account has failed n times in the window already. at identifies the
// attempt to end.
func (l *loginFailures) begin(key string) (at int64, ok bool, wait time.Duration) {
	if l == nil {
		return 0, true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	fs := l.live(key, now)
	if len(fs) >= l.n {
		return 0, false, time.Unix(0, fs[len(fs)-l.n]).Add(l.window).Sub(now)
	}
	if fs == nil && len(l.fails) >= l.max {
		l.evict()
	}
	at = now.UnixNano()
	l.fails[key] = append(fs, at)
	return at, true, 0
}

// live is key's failures still within the window at now (nil: none),
// with the older ones forgotten. Called under mu.
func (l *loginFailures) live(key string, now time.Time) []int64 {
	fs, seen := l.fails[key]
	if !seen {
		return nil
	}
	cut := now.Add(-l.window).UnixNano()
	i := 0
	for i < len(fs) && fs[i] <= cut {
		i++
	}
	if i == len(fs) {
		delete(l.fails, key)
		return nil
	}
	if i > 0 {
		fs = append(fs[:0], fs[i:]...)
		l.fails[key] = fs
	}
	return fs
}

// end settles the attempt begin counted: a failure stays counted, a
// success clears the account's count, and anything else (a malformed
// request, a store that failed) uncounts the attempt.
func (l *loginFailures) end(key string, at int64, err error) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		delete(l.fails, key)
	case isBadPassword(err):
	default:
		fs := l.fails[key]
		for i := len(fs) - 1; i >= 0; i-- {
			if fs[i] == at {
				fs = append(fs[:i], fs[i+1:]...)
				break
			}
		}
		if len(fs) == 0 {
			delete(l.fails, key)
		} else {
			l.fails[key] = fs
		}
	}
}

// clear forgets key's failures, in Redis too: its password was just
// reset.
func (l *loginFailures) clear(ctx context.Context, key string) {
	if l == nil {
		return
	}
	if l.shared != nil && l.shared.r.use() {
		if err := l.shared.Reset(ctx, key); err != nil {
			l.shared.r.failed(err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, key)
}

// attempt is an attempt begun at an account: where it is counted.
type attempt struct {
	at     int64 // the in-process count's (begin)
	shared bool  // counted in Redis
}

// start is begin, counted in Redis while it answers.
func (l *loginFailures) start(ctx context.Context, key string) (a attempt, ok bool, wait time.Duration) {
	if r := l.shared; r != nil {
		if r.r.use() {
			ok, wait, err := r.Allow(ctx, key)
			if err == nil {
				r.r.answered()
				return attempt{shared: true}, ok, wait
			}
			r.r.failed(err)
		}
		r.r.fellBack()
	}
	at, ok, wait := l.begin(key)
	return attempt{at: at}, ok, wait
}

// finish is end, for an attempt start began: in Redis, a failure keeps
// its token, a success clears the account's bucket, anything else gives
// the token back. A Redis that fails here is only noted: the attempt
// counted, as begun, or the account keeps a failure until it refills.
func (l *loginFailures) finish(ctx context.Context, key string, a attempt, err error) {
	if !a.shared {
		l.end(key, a.at, err)
		return
	}
	var rerr error
	switch {
	case err == nil:
		rerr = l.shared.Reset(ctx, key)
	case isBadPassword(err):
	default:
		rerr = l.shared.Refund(ctx, key)
	}
	if rerr != nil {
		l.shared.r.failed(rerr)
	}
}

// isBadPassword reports whether err is a refused password: what the
// client sees as 401 invalid_credentials.
func isBadPassword(err error) bool {
	return errors.Is(err, account.ErrInvalidCredentials) || errors.Is(err, account.ErrNoPassword)
}

// sweep forgets the accounts whose failures have all left the window, at
// most once a minute, or at once when the map is full. Called under mu.
func (l *loginFailures) sweep(now time.Time) {
	if now.Before(l.nextSweep) && len(l.fails) < l.max {
		return
	}
	cut := now.Add(-l.window).UnixNano()
	for k, fs := range l.fails {
		if fs[len(fs)-1] <= cut {
			delete(l.fails, k)
		}
	}
	l.nextSweep = now.Add(time.Minute)
}

// evict makes room when the map is full of live counts: it drops counts
// below the limit until an eighth of the room is free, and only if that
// is not enough, counts at the limit. Called under mu.
func (l *loginFailures) evict() {
	room := l.max - l.max/8
	for k, fs := range l.fails {
		if len(l.fails) < room {
			return
		}
		if len(fs) < l.n {
			delete(l.fails, k)
		}
	}
	for k := range l.fails {
		if len(l.fails) < room {
			return
		}
		delete(l.fails, k)
	}
}

// size is the number of accounts remembered (tests).
func (l *loginFailures) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.fails)
}

// guardAccount wraps h, a route that checks a password, with the
// per-account limit; key names the account a request tries (ok false:
// not counted, as a request that names none, which its handler refuses).
func (l *loginFailures) guardAccount(key func(*fiber.Ctx) (string, bool), h fiber.Handler) fiber.Handler {
	if l == nil {
		return h
	}
	return func(c *fiber.Ctx) error {
		k, ok := key(c)
		if !ok {
			return h(c)
		}
		a, ok, wait := l.start(c.UserContext(), k)
		if !ok {
			c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(retryAfterSeconds(wait), 10))
			return errRateLimited
		}
		err := h(c)
		// The handler's context may be done (a client gone): the
		// attempt is settled all the same.
		l.finish(context.WithoutCancel(c.UserContext()), k, a, err)
		return err
	}
}
