package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-telegram/bot"
)

// Bot is the predictkit bot's client of the Bot API: the three methods
// it uses (getMe, sendMessage, setWebhook), at a base URL that is the
// public Bot API in production and a local server in tests.
type Bot struct {
	api *bot.Bot

	mu       sync.Mutex
	username string
}

// NewBot returns the client of the bot with token at apiURL (such as
// https://api.telegram.org). It asks nothing yet: Username calls getMe
// when first needed, so that a Bot API that is down does not stop the
// server from starting. log receives the library's own errors.
func NewBot(token, apiURL string, log *slog.Logger) (*Bot, error) {
	if log == nil {
		log = slog.Default()
	}
	api, err := bot.New(token,
		bot.WithServerURL(apiURL),
		bot.WithSkipGetMe(),
		bot.WithHTTPClient(time.Minute, &http.Client{Timeout: 15 * time.Second}),
		bot.WithErrorsHandler(func(err error) { log.Warn("telegram: bot client", "err", err) }),
		bot.WithDebugHandler(func(string, ...any) {}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	return &Bot{api: api}, nil
}

// Username is the bot's username (without the @), asked of getMe once
// and remembered.
func (b *Bot) Username(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.username != "" {
		return b.username, nil
	}
	me, err := b.api.GetMe(ctx)
	if err != nil {
		return "", fmt.Errorf("%w: getMe: %w", ErrUnavailable, err)
	}
	if me.Username == "" {
		return "", fmt.Errorf("%w: getMe: the bot has no username", ErrUnavailable)
	}
	b.username = me.Username
	return b.username, nil
}

// SetWebhook asks Telegram to deliver the bot's messages to url, with
// secret in SecretHeader, and nothing but messages.
func (b *Bot) SetWebhook(ctx context.Context, url, secret string) error {
	ok, err := b.api.SetWebhook(ctx, &bot.SetWebhookParams{URL: url, SecretToken: secret, AllowedUpdates: []string{"message"}})
	if err != nil {
		return fmt.Errorf("%w: setWebhook: %w", ErrUnavailable, err)
	}
	if !ok {
		return fmt.Errorf("%w: setWebhook: refused", ErrUnavailable)
	}
	return nil
}

// Send sends text to chatID as plain text (nothing in it is markup).
// ErrBlocked when the chat blocked the bot (or never started it);
// errChatGone when Telegram refuses the chat itself (a deleted account:
// trying again cannot help).
func (b *Bot) Send(ctx context.Context, chatID int64, text string) error {
	_, err := b.api.SendMessage(ctx, &bot.SendMessageParams{ChatID: chatID, Text: text})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bot.ErrorForbidden):
		return fmt.Errorf("%w: %w", ErrBlocked, err)
	case errors.Is(err, bot.ErrorBadRequest):
		return fmt.Errorf("%w: %w", errChatGone, err)
	}
	var tooMany *bot.TooManyRequestsError
	if errors.As(err, &tooMany) && tooMany.RetryAfter > 0 {
		return &retryAfterError{wait: time.Duration(tooMany.RetryAfter) * time.Second, err: fmt.Errorf("%w: sendMessage: %w", ErrUnavailable, err)}
	}
	return fmt.Errorf("%w: sendMessage: %w", ErrUnavailable, err)
}

// errChatGone: Telegram refused a message for good (400: the chat is
// not found, the text is refused); the sender skips it.
var errChatGone = errors.New("telegram: message refused")

// retryAfterError is the Bot API's 429: send nothing for wait.
type retryAfterError struct {
	wait time.Duration
	err  error
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }
