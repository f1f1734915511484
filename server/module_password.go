package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/mailer"
)

// PasswordModule provides the password routes (change, reset request,
// reset), the operator's reset token, and the queue that looks reset
// requests up and mails them off the request path.
var PasswordModule = fx.Module("password",
	fx.Provide(newResetQueue, passwordRoutes, loginFailuresHook),
)

// passwordHook runs after a user's password was changed or reset, when
// the store has revoked what the old password gave (access tokens, reset
// tokens, stream tickets), for what lives outside the store: the per
// account count of failed logins, the streams open on this server.
// Modules add theirs to the group "password_hooks" (see
// streamPasswordHook). A hook cannot fail the change, which is done.
type passwordHook func(ctx context.Context, u *account.User, reset bool)

type passwordHookOut struct {
	fx.Out
	Hook passwordHook `group:"password_hooks"`
}

// loginFailuresHook clears an account's failed logins at a reset: its
// owner proved the mailbox and chose a new password, which the failures
// (all against the old one) should not lock out. A change needs nothing
// here: the per-account limit (guardAccount) cleared them when the
// current password proved right.
func loginFailuresHook(logins *loginFailures) passwordHookOut {
	return passwordHookOut{Hook: func(ctx context.Context, u *account.User, reset bool) {
		if key, ok := loginKey(u.Email); ok && reset {
			logins.clear(ctx, key)
		}
	}}
}

// The reset queue's bounds. A request is answered as soon as it is
// queued; the workers look the e-mail up, issue the token and talk to the
// SMTP server (seconds, at worst DefaultTimeout) one request each. The
// queue absorbs bursts the rate limits let through; a full queue is 503.
const (
	resetQueueSize    = 1024
	resetQueueWorkers = 2
)

// errResetQueueFull: the reset queue has no room; the answer is 503.
var errResetQueueFull = errors.New("server: password reset queue full")

// ResetLinkPath is the path, under Config.PublicURL, that a reset mail
// links to, with the token in its query: the web application serves it
// and sends the token with the new password to POST
// /api/v1/auth/password/reset.
const ResetLinkPath = "/reset-password"

// resetQueue handles reset requests off the request path, so that the
// answer (and its timing) is the same whether or not the e-mail has an
// account. Its workers start with the first request and stop with the
// server; requests still queued at the stop are dropped (their users ask
// again).
type resetQueue struct {
	accounts *account.Service
	// send mails a message; nil when no SMTP server is configured.
	send      func(context.Context, mailer.Message) error
	publicURL string
	log       *slog.Logger

	jobs   chan string
	start  sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newResetQueue(lc fx.Lifecycle, cfg Config, accounts *account.Service, log *slog.Logger) (*resetQueue, error) {
	q := &resetQueue{accounts: accounts, publicURL: strings.TrimRight(cfg.PublicURL, "/"), log: log, jobs: make(chan string, resetQueueSize)}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	if cfg.SMTPURL != "" {
		mc, err := mailer.ParseURL(cfg.SMTPURL)
		if err != nil {
			return nil, fmt.Errorf("PREDICTKIT_SMTP_URL: %w", err) // Validate has said so already
		}
		q.send = mailer.New(mc).Send
		log.Info("password reset mails go through " + mc.String())
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error {
		q.cancel()
		q.wg.Wait()
		return nil
	}})
	return q, nil
}

// enqueue queues a reset request for email; false when the queue is
// full.
func (q *resetQueue) enqueue(email string) bool {
	q.start.Do(func() {
		for range resetQueueWorkers {
			q.wg.Go(q.work)
		}
	})
	select {
	case q.jobs <- email:
		return true
	default:
		return false
	}
}

func (q *resetQueue) work() {
	for {
		select {
		case <-q.ctx.Done():
			return
		case email := <-q.jobs:
			q.handle(q.ctx, email)
		}
	}
}

// handle looks email up and, when it names an account with a password,
// mails it a reset token; without an SMTP server it only logs that a
// reset was asked for, so that an operator can issue one by hand. The
// token itself is never logged.
func (q *resetQueue) handle(ctx context.Context, email string) {
	u, err := q.accounts.UserForReset(ctx, email)
	switch {
	case errors.Is(err, account.ErrUserNotFound):
		q.log.Debug("password reset requested for an e-mail with no account")
		return
	case err != nil:
		q.log.Error("password reset request: look-up failed", "err", err)
		return
	case q.send == nil:
		q.log.Warn("password reset requested, but no mail can be sent: PREDICTKIT_SMTP_URL is not set; an operator can issue a token with predictkit admin reset-password", "user_id", u.ID)
		return
	}
	r, err := q.accounts.IssueReset(ctx, u.ID)
	if err != nil {
		q.log.Error("password reset request: issuing a token failed", "user_id", u.ID, "err", err)
		return
	}
	if err := q.send(ctx, resetMail(r, q.publicURL)); err != nil {
		q.log.Error("password reset mail not sent", "user_id", u.ID, "err", err)
		return
	}
	q.log.Info("password reset mail sent", "user_id", u.ID)
}

// resetLink is the link a reset mail or the operator hands over, or ""
// when no public URL is configured.
func resetLink(publicURL, token string) string {
	if publicURL == "" {
		return ""
	}
	return publicURL + ResetLinkPath + "?token=" + url.QueryEscape(token)
}

// resetMail is the mail that carries r's token.
func resetMail(r account.Reset, publicURL string) mailer.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\nsomeone, probably you, asked to reset the password of the predictkit account %s.\n\n", r.User.Name, r.User.Email)
	if link := resetLink(publicURL, r.Token); link != "" {
		fmt.Fprintf(&b, "To choose a new password, open this link before %s:\n\n%s\n\n", r.Expires.UTC().Format("2006-01-02 15:04 MST"), link)
	} else {
		fmt.Fprintf(&b, "To choose a new password, send this token with it to POST /api/v1/auth/password/reset before %s:\n\n%s\n\n", r.Expires.UTC().Format("2006-01-02 15:04 MST"), r.Token)
	}
	b.WriteString("It works once, and signs you out everywhere. If you did not ask for it, ignore this mail: your password stays as it is.\n")
	return mailer.Message{To: r.User.Email, Subject: "Reset your predictkit password", Text: b.String()}
}

// passwordHandlers serves the password routes.
type passwordHandlers struct {
	accounts  *account.Service
	auth      *Auth
	admin     *AdminAuth
	queue     *resetQueue
	hooks     []passwordHook
	log       *slog.Logger
	publicURL string
}

type passwordRoutesIn struct {
	fx.In
	Config   Config
	Accounts *account.Service
	Auth     *Auth
	Admin    *AdminAuth
	Queue    *resetQueue
	Hooks    []passwordHook `group:"password_hooks"`
	Log      *slog.Logger
}

func passwordRoutes(in passwordRoutesIn) RoutesOut {
	h := &passwordHandlers{accounts: in.Accounts, auth: in.Auth, admin: in.Admin, queue: in.Queue, hooks: in.Hooks, log: in.Log,
		publicURL: strings.TrimRight(in.Config.PublicURL, "/")}
	admin := in.Admin
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/auth/password", Errors: errsChangePassword, Handler: h.handleChange},
		{Method: http.MethodPost, Path: "/api/v1/auth/password/reset-request", Errors: errsResetRequest, Handler: h.handleResetRequest},
		{Method: http.MethodPost, Path: "/api/v1/auth/password/reset", Errors: errsReset, Handler: h.handleReset},
		{Method: http.MethodPost, Path: "/api/v1/admin/users/:id/password-reset", Errors: errsAdminReset, Handler: admin.guard(h.handleAdminReset)},
	}}
}

type changePasswordBody struct {
	CurrentPassword string `json:"current_password" validate:"required"`
	NewPassword     string `json:"new_password" validate:"required"`
}

// POST /auth/password: change the caller's password; every other access
// token, every reset token and every stream ticket of the caller is
// revoked, and the caller's streams on this server end. Checks run 429
// (per client address), 401 unauthorized, 429 (per account: a wrong
// current password counts as a failed login), 400 (body, then the new
// password's rule), 401 invalid_credentials (the current password is
// wrong).
var errsChangePassword = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
	on(account.ErrInvalidCredentials, http.StatusUnauthorized, "invalid_credentials"),
	on(account.ErrNoPassword, http.StatusUnauthorized, "invalid_credentials"),
)

// handleChange changes the caller's password, keeping the token it came
// with.
func (h *passwordHandlers) handleChange(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	var b changePasswordBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	keep, _ := credentialToken(c)
	if err := h.accounts.ChangePassword(c.UserContext(), u.ID, keep, b.CurrentPassword, b.NewPassword); err != nil {
		return err
	}
	h.changed(c.UserContext(), u, false)
	return c.JSON(fiber.Map{"status": "ok"})
}

// changed runs the password hooks for u.
func (h *passwordHandlers) changed(ctx context.Context, u *account.User, reset bool) {
	for _, hook := range h.hooks {
		hook(ctx, u, reset)
	}
}

type resetRequestBody struct {
	Email string `json:"email" validate:"required"`
}

// POST /auth/password/reset-request: ask for a reset mail. The answer is
// 202 whether or not the e-mail has an account, and is given before
// anyone looks. Checks run 429 (per address, then per e-mail), 400
// (body, then an e-mail that is no address), 503 busy (the queue is
// full).
var errsResetRequest = table("internal_error",
	on(errResetQueueFull, http.StatusServiceUnavailable, "busy"),
)

// handleResetRequest queues the request.
func (h *passwordHandlers) handleResetRequest(c *fiber.Ctx) error {
	var b resetRequestBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	email, err := account.NormalizeEmail(b.Email)
	if err != nil {
		return err
	}
	if !h.queue.enqueue(email) {
		c.Set(fiber.HeaderRetryAfter, "5")
		return errResetQueueFull
	}
	return c.Status(http.StatusAccepted).JSON(fiber.Map{"status": "accepted"})
}

type resetBody struct {
	Token         string `json:"token" validate:"required"`
	NewPassword   string `json:"new_password" validate:"required"`
	RevokeAPIKeys bool   `json:"revoke_api_keys"`
}

// POST /auth/password/reset: set a new password with a reset token,
// which is used up; every access token, every other reset token and
// every stream ticket of the user is revoked, with revoke_api_keys every
// personal API key too, and the user's streams on this server end.
// Checks run 429 (per client address), 400 (body, a revoke_api_keys that
// is no boolean included, then the new password's rule), 400
// invalid_token (unknown, used or expired); a refusal revokes nothing.
var errsReset = table("internal_error",
	on(account.ErrInvalidToken, http.StatusBadRequest, "invalid_token"),
)

// handleReset resets the password.
func (h *passwordHandlers) handleReset(c *fiber.Ctx) error {
	var b resetBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	id, err := h.accounts.ResetPassword(c.UserContext(), b.Token, b.NewPassword, b.RevokeAPIKeys)
	if err != nil {
		return err
	}
	// The reset is done: a failed look-up only leaves the hooks undone
	// (the streams end with their connections, the failures with their
	// window), which is no reason to tell the user it failed.
	if u, err := h.accounts.User(c.UserContext(), id); err != nil {
		h.log.Warn("password reset: the user's streams and failed logins are left as they are", "user_id", id, "err", err)
	} else {
		h.changed(c.UserContext(), u, true)
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// POST /admin/users/{id}/password-reset: issue a reset token for a user,
// for the operator to hand over (no mail is sent). Checks run the
// operator's rules, then 409 no_password (a partner's sub-account).
var errsAdminReset = table("internal_error", append([]rule{
	on(account.ErrNoPassword, http.StatusConflict, "no_password"),
}, adminRules...)...)

// adminResetJSON is the operator's reset token: the token is shown this
// once, and the link when a public URL is configured.
type adminResetJSON struct {
	UserID    int64     `json:"user_id"`
	Email     string    `json:"email"`
	Token     string    `json:"token"`
	Link      *string   `json:"link"`
	ExpiresAt time.Time `json:"expires_at"`
}

// handleAdminReset issues the token.
func (h *passwordHandlers) handleAdminReset(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	r, err := h.accounts.IssueReset(c.UserContext(), id)
	if err != nil {
		return err
	}
	out := adminResetJSON{UserID: r.User.ID, Email: r.User.Email, Token: r.Token, ExpiresAt: r.Expires.UTC()}
	if link := resetLink(h.publicURL, r.Token); link != "" {
		out.Link = &link
	}
	return c.Status(http.StatusCreated).JSON(out)
}
