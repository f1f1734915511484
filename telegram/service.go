package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
)

// Service is the bot's use cases: links, updates and the notifications
// sender.
type Service struct {
	store Store
	bot   *Bot
	// Now is the clock of token expiry (time.Now by default).
	Now func() time.Time
	// Changed, when set, is called with a user whose Telegram state
	// changed (linked, unlinked, notifications turned off), so that
	// cached authentications see it (account.Service.Invalidate).
	Changed func(userID int64)
	// PublicURL, when set, is the web app's base URL: a notification's
	// message ends with the link to what it is about.
	PublicURL string
	// Sent, when set, is told the result of each notification the
	// sender tried: "sent", "blocked" (the chat blocked the bot),
	// "refused" (Telegram refused it for good) or "failed" (tried again
	// later). The server counts them as a metric.
	Sent func(result string)
	Log  *slog.Logger
}

// NewService returns the service of store's links, through bot; a nil
// bot is a server without one, whose links are ErrNotConfigured.
func NewService(store Store, bot *Bot) *Service {
	return &Service{store: store, bot: bot, Now: time.Now, Log: slog.Default()}
}

// Configured reports whether the service has a bot.
func (s *Service) Configured() bool { return s.bot != nil }

// Bot is the service's bot, nil without one.
func (s *Service) Bot() *Bot { return s.bot }

// Link is a deep link that links the account that asked for it.
type Link struct {
	URL       string
	ExpiresAt time.Time
}

// Link makes a new link token for userID, replacing the user's unused
// ones. ErrNotConfigured, ErrUnavailable (the bot's username is not
// known and getMe fails), account.ErrUserNotFound.
func (s *Service) Link(ctx context.Context, userID int64) (Link, error) {
	if s.bot == nil {
		return Link{}, ErrNotConfigured
	}
	name, err := s.bot.Username(ctx)
	if err != nil {
		return Link{}, err
	}
	token, hash := NewToken()
	now := s.Now().UTC().Truncate(time.Microsecond)
	exp := now.Add(TokenTTL)
	if err := s.store.CreateTelegramLinkToken(ctx, userID, hash, now, exp); err != nil {
		return Link{}, err
	}
	return Link{URL: DeepLink(name, token), ExpiresAt: exp}, nil
}

// Unlink unlinks userID's chat: no more notifications there.
func (s *Service) Unlink(ctx context.Context, userID int64) error {
	err := s.store.UnlinkTelegram(ctx, userID)
	s.changed(userID)
	return err
}

func (s *Service) count(result string) {
	if s.Sent != nil {
		s.Sent(result)
	}
}

func (s *Service) changed(userID int64) {
	if s.Changed != nil {
		s.Changed(userID)
	}
}

// HandleUpdate handles an update Telegram delivered to the webhook. A
// "/start <token>" in a private chat links the chat to the token's user
// and the bot says so; an unknown, used or expired token is
// ErrInvalidLinkToken, after the bot told the chat. Anything else a
// user writes gets a word on how to link. An update handled before
// does nothing (nil). Replies that fail are logged: the update is
// handled either way.
func (s *Service) HandleUpdate(ctx context.Context, u *models.Update) error {
	if s.bot == nil {
		return ErrNotConfigured
	}
	now := s.Now().UTC().Truncate(time.Microsecond)
	m := u.Message
	if m == nil || m.Chat.Type != models.ChatTypePrivate || m.From == nil || m.From.IsBot {
		// Not a person writing to the bot: recorded, nothing to say.
		_, err := s.store.MarkTelegramUpdate(ctx, u.ID, now)
		return err
	}
	lang := languageOf(m.From.LanguageCode)
	token, isStart := startToken(m.Text)
	if !isStart || token == "" {
		fresh, err := s.store.MarkTelegramUpdate(ctx, u.ID, now)
		if err != nil || !fresh {
			return err
		}
		s.reply(ctx, m.Chat.ID, text(lang, msgHowToLink))
		return nil
	}
	user, err := s.store.LinkTelegram(ctx, u.ID, HashToken(token), m.Chat.ID, now)
	switch {
	case errors.Is(err, ErrUpdateSeen):
		return nil
	case errors.Is(err, ErrInvalidLinkToken):
		s.reply(ctx, m.Chat.ID, text(lang, msgInvalidToken))
		return err
	case err != nil:
		return err
	}
	s.changed(user.ID)
	s.reply(ctx, m.Chat.ID, fmt.Sprintf(text(user.Language, msgLinked), user.Name))
	return nil
}

func (s *Service) reply(ctx context.Context, chatID int64, msg string) {
	if err := s.bot.Send(ctx, chatID, msg); err != nil {
		s.Log.Warn("telegram: a reply was not sent", "err", err)
	}
}

// startToken returns the parameter of a "/start" command ("/start
// <token>", or "/start@bot <token>"), and whether text is one.
func startToken(text string) (string, bool) {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(text), " ")
	name, _, _ := strings.Cut(cmd, "@")
	if name != "/start" {
		return "", false
	}
	return strings.TrimSpace(arg), true
}

// languageOf is the language predictkit answers a Telegram user in,
// from the user's app language (an IETF tag such as "ru" or "en-US").
func languageOf(code string) string {
	if code == "ru" || strings.HasPrefix(code, "ru-") {
		return "ru"
	}
	return "en"
}

// Deliver sends what the change log owes linked chats, at most limit
// entries of it: the Apply of the sender's changelog.Consumer.
func (s *Service) Deliver(ctx context.Context, limit int) (int, error) {
	if s.bot == nil {
		return 0, ErrNotConfigured
	}
	var blocked []int64
	// A stop (ctx done) lets the message on its way finish and its
	// cursor commit, and sends no more: cancelling a send whose message
	// Telegram may have taken would send it again at the next start.
	stop := ctx
	ctx = context.WithoutCancel(ctx)
	n, err := s.store.DeliverTelegram(ctx, limit, func(ctx context.Context, d Delivery) error {
		if err := stop.Err(); err != nil {
			return err
		}
		msg, err := s.Message(d)
		if err != nil {
			// An entry the sender cannot read cannot become readable
			// later: skipped, and said.
			s.Log.Error("telegram: a notification entry cannot be read", "seq", d.Entry.Seq, "err", err)
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		err = s.bot.Send(ctx, d.ChatID, msg)
		switch {
		case err == nil:
			s.count("sent")
		case errors.Is(err, ErrBlocked):
			s.count("blocked")
			blocked = append(blocked, d.Entry.UserID)
			s.Log.Info("telegram: a chat blocked the bot; its notifications are off", "user_id", d.Entry.UserID)
		case errors.Is(err, errChatGone):
			s.count("refused")
			s.Log.Warn("telegram: a notification was refused", "user_id", d.Entry.UserID, "err", err)
			return nil
		default:
			s.count("failed")
		}
		return err
	})
	for _, id := range blocked {
		s.changed(id)
	}
	// Past Telegram's rate limit, the sender waits as long as it says
	// (at most a minute) before it tries again.
	var ra *retryAfterError
	if errors.As(err, &ra) {
		s.Log.Warn("telegram: the Bot API's rate limit; waiting", "for", ra.wait)
		t := time.NewTimer(min(ra.wait, time.Minute))
		defer t.Stop()
		select {
		case <-stop.Done():
		case <-t.C:
		}
	}
	return n, err
}

// Message is the text of a notification entry for its chat: the title,
// the message, and the link to what it is about when the service knows
// the web app's URL, in d.Language.
func (s *Service) Message(d Delivery) (string, error) {
	var v struct {
		ID          int64                   `json:"id"`
		UserID      int64                   `json:"user_id"`
		Type        string                  `json:"type"`
		RelatedID   int64                   `json:"related_id"`
		RelatedType string                  `json:"related_type"`
		Data        social.NotificationData `json:"data"`
	}
	if d.Entry.Type != changelog.Notification {
		return "", fmt.Errorf("entry %d is a %s", d.Entry.Seq, d.Entry.Type)
	}
	if err := json.Unmarshal(d.Entry.Data, &v); err != nil {
		return "", err
	}
	n := social.Notification{ID: v.ID, UserID: v.UserID, Type: v.Type, RelatedID: v.RelatedID, RelatedType: v.RelatedType, Data: v.Data}
	title, msg := n.Render(d.Language)
	out := title
	if msg != "" {
		out += "\n" + msg
	}
	if link := n.Link(); link != "" && s.PublicURL != "" {
		out += "\n" + strings.TrimRight(s.PublicURL, "/") + link
	}
	return out, nil
}
