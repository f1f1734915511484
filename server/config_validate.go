package server

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/mailer"
	"github.com/predictkit/predictkit/webhook"
)

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
	for _, u := range splitList(c.DatabaseReplicaURLs) {
		if checkDatabaseURL(u) != nil {
			bad("PREDICTKIT_DATABASE_REPLICA_URLS", "must be PostgreSQL URLs separated by commas, such as postgres://user:password@replica1:5432/db,postgres://user:password@replica2:5432/db")
			break
		}
	}
	if c.DatabaseReplicaURLs != "" && c.DatabaseURL == "" {
		bad("PREDICTKIT_DATABASE_REPLICA_URLS", "replicas need a primary: set PREDICTKIT_DATABASE_URL")
	}
	if c.ReplicaMaxWait < 0 || c.ReplicaMaxWait > 10*time.Second {
		bad("PREDICTKIT_REPLICA_MAX_WAIT", "%s: must be 0 to 10s", c.ReplicaMaxWait)
	}
	if c.ReplicaMaxLag < 0 || c.ReplicaMaxLag > time.Hour || c.ReplicaMaxLag > 0 && c.ReplicaMaxLag < time.Second {
		bad("PREDICTKIT_REPLICA_MAX_LAG", "%s: must be 0 (5s) or 1s to 1h", c.ReplicaMaxLag)
	}
	if c.RedisURL != "" {
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			// url.Error quotes the URL, password and all.
			if ue := (*url.Error)(nil); errors.As(err, &ue) {
				err = ue.Err
			}
			bad("PREDICTKIT_REDIS_URL", "must be a Redis URL such as redis://host:6379/0 (rediss:// for TLS): %v", err)
		}
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
	if c.CreatorMaxOpenEvents < 0 || c.CreatorMaxOpenEvents > maxCreatorOpenEvents {
		bad("PREDICTKIT_CREATOR_MAX_OPEN_EVENTS", "%d: must be 0 (no limit) to %d", c.CreatorMaxOpenEvents, maxCreatorOpenEvents)
	}
	if c.CreatorMaxSubsidyKopecks < 0 || c.CreatorMaxSubsidyKopecks > maxCreatorSubsidy {
		bad("PREDICTKIT_CREATOR_MAX_SUBSIDY_KOPECKS", "%d: must be 0 (no limit) to %d", c.CreatorMaxSubsidyKopecks, int64(maxCreatorSubsidy))
	}
	if c.ResolutionChallenge < 0 || c.ResolutionChallenge > maxResolutionChallenge {
		bad("PREDICTKIT_RESOLUTION_CHALLENGE", "%s: must be 0 (off) or a duration up to 720h", c.ResolutionChallenge)
	}
	if c.DisputeBondKopecks < 0 || c.DisputeBondKopecks > maxDisputeBond {
		bad("PREDICTKIT_DISPUTE_BOND_KOPECKS", "%d: must be 0 (no bond) to %d", c.DisputeBondKopecks, int64(maxDisputeBond))
	}
	if c.ProposalAnteKopecks < 0 || c.ProposalAnteKopecks > account.MaxCredit {
		bad("PREDICTKIT_PROPOSAL_ANTE_KOPECKS", "%d: must be 0 (none) to %d", c.ProposalAnteKopecks, int64(account.MaxCredit))
	}
	if c.ReadViews < 0 || c.ReadViews > time.Minute {
		bad("PREDICTKIT_READ_VIEWS", "%s: must be 0 (off) or a duration up to 1m", c.ReadViews)
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
	if c.StreamNATSURL != "" {
		if err := checkNATSURLs(c.StreamNATSURL); err != nil {
			bad("PREDICTKIT_STREAM_NATS_URL", "%v", err)
		}
	}
	if c.StreamNATSReplicas < 0 || c.StreamNATSReplicas > maxNATSReplicas {
		bad("PREDICTKIT_STREAM_NATS_REPLICAS", "%d: must be 1 to %d", c.StreamNATSReplicas, maxNATSReplicas)
	}
	errs = append(errs, c.validateMoney()...)
	errs = append(errs, c.validateGrowth()...)
	return errors.Join(errs...)
}

// maxTradeBatch bounds the group commit's batch size: larger batches hold
// the market's row lock longer than they save.
const maxTradeBatch = 1024

// maxTradeBatchInFlight bounds the batches committing at once: each holds
// a database connection.
const maxTradeBatchInFlight = 64

// maxNATSReplicas is the most replicas JetStream gives a stream.
const maxNATSReplicas = 5

// checkNATSURLs accepts what nats.Connect takes: one NATS URL or a
// comma-separated list of them (the nodes of a cluster), each
// nats://, tls://, ws:// or wss:// with a host, or a bare host:port
// (nats:// is implied). Its errors show the URLs without passwords.
func checkNATSURLs(v string) error {
	n, ws := 0, false
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "://") {
			s = "nats://" + s
		}
		u, err := url.Parse(s)
		if err != nil {
			return errors.New("a URL that does not parse; the form is nats://host:4222, or nats://n1:4222,nats://n2:4222,nats://n3:4222 for a cluster")
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Errorf("%s: must be a nats://, tls://, ws:// or wss:// URL such as nats://host:4222", u.Redacted())
		}
		if u.Hostname() == "" {
			return fmt.Errorf("%s: has no host; the form is nats://host:4222", u.Redacted())
		}
		isWS := u.Scheme == "ws" || u.Scheme == "wss"
		if n > 0 && isWS != ws {
			return errors.New("mixes websocket (ws://, wss://) and other URLs; list one kind")
		}
		n, ws = n+1, isWS
	}
	if n == 0 {
		return errors.New("no URL in the list; the form is nats://host:4222")
	}
	return nil
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
