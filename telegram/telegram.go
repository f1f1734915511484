// Package telegram links predictkit accounts to Telegram chats and sends
// each linked user's notifications to their chat, through the Telegram
// Bot API (github.com/go-telegram/bot).
//
// Linking takes three steps. The signed-in user asks for a link
// (Service.Link): a random token, kept only as its SHA-256 hash, valid
// for TokenTTL and once, inside the bot's deep link
// https://t.me/<bot>?start=<token>. Opening it in Telegram makes the app
// send "/start <token>" to the bot, which Telegram delivers to the
// server's webhook as an update (Service.HandleUpdate): the token is
// taken, and its user is linked to the chat the update came from.
//
// The sender (Service.Deliver, run by a changelog.Consumer) follows the
// change log's notification entries and sends each one whose user is
// linked with notifications on, rendered in the user's language. It is
// at-least-once: its cursor moves past an entry once the message went
// out, so a redelivery happens only when the process stops between the
// two.
package telegram

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
)

// TokenTTL is how long a link token may wait to be used: long enough to
// switch to Telegram, short enough that a token left in a browser's
// history is useless soon.
const TokenTTL = 15 * time.Minute

// WebhookPath is the path of the bot's webhook, under which the secret
// follows: WebhookPath + "/" + secret.
const WebhookPath = "/api/v1/telegram/webhook"

// SecretHeader is the header Telegram sends the webhook's secret_token in.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// ConsumerName is the sender's name among the change log's consumers
// (its cursor).
const ConsumerName = "telegram"

// Errors.
var (
	// ErrNotConfigured: the server has no bot token.
	ErrNotConfigured = errors.New("telegram: no bot is configured")
	// ErrInvalidLinkToken: the token of a /start is unknown, used or
	// expired.
	ErrInvalidLinkToken = errors.New("telegram: invalid link token")
	// ErrUpdateSeen: the update was handled already (Telegram delivers
	// an update again when it did not see the first answer).
	ErrUpdateSeen = errors.New("telegram: update handled already")
	// ErrBlocked: the chat blocked the bot (the Bot API's 403).
	ErrBlocked = errors.New("telegram: the chat blocked the bot")
	// ErrUnavailable: the Bot API did not answer as it should.
	ErrUnavailable = errors.New("telegram: the Bot API is unavailable")
)

// Store is what the bot needs from storage. Implementations:
// storage/memory and storage/postgres.
type Store interface {
	// CreateTelegramLinkToken stores hash, a link token's, for userID
	// until expiresAt; in the same step it deletes the user's older
	// tokens (a new link replaces them) and every token expired at now.
	// account.ErrUserNotFound.
	CreateTelegramLinkToken(ctx context.Context, userID int64, hash []byte, now, expiresAt time.Time) error
	// LinkTelegram handles update updateID, a "/start" carrying the
	// token whose hash is hash, from chatID, atomically: ErrUpdateSeen
	// if the update was recorded already (nothing else happens);
	// otherwise it records the update, and takes the token if it exists
	// and has not expired at now (ErrInvalidLinkToken if not, the
	// update still recorded). The token's user is linked to chatID
	// (telegram_verified, notifications on) and any other user linked
	// to that chat is unlinked; the user is returned.
	LinkTelegram(ctx context.Context, updateID int64, hash []byte, chatID int64, now time.Time) (*account.User, error)
	// MarkTelegramUpdate records update updateID, received at now, and
	// reports whether it is new (false: handled already). Updates
	// recorded long before now may be forgotten: Telegram gives up
	// redelivering after a day.
	MarkTelegramUpdate(ctx context.Context, updateID int64, now time.Time) (bool, error)
	// UnlinkTelegram unlinks user userID: not verified, no chat,
	// notifications off, no link tokens. Unlinking an unlinked user is
	// not an error. account.ErrUserNotFound.
	UnlinkTelegram(ctx context.Context, userID int64) error
	// DeliverTelegram reads at most limit change-log entries after the
	// sender's cursor (ConsumerName; made at the log's end when there is
	// none, since nothing before the sender's first run is owed), and
	// for each notification entry whose user is linked with
	// notifications on calls send, in log order; for a market_resolved
	// entry, send is called with each ResolutionDeliveries. The cursor
	// moves past
	// every entry handled. send's ErrBlocked turns the user's
	// notifications off and goes on; any other error stops: the cursor
	// stays before that entry, and the error is returned. Only one
	// DeliverTelegram runs at a time per store (several servers take
	// turns), so that an entry is sent once. It returns how many
	// entries it handled.
	DeliverTelegram(ctx context.Context, limit int, send func(context.Context, Delivery) error) (int, error)
}

// Delivery is a notification the sender owes a chat.
type Delivery struct {
	// Entry is the notification's change-log entry.
	Entry changelog.Entry
	// ChatID is the chat of the entry's user, Language their language.
	ChatID   int64
	Language string
}

// NewToken returns a new link token and the hash a store keeps: 32
// random bytes, in the 43 characters of base64url, which a deep link's
// start parameter allows (at most 64 of A-Z a-z 0-9 _ -).
func NewToken() (token string, hash []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token)
}

// HashToken is how a link token is stored: its SHA-256, so that reading
// the database does not give one.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// DeepLink is the link that opens the bot in Telegram and makes it send
// "/start <token>".
func DeepLink(username, token string) string {
	return "https://t.me/" + username + "?start=" + token
}

// SecretMatches reports whether a webhook request carries the secret
// both in its path and in its SecretHeader, in time that does not
// depend on how much of either matches (the hashes are compared, so not
// even the lengths leak). An empty secret never matches.
func SecretMatches(secret, path, header string) bool {
	if secret == "" {
		return false
	}
	want := sha256.Sum256([]byte(secret))
	p := sha256.Sum256([]byte(path))
	h := sha256.Sum256([]byte(header))
	return subtle.ConstantTimeCompare(want[:], p[:])&subtle.ConstantTimeCompare(want[:], h[:]) == 1
}
