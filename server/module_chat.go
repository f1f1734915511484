package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/input"
)

// ChatModule provides the support chat: the chat service with its
// Responder (a chat.FAQResponder on Config.ChatFAQ) and OperatorNotifier
// (a chat.WebhookNotifier on Config.ChatWebhookURL, or a
// chat.LogNotifier), the user's routes (session, history, messages,
// call-operator) and the operator's. Replace either seam with
// fx.Decorate, e.g.
//
//	server.New(cfg, fx.Decorate(func() chat.Responder { return myBot }))
var ChatModule = fx.Module("chat",
	fx.Provide(newChatResponder, newOperatorNotifier, newChatService, chatRoutes, chatLogoutHook),
)

// ChatCookie is the cookie that carries a chat session's secret.
const ChatCookie = "chat_session_id"

// chatCookieMaxAge is how long a browser keeps the chat cookie.
const chatCookieMaxAge = 30 * 24 * time.Hour

func newChatResponder(cfg Config) (chat.Responder, error) {
	r, err := chat.LoadFAQResponder(cfg.ChatFAQ)
	if err != nil {
		return nil, fmt.Errorf("chat FAQ: %w", err)
	}
	return r, nil
}

func newOperatorNotifier(cfg Config, log *slog.Logger) (chat.OperatorNotifier, error) {
	if cfg.ChatWebhookURL == "" {
		return chat.LogNotifier{Logger: log}, nil
	}
	return chat.NewWebhookNotifier(cfg.ChatWebhookURL, cfg.withDefaults().ChatWebhookTimeout)
}

func newChatService(store Store, accounts *account.Service, responder chat.Responder, notifier chat.OperatorNotifier, cfg Config, log *slog.Logger) *chat.Service {
	s := chat.NewService(store, accounts, store, responder, notifier)
	s.Logger = log
	// A call for an operator holds its session's escalation while the
	// notifier runs, which the request's deadline (WriteTimeout) ends.
	s.EscalationLease = max(chat.DefaultEscalationLease, cfg.withDefaults().WriteTimeout+5*time.Second)
	return s
}

// chatLogoutHook ends, at logout, every cookie of the user's chat
// sessions (chat.Service.SignOut). The logout route cannot tell which
// session is this browser's: the chat cookie is only sent to
// /api/v1/chat.
func chatLogoutHook(chats *chat.Service) logoutHookOut {
	return logoutHookOut{Hook: chats.SignOut}
}

// chatMessageJSON is a Chat message; created_at is Unix milliseconds.
type chatMessageJSON struct {
	ID        int64  `json:"id"`
	Sender    string `json:"sender"`
	Text      string `json:"text"`
	CreatedAt int64  `json:"created_at"`
}

func chatMessageView(m *chat.Message) chatMessageJSON {
	return chatMessageJSON{ID: m.ID, Sender: m.Sender, Text: m.Text, CreatedAt: m.CreatedAt.UnixMilli()}
}

func chatMessagesView(ms []*chat.Message) []chatMessageJSON {
	out := make([]chatMessageJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, chatMessageView(m))
	}
	return out
}

// chatSentJSON answers a user's message: the message, and the automatic
// reply stored after it (null when there is none).
type chatSentJSON struct {
	chatMessageJSON
	Reply         *chatMessageJSON `json:"reply"`
	OfferOperator bool             `json:"offer_operator"`
}

// chatSessionJSON is a session as the operator sees it (and, with fewer
// fields, as its user does). Times are Unix milliseconds, as in chat
// messages.
type chatSessionJSON struct {
	SessionID     string `json:"session_id"`
	UserID        *int64 `json:"user_id"`
	Language      string `json:"language"`
	Escalated     bool   `json:"escalated"`
	EscalatedAt   *int64 `json:"escalated_at"`
	Closed        bool   `json:"closed"`
	ClosedAt      *int64 `json:"closed_at"`
	CreatedAt     int64  `json:"created_at"`
	LastMessageAt int64  `json:"last_message_at"`
	MessageCount  int64  `json:"message_count"`
}

func millis(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

func chatSessionView(s *chat.Session) chatSessionJSON {
	v := chatSessionJSON{
		SessionID: s.PublicID, Language: s.Language, Escalated: s.Escalated, EscalatedAt: millis(s.EscalatedAt),
		Closed: !s.Open(), ClosedAt: millis(s.ClosedAt), CreatedAt: s.CreatedAt.UnixMilli(),
		LastMessageAt: s.LastMessageAt.UnixMilli(), MessageCount: s.MessageCount,
	}
	if s.UserID != 0 {
		id := s.UserID
		v.UserID = &id
	}
	return v
}

// chatHandlers serves the support chat: the user's routes (a cookie, and
// a Bearer token when signed in) and the operator's (the admin token).
type chatHandlers struct {
	chats        *chat.Service
	auth         *Auth
	cookieSecure bool
}

// chatRoutes lists the chat routes. Each handler below follows its error
// table, which says what the route answers and in which order.
func chatRoutes(chats *chat.Service, auth *Auth, admin *AdminAuth, cfg Config) RoutesOut {
	h := &chatHandlers{chats: chats, auth: auth, cookieSecure: cfg.CookieSecure}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/chat/session", Errors: errsChatSession, Handler: h.handleOpen},
		{Method: http.MethodGet, Path: "/api/v1/chat/history", Errors: errsChatHistory, Handler: h.handleHistory},
		{Method: http.MethodPost, Path: "/api/v1/chat/messages", Errors: errsChatMessage, Handler: h.handleSend},
		{Method: http.MethodPost, Path: "/api/v1/chat/session/call-operator", Errors: errsChatCallOperator, Handler: h.handleCallOperator},

		{Method: http.MethodGet, Path: "/api/v1/admin/chat/sessions", Errors: errsAdminChat, Handler: admin.guard(h.handleSessions)},
		{Method: http.MethodGet, Path: "/api/v1/admin/chat/sessions/:session_id/messages", Errors: errsAdminChat, Handler: admin.guard(h.handleTranscript)},
		{Method: http.MethodPost, Path: "/api/v1/admin/chat/sessions/:session_id/messages", Errors: errsAdminChat, Handler: admin.guard(h.handleReply)},
		{Method: http.MethodPost, Path: "/api/v1/admin/chat/sessions/:session_id/close", Errors: errsAdminChat, Handler: admin.guard(h.handleClose)},
	}}
}

// caller is the chat caller: the cookie's secret and, when a valid Bearer
// token is sent, the signed-in user (an invalid token reads anonymously).
// A signed-in caller reaches their account's chat on any device; one whose
// cookie names an anonymous session attaches it to their account here,
// whatever the route, when the account has no open chat: the session
// gets a new secret, which the answer's cookie carries, and the old one
// opens nothing any more. A user's session is never reached with a
// cookie alone, nor with another user's token.
// Every chat answer is private: no-store.
func (h *chatHandlers) caller(c *fiber.Ctx) (chat.Caller, error) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	u, err := h.auth.Optional(c)
	if err != nil {
		return chat.Caller{}, err
	}
	who := chat.Caller{Secret: c.Cookies(ChatCookie), User: u}
	if u != nil && who.Secret != "" {
		secret, err := h.chats.Claim(c.UserContext(), who)
		if err != nil {
			return chat.Caller{}, err
		}
		if secret != who.Secret {
			h.setCookie(c, secret)
			who.Secret = secret
		}
	}
	return who, nil
}

// setCookie sets the cookie that names the caller's session.
func (h *chatHandlers) setCookie(c *fiber.Ctx, secret string) {
	c.Cookie(&fiber.Cookie{
		Name: ChatCookie, Value: secret, Path: "/api/v1/chat",
		MaxAge: int(chatCookieMaxAge / time.Second), HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
		Secure: h.cookieSecure,
	})
}

type chatOpenBody struct {
	Language string `json:"language" validate:"omitempty,oneof=en ru"`
}

// POST /chat/session: open a session, or return the open one the cookie
// names, and set the cookie. Checks run 400 (an optional body).
var errsChatSession = table("internal_error",
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
)

// handleOpen opens the caller's session in the body's language, or the
// one Accept-Language asks for.
func (h *chatHandlers) handleOpen(c *fiber.Ctx) error {
	var b chatOpenBody
	if len(c.Body()) > 0 {
		if err := decodeBody(c, &b); err != nil {
			return err
		}
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	lang := b.Language
	if lang == "" {
		lang = chat.LanguageFromAcceptLanguage(c.Get(fiber.HeaderAcceptLanguage))
	}
	sess, secret, err := h.chats.Open(c.UserContext(), who, lang)
	if err != nil {
		return err
	}
	if secret != "" {
		h.setCookie(c, secret)
	}
	return c.JSON(chatSessionView(sess))
}

// GET /chat/history: every message of the current session, oldest first.
// Checks run 401 unauthorized: no cookie, or one that names no session.
var errsChatHistory = table("internal_error",
	on(chat.ErrSessionNotFound, http.StatusUnauthorized, "unauthorized"),
)

// handleHistory answers the session's messages.
func (h *chatHandlers) handleHistory(c *fiber.Ctx) error {
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	ms, err := h.chats.History(c.UserContext(), who)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"messages": chatMessagesView(ms)})
}

type chatTextBody struct {
	Text *string `json:"text" validate:"required"`
}

// POST /chat/messages: send a message to support; the automatic answer
// follows it. Checks run 400 (the body first), then 404 not_found (no
// active session, as for call-operator).
var errsChatMessage = table("internal_error",
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
	on(chat.ErrSessionNotFound, http.StatusNotFound, "not_found"),
	on(chat.ErrSessionClosed, http.StatusNotFound, "not_found"),
)

// handleSend stores the caller's message and answers it with the
// automatic reply (201).
func (h *chatHandlers) handleSend(c *fiber.Ctx) error {
	var b chatTextBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	sent, err := h.chats.Send(c.UserContext(), who, *b.Text)
	if err != nil {
		return err
	}
	out := chatSentJSON{chatMessageJSON: chatMessageView(sent.Message), OfferOperator: sent.OfferOperator}
	if sent.Reply != nil {
		r := chatMessageView(sent.Reply)
		out.Reply = &r
	}
	return c.Status(http.StatusCreated).JSON(out)
}

// POST /chat/session/call-operator: escalate the current session to a
// human operator. Checks run 404 not_found: no active session (no cookie,
// an unknown one, a closed session); an operator who could not be
// notified is 500 internal_error.
var errsChatCallOperator = table("internal_error",
	on(chat.ErrSessionNotFound, http.StatusNotFound, "not_found"),
	on(chat.ErrSessionClosed, http.StatusNotFound, "not_found"),
	on(chat.ErrNotifyFailed, http.StatusInternalServerError, "internal_error"),
)

// handleCallOperator escalates the session.
func (h *chatHandlers) handleCallOperator(c *fiber.Ctx) error {
	who, err := h.caller(c)
	if err != nil {
		return err
	}
	called, err := h.chats.CallOperator(c.UserContext(), who)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true, "message": called.Message})
}

// The operator's chat routes: GET /admin/chat/sessions (list), GET and
// POST /admin/chat/sessions/{session_id}/messages (transcript, answer),
// POST /admin/chat/sessions/{session_id}/close. Checks run as adminRules
// (404 when disabled, 401, 400), then 404 session_not_found.
var errsAdminChat = table("internal_error", slices.Concat(adminRules, []rule{
	on(chat.ErrSessionNotFound, http.StatusNotFound, "session_not_found"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
})...)

// handleSessions answers a page of sessions, open escalated ones first,
// then by latest activity.
func (h *chatHandlers) handleSessions(c *fiber.Ctx) error {
	limit, offset, err := page(c, chat.DefaultSessionsLimit, chat.MaxSessionsLimit)
	if err != nil {
		return err
	}
	list, err := h.chats.Sessions(c.UserContext(), limit, offset)
	if err != nil {
		return err
	}
	out := make([]chatSessionJSON, 0, len(list))
	for _, s := range list {
		out = append(out, chatSessionView(s))
	}
	return c.JSON(fiber.Map{"sessions": out})
}

// handleTranscript answers a session with every message, oldest first.
func (h *chatHandlers) handleTranscript(c *fiber.Ctx) error {
	id, err := pathText(c, "session_id")
	if err != nil {
		return err
	}
	sess, ms, err := h.chats.Transcript(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"session": chatSessionView(sess), "messages": chatMessagesView(ms)})
}

// handleReply answers a session as support (201).
func (h *chatHandlers) handleReply(c *fiber.Ctx) error {
	id, err := pathText(c, "session_id")
	if err != nil {
		return err
	}
	var b chatTextBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	m, err := h.chats.Reply(c.UserContext(), id, *b.Text)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(chatMessageView(m))
}

// handleClose closes a session and answers it.
func (h *chatHandlers) handleClose(c *fiber.Ctx) error {
	id, err := pathText(c, "session_id")
	if err != nil {
		return err
	}
	sess, err := h.chats.Close(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(chatSessionView(sess))
}
