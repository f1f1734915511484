package server

// Rate limits: a token bucket per key (the client's address group for
// login, registration, password changes and resets, reset requests and
// the support chat, the e-mail asked about for reset requests, the chat
// session for chat messages and calls for an operator, the user for
// trading, comments and reactions, the partner for the partner API), and
// a count of failed passwords per account for logins and password
// changes (loginlimit.go). A refused request is 429
// {"error":"rate_limited"} with Retry-After. The buckets live in this
// process, or, with Config.RedisURL, in Redis, shared by every instance
// (ratelimit_redis.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
)

// errRateLimited: the caller spent its budget; the answer is 429.
var errRateLimited = errors.New("server: rate limited")

// Locals keys of the caller that a rate limit looked up, so that the
// handler's Auth.User or PartnerAuth.Partner does not look it up again.
const (
	localUser    = "predictkit.user"
	localAPIKey  = "predictkit.api_key"
	localPartner = "predictkit.partner"
)

// Rate is a request budget: N requests per Per, with bursts of up to N.
// It is a token bucket that holds N tokens and gets one back every Per/N.
// The zero Rate is unlimited.
type Rate struct {
	N   int
	Per time.Duration
}

// Unlimited reports whether r limits nothing.
func (r Rate) Unlimited() bool { return r.N <= 0 || r.Per <= 0 }

// String writes r as ParseRate reads it: "10/m", "200/s", "off".
func (r Rate) String() string {
	if r.Unlimited() {
		return "off"
	}
	unit := r.Per.String()
	switch r.Per {
	case time.Second:
		unit = "s"
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	}
	return strconv.Itoa(r.N) + "/" + unit
}

// maxRateN bounds N so that Per/N stays a positive duration.
const maxRateN = 1_000_000_000

// ParseRate reads a rate: "N/s", "N/m", "N/h", or N per any Go duration
// ("30/10s"); "0", "off" and "unlimited" are the unlimited Rate.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "0", "off", "unlimited", "none":
		return Rate{}, nil
	}
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: must be N/s, N/m, N/h, N/<duration> or off", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || n < 1 || n > maxRateN {
		return Rate{}, fmt.Errorf("rate %q: N must be an integer from 1 to %d", s, maxRateN)
	}
	var per time.Duration
	switch unit = strings.TrimSpace(unit); unit {
	case "s", "sec", "second":
		per = time.Second
	case "m", "min", "minute":
		per = time.Minute
	case "h", "hour":
		per = time.Hour
	default:
		per, err = time.ParseDuration(unit)
		if err != nil || per <= 0 {
			return Rate{}, fmt.Errorf("rate %q: the period must be s, m, h or a positive duration such as 10s", s)
		}
	}
	if per/time.Duration(n) <= 0 {
		return Rate{}, fmt.Errorf("rate %q: more than one request per nanosecond", s)
	}
	return Rate{N: n, Per: per}, nil
}

// Limiter is one limit's budgets, a bucket per key: the in-process
// limiter, or one shared through Redis (fleetLimiter).
type Limiter interface {
	// Allow spends one request of key's budget; when it has none left,
	// ok is false and retryAfter is how long until it has. err is a
	// limiter that could not tell (the request is then refused).
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
	// Refund gives back the request key's last Allow spent, for a
	// request that another limit then refused.
	Refund(ctx context.Context, key string) error
}

// maxBuckets bounds a limiter's memory: past it, buckets that are full
// again are dropped first, then arbitrary ones (a flood of distinct keys
// can so reset some budgets early, but never grows the map).
const maxBuckets = 100_000

// limiter is one token bucket per key, kept as GCRA: a key's state is
// the time at which its bucket would be full again (tat); a bucket that
// is full is the same as no bucket, so it is dropped.
type limiter struct {
	rate     Rate
	interval time.Duration // Per/N: one token comes back every interval
	burst    time.Duration // interval*(N-1): how far tat may run ahead
	now      func() time.Time
	max      int

	mu        sync.Mutex
	tats      map[string]time.Time
	nextSweep time.Time
}

// newLimiter returns a limiter of rate r, or nil when r is unlimited.
func newLimiter(r Rate, now func() time.Time) *limiter {
	if r.Unlimited() {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	iv := r.Per / time.Duration(r.N)
	return &limiter{rate: r, interval: iv, burst: iv * time.Duration(r.N-1), now: now, max: maxBuckets, tats: map[string]time.Time{}}
}

// take spends one token of key's bucket. When it is empty, ok is false
// and wait is how long until a token is back.
func (l *limiter) take(key string) (ok bool, wait time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	tat, seen := l.tats[key]
	if !seen || tat.Before(now) {
		tat = now
	}
	if ahead := tat.Sub(now); ahead > l.burst {
		return false, ahead - l.burst
	}
	if !seen && len(l.tats) >= l.max {
		l.evict()
	}
	l.tats[key] = tat.Add(l.interval)
	return true, 0
}

// Allow is take, as a Limiter.
func (l *limiter) Allow(_ context.Context, key string) (bool, time.Duration, error) {
	ok, wait := l.take(key)
	return ok, wait, nil
}

// Refund is refund, as a Limiter.
func (l *limiter) Refund(_ context.Context, key string) error {
	l.refund(key)
	return nil
}

// refund gives back the token key's last take spent, for a request that
// another limit then refused: the bucket is as if that take had not
// happened (as if it were taken later, should others have taken since).
func (l *limiter) refund(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if tat, ok := l.tats[key]; ok {
		l.tats[key] = tat.Add(-l.interval)
	}
}

// sweep drops the buckets that are full again, at most once per period
// (and at least once a minute), or at once when the map is full.
func (l *limiter) sweep(now time.Time) {
	if now.Before(l.nextSweep) && len(l.tats) < l.max {
		return
	}
	for k, tat := range l.tats {
		if !tat.After(now) {
			delete(l.tats, k)
		}
	}
	l.nextSweep = now.Add(min(l.rate.Per, time.Minute))
}

// evict makes room when every bucket is in use: it drops arbitrary ones
// until an eighth of the room is free.
func (l *limiter) evict() {
	for k := range l.tats {
		if len(l.tats) < l.max-l.max/8 {
			return
		}
		delete(l.tats, k)
	}
}

// size is the number of buckets held (tests).
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tats)
}

// rateClass says how a route is limited.
type rateClass int

const (
	rateLogin         rateClass = iota + 1 // per client address, each route its own budget (PREDICTKIT_RATE_LOGIN)
	rateTrade                              // per user (PREDICTKIT_RATE_TRADE)
	ratePartner                            // per partner (PREDICTKIT_RATE_PARTNER)
	rateChatSession                        // per client address (PREDICTKIT_RATE_CHAT_SESSION)
	rateChatMessage                        // per client address, then per session (PREDICTKIT_RATE_CHAT_MESSAGE, _SESSION)
	rateChatOperator                       // per client address, then per session (PREDICTKIT_RATE_CHAT_OPERATOR, _SESSION)
	rateComment                            // per user (PREDICTKIT_RATE_COMMENT)
	rateReaction                           // per user (PREDICTKIT_RATE_REACTION)
	ratePasswordReset                      // per client address, then per e-mail asked about (PREDICTKIT_RATE_PASSWORD_RESET, _EMAIL)
	rateMCPTrade                           // a buy or sell through the MCP endpoint: per user, the trade budget (mcpTradeCall)
)

// limitedRoutes are the routes with a rate limit, by "METHOD path". A
// test checks that each of them is served, so that renaming a route
// cannot silently drop its limit.
var limitedRoutes = map[string]rateClass{
	"POST /api/v1/auth/login":                     rateLogin,
	"POST /api/v1/auth/session":                   rateLogin,
	"POST /api/v1/auth/register":                  rateLogin,
	"POST /api/v1/auth/password":                  rateLogin,
	"POST /api/v1/auth/password/reset":            rateLogin,
	"POST /api/v1/auth/password/reset-request":    ratePasswordReset,
	"POST /api/v1/markets/:market_id/buy":         rateTrade,
	"POST /api/v1/markets/:market_id/sell":        rateTrade,
	"POST /api/v1/users/me/withdrawals":           rateTrade, // the trade budget: a request is a money movement
	"POST /api/v1/partner/bet":                    ratePartner,
	"POST /api/v1/partner/sell":                   ratePartner,
	"GET /api/v1/partner/users/:external_user_id": ratePartner,
	"POST /api/v1/chat/session":                   rateChatSession,
	"POST /api/v1/chat/messages":                  rateChatMessage,
	"POST /api/v1/chat/session/call-operator":     rateChatOperator,
	"POST /api/v1/events/:event_id/comments":      rateComment,
	"PUT /api/v1/comments/:id/reaction":           rateReaction,
	"POST " + MCPPath:                             rateMCPTrade,
}

// rateLimits applies the limits of Config to the limited routes.
type rateLimits struct {
	login, trade, partner                         Limiter
	chatSession, chatMessage, chatOperator        Limiter
	chatMessagePerSession, chatOperatorPerSession Limiter
	comment, reaction                             Limiter
	passwordReset, passwordResetEmail             Limiter
	// logins counts failed passwords per account (nil: no such limit).
	logins   *loginFailures
	users    *Auth
	partners *PartnerAuth
	// client is the client's address group (clientGroup), the key of
	// every limit by address.
	client func(*fiber.Ctx) string
}

// newRateLimits returns the limits of cfg, and logins' per account; ip
// is the client's address (proxies.clientIP), which every limit by
// address groups with clientGroup. With shared (Config.RedisURL) the
// budgets are shared through Redis, each limit under its name.
func newRateLimits(cfg Config, logins *loginFailures, users *Auth, partners *PartnerAuth, ip func(*fiber.Ctx) string, shared *RedisLimits) *rateLimits {
	mk := func(name string, r Rate) Limiter {
		l := newLimiter(r, cfg.Now)
		if l == nil {
			return nil
		}
		if shared == nil {
			return l
		}
		return &fleetLimiter{shared: shared.budget(name, r), local: l}
	}
	return &rateLimits{
		logins:                 logins,
		login:                  mk("login", cfg.RateLogin),
		trade:                  mk("trade", cfg.RateTrade),
		partner:                mk("partner", cfg.RatePartner),
		chatSession:            mk("chat-session", cfg.RateChatSession),
		chatMessage:            mk("chat-message", cfg.RateChatMessage),
		chatMessagePerSession:  mk("chat-message-session", cfg.RateChatMessageSession),
		chatOperator:           mk("chat-operator", cfg.RateChatOperator),
		chatOperatorPerSession: mk("chat-operator-session", cfg.RateChatOperatorSession),
		comment:                mk("comment", cfg.RateComment),
		reaction:               mk("reaction", cfg.RateReaction),
		passwordReset:          mk("password-reset", cfg.RatePasswordReset),
		passwordResetEmail:     mk("password-reset-email", cfg.RatePasswordResetEmail),
		users:                  users, partners: partners,
		client: func(c *fiber.Ctx) string { return clientGroup(ip(c)) },
	}
}

// rateCheck is one budget a request spends: a limiter and the request's
// key in it (ok false: the request is not counted there).
type rateCheck struct {
	l   Limiter
	key func(*fiber.Ctx) (string, bool)
}

// byClient keys a limit by the client's address group.
func (rl *rateLimits) byClient(c *fiber.Ctx) (string, bool) { return rl.client(c), true }

// byUser keys a limit by the authenticated user; a request without a
// valid token is not counted (its handler answers 401).
func (rl *rateLimits) byUser(c *fiber.Ctx) (string, bool) {
	if rl.users == nil {
		return "", false
	}
	u, err := rl.users.User(c)
	if err != nil {
		return "", false
	}
	return strconv.FormatInt(u.ID, 10), true
}

// byChatSession keys a limit by the chat session the cookie names: the
// SHA-256 of its secret (the secret itself is not kept in memory). A
// request without the cookie is not counted (it names no session); a
// made-up cookie spends a budget of its own, which the address's limit
// bounds.
func (rl *rateLimits) byChatSession(c *fiber.Ctx) (string, bool) {
	secret := c.Cookies(ChatCookie)
	if secret == "" {
		return "", false
	}
	return string(account.HashToken(secret)), true
}

// byBodyEmail keys a limit by the e-mail of the request's body (a reset
// request's, a login's), as the account service compares e-mails
// (trimmed, lower case), so that "Ann@Example.com" and "ann@example.com"
// share one budget. A body that names no e-mail is not counted (its
// handler answers 400, or, for a session opened with a token, checks no
// password).
func byBodyEmail(c *fiber.Ctx) (string, bool) {
	var b struct {
		Email string `json:"email"`
	}
	if json.Unmarshal(c.Body(), &b) != nil {
		return "", false
	}
	return loginKey(b.Email)
}

// byUserEmail keys a limit by the authenticated user's e-mail: the
// account a password change proves the password of, which shares its
// count of failures with the logins at it. A request without a valid
// token is not counted (its handler answers 401).
func (rl *rateLimits) byUserEmail(c *fiber.Ctx) (string, bool) {
	if rl.users == nil {
		return "", false
	}
	u, err := rl.users.User(c)
	if err != nil {
		return "", false
	}
	return loginKey(u.Email)
}

// byMCPTrade keys the trade budget of a message to the MCP endpoint: a
// call of its buy or sell tool spends the budget of the key's user, as
// the HTTP routes do, when the key may trade (a key without the trade
// scope is refused by the tool and spends nothing); every other message
// is not counted.
func (rl *rateLimits) byMCPTrade(c *fiber.Ctx) (string, bool) {
	if rl.users == nil || !mcpTradeCall(c.Body()) || !account.IsAPIKey(bearer(c)) {
		return "", false
	}
	cr, err := rl.users.Credential(c)
	if err != nil || cr.Key == nil || !cr.Key.Allows(account.ScopeTrade) {
		return "", false
	}
	return strconv.FormatInt(cr.User.ID, 10), true
}

// passwordChecks are the routes that check a password, with the account
// each counts a failure against.
var passwordChecks = map[string]func(*rateLimits, *fiber.Ctx) (string, bool){
	"POST /api/v1/auth/login":    func(_ *rateLimits, c *fiber.Ctx) (string, bool) { return byBodyEmail(c) },
	"POST /api/v1/auth/session":  func(_ *rateLimits, c *fiber.Ctx) (string, bool) { return byBodyEmail(c) },
	"POST /api/v1/auth/password": (*rateLimits).byUserEmail,
}

// guard wraps the handler of route ("METHOD path") with its limits, or
// returns it unchanged. Login and registration are counted per client
// address before anything else (each route has its own budget), and so
// are the chat routes (a chat caller need not sign in), then chat
// messages and calls for an operator per session; trades, comments and
// reactions per user and partner calls per partner once the caller is
// known, so an unauthenticated request is answered 401 (or 403), never
// 429. The caller's identity is kept for the handler (see Auth.User), so
// it is looked up once. A request passes only when every budget it
// counts in has room; otherwise the first that has none answers it, and
// it spends none of them. A route that checks a password then meets the
// per-account limit (loginFailures.guardAccount).
func (rl *rateLimits) guard(route string, h fiber.Handler) fiber.Handler {
	if key, ok := passwordChecks[route]; ok {
		h = rl.logins.guardAccount(func(c *fiber.Ctx) (string, bool) { return key(rl, c) }, h)
	}
	var checks []rateCheck
	add := func(l Limiter, key func(*fiber.Ctx) (string, bool)) {
		if l != nil {
			checks = append(checks, rateCheck{l, key})
		}
	}
	switch limitedRoutes[route] {
	case rateLogin:
		add(rl.login, func(c *fiber.Ctx) (string, bool) { return route + " " + rl.client(c), true })
	case rateTrade:
		add(rl.trade, rl.byUser)
	case ratePartner:
		if rl.partners != nil {
			add(rl.partner, func(c *fiber.Ctx) (string, bool) {
				p, err := rl.partners.Partner(c)
				if err != nil {
					return "", false
				}
				return strconv.FormatInt(p.ID, 10), true
			})
		}
	case rateChatSession:
		add(rl.chatSession, rl.byClient)
	case rateChatMessage:
		add(rl.chatMessage, rl.byClient)
		add(rl.chatMessagePerSession, rl.byChatSession)
	case rateChatOperator:
		add(rl.chatOperator, rl.byClient)
		add(rl.chatOperatorPerSession, rl.byChatSession)
	case rateComment:
		add(rl.comment, rl.byUser)
	case rateReaction:
		add(rl.reaction, rl.byUser)
	case ratePasswordReset:
		add(rl.passwordReset, rl.byClient)
		add(rl.passwordResetEmail, byBodyEmail)
	case rateMCPTrade:
		add(rl.trade, rl.byMCPTrade)
	}
	if len(checks) == 0 {
		return h
	}
	return func(c *fiber.Ctx) error {
		var buf [4]string
		taken := buf[:0] // the key spent in each check so far ("": not counted)
		for _, rc := range checks {
			k, ok := rc.key(c)
			if !ok {
				taken = append(taken, "")
				continue
			}
			// A limiter that cannot tell (none does today: the shared
			// one falls back to this instance's buckets) refuses.
			if ok, wait, err := rc.l.Allow(c.UserContext(), k); !ok || err != nil {
				for i, k := range taken {
					if k != "" {
						_ = checks[i].l.Refund(c.UserContext(), k)
					}
				}
				if err != nil {
					return err
				}
				c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(retryAfterSeconds(wait), 10))
				return errRateLimited
			}
			taken = append(taken, k)
		}
		return h(c)
	}
}

// retryAfterSeconds is wait in whole seconds, rounded up, at least 1.
func retryAfterSeconds(wait time.Duration) int64 {
	return max(1, int64(math.Ceil(wait.Seconds())))
}
