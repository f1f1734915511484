package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
)

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

func int64Setting(flag, env, help string, lo, hi int64, f func(*Config) *int64) setting {
	return setting{flag: flag, env: env, help: help,
		get: func(c *Config) string { return strconv.FormatInt(*f(c), 10) },
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
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

// onOffSetting is a boolSetting that also reads on and off, and says
// on or off.
func onOffSetting(flag, env, help string, f func(*Config) *bool) setting {
	return setting{flag: flag, env: env, help: help, isBool: true,
		get: func(c *Config) string {
			if *f(c) {
				return "on"
			}
			return "off"
		},
		set: func(c *Config, v string) error {
			switch strings.ToLower(v) {
			case "on":
				*f(c) = true
				return nil
			case "off":
				*f(c) = false
				return nil
			}
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("must be on or off (or true/false, 1/0)")
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
	return append([]setting{
		stringSetting("addr", "PREDICTKIT_ADDR", "listen address", func(c *Config) *string { return &c.Addr }),
		secret(stringSetting("database-url", "PREDICTKIT_DATABASE_URL", "PostgreSQL URL; empty runs on the in-memory store", func(c *Config) *string { return &c.DatabaseURL })),
		secret(stringSetting("database-replica-urls", "PREDICTKIT_DATABASE_REPLICA_URLS", "PostgreSQL streaming replicas of the database, comma-separated URLs, for the reads that may lag (histories, candles, leaderboards, admin lists); empty: none", func(c *Config) *string { return &c.DatabaseReplicaURLs })),
		optionalDurationSetting("replica-max-wait", "PREDICTKIT_REPLICA_MAX_WAIT", "how long a user's read waits for a replica to replay that user's own last write before it asks the primary (0: at once)",
			0, 10*time.Second, "must be a duration from 0 to 10s, such as 100ms", func(c *Config) *time.Duration { return &c.ReplicaMaxWait }),
		optionalDurationSetting("replica-max-lag", "PREDICTKIT_REPLICA_MAX_LAG", "a replica further behind the primary than this is skipped (0: 5s)",
			time.Second, time.Hour, "must be a duration from 1s to 1h, such as 5s", func(c *Config) *time.Duration { return &c.ReplicaMaxLag }),
		secret(stringSetting("admin-token", "PREDICTKIT_ADMIN_TOKEN", "Bearer token of the operator endpoints (at least 16 characters); empty disables them", func(c *Config) *string { return &c.AdminToken })),
		boolSetting("demo", "PREDICTKIT_DEMO", "seed the in-memory store with demo users, an event and trades (ignored with a database URL)", func(c *Config) *bool { return &c.Demo }),
		boolSetting("migrate", "PREDICTKIT_MIGRATE_ON_START", "apply PostgreSQL migrations at start", func(c *Config) *bool { return &c.MigrateOnStart }),
		intSetting("settle-chunk", "PREDICTKIT_SETTLE_CHUNK", "PostgreSQL: a market with more open positions settles in transactions of this many (0: always in one)",
			0, 1_000_000, func(c *Config) *int { return &c.SettleChunk }),
		intSetting("settle-share", "PREDICTKIT_SETTLE_SHARE", "PostgreSQL: percent of its time a chunked settlement runs; it sleeps the rest between chunks (100: no sleep)",
			1, 100, func(c *Config) *int { return &c.SettleShare }),
		durationSetting("read-timeout", "PREDICTKIT_READ_TIMEOUT", "HTTP read timeout", func(c *Config) *time.Duration { return &c.ReadTimeout }),
		durationSetting("write-timeout", "PREDICTKIT_WRITE_TIMEOUT", "HTTP write timeout", func(c *Config) *time.Duration { return &c.WriteTimeout }),
		durationSetting("idle-timeout", "PREDICTKIT_IDLE_TIMEOUT", "HTTP keep-alive idle timeout", func(c *Config) *time.Duration { return &c.IdleTimeout }),
		durationSetting("shutdown-timeout", "PREDICTKIT_SHUTDOWN_TIMEOUT", "graceful shutdown limit", func(c *Config) *time.Duration { return &c.ShutdownTimeout }),
		durationSetting("start-timeout", "PREDICTKIT_START_TIMEOUT", "start-up limit (connect, migrate, seed, bind)", func(c *Config) *time.Duration { return &c.StartTimeout }),
		intSetting("bcrypt-cost", "PREDICTKIT_BCRYPT_COST", "password hashing cost (4 to 31)", bcrypt.MinCost, bcrypt.MaxCost, func(c *Config) *int { return &c.BcryptCost }),
		durationSetting("token-ttl", "PREDICTKIT_TOKEN_TTL", "lifetime of an access token", func(c *Config) *time.Duration { return &c.TokenTTL }),
		optionalDurationSetting("auth-cache", "PREDICTKIT_AUTH_CACHE", "how long a looked-up access token or partner key, and the profile GET /auth/me read, are trusted from memory at most (0: ask the store on every request)",
			0, time.Hour, "must be 0 (off) or a duration up to 1h, such as 5s", func(c *Config) *time.Duration { return &c.AuthCache }),
		optionalDurationSetting("read-views", "PREDICTKIT_READ_VIEWS", "how long a public read kept in memory may be served before it is rendered again (0: render every read)",
			0, time.Minute, "must be 0 (off) or a duration up to 1m, such as 1s", func(c *Config) *time.Duration { return &c.ReadViews }),
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
		secret(stringSetting("stream-nats-url", "PREDICTKIT_STREAM_NATS_URL", "NATS server with JetStream to carry the change log between servers (nats://host:4222), or the nodes of a NATS cluster, comma-separated (nats://n1:4222,nats://n2:4222,nats://n3:4222); empty: PostgreSQL LISTEN/NOTIFY", func(c *Config) *string { return &c.StreamNATSURL })),
		intSetting("stream-nats-replicas", "PREDICTKIT_STREAM_NATS_REPLICAS", "nodes of the NATS cluster that keep the change log's JetStream stream (3 in a three-node cluster: it survives the loss of one node)",
			1, 5, func(c *Config) *int { return &c.StreamNATSReplicas }),
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
		rateSetting("rate-trade", "PREDICTKIT_RATE_TRADE", "buys, sells and withdrawal requests per user (N/s, N/m, N/h or off)", func(c *Config) *Rate { return &c.RateTrade }),
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
		secret(stringSetting("redis-url", "PREDICTKIT_REDIS_URL", "Redis that shares the rate limits' budgets among the instances (redis://host:6379/0); empty: each instance counts on its own", func(c *Config) *string { return &c.RedisURL })),
		intSetting("login-failures-per-account", "PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT", "failed passwords one account may see in 15 minutes, from any address, before its logins are refused until then (0: no limit)",
			0, maxLoginFailuresPerAccount, func(c *Config) *int { return &c.LoginFailuresPerAccount }),
		intSetting("creator-max-open-events", "PREDICTKIT_CREATOR_MAX_OPEN_EVENTS", "most open events (with an unresolved market, hidden ones too) one creator may have; past it a new event is 409 creator_limit (0: no limit)",
			0, maxCreatorOpenEvents, func(c *Config) *int { return &c.CreatorMaxOpenEvents }),
		int64Setting("creator-max-subsidy-kopecks", "PREDICTKIT_CREATOR_MAX_SUBSIDY_KOPECKS", "most subsidy, in kopecks, the treasury may have put up for one creator's open events; past it a new event is 409 creator_limit (0: no limit)",
			0, maxCreatorSubsidy, func(c *Config) *int64 { return &c.CreatorMaxSubsidyKopecks }),
		boolSetting("creators-may-trade-own", "PREDICTKIT_CREATORS_MAY_TRADE_OWN", "let creators trade on their own events (false: such a buy or sell is 403 forbidden)", func(c *Config) *bool { return &c.CreatorsMayTradeOwn }),
		optionalDurationSetting("resolution-challenge", "PREDICTKIT_RESOLUTION_CHALLENGE", "how long a creator's close stays a proposal that holders may dispute before it settles (0: a creator's close is final at once)",
			0, maxResolutionChallenge, "must be 0 (off) or a duration up to 720h, such as 24h", func(c *Config) *time.Duration { return &c.ResolutionChallenge }),
		int64Setting("dispute-bond-kopecks", "PREDICTKIT_DISPUTE_BOND_KOPECKS", "bond, in kopecks, a holder pays to dispute a proposed outcome: back when the operator decides otherwise, kept when it agrees (0: no bond)",
			0, maxDisputeBond, func(c *Config) *int64 { return &c.DisputeBondKopecks }),
		onOffSetting("proposals", "PREDICTKIT_PROPOSALS", "let signed-in users who are not creators propose events, which wait for the operator's approval (on or off)", func(c *Config) *bool { return &c.Proposals }),
		int64Setting("proposal-ante-kopecks", "PREDICTKIT_PROPOSAL_ANTE_KOPECKS", "kopecks a proposal holds from its proposer's balance until the operator decides (0: none)",
			0, account.MaxCredit, func(c *Config) *int64 { return &c.ProposalAnteKopecks }),
		secret(stringSetting("smtp-url", "PREDICTKIT_SMTP_URL", "SMTP server of the password reset mails: smtp://user:password@host:587?from=noreply@example.com (STARTTLS when offered; smtps:// for implicit TLS); empty sends no mail", func(c *Config) *string { return &c.SMTPURL })),
		stringSetting("public-url", "PREDICTKIT_PUBLIC_URL", "base URL of the web app users open, for links in mails (<base>/reset-password?token=...) and in shares (Open Graph tags, oEmbed: docs/sharing.md); empty mails the token alone and shares links to the host a request named", func(c *Config) *string { return &c.PublicURL }),
		{flag: "cors-origins", env: "PREDICTKIT_CORS_ORIGINS", help: "comma-separated origins browsers may call the API from (or *); only exact origins get credentials; empty disables CORS",
			get: func(c *Config) string { return strings.Join(c.CORSOrigins, ",") },
			set: func(c *Config, v string) error {
				c.CORSOrigins = splitList(v)
				return checkOrigins(c.CORSOrigins)
			}},
	}, append(moneySettings(), growthSettings()...)...)
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
