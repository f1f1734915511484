package chat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/social"
)

// Users is what the chat service needs to know of users: their language.
type Users interface {
	User(ctx context.Context, id int64) (*account.User, error)
}

// DefaultEscalationLease is Service.EscalationLease's default.
const DefaultEscalationLease = time.Minute

// Service is the chat use cases. It is safe for concurrent use.
type Service struct {
	store         Store
	users         Users
	notifications social.NotificationStore
	responder     Responder
	notifier      OperatorNotifier
	// Now is the clock, in microseconds (what every store keeps); tests
	// replace it.
	Now func() time.Time
	// EscalationLease is how long a call for an operator holds its
	// session's escalation while the notifier runs: other calls meanwhile
	// notify nobody. It must outlast the notifier (a call whose process
	// dies mid-notification blocks new calls for that long, then the
	// user may call again). Zero is DefaultEscalationLease.
	EscalationLease time.Duration
	// Logger receives what the service cannot tell its caller: a
	// responder that failed, a notification that was not written.
	Logger *slog.Logger
}

// NewService returns a Service. notifications may be nil (operators'
// answers then notify nobody); a nil responder answers nothing; a nil
// notifier is a LogNotifier on slog.Default().
func NewService(store Store, users Users, notifications social.NotificationStore, responder Responder, notifier OperatorNotifier) *Service {
	if notifier == nil {
		notifier = LogNotifier{}
	}
	return &Service{
		store: store, users: users, notifications: notifications, responder: responder, notifier: notifier,
		Now:             func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		EscalationLease: DefaultEscalationLease,
		Logger:          slog.Default(),
	}
}

// Caller is who asks: the session secret (from the cookie) and the
// signed-in user, nil when anonymous.
//
// A signed-in user's chat belongs to their account: whatever secret they
// hold, they reach their own current session (UserChatSession: the open
// one, else the latest), on every device where they are signed in. An
// anonymous session is reached with its secret alone; a user's session
// never with a secret alone, nor by another user. When a signed-in
// caller holds an anonymous session's secret and their account has no
// open chat, the anonymous session is attached to the account (Open or
// Claim) with a new secret: whoever knew the old one, e.g. because they
// planted it in the user's browser, is shut out before the user writes
// anything. When the account has an open chat already, the anonymous
// session is left as it was: the account's chat wins, and the browser
// finds its anonymous chat again after signing out.
type Caller struct {
	Secret string
	User   *account.User
}

// Open returns the caller's session when there is an open one the
// caller may use (for a signed-in caller: their account's chat, after
// attaching the anonymous session their secret names when the account
// has none open), or opens a new one. secret is what the caller keeps in
// their cookie: the one they sent, or a new one; for a signed-in caller
// who sent none and reached their account's chat it is "" (the account,
// not the cookie, names that chat). lang is the language of a new
// anonymous session (en or ru; anything else is en).
func (s *Service) Open(ctx context.Context, c Caller, lang string) (sess *Session, secret string, err error) {
	if c.Secret != "" || c.User != nil {
		sess, secret, err := s.claim(ctx, c)
		switch {
		case err == nil && sess.Open():
			return sess, secret, nil
		case err != nil && !errors.Is(err, ErrSessionNotFound):
			return nil, "", err
		}
	}
	sess = &Session{PublicID: newPublicID(), Language: normalizeLanguage(lang), CreatedAt: s.Now()}
	if c.User != nil {
		sess.UserID = c.User.ID
		sess.Language = normalizeLanguage(c.User.Language)
	}
	secret = account.NewSecret()
	if err := s.store.CreateChatSession(ctx, sess, account.HashToken(secret)); err != nil {
		return nil, "", err
	}
	return sess, secret, nil
}

// Claim attaches the anonymous session whose secret a signed-in caller
// holds to their account, with a new secret, when the account has no
// open chat, and returns the secret the caller holds from now on: the
// new one, or c.Secret itself when nothing was attached (no user, no
// secret, one that names no anonymous session, an account with an open
// chat). Open, closed or escalated, the session is attached all the
// same. Only storage failures are errors; a claim lost to a concurrent
// one leaves c.Secret.
func (s *Service) Claim(ctx context.Context, c Caller) (string, error) {
	if c.User == nil || c.Secret == "" {
		return c.Secret, nil
	}
	_, secret, err := s.claim(ctx, c)
	if errors.Is(err, ErrSessionNotFound) {
		return c.Secret, nil
	}
	return secret, err
}

// claim is the caller's session and the secret the caller holds now:
// for an anonymous caller the session of their secret, for a signed-in
// one their account's chat, attaching the anonymous session of their
// secret first when the account has no open chat. ErrSessionNotFound as
// for session.
func (s *Service) claim(ctx context.Context, c Caller) (*Session, string, error) {
	if c.User == nil {
		sess, err := s.session(ctx, c)
		return sess, c.Secret, err
	}
	own, err := s.store.UserChatSession(ctx, c.User.ID)
	if err != nil && !errors.Is(err, ErrSessionNotFound) {
		return nil, "", err
	}
	if own == nil || !own.Open() {
		anon, err := s.lookup(ctx, c.Secret)
		switch {
		case err == nil && anon.UserID == 0:
			secret := account.NewSecret()
			err := s.store.ClaimChatSession(ctx, anon.ID, c.User.ID, account.HashToken(c.Secret), account.HashToken(secret))
			if err == nil {
				anon.UserID = c.User.ID
				return anon, secret, nil
			}
			if !errors.Is(err, ErrSessionNotFound) {
				return nil, "", err
			}
			// A concurrent request attached it first: read the account's
			// chat again.
			if own, err = s.store.UserChatSession(ctx, c.User.ID); err != nil {
				return nil, "", err
			}
		case err != nil && !errors.Is(err, ErrSessionNotFound):
			return nil, "", err
		}
	}
	if own == nil {
		return nil, "", ErrSessionNotFound
	}
	return own, c.Secret, nil
}

// SignOut ends every secret of userID's sessions, for a logout: the
// cookies that named them name nothing any more, whoever holds them and
// with whatever token. The sessions themselves stay as they were (open,
// escalated or not), so that an operator's answer still reaches the user
// as a support_reply notification and, signed in again, in the chat
// itself (a signed-in user's chat is found by account, not by secret).
func (s *Service) SignOut(ctx context.Context, userID int64) error {
	return s.store.RevokeChatSecrets(ctx, userID)
}

// lookup is the session of secret: ErrSessionNotFound for no secret or
// an unknown one.
func (s *Service) lookup(ctx context.Context, secret string) (*Session, error) {
	if secret == "" || len(secret) > 128 {
		return nil, ErrSessionNotFound
	}
	return s.store.ChatSessionBySecret(ctx, account.HashToken(secret))
}

// session is the caller's session: for a signed-in caller their
// account's chat, for an anonymous one the anonymous session of their
// secret. ErrSessionNotFound for an account without a chat, no secret,
// an unknown one, or a user's session reached by secret alone.
func (s *Service) session(ctx context.Context, c Caller) (*Session, error) {
	if c.User != nil {
		return s.store.UserChatSession(ctx, c.User.ID)
	}
	sess, err := s.lookup(ctx, c.Secret)
	if err != nil {
		return nil, err
	}
	if sess.UserID != 0 {
		return nil, ErrSessionNotFound
	}
	return sess, nil
}

// openSession is the caller's session when it takes messages:
// ErrSessionNotFound, ErrSessionClosed.
func (s *Service) openSession(ctx context.Context, c Caller) (*Session, error) {
	sess, err := s.session(ctx, c)
	if err != nil {
		return nil, err
	}
	if !sess.Open() {
		return nil, ErrSessionClosed
	}
	return sess, nil
}

// History returns every message of the caller's session, oldest first
// (a closed session's too). ErrSessionNotFound.
func (s *Service) History(ctx context.Context, c Caller) ([]*Message, error) {
	sess, err := s.session(ctx, c)
	if err != nil {
		return nil, err
	}
	return s.store.ChatMessages(ctx, sess.ID, 0)
}

// Sent is the outcome of a user's message.
type Sent struct {
	Message *Message
	// Reply is the automatic answer, nil when there is none (the session
	// is escalated, or the responder had nothing).
	Reply *Message
	// OfferOperator is true when the reply suggests calling an operator.
	OfferOperator bool
}

// Send stores the caller's message and, unless the session is escalated,
// the Responder's answer after it. *input.Error, ErrSessionNotFound,
// ErrSessionClosed.
func (s *Service) Send(ctx context.Context, c Caller, text string) (*Sent, error) {
	text, err := CheckText(text)
	if err != nil {
		return nil, err
	}
	sess, err := s.openSession(ctx, c)
	if err != nil {
		return nil, err
	}
	m := &Message{SessionID: sess.ID, Sender: SenderUser, Text: text, CreatedAt: s.Now()}
	if err := s.store.AddChatMessage(ctx, m); err != nil {
		return nil, err
	}
	out := &Sent{Message: m}
	if sess.Escalated || s.responder == nil {
		return out, nil
	}
	a, err := s.responder.Respond(ctx, Question{SessionID: sess.PublicID, UserID: sess.UserID, Language: s.language(ctx, sess), Text: text})
	if err != nil {
		s.Logger.LogAttrs(ctx, slog.LevelError, "chat: responder failed", slog.String("session_id", sess.PublicID), slog.String("error", err.Error()))
		return out, nil
	}
	if reply, ok := cleanReply(a.Text); ok {
		r := &Message{SessionID: sess.ID, Sender: SenderSupport, Text: reply, CreatedAt: s.Now()}
		if err := s.store.AddChatMessage(ctx, r); err != nil {
			return nil, err
		}
		out.Reply, out.OfferOperator = r, a.OfferOperator
	}
	return out, nil
}

// Called is the outcome of a call for an operator.
type Called struct {
	Session *Session
	// Already is true when an operator had been called before: nobody
	// was notified again.
	Already bool
	// Message tells the user what happens next, in their language.
	Message string
}

// CallOperator escalates the caller's session: the OperatorNotifier is
// told first, and only when it succeeded is the session marked escalated,
// so a failure (ErrNotifyFailed) leaves it unescalated and the call may be
// retried. A session has one escalation: a call while another one is
// notifying (it holds the session's escalation for EscalationLease), or
// once the session is escalated, notifies nobody and answers Already.
// ErrSessionNotFound, ErrSessionClosed, ErrNotifyFailed.
func (s *Service) CallOperator(ctx context.Context, c Caller) (*Called, error) {
	sess, err := s.openSession(ctx, c)
	if err != nil {
		return nil, err
	}
	lang := s.language(ctx, sess)
	already := &Called{Session: sess, Already: true, Message: operatorMessage(lang, true)}
	if sess.Escalated {
		return already, nil
	}
	at := s.Now()
	lease := s.EscalationLease
	if lease <= 0 {
		lease = DefaultEscalationLease
	}
	until := at.Add(lease)
	held, err := s.store.BeginChatEscalation(ctx, sess.ID, at, until)
	if err != nil {
		return nil, err
	}
	if !held {
		return already, nil
	}
	last, err := s.store.ChatMessages(ctx, sess.ID, EscalationMessages)
	if err == nil {
		err = s.notifier.NotifyOperator(ctx, Escalation{SessionID: sess.PublicID, UserID: sess.UserID, Language: lang, EscalatedAt: at, LastMessages: last})
		if err != nil {
			err = fmt.Errorf("%w: %w", ErrNotifyFailed, err)
		}
	}
	if err != nil {
		s.cancelEscalation(ctx, sess, until)
		return nil, err
	}
	if _, err := s.store.EscalateChatSession(ctx, sess.ID, at); err != nil {
		return nil, err
	}
	sess.Escalated, sess.EscalatedAt = true, at
	return &Called{Session: sess, Message: operatorMessage(lang, false)}, nil
}

// cancelEscalation gives up the escalation a failed call held, so that
// the user may call again at once; should that fail too, the hold ends
// by itself after EscalationLease. It runs even when ctx has ended.
func (s *Service) cancelEscalation(ctx context.Context, sess *Session, until time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.store.CancelChatEscalation(ctx, sess.ID, until); err != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "chat: escalation hold not released; it ends by itself",
			slog.String("session_id", sess.PublicID), slog.Time("until", until), slog.String("error", err.Error()))
	}
}

func operatorMessage(lang string, already bool) string {
	switch {
	case lang == LangRU && already:
		return "Оператор уже вызван и ответит в этом чате."
	case lang == LangRU:
		return "Оператор вызван и ответит в этом чате."
	case already:
		return "An operator has already been called and will answer in this chat."
	}
	return "An operator has been called and will answer in this chat."
}

// language is the language to answer sess in: its signed-in user's
// profile language, or the session's own.
func (s *Service) language(ctx context.Context, sess *Session) string {
	if sess.UserID != 0 && s.users != nil {
		if u, err := s.users.User(ctx, sess.UserID); err == nil {
			return normalizeLanguage(u.Language)
		}
	}
	return normalizeLanguage(sess.Language)
}

// Operator side.

// Sessions lists sessions for the operator: open escalated ones first,
// then by latest activity. limit 0 is DefaultSessionsLimit; limit is
// capped at MaxSessionsLimit.
func (s *Service) Sessions(ctx context.Context, limit, offset int) ([]*Session, error) {
	if limit <= 0 {
		limit = DefaultSessionsLimit
	}
	limit = min(limit, MaxSessionsLimit)
	return s.store.ChatSessions(ctx, limit, max(offset, 0))
}

// Transcript returns session publicID with all its messages, for the
// operator. ErrSessionNotFound.
func (s *Service) Transcript(ctx context.Context, publicID string) (*Session, []*Message, error) {
	sess, err := s.store.ChatSessionByPublicID(ctx, publicID)
	if err != nil {
		return nil, nil, err
	}
	ms, err := s.store.ChatMessages(ctx, sess.ID, 0)
	if err != nil {
		return nil, nil, err
	}
	return sess, ms, nil
}

// Reply stores an operator's answer in session publicID (closed sessions
// included: the user still reads their history). When the session
// belongs to a signed-in user, the user gets one support_reply
// notification quoting the answer's first ExcerptLen characters; should
// writing it fail, the answer stays and the failure is logged.
// *input.Error, ErrSessionNotFound.
func (s *Service) Reply(ctx context.Context, publicID, text string) (*Message, error) {
	text, err := CheckText(text)
	if err != nil {
		return nil, err
	}
	sess, err := s.store.ChatSessionByPublicID(ctx, publicID)
	if err != nil {
		return nil, err
	}
	m := &Message{SessionID: sess.ID, Sender: SenderSupport, Text: text, CreatedAt: s.Now()}
	if err := s.store.AddChatMessage(ctx, m); err != nil {
		return nil, err
	}
	if sess.UserID != 0 && s.notifications != nil {
		n := &social.Notification{
			UserID: sess.UserID, Type: social.TypeSupportReply,
			RelatedID: sess.ID, RelatedType: social.RelatedChat,
			Data: social.NotificationData{Excerpt: Excerpt(text)},
		}
		if err := s.notifications.CreateNotification(ctx, n); err != nil {
			s.Logger.LogAttrs(ctx, slog.LevelError, "chat: support_reply notification not written",
				slog.String("session_id", sess.PublicID), slog.Int64("user_id", sess.UserID), slog.String("error", err.Error()))
		}
	}
	return m, nil
}

// Close closes session publicID: its history stays, it takes no more
// messages, and its secret opens a new session next time.
// ErrSessionNotFound.
func (s *Service) Close(ctx context.Context, publicID string) (*Session, error) {
	sess, err := s.store.ChatSessionByPublicID(ctx, publicID)
	if err != nil {
		return nil, err
	}
	if err := s.store.CloseChatSession(ctx, sess.ID, s.Now()); err != nil {
		return nil, err
	}
	return s.store.ChatSessionByPublicID(ctx, publicID)
}

// CheckText returns text trimmed, or an *input.Error when it is empty,
// not UTF-8, longer than MaxTextLen characters, or holds control
// characters other than line breaks and tabs.
func CheckText(text string) (string, error) {
	if !utf8.ValidString(text) {
		return "", input.Invalid("text", "must be UTF-8")
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return "", input.Invalid("text", "must not be empty")
	}
	if utf8.RuneCountInString(text) > MaxTextLen {
		return "", input.Invalid("text", "must be at most "+strconv.Itoa(MaxTextLen)+" characters")
	}
	if !input.IsMultilineText(text) { // the text rule for fields with line breaks
		return "", input.Invalid("text", "must not hold control characters")
	}
	return text, nil
}

// cleanReply makes a responder's answer a storable message: trimmed, and
// cut to MaxTextLen characters.
func cleanReply(text string) (string, bool) {
	text = strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	if text == "" {
		return "", false
	}
	if utf8.RuneCountInString(text) > MaxTextLen {
		text = string([]rune(text)[:MaxTextLen])
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, text), true
}

// Excerpt is the first ExcerptLen characters of text.
func Excerpt(text string) string {
	if utf8.RuneCountInString(text) <= ExcerptLen {
		return text
	}
	return string([]rune(text)[:ExcerptLen])
}

// normalizeLanguage is ru for ru, en for anything else.
func normalizeLanguage(lang string) string {
	if strings.EqualFold(strings.TrimSpace(lang), LangRU) {
		return LangRU
	}
	return LangEN
}

// LanguageFromAcceptLanguage picks en or ru from an Accept-Language
// header: the one with the higher weight (the earlier on a tie), en when
// neither is listed.
func LanguageFromAcceptLanguage(header string) string {
	best, bestQ := LangEN, -1.0
	for part := range strings.SplitSeq(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if primary != LangEN && primary != LangRU {
			continue
		}
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0
				}
				q = f
			}
		}
		if q > bestQ && q > 0 {
			best, bestQ = primary, q
		}
	}
	return best
}

// newPublicID is a session's public id: "cs_" and 96 random bits in hex.
func newPublicID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("chat: no randomness: " + err.Error())
	}
	return "cs_" + hex.EncodeToString(b[:])
}
