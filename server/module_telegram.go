package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/telegram"
)

// TelegramModule links accounts to Telegram chats and sends linked
// users' notifications there (docs/telegram.md): the link and unlink
// routes, the bot's webhook, and, with a bot token, the sender that
// follows the change log.
var TelegramModule = fx.Module("telegram",
	fx.Provide(newTelegramService, telegramRoutes),
	fx.Invoke(runTelegram),
)

func newTelegramService(cfg Config, store Store, accounts *account.Service, metrics *Metrics, log *slog.Logger) (*telegram.Service, error) {
	var b *telegram.Bot
	if cfg.TelegramBotToken != "" {
		var err error
		if b, err = telegram.NewBot(cfg.TelegramBotToken, cfg.TelegramAPIURL, log); err != nil {
			return nil, err
		}
	}
	s := telegram.NewService(store, b)
	s.Changed = func(id int64) { accounts.Invalidate(account.Invalidation{UserID: id}) }
	s.PublicURL = cfg.PublicURL
	s.Log = log
	if b != nil {
		sent := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "predictkit_telegram_messages_total",
			Help: "Notifications the Telegram sender tried, by result: sent, blocked (the chat blocked the bot), refused (for good), failed (tried again later).",
		}, []string{"result"})
		for _, r := range []string{"sent", "blocked", "refused", "failed"} {
			sent.WithLabelValues(r)
		}
		metrics.reg.MustRegister(sent)
		s.Sent = func(r string) { sent.WithLabelValues(r).Inc() }
	}
	return s, nil
}

// telegramBatch is the most change-log entries one apply of the sender
// reads: each may be a message, and the sender's cursor stays locked
// while they go out.
const telegramBatch = 100

// telegramInterval is how often the sender looks for entries on a store
// that does not say when they commit (the memory store's are cheap to
// read).
const telegramInterval = 250 * time.Millisecond

// changeCursors is a store whose change-log consumers keep cursors.
type changeCursors interface {
	DropChangeCursor(ctx context.Context, name string) error
}

// runTelegram, with a bot, asks Telegram for the bot's username
// (getMe), sets its webhook when the server knows its public URL, and
// runs the sender from start to stop. Without one it drops the sender's
// cursor, so that the change log is not kept for a sender that no
// longer runs (a bot configured again starts at the log's end).
func runTelegram(lc fx.Lifecycle, cfg Config, store Store, svc *telegram.Service, log *slog.Logger) {
	if !svc.Configured() {
		if c, ok := store.(changeCursors); ok {
			lc.Append(fx.Hook{OnStart: func(ctx context.Context) error {
				if err := c.DropChangeCursor(ctx, telegram.ConsumerName); err != nil {
					log.Warn("telegram: the sender's cursor was not dropped", "err", err)
				}
				return nil
			}})
		}
		return
	}
	c := &changelog.Consumer{Name: "telegram", Apply: svc.Deliver, Batch: telegramBatch, Interval: telegramInterval, Log: log}
	if _, ok := store.(changeWaker); ok {
		c.Interval = 0 // told of every commit, it need not look often
	}
	runConsumer(lc, store, c, nil, func(ctx context.Context) { introduceBot(ctx, svc.Bot(), cfg, log) })
}

// introduceBot calls getMe, then setWebhook when the public URL is known,
// trying again (up to a minute apart) until both succeed or ctx ends: a
// Bot API that is down at start must not keep the server from serving.
func introduceBot(ctx context.Context, b *telegram.Bot, cfg Config, log *slog.Logger) {
	wait := time.Second
	for {
		err := introduceOnce(ctx, b, cfg, log)
		if err == nil || ctx.Err() != nil {
			return
		}
		log.Warn("telegram: the Bot API did not answer at start; trying again", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

func introduceOnce(ctx context.Context, b *telegram.Bot, cfg Config, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	name, err := b.Username(ctx)
	if err != nil {
		return err
	}
	log.Info("telegram: bot ready", "username", name)
	if cfg.PublicURL == "" {
		return nil
	}
	url := strings.TrimRight(cfg.PublicURL, "/") + telegram.WebhookPath + "/" + cfg.TelegramWebhookSecret
	if err := b.SetWebhook(ctx, url, cfg.TelegramWebhookSecret); err != nil {
		return err
	}
	log.Info("telegram: webhook set", "url", strings.TrimRight(cfg.PublicURL, "/")+telegram.WebhookPath+"/…")
	return nil
}

type telegramHandlers struct {
	svc    *telegram.Service
	auth   *Auth
	secret string
}

func telegramRoutes(cfg Config, svc *telegram.Service, auth *Auth) RoutesOut {
	h := &telegramHandlers{svc: svc, auth: auth, secret: cfg.TelegramWebhookSecret}
	if !svc.Configured() {
		h.secret = "" // matches nothing
	}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/auth/telegram/link", Errors: errsTelegramLink, Handler: h.handleLink},
		{Method: http.MethodDelete, Path: "/api/v1/auth/telegram", Errors: errsTelegramUnlink, Handler: h.handleUnlink},
		{Method: http.MethodPost, Path: telegram.WebhookPath + "/:secret", Errors: errsTelegramWebhook, Handler: h.handleWebhook},
	}}
}

// POST /auth/telegram/link: a new deep link for the caller (a session's
// token; under /auth/, so no API key). Checks run 401, 503
// telegram_not_configured (no bot), 503 telegram_unavailable (the bot's
// username is not known yet and getMe fails).
var errsTelegramLink = table("internal_error",
	unauthorized,
	goneUser,
	on(telegram.ErrNotConfigured, http.StatusServiceUnavailable, "telegram_not_configured").
		saying("this server has no Telegram bot").configured(),
	on(telegram.ErrUnavailable, http.StatusServiceUnavailable, "telegram_unavailable").
		saying("the Telegram Bot API does not answer; try again later"),
)

type telegramLinkJSON struct {
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

func (h *telegramHandlers) handleLink(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	l, err := h.svc.Link(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(telegramLinkJSON{URL: l.URL, ExpiresAt: ts(l.ExpiresAt)})
}

// DELETE /auth/telegram: unlink the caller's chat (204, also when none
// was linked). Checks run 401.
var errsTelegramUnlink = table("internal_error", unauthorized, goneUser)

func (h *telegramHandlers) handleUnlink(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	if err := h.svc.Unlink(c.UserContext(), u.ID); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// errTelegramForbidden: a webhook request without the secret in both its
// path and its header.
var errTelegramForbidden = errors.New("server: telegram webhook: wrong secret")

// POST /telegram/webhook/{secret}: Telegram's delivery of an update.
// Checks run 403 forbidden (the path's secret and the
// X-Telegram-Bot-Api-Secret-Token header must both be the configured
// one; no bot: every request), 400 invalid_request (not an update), 400
// invalid_link_token (the /start's token is unknown, used or expired;
// the bot told the chat). An update handled before answers 200 and does
// nothing.
var errsTelegramWebhook = table("internal_error",
	on(errTelegramForbidden, http.StatusForbidden, "forbidden"),
	on(telegram.ErrInvalidLinkToken, http.StatusBadRequest, "invalid_link_token").
		saying("the link is unknown, used or expired: ask for a new one on the profile page"),
	on(telegram.ErrNotConfigured, http.StatusForbidden, "forbidden"),
)

func (h *telegramHandlers) handleWebhook(c *fiber.Ctx) error {
	if !telegram.SecretMatches(h.secret, c.Params("secret"), c.Get(telegram.SecretHeader)) {
		return errTelegramForbidden
	}
	if err := requireJSON(c); err != nil {
		return err
	}
	// Not decodeStrict: the Bot API adds fields as it grows.
	var u models.Update
	if err := json.Unmarshal(c.Body(), &u); err != nil {
		return malformedBody("not a Telegram update")
	}
	if u.ID <= 0 {
		return badRequest("update_id", "must be a positive integer")
	}
	if err := h.svc.HandleUpdate(c.UserContext(), &u); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true})
}
