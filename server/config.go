package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/mailer"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/webhook"
)

// BodyLimit is the largest request body the server reads: 1 MiB. A larger
// one is answered 413 {"error":"request_too_large"}.
const BodyLimit = 1 << 20

// Config is everything the server can be told. Zero durations and an empty
// Addr fall back to DefaultConfig's values when the server is built.
type Config struct {
	// Addr is the listen address.
	Addr string
	// DatabaseURL selects PostgreSQL; empty means the in-memory store.
	DatabaseURL string
	// AdminToken enables the operator endpoints (Bearer token); empty
	// disables them (they answer 404).
	AdminToken string
	// Demo seeds the in-memory store with demo users, an event and trades
	// at start. It has no effect on PostgreSQL.
	Demo bool
	// MigrateOnStart applies the PostgreSQL migrations at start.
	MigrateOnStart bool
	// HTTP server timeouts.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// ShutdownTimeout bounds the graceful shutdown; StartTimeout the
	// start-up (connecting, migrating, seeding, binding).
	ShutdownTimeout time.Duration
	StartTimeout    time.Duration
	// BcryptCost is the password hashing cost.
	BcryptCost int
	// TokenTTL is how long an access token lives.
	TokenTTL time.Duration
	// AuthCache is how long an access token or a partner key, once looked
	// up, is trusted from memory (account.Service.CacheAuth,
	// partner.Service.CacheKeys); 0 asks the store on every request. It
	// applies to PostgreSQL (a store with WatchAuth), where every server
	// hears of logouts, user changes and partner changes at once, and the
	// cache is off whenever it cannot; other stores are asked every time.
	AuthCache time.Duration
	// LogLevel is debug, info, warn or error; LogFormat json or text.
	LogLevel  string
	LogFormat string
	// CookieSecure marks the cookies the server sets as Secure (HTTPS only).
	CookieSecure bool
	// Web serves the web app (package web) at / and its files under
	// /assets/; off, those paths answer 404 like any path outside the API.
	Web bool
	// TradeBatchSize bounds a group commit: how many concurrent trades
	// share a transaction; 1 commits every trade alone. TradeBatchWait is
	// how long a batch that is not full lingers for more (0: none; batches
	// still form while the previous ones commit). TradeBatchInFlight
	// bounds the batches committing at once, each on markets of its own.
	TradeBatchSize     int
	TradeBatchWait     time.Duration
	TradeBatchInFlight int
	// TrustedProxies are the addresses (IPs or CIDR ranges) of reverse
	// proxies whose X-Forwarded-For is believed; empty trusts none.
	TrustedProxies []string
	// RateLogin limits login and registration per client address (each
	// route its own budget; an IPv6 client counts by its /64); RateTrade buys and sells per user; RatePartner the
	// partner API per partner. Over the limit a request is 429
	// {"error":"rate_limited"} with Retry-After. The zero Rate is
	// unlimited (DefaultConfig sets generous limits).
	RateLogin   Rate
	RateTrade   Rate
	RatePartner Rate
	// The support chat's limits, which its callers meet before signing
	// in: RateChatSession counts POST /chat/session per client address;
	// RateChatMessage and RateChatOperator count messages and calls for
	// an operator per client address, RateChatMessageSession and
	// RateChatOperatorSession the same per chat session (its cookie).
	// IPv6 clients are counted by their /64 in every limit by address.
	RateChatSession         Rate
	RateChatMessage         Rate
	RateChatMessageSession  Rate
	RateChatOperator        Rate
	RateChatOperatorSession Rate
	// RateComment limits comments and replies per user; RateReaction
	// reactions per user.
	RateComment  Rate
	RateReaction Rate
	// CORSOrigins are the origins that browsers may call the API from
	// ("https://app.example.com", or "*" for any, without credentials);
	// empty sends no CORS headers, so browsers allow same-origin calls
	// only.
	CORSOrigins []string
	// ChatFAQ is the FAQ file (JSON, see chat.FAQ) the support chat's
	// automatic answers come from; empty uses the FAQ built in.
	ChatFAQ string
	// ChatWebhookURL, when set, receives a POST for every chat escalation
	// (chat.WebhookNotifier); empty logs escalations instead.
	ChatWebhookURL string
	// ChatWebhookTimeout bounds one webhook call.
	ChatWebhookTimeout time.Duration
	// StreamMaxConnections bounds the live stream's open connections in
	// this process; StreamMaxPerAddress those from one client address
	// (IPv6: its /64), StreamMaxPerUser those of one user (the me topic).
	// A stream over a limit is refused with 429 too_many_streams.
	StreamMaxConnections int
	StreamMaxPerAddress  int
	StreamMaxPerUser     int
	// StreamPing is how long a stream may stay silent before it gets a
	// ": ping" comment (at most 15 s, the stream's promise; the server
	// pings more often when WriteTimeout is shorter than twice this). It
	// has no flag: tests shorten it.
	StreamPing time.Duration
	// AuditInterval, when positive, runs the ledger audit in the
	// background this often and exports its outcome as metrics
	// (predictkit_audit_*); 0 audits only when the operator asks.
	AuditInterval time.Duration
	// StreamRetention is how long the change log keeps its entries, and so
	// how far back a live stream can resume: older ones are pruned every
	// minute.
	StreamRetention time.Duration
	// WebhookAllowedHosts lists, comma-separated, the host names, IP
	// addresses and CIDR ranges partner webhooks may reach besides public
	// addresses: loopback, private, link-local and the like are refused
	// unless listed here (see webhook.Guard).
	WebhookAllowedHosts string
	// WebhookTimeout bounds one delivery attempt; WebhookConcurrency is
	// how many deliveries of one partner this server sends at once.
	WebhookTimeout     time.Duration
	WebhookConcurrency int
	// StreamNATSURL, when set, carries the change log over NATS
	// JetStream: every server runs a relay (one publishes at a time, the
	// others wait) and follows the JetStream stream instead of polling
	// the database on each commit.
	StreamNATSURL string
	// StreamNATSName tells apart the JetStream streams of deployments
	// that share one NATS server: the stream is PREDICTKIT_<NAME>_CHANGES
	// on subject predictkit.<name>.changes (PREDICTKIT_CHANGES and
	// predictkit.changes when empty).
	StreamNATSName string

	// SMTPURL, when set, is the SMTP server password reset mails go
	// through (mailer.ParseURL: smtp://user:password@host:587?from=...,
	// STARTTLS when offered; smtps:// for implicit TLS); empty sends no
	// mail, and a reset request is only logged.
	SMTPURL string
	// PublicURL is the base URL of the web application users open
	// ("https://app.example.com"): a reset mail links to
	// <PublicURL>/reset-password?token=<token>. Empty mails the token
	// alone.
	PublicURL string
	// RatePasswordReset limits reset requests per client address (IPv6:
	// its /64); RatePasswordResetEmail per e-mail address asked about,
	// which bounds the mails one inbox can be sent.
	RatePasswordReset      Rate
	RatePasswordResetEmail Rate
	// LoginFailuresPerAccount is how many failed passwords one account
	// (the e-mail a login names, registered or not) may see in 15
	// minutes, from any addresses, logins and password changes together;
	// past it, its logins are 429 until the oldest failure is 15 minutes
	// old, even with the right password. A success clears the count. 0
	// is no such limit.
	LoginFailuresPerAccount int

	// Store, when set, is used instead of the one DatabaseURL selects; the
	// caller owns it (the server does not close it). Tests use it.
	Store Store `json:"-"`
	// Logger, when set, receives the server's logs instead of a handler
	// built from LogLevel and LogFormat.
	Logger *slog.Logger `json:"-"`
	// Now, when set, is the clock of the rate limits instead of
	// time.Now. Tests use it.
	Now func() time.Time `json:"-"`
}

// DefaultAuthCache is the default Config.AuthCache. Any active user sends
// a request more often than this, so nearly every request is answered
// from memory; and it bounds how long a change could go unseen if the
// announcements of changes were lost without the connection failing.
const DefaultAuthCache = 5 * time.Second

// DefaultConfig returns the defaults of every setting.
func DefaultConfig() Config {
	return Config{
		Addr:               ":8080",
		Demo:               true,
		Web:                true,
		MigrateOnStart:     true,
		ReadTimeout:        10 * time.Second,
		WriteTimeout:       30 * time.Second,
		IdleTimeout:        120 * time.Second,
		ShutdownTimeout:    15 * time.Second,
		StartTimeout:       60 * time.Second,
		BcryptCost:         bcrypt.DefaultCost,
		TokenTTL:           30 * 24 * time.Hour,
		AuthCache:          DefaultAuthCache,
		LogLevel:           "info",
		LogFormat:          "json",
		TradeBatchSize:     market.DefaultMaxBatch,
		TradeBatchInFlight: market.DefaultMaxInFlight,
		RateLogin:          DefaultRateLogin,
		RateTrade:          DefaultRateTrade,
		RatePartner:        DefaultRatePartner,

		RateChatSession:         DefaultRateChatSession,
		RateChatMessage:         DefaultRateChatMessage,
		RateChatMessageSession:  DefaultRateChatMessageSession,
		RateChatOperator:        DefaultRateChatOperator,
		RateChatOperatorSession: DefaultRateChatOperatorSession,
		RateComment:             DefaultRateComment,
		RateReaction:            DefaultRateReaction,
		RatePasswordReset:       DefaultRatePasswordReset,
		RatePasswordResetEmail:  DefaultRatePasswordResetEmail,
		LoginFailuresPerAccount: DefaultLoginFailuresPerAccount,

		ChatWebhookTimeout: chat.DefaultWebhookTimeout,
		StreamRetention:    DefaultStreamRetention,
		WebhookTimeout:     webhook.DefaultTimeout,
		WebhookConcurrency: webhook.DefaultPerPartner,

		StreamMaxConnections: DefaultStreamMaxConnections,
		StreamMaxPerAddress:  DefaultStreamMaxPerAddress,
		StreamMaxPerUser:     DefaultStreamMaxPerUser,
		StreamPing:           DefaultStreamPing,
	}
}

// DefaultStreamRetention is the default Config.StreamRetention: a day, so
// that a client that was away overnight still resumes where it stopped.
const DefaultStreamRetention = 24 * time.Hour

// minStreamRetention bounds Config.StreamRetention from below: pruning
// runs every minute, so a shorter retention would not be kept anyway.
const minStreamRetention = time.Minute

// The live stream's default limits. A connection costs a few kilobytes
// of memory and no goroutine of its own while idle: 10,000 fit in some
// 200 MB. Behind one address there may be a household or an office, each
// browser tab one stream; a user has a tab or two per device.
const (
	DefaultStreamMaxConnections = 10_000
	DefaultStreamMaxPerAddress  = 100
	DefaultStreamMaxPerUser     = 20
	DefaultStreamPing           = 15 * time.Second
)

// The default rate limits are on but generous: the tests, the demo and
// `predictkit bench` with 64 clients stay under them. A public server
// should lower RateLogin (e.g. 10/m).
var (
	// DefaultRateLogin: 300 logins and 300 registrations per client IP in
	// a burst, one more every 200 ms.
	DefaultRateLogin = Rate{N: 300, Per: time.Minute}
	// DefaultRateTrade: 6000 buys and sells per user in a burst, then
	// 100 a second.
	DefaultRateTrade = Rate{N: 6000, Per: time.Minute}
	// DefaultRatePartner: 600000 partner calls per partner in a burst,
	// then 10000 a second.
	DefaultRatePartner = Rate{N: 600_000, Per: time.Minute}
)

// The default limits of what anyone may write without paying for it:
// chat sessions, messages and calls for an operator (open to anonymous
// callers), comments and reactions. Each is far above what a person does
// (a message is typed, a comment written, a reaction clicked), so that
// none meets it, yet it cuts a scripted flood to a trickle; the limits by
// address leave room for the several people behind one address (an
// office, a household, a carrier's NAT).
var (
	// DefaultRateChatSession: 60 sessions opened per client address in a
	// burst, then one a second. A browser opens one and keeps its cookie
	// for 30 days; 60 covers a crowd behind one address reloading pages.
	DefaultRateChatSession = Rate{N: 60, Per: time.Minute}
	// DefaultRateChatMessage: 120 chat messages per client address in a
	// burst, then two a second: six sessions at the pace of
	// DefaultRateChatMessageSession.
	DefaultRateChatMessage = Rate{N: 120, Per: time.Minute}
	// DefaultRateChatMessageSession: 20 messages per session in a burst,
	// then one every 3 seconds, about as fast as anyone types.
	DefaultRateChatMessageSession = Rate{N: 20, Per: time.Minute}
	// DefaultRateChatOperator: 10 calls for an operator per client
	// address in a burst, then one every 6 seconds. Each call of a
	// session not yet escalated notifies the support team (a webhook
	// POST), so this bounds what one address can make them receive.
	DefaultRateChatOperator = Rate{N: 10, Per: time.Minute}
	// DefaultRateChatOperatorSession: 5 calls per session in a burst,
	// then one every 12 seconds: a session notifies once, so more calls
	// are only retries after a failed notification, each one a webhook
	// call.
	DefaultRateChatOperatorSession = Rate{N: 5, Per: time.Minute}
	// DefaultRateComment: 20 comments and replies per user in a burst,
	// then one every 3 seconds.
	DefaultRateComment = Rate{N: 20, Per: time.Minute}
	// DefaultRateReaction: 60 reactions per user in a burst, then one a
	// second.
	DefaultRateReaction = Rate{N: 60, Per: time.Minute}
)

// The default limits of password reset requests. Each request may send a
// mail, so they are tight: a person asks once or twice, and the limit per
// e-mail keeps anyone from filling an inbox with reset mails.
var (
	// DefaultRatePasswordReset: 30 requests per client address in a
	// burst, then one every 2 minutes.
	DefaultRatePasswordReset = Rate{N: 30, Per: time.Hour}
	// DefaultRatePasswordResetEmail: 5 requests per e-mail address in a
	// burst, then one every 12 minutes.
	DefaultRatePasswordResetEmail = Rate{N: 5, Per: time.Hour}
	// DefaultLoginFailuresPerAccount: 10 failed passwords per account in
	// 15 minutes.
	DefaultLoginFailuresPerAccount = 10
)

// withDefaults fills the zero values of c that have a default.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Addr == "" {
		c.Addr = d.Addr
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = d.ReadTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = d.ShutdownTimeout
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = d.StartTimeout
	}
	if c.BcryptCost == 0 {
		c.BcryptCost = d.BcryptCost
	}
	if c.TokenTTL <= 0 {
		c.TokenTTL = d.TokenTTL
	}
	if c.LogLevel == "" {
		c.LogLevel = d.LogLevel
	}
	if c.LogFormat == "" {
		c.LogFormat = d.LogFormat
	}
	if c.TradeBatchSize <= 0 {
		c.TradeBatchSize = d.TradeBatchSize
	}
	if c.TradeBatchInFlight <= 0 {
		c.TradeBatchInFlight = d.TradeBatchInFlight
	}
	if c.ChatWebhookTimeout <= 0 {
		c.ChatWebhookTimeout = d.ChatWebhookTimeout
	}
	if c.StreamMaxConnections <= 0 {
		c.StreamMaxConnections = d.StreamMaxConnections
	}
	if c.StreamMaxPerAddress <= 0 {
		c.StreamMaxPerAddress = d.StreamMaxPerAddress
	}
	if c.StreamMaxPerUser <= 0 {
		c.StreamMaxPerUser = d.StreamMaxPerUser
	}
	if c.StreamPing <= 0 {
		c.StreamPing = d.StreamPing
	}
	if c.StreamRetention <= 0 {
		c.StreamRetention = d.StreamRetention
	}
	if c.WebhookTimeout <= 0 {
		c.WebhookTimeout = d.WebhookTimeout
	}
	if c.WebhookConcurrency <= 0 {
		c.WebhookConcurrency = d.WebhookConcurrency
	}
	return c
}

// Validate reports every setting that cannot work, one error per
// problem (joined with errors.Join), each naming the setting's
// environment variable and flag.
func (c Config) Validate() error {
	var errs []error
	bad := func(env, format string, args ...any) {
		errs = append(errs, settingError(env, fmt.Sprintf(format, args...)))
	}
	if c.Addr != "" {
		if err := checkAddr(c.Addr); err != nil {
			bad("PREDICTKIT_ADDR", "%q: %v", c.Addr, err)
		}
	}
	if c.DatabaseURL != "" && checkDatabaseURL(c.DatabaseURL) != nil {
		bad("PREDICTKIT_DATABASE_URL", "must be a PostgreSQL URL such as postgres://user:password@host:5432/db?sslmode=disable, or a key=value connection string")
	}
	if c.BcryptCost != 0 && (c.BcryptCost < bcrypt.MinCost || c.BcryptCost > bcrypt.MaxCost) {
		bad("PREDICTKIT_BCRYPT_COST", "%d: must be %d to %d", c.BcryptCost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		bad("PREDICTKIT_LOG_LEVEL", "%q: must be debug, info, warn or error", c.LogLevel)
	}
	switch c.LogFormat {
	case "", "json", "text":
	default:
		bad("PREDICTKIT_LOG_FORMAT", "%q: must be json or text", c.LogFormat)
	}
	if c.TradeBatchSize < 0 || c.TradeBatchSize > maxTradeBatch {
		bad("PREDICTKIT_TRADE_BATCH_SIZE", "%d: must be 1 to %d", c.TradeBatchSize, maxTradeBatch)
	}
	if c.TradeBatchWait < 0 || c.TradeBatchWait > time.Second {
		bad("PREDICTKIT_TRADE_BATCH_WAIT", "%s: must be 0 to 1s", c.TradeBatchWait)
	}
	if c.TradeBatchInFlight < 0 || c.TradeBatchInFlight > maxTradeBatchInFlight {
		bad("PREDICTKIT_TRADE_BATCH_INFLIGHT", "%d: must be 1 to %d", c.TradeBatchInFlight, maxTradeBatchInFlight)
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		bad("PREDICTKIT_ADMIN_TOKEN", "the admin token must be at least 16 characters (it has %d)", len(c.AdminToken))
	}
	if c.ChatFAQ != "" {
		if _, err := chat.LoadFAQResponder(c.ChatFAQ); err != nil {
			bad("PREDICTKIT_CHAT_FAQ", "%q: %v", c.ChatFAQ, err)
		}
	}
	if c.ChatWebhookURL != "" && chat.CheckWebhookURL(c.ChatWebhookURL) != nil {
		bad("PREDICTKIT_CHAT_WEBHOOK_URL", "the chat webhook URL must be an absolute http or https URL")
	}
	if c.AuditInterval < 0 || c.AuditInterval > 0 && c.AuditInterval < time.Second {
		bad("PREDICTKIT_AUDIT_INTERVAL", "%s: must be 0 (off) or at least 1s", c.AuditInterval)
	}
	if c.StreamPing < 0 || c.StreamPing > DefaultStreamPing {
		errs = append(errs, fmt.Errorf("Config.StreamPing %s: must be a duration up to 15s", c.StreamPing))

	}
	if _, err := webhook.NewGuard(c.WebhookAllowedHosts); err != nil {
		bad("PREDICTKIT_WEBHOOK_ALLOWED_HOSTS", "%s", strings.TrimPrefix(err.Error(), "webhook allowed hosts: "))
	}
	if c.WebhookTimeout < 0 || c.WebhookTimeout > 5*time.Minute {
		bad("PREDICTKIT_WEBHOOK_TIMEOUT", "%s: must be a duration of at most 5m, such as 10s", c.WebhookTimeout)
	}
	if c.WebhookConcurrency < 0 || c.WebhookConcurrency > 64 {
		bad("PREDICTKIT_WEBHOOK_CONCURRENCY", "%d: must be 1 to 64", c.WebhookConcurrency)
	}
	if c.StreamRetention < 0 || c.StreamRetention > 0 && c.StreamRetention < minStreamRetention {
		bad("PREDICTKIT_STREAM_RETENTION", "%s: must be a duration of at least 1m, such as 24h", c.StreamRetention)
	}
	if c.LoginFailuresPerAccount < 0 || c.LoginFailuresPerAccount > maxLoginFailuresPerAccount {
		bad("PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT", "%d: must be 0 (off) to %d", c.LoginFailuresPerAccount, maxLoginFailuresPerAccount)
	}
	if c.AuthCache < 0 || c.AuthCache > time.Hour {
		bad("PREDICTKIT_AUTH_CACHE", "%s: must be 0 (off) or a duration up to 1h", c.AuthCache)
	}
	if _, err := parseProxies(c.TrustedProxies); err != nil {
		bad("PREDICTKIT_TRUSTED_PROXIES", "%v", err)
	}
	for _, r := range []struct {
		env  string
		rate Rate
	}{{"PREDICTKIT_RATE_LOGIN", c.RateLogin}, {"PREDICTKIT_RATE_TRADE", c.RateTrade}, {"PREDICTKIT_RATE_PARTNER", c.RatePartner},
		{"PREDICTKIT_RATE_CHAT_SESSION", c.RateChatSession}, {"PREDICTKIT_RATE_CHAT_MESSAGE", c.RateChatMessage},
		{"PREDICTKIT_RATE_CHAT_MESSAGE_SESSION", c.RateChatMessageSession}, {"PREDICTKIT_RATE_CHAT_OPERATOR", c.RateChatOperator},
		{"PREDICTKIT_RATE_CHAT_OPERATOR_SESSION", c.RateChatOperatorSession}, {"PREDICTKIT_RATE_COMMENT", c.RateComment},
		{"PREDICTKIT_RATE_REACTION", c.RateReaction}, {"PREDICTKIT_RATE_PASSWORD_RESET", c.RatePasswordReset},
		{"PREDICTKIT_RATE_PASSWORD_RESET_EMAIL", c.RatePasswordResetEmail}} {
		if !r.rate.Unlimited() && r.rate.Per/time.Duration(r.rate.N) <= 0 {
			bad(r.env, "%d per %s: more than one request per nanosecond", r.rate.N, r.rate.Per)
		}
	}
	if err := checkOrigins(c.CORSOrigins); err != nil {
		bad("PREDICTKIT_CORS_ORIGINS", "%v", err)
	}
	if c.SMTPURL != "" {
		if _, err := mailer.ParseURL(c.SMTPURL); err != nil {
			bad("PREDICTKIT_SMTP_URL", "%v; the form is smtp://user:password@host:587?from=noreply@example.com (or smtps:// for implicit TLS)", err)
		}
	}
	if c.PublicURL != "" && checkPublicURL(c.PublicURL) != nil {
		bad("PREDICTKIT_PUBLIC_URL", "%q: %v", c.PublicURL, checkPublicURL(c.PublicURL))
	}
	return errors.Join(errs...)
}

// maxTradeBatch bounds the group commit's batch size: larger batches hold
// the market's row lock longer than they save.
const maxTradeBatch = 1024

// maxTradeBatchInFlight bounds the batches committing at once: each holds
// a database connection.
const maxTradeBatchInFlight = 64

// setting is one configuration knob: its flag, its environment variable,
// its default and how to read and write it.
type setting struct {
	flag, env, help string
	get             func(*Config) string
	set             func(*Config, string) error
	secret, isBool  bool
}

func durationSetting(flag, env, help string, f func(*Config) *time.Duration) setting {
	return setting{flag: flag, env: env, help: help,
		get: func(c *Config) string { return shortDuration(*f(c)) },
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("must be a positive duration such as 10s")
			}
			*f(c) = d
			return nil
		}}
}

// optionalDurationSetting reads a duration that may be 0 (off) or else
// must be at least lo and, unless hi is 0, at most hi; problem says so.
func optionalDurationSetting(flag, env, help string, lo, hi time.Duration, problem string, f func(*Config) *time.Duration) setting {
	return setting{flag: flag, env: env, help: help,
		get: func(c *Config) string { return shortDuration(*f(c)) },
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > 0 && d < lo || hi > 0 && d > hi {
				return errors.New(problem)
			}
			*f(c) = d
			return nil
		}}
}

func intSetting(flag, env, help string, lo, hi int, f func(*Config) *int) setting {
	return setting{flag: flag, env: env, help: help,
		get: func(c *Config) string { return strconv.Itoa(*f(c)) },
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return fmt.Errorf("must be an integer from %d to %d", lo, hi)
			}
			*f(c) = n
			return nil
		}}
}

func boolSetting(flag, env, help string, f func(*Config) *bool) setting {
	return setting{flag: flag, env: env, help: help, isBool: true,
		get: func(c *Config) string { return strconv.FormatBool(*f(c)) },
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("must be true/false or 1/0")
			}
			*f(c) = b
			return nil
		}}
}

func stringSetting(flag, env, help string, f func(*Config) *string) setting {
	return setting{flag: flag, env: env, help: help,
		get: func(c *Config) string { return *f(c) },
		set: func(c *Config, v string) error { *f(c) = v; return nil }}
}

func rateSetting(flag, env, help string, f func(*Config) *Rate) setting {
	return setting{flag: flag, env: env, help: help,
		get: func(c *Config) string { return f(c).String() },
		set: func(c *Config, v string) error {
			r, err := ParseRate(v)
			if err != nil {
				return err
			}
			*f(c) = r
			return nil
		}}
}

// splitList reads a comma-separated list, trimming blanks and dropping
// empty items.
func splitList(v string) []string {
	var out []string
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func settings() []setting {
	secret := func(s setting) setting { s.secret = true; return s }
	return []setting{
		stringSetting("addr", "PREDICTKIT_ADDR", "listen address", func(c *Config) *string { return &c.Addr }),
		secret(stringSetting("database-url", "PREDICTKIT_DATABASE_URL", "PostgreSQL URL; empty runs on the in-memory store", func(c *Config) *string { return &c.DatabaseURL })),
		secret(stringSetting("admin-token", "PREDICTKIT_ADMIN_TOKEN", "Bearer token of the operator endpoints (at least 16 characters); empty disables them", func(c *Config) *string { return &c.AdminToken })),
		boolSetting("demo", "PREDICTKIT_DEMO", "seed the in-memory store with demo users, an event and trades (ignored with a database URL)", func(c *Config) *bool { return &c.Demo }),
		boolSetting("migrate", "PREDICTKIT_MIGRATE_ON_START", "apply PostgreSQL migrations at start", func(c *Config) *bool { return &c.MigrateOnStart }),
		durationSetting("read-timeout", "PREDICTKIT_READ_TIMEOUT", "HTTP read timeout", func(c *Config) *time.Duration { return &c.ReadTimeout }),
		durationSetting("write-timeout", "PREDICTKIT_WRITE_TIMEOUT", "HTTP write timeout", func(c *Config) *time.Duration { return &c.WriteTimeout }),
		durationSetting("idle-timeout", "PREDICTKIT_IDLE_TIMEOUT", "HTTP keep-alive idle timeout", func(c *Config) *time.Duration { return &c.IdleTimeout }),
		durationSetting("shutdown-timeout", "PREDICTKIT_SHUTDOWN_TIMEOUT", "graceful shutdown limit", func(c *Config) *time.Duration { return &c.ShutdownTimeout }),
		durationSetting("start-timeout", "PREDICTKIT_START_TIMEOUT", "start-up limit (connect, migrate, seed, bind)", func(c *Config) *time.Duration { return &c.StartTimeout }),
		intSetting("bcrypt-cost", "PREDICTKIT_BCRYPT_COST", "password hashing cost (4 to 31)", bcrypt.MinCost, bcrypt.MaxCost, func(c *Config) *int { return &c.BcryptCost }),
		durationSetting("token-ttl", "PREDICTKIT_TOKEN_TTL", "lifetime of an access token", func(c *Config) *time.Duration { return &c.TokenTTL }),
		optionalDurationSetting("auth-cache", "PREDICTKIT_AUTH_CACHE", "how long a looked-up access token or partner key is trusted from memory (0: ask the store on every request)",
			0, time.Hour, "must be 0 (off) or a duration up to 1h, such as 5s", func(c *Config) *time.Duration { return &c.AuthCache }),
		stringSetting("log-level", "PREDICTKIT_LOG_LEVEL", "debug, info, warn or error", func(c *Config) *string { return &c.LogLevel }),
		stringSetting("log-format", "PREDICTKIT_LOG_FORMAT", "json or text", func(c *Config) *string { return &c.LogFormat }),
		intSetting("trade-batch-size", "PREDICTKIT_TRADE_BATCH_SIZE", "group commit: most concurrent trades per transaction, over one market or many (1 disables batching)",
			1, maxTradeBatch, func(c *Config) *int { return &c.TradeBatchSize }),
		optionalDurationSetting("trade-batch-wait", "PREDICTKIT_TRADE_BATCH_WAIT", "group commit: how long a batch that is not full waits for more trades (0: none)",
			0, time.Second, "must be a duration from 0 to 1s, such as 500us", func(c *Config) *time.Duration { return &c.TradeBatchWait }),
		intSetting("trade-batch-inflight", "PREDICTKIT_TRADE_BATCH_INFLIGHT", "group commit: most batches committing at once, each on markets of its own",
			1, maxTradeBatchInFlight, func(c *Config) *int { return &c.TradeBatchInFlight }),
		boolSetting("cookie-secure", "PREDICTKIT_COOKIE_SECURE", "mark cookies Secure (serve over HTTPS)", func(c *Config) *bool { return &c.CookieSecure }),
		boolSetting("web", "PREDICTKIT_WEB", "serve the web app at / (false: only the API, the probes and /docs)", func(c *Config) *bool { return &c.Web }),
		stringSetting("chat-faq", "PREDICTKIT_CHAT_FAQ", "FAQ file (JSON) of the support chat's automatic answers; empty uses the built-in FAQ", func(c *Config) *string { return &c.ChatFAQ }),
		secret(stringSetting("chat-webhook-url", "PREDICTKIT_CHAT_WEBHOOK_URL", "URL that receives a POST for every chat escalation; empty logs escalations instead", func(c *Config) *string { return &c.ChatWebhookURL })),
		durationSetting("chat-webhook-timeout", "PREDICTKIT_CHAT_WEBHOOK_TIMEOUT", "time limit of one chat webhook call", func(c *Config) *time.Duration { return &c.ChatWebhookTimeout }),
		optionalDurationSetting("audit-interval", "PREDICTKIT_AUDIT_INTERVAL", "run the ledger audit this often in the background and export its result as metrics (0: only when the operator asks)",
			time.Second, 0, "must be 0 (off) or a duration of at least 1s, such as 5m", func(c *Config) *time.Duration { return &c.AuditInterval }),
		intSetting("stream-max-connections", "PREDICTKIT_STREAM_MAX_CONNECTIONS", "most open live-stream connections of this server",
			1, 1_000_000, func(c *Config) *int { return &c.StreamMaxConnections }),
		intSetting("stream-max-per-address", "PREDICTKIT_STREAM_MAX_PER_ADDRESS", "most open live-stream connections from one client address or IPv6 /64",
			1, 1_000_000, func(c *Config) *int { return &c.StreamMaxPerAddress }),
		intSetting("stream-max-per-user", "PREDICTKIT_STREAM_MAX_PER_USER", "most open live-stream connections of one user (the me topic)",
			1, 1_000_000, func(c *Config) *int { return &c.StreamMaxPerUser }),
		{flag: "stream-retention", env: "PREDICTKIT_STREAM_RETENTION", help: "how long the change log keeps entries: how far back a live stream can resume (at least 1m)",
			get: func(c *Config) string { return shortDuration(c.StreamRetention) },
			set: func(c *Config, v string) error {
				d, err := time.ParseDuration(v)
				if err != nil || d < minStreamRetention {
					return errors.New("must be a duration of at least 1m, such as 24h")
				}
				c.StreamRetention = d
				return nil
			}},
		stringSetting("webhook-allowed-hosts", "PREDICTKIT_WEBHOOK_ALLOWED_HOSTS", "comma-separated host names, IP addresses and CIDR ranges partner webhooks may reach besides public addresses (loopback, private and link-local ones are refused unless listed)", func(c *Config) *string { return &c.WebhookAllowedHosts }),
		durationSetting("webhook-timeout", "PREDICTKIT_WEBHOOK_TIMEOUT", "time limit of one partner webhook delivery attempt", func(c *Config) *time.Duration { return &c.WebhookTimeout }),
		intSetting("webhook-concurrency", "PREDICTKIT_WEBHOOK_CONCURRENCY", "partner webhook deliveries of one partner this server sends at the same time",
			1, 64, func(c *Config) *int { return &c.WebhookConcurrency }),
		secret(stringSetting("stream-nats-url", "PREDICTKIT_STREAM_NATS_URL", "NATS server with JetStream to carry the change log between servers (nats://host:4222); empty: PostgreSQL LISTEN/NOTIFY", func(c *Config) *string { return &c.StreamNATSURL })),
		{flag: "stream-nats-name", env: "PREDICTKIT_STREAM_NATS_NAME", help: "name of this deployment's JetStream stream, for deployments sharing a NATS server (letters, digits, _ and -)",
			get: func(c *Config) string { return c.StreamNATSName },
			set: func(c *Config, v string) error {
				for _, r := range v {
					if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
						return errors.New("must be letters, digits, _ and - only")
					}
				}
				c.StreamNATSName = v
				return nil
			}},
		{flag: "trusted-proxies", env: "PREDICTKIT_TRUSTED_PROXIES", help: "comma-separated IPs or CIDRs of proxies whose X-Forwarded-For is trusted",
			get: func(c *Config) string { return strings.Join(c.TrustedProxies, ",") },
			set: func(c *Config, v string) error {
				c.TrustedProxies = splitList(v)
				_, err := parseProxies(c.TrustedProxies)
				return err
			}},
		rateSetting("rate-login", "PREDICTKIT_RATE_LOGIN", "logins and registrations per client address or IPv6 /64, each (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateLogin }),
		rateSetting("rate-trade", "PREDICTKIT_RATE_TRADE", "buys and sells per user (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateTrade }),
		rateSetting("rate-partner", "PREDICTKIT_RATE_PARTNER", "partner API calls per partner (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RatePartner }),
		rateSetting("rate-chat-session", "PREDICTKIT_RATE_CHAT_SESSION", "chat sessions opened per client address or IPv6 /64 (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateChatSession }),
		rateSetting("rate-chat-message", "PREDICTKIT_RATE_CHAT_MESSAGE", "chat messages per client address or IPv6 /64 (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateChatMessage }),
		rateSetting("rate-chat-message-session", "PREDICTKIT_RATE_CHAT_MESSAGE_SESSION", "chat messages per chat session (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateChatMessageSession }),
		rateSetting("rate-chat-operator", "PREDICTKIT_RATE_CHAT_OPERATOR", "calls for a chat operator per client address or IPv6 /64 (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateChatOperator }),
		rateSetting("rate-chat-operator-session", "PREDICTKIT_RATE_CHAT_OPERATOR_SESSION", "calls for a chat operator per chat session (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateChatOperatorSession }),
		rateSetting("rate-comment", "PREDICTKIT_RATE_COMMENT", "comments and replies per user (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateComment }),
		rateSetting("rate-reaction", "PREDICTKIT_RATE_REACTION", "comment reactions per user (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateReaction }),
		rateSetting("rate-password-reset", "PREDICTKIT_RATE_PASSWORD_RESET", "password reset requests per client address or IPv6 /64 (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RatePasswordReset }),
		rateSetting("rate-password-reset-email", "PREDICTKIT_RATE_PASSWORD_RESET_EMAIL", "password reset requests per e-mail address (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RatePasswordResetEmail }),
		intSetting("login-failures-per-account", "PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT", "failed passwords one account may see in 15 minutes, from any address, before its logins are refused until then (0: no limit)",
			0, maxLoginFailuresPerAccount, func(c *Config) *int { return &c.LoginFailuresPerAccount }),
		secret(stringSetting("smtp-url", "PREDICTKIT_SMTP_URL", "SMTP server of the password reset mails: smtp://user:password@host:587?from=noreply@example.com (STARTTLS when offered; smtps:// for implicit TLS); empty sends no mail", func(c *Config) *string { return &c.SMTPURL })),
		stringSetting("public-url", "PREDICTKIT_PUBLIC_URL", "base URL of the web app users open, for links in mails (<base>/reset-password?token=...); empty mails the token alone", func(c *Config) *string { return &c.PublicURL }),
		{flag: "cors-origins", env: "PREDICTKIT_CORS_ORIGINS", help: "comma-separated origins browsers may call the API from (or *); empty disables CORS",
			get: func(c *Config) string { return strings.Join(c.CORSOrigins, ",") },
			set: func(c *Config, v string) error {
				c.CORSOrigins = splitList(v)
				return checkOrigins(c.CORSOrigins)
			}},
	}
}

// ConfigFromEnv returns DefaultConfig overridden by the PREDICTKIT_*
// environment variables that are set to something other than "".
func ConfigFromEnv() (Config, error) {
	return configFrom(os.LookupEnv)
}

func configFrom(lookup func(string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	var errs []error
	for _, s := range settings() {
		if v, ok := lookup(s.env); ok && strings.TrimSpace(v) != "" { // empty means unset
			if err := s.set(&c, strings.TrimSpace(v)); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.env, err))
			}
		}
	}
	return c, errors.Join(errs...)
}

type flagValue struct {
	c *Config
	s setting
}

func (v flagValue) String() string {
	if v.c == nil {
		return ""
	}
	return v.s.get(v.c)
}
func (v flagValue) Set(s string) error { return v.s.set(v.c, s) }

func (v flagValue) IsBoolFlag() bool { return v.s.isBool }

// RegisterFlags defines one flag per setting on fs, bound to c (whose
// current values, typically from ConfigFromEnv, are the flags' defaults),
// and a usage text listing every flag with its environment variable and
// default.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	ss := settings()
	for _, s := range ss {
		fs.Var(flagValue{c, s}, s.flag, s.help+" (env "+s.env+")")
	}
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: predictkit %s [flags]\n\nEvery setting is read from its environment variable, then from its flag.\n\n", fs.Name())
		PrintSettings(w)
	}
}

// PrintSettings writes a table of every setting: flag, environment
// variable, default and meaning.
func PrintSettings(w io.Writer) {
	d := DefaultConfig()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tENVIRONMENT\tDEFAULT\tMEANING")
	for _, s := range settings() {
		def := s.get(&d)
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(tw, "-%s\t%s\t%s\t%s\n", s.flag, s.env, def, s.help)
	}
	_ = tw.Flush()
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log level %q: must be debug, info, warn or error", s)
}

// newLogger builds the server's logger from c.
func newLogger(c Config) *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	lvl, _ := parseLevel(c.LogLevel)
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}

// checkPublicURL accepts an absolute http or https URL with no query or
// fragment, to which paths are appended.
func checkPublicURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http or https URL such as https://app.example.com")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("must have no query, fragment or user: paths are appended to it")
	}
	return nil
}
