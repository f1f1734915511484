package server

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
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
	// DatabaseReplicaURLs are PostgreSQL streaming replicas of
	// DatabaseURL, comma-separated, for the reads that may lag; empty
	// means none.
	DatabaseReplicaURLs string
	// ReplicaMaxWait is how long a read that must see its user's own
	// write waits for a replica to replay it before it asks the primary
	// (0: at once).
	ReplicaMaxWait time.Duration
	// ReplicaMaxLag is the lag beyond which a replica is skipped (0: 5s).
	ReplicaMaxLag time.Duration
	// AdminToken enables the operator endpoints (Bearer token); empty
	// disables them (they answer 404).
	AdminToken string
	// Demo seeds the in-memory store with demo users, an event and trades
	// at start. It has no effect on PostgreSQL.
	Demo bool
	// MigrateOnStart applies the PostgreSQL migrations at start.
	MigrateOnStart bool
	// SettleChunk is how many open positions a settlement's transaction
	// reads at most on PostgreSQL (0: every market in one transaction);
	// SettleShare the percent of its time a chunked settlement runs, the
	// rest spent sleeping between chunks (docs/settlement.md).
	SettleChunk, SettleShare int
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
	// It also bounds how long GET /auth/me serves a user's profile reads
	// from memory (profileMemo), which is on only while this cache is.
	AuthCache time.Duration
	// ReadViews is how long a public read kept in memory (readviews.go)
	// may be served before it is rendered again, when no change-log
	// entry made it stale sooner; 0 renders every read from the store.
	ReadViews time.Duration
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
	// route its own budget; an IPv6 client counts by its /64); RateTrade buys, sells and withdrawal requests per user; RatePartner the
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
	// RedisURL, when set (redis://host:6379/0), shares every rate limit's
	// budget, and the failed passwords per account, among the instances
	// through Redis; while Redis does not answer each instance counts on
	// its own (ratelimit_redis.go). Empty: each instance counts on its
	// own.
	RedisURL string
	// CORSOrigins are the origins that browsers may call the API from
	// ("https://app.example.com", "https://*.example.com" for the
	// subdomains, or "*" for any). Only an origin listed exactly gets
	// credentials: a pattern could match a host the operator does not
	// control, and with credentials that host would read a signed-in
	// visitor's data. Empty sends no CORS headers, so browsers allow
	// same-origin calls only.
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
	// the database on each commit. It is one URL or a comma-separated
	// list of the nodes of a NATS cluster; the connection moves to
	// another node when its own goes away.
	StreamNATSURL string
	// StreamNATSReplicas is how many nodes of a NATS cluster keep the
	// stream (1 to 5; 3 in a three-node cluster, so that it survives
	// the loss of one node).
	StreamNATSReplicas int
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
	// alone. Shares (ShareModule: Open Graph tags, oEmbed) link under it
	// too; empty, under the scheme and host the request was sent to.
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

	// CreatorMaxOpenEvents is the most open events one creator may have
	// at a time: events with at least one unresolved market, hidden ones
	// too; CreatorMaxSubsidyKopecks the most subsidy the treasury may have
	// put up for their market makers together. Past either, a creator's
	// new event is 409 creator_limit. 0 is no limit. CreatorsMayTradeOwn
	// lets creators trade on their own events; false refuses such trades
	// with 403 (market.CreatorRules).
	CreatorMaxOpenEvents     int
	CreatorMaxSubsidyKopecks int64
	CreatorsMayTradeOwn      bool

	// ResolutionChallenge, when positive, makes a creator's close propose
	// its outcome, final after this long unless a holder disputes it
	// (docs/challenge-window.md); 0 resolves at once. DisputeBondKopecks
	// is what a dispute holds from the disputer's balance until the
	// operator decides.
	ResolutionChallenge time.Duration
	DisputeBondKopecks  int64
	// Proposals lets a signed-in user who is not a creator propose an
	// event with POST /events: it is created proposed, holding
	// ProposalAnteKopecks from the proposer's balance, and waits for the
	// operator's approval (docs/proposals.md). Off, such a user gets 403.
	Proposals           bool
	ProposalAnteKopecks int64

	// Money in and out (docs/deposits.md, docs/withdrawals.md).
	// WalletEVMXPub and WalletTronXPub are the operator's extended public
	// keys users' deposit addresses are derived from; the server never
	// holds a private key. Chains names the chains whose token deposits
	// are watched, in order; ChainSettings holds each known chain's
	// settings. WithdrawalDailyLimitKopecks bounds what one user may ask
	// to withdraw in 24 hours (0: no limit).
	WalletEVMXPub               string
	WalletTronXPub              string
	Chains                      []string
	ChainSettings               ChainSettings
	WithdrawalDailyLimitKopecks int64

	// Growth holds the referral reward, the levels and the sign-up bonus
	// (docs/referrals-and-levels.md).
	Growth growth.Rules
	// TelegramBotToken, when set, runs the Telegram bot users link their
	// accounts to, through TelegramAPIURL (the public Bot API by default);
	// its webhook is /api/v1/telegram/webhook/<TelegramWebhookSecret>
	// (docs/telegram.md).
	TelegramBotToken      string
	TelegramAPIURL        string
	TelegramWebhookSecret string

	// Store, when set, is used instead of the one DatabaseURL selects; the
	// caller owns it (the server does not close it). Tests use it.
	Store Store `json:"-"`
	// Logger, when set, receives the server's logs instead of a handler
	// built from LogLevel and LogFormat.
	Logger *slog.Logger `json:"-"`
	// Now, when set, is the clock of the rate limits instead of
	// time.Now. Tests use it.
	Now func() time.Time `json:"-"`
	// ExportPageSize is how many trades the trades export reads from the
	// store at a time (DefaultExportPageSize when 0), and
	// ExportCacheBytes bounds the resolved markets' trades files kept in
	// memory (DefaultExportCacheBytes when 0). Tests set them.
	ExportPageSize   int   `json:"-"`
	ExportCacheBytes int64 `json:"-"`
}

// DefaultAuthCache is the default Config.AuthCache. Any active user sends
// a request more often than this, so nearly every request is answered
// from memory; and it bounds how long a change could go unseen if the
// announcements of changes were lost without the connection failing.
const DefaultAuthCache = 5 * time.Second

// DefaultReadViews is the default Config.ReadViews: what another
// server's change that the change log does not carry (an event's edit, a
// hidden event) may take to reach this server's public reads.
const DefaultReadViews = time.Second

// DefaultConfig returns the defaults of every setting.
func DefaultConfig() Config {
	return Config{
		Addr:               ":8080",
		Demo:               true,
		Web:                true,
		MigrateOnStart:     true,
		SettleChunk:        postgres.DefaultSettleChunk,
		SettleShare:        int(postgres.DefaultSettleShare * 100),
		ReadTimeout:        10 * time.Second,
		WriteTimeout:       30 * time.Second,
		IdleTimeout:        120 * time.Second,
		ShutdownTimeout:    15 * time.Second,
		StartTimeout:       60 * time.Second,
		BcryptCost:         bcrypt.DefaultCost,
		TokenTTL:           30 * 24 * time.Hour,
		AuthCache:          DefaultAuthCache,
		ReplicaMaxWait:     postgres.DefaultReplicaMaxWait,
		ReplicaMaxLag:      postgres.DefaultReplicaMaxLag,
		ReadViews:          DefaultReadViews,
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

		CreatorMaxOpenEvents: DefaultCreatorMaxOpenEvents,
		CreatorsMayTradeOwn:  true,
		DisputeBondKopecks:   market.DefaultDisputeBond,
		ProposalAnteKopecks:  DefaultProposalAnteKopecks,

		ChainSettings:               defaultChainSettings(),
		WithdrawalDailyLimitKopecks: DefaultWithdrawalDailyLimitKopecks,

		Growth:         growth.DefaultRules(),
		TelegramAPIURL: DefaultTelegramAPIURL,

		ChatWebhookTimeout: chat.DefaultWebhookTimeout,
		StreamRetention:    DefaultStreamRetention,
		StreamNATSReplicas: 1,
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

// DefaultCreatorMaxOpenEvents is the default Config.CreatorMaxOpenEvents:
// more than a busy creator keeps open, few enough that a stolen or
// careless creator account cannot flood the feed. The subsidy has no
// default limit: how much of the treasury creators may put at risk is
// the operator's to decide, and the treasury's own bound
// (account.MaxExposure) still holds.
const DefaultCreatorMaxOpenEvents = 100

// DefaultProposalAnteKopecks is the default Config.ProposalAnteKopecks:
// 100 RUB, enough that proposing is not free, little enough that a
// serious proposer does not mind it held for a while.
const DefaultProposalAnteKopecks = 10000

// The largest values of the creators' limits: far past any real use,
// and MaxExposure is all the treasury may put up anyway.
const (
	maxCreatorOpenEvents = 1_000_000
	maxCreatorSubsidy    = account.MaxExposure
)

// The largest challenge window (30 days) and dispute bond (10^12
// kopecks): far past any real use.
const (
	maxResolutionChallenge = 720 * time.Hour
	maxDisputeBond         = 1_000_000_000_000
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
	// A Config built in code without growth rules gets the defaults; one
	// that sets some keeps them (a reward of 0 is a choice), with the
	// levels and the qualifying volume it cannot do without.
	if c.Growth.Levels == nil && c.Growth.QualifyKopecks == 0 && c.Growth.RewardKopecks == 0 && c.Growth.SignupBonusKopecks == 0 {
		c.Growth = d.Growth
	}
	if c.Growth.Levels == nil {
		c.Growth.Levels = d.Growth.Levels
	}
	if c.Growth.QualifyKopecks == 0 {
		c.Growth.QualifyKopecks = d.Growth.QualifyKopecks
	}
	if c.TelegramAPIURL == "" {
		c.TelegramAPIURL = d.TelegramAPIURL
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
	if c.StreamNATSReplicas <= 0 {
		c.StreamNATSReplicas = d.StreamNATSReplicas
	}
	if c.WebhookTimeout <= 0 {
		c.WebhookTimeout = d.WebhookTimeout
	}
	if c.WebhookConcurrency <= 0 {
		c.WebhookConcurrency = d.WebhookConcurrency
	}
	return c
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
