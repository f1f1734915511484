package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
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
	fx.Provide(newChatResponder, newOperatorNotifier, newChatService, chatRoutes),
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

func newChatService(store Store, accounts *account.Service, responder chat.Responder, notifier chat.OperatorNotifier, log *slog.Logger) *chat.Service {
	s := chat.NewService(store, accounts, store, responder, notifier)
	s.Logger = log
	return s
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

type chatOpenBody struct {
	Language string `json:"language" validate:"omitempty,oneof=en ru"`
}

type chatTextBody struct {
	Text *string `json:"text" validate:"required"`
}

func chatRoutes(chats *chat.Service, auth *Auth, admin *AdminAuth, cfg Config) RoutesOut {
	guard := func(h fiber.Handler) fiber.Handler {
		return func(c *fiber.Ctx) error {
			if err := admin.Check(c); err != nil {
				return err
			}
			return h(c)
		}
	}
	// caller is the chat caller: the cookie's secret and, when a valid
	// Bearer token is sent, the signed-in user (an invalid token reads
	// anonymously). Every chat answer is private: no-store.
	caller := func(c *fiber.Ctx) (chat.Caller, error) {
		c.Set(fiber.HeaderCacheControl, "no-store")
		u, err := auth.Optional(c)
		if err != nil {
			return chat.Caller{}, err
		}
		return chat.Caller{Secret: c.Cookies(ChatCookie), User: u}, nil
	}
	setCookie := func(c *fiber.Ctx, secret string) {
		c.Cookie(&fiber.Cookie{
			Name: ChatCookie, Value: secret, Path: "/api/v1/chat",
			MaxAge: int(chatCookieMaxAge / time.Second), HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode,
			Secure: cfg.CookieSecure,
		})
	}
	return RoutesOut{Routes: []Route{
		// Opens a session (or returns the open one the cookie names) and
		// sets the cookie.
		{Method: http.MethodPost, Path: "/api/v1/chat/session", Errors: errsChatSession, Handler: func(c *fiber.Ctx) error {
			var b chatOpenBody
			if len(c.Body()) > 0 {
				if err := decodeStrict(c.Body(), &b); err != nil {
					return err
				}
			}
			who, err := caller(c)
			if err != nil {
				return err
			}
			lang := b.Language
			if lang == "" {
				lang = chat.LanguageFromAcceptLanguage(c.Get(fiber.HeaderAcceptLanguage))
			}
			sess, secret, err := chats.Open(c.UserContext(), who, lang)
			if err != nil {
				return err
			}
			setCookie(c, secret)
			return c.JSON(chatSessionView(sess))
		}},
		// Contract 5.
		{Method: http.MethodGet, Path: "/api/v1/chat/history", Errors: errsChatHistory, Handler: func(c *fiber.Ctx) error {
			who, err := caller(c)
			if err != nil {
				return err
			}
			ms, err := chats.History(c.UserContext(), who)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"messages": chatMessagesView(ms)})
		}},
		{Method: http.MethodPost, Path: "/api/v1/chat/messages", Errors: errsChatMessage, Handler: func(c *fiber.Ctx) error {
			var b chatTextBody
			if err := decodeStrict(c.Body(), &b); err != nil {
				return err
			}
			who, err := caller(c)
			if err != nil {
				return err
			}
			sent, err := chats.Send(c.UserContext(), who, *b.Text)
			if err != nil {
				return err
			}
			out := chatSentJSON{chatMessageJSON: chatMessageView(sent.Message), OfferOperator: sent.OfferOperator}
			if sent.Reply != nil {
				r := chatMessageView(sent.Reply)
				out.Reply = &r
			}
			return c.Status(http.StatusCreated).JSON(out)
		}},
		// Contract 6.
		{Method: http.MethodPost, Path: "/api/v1/chat/session/call-operator", Errors: errsChatCallOperator, Handler: func(c *fiber.Ctx) error {
			who, err := caller(c)
			if err != nil {
				return err
			}
			called, err := chats.CallOperator(c.UserContext(), who)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"success": true, "message": called.Message})
		}},

		// Operator routes.
		{Method: http.MethodGet, Path: "/api/v1/admin/chat/sessions", Errors: errsAdminChat, Handler: guard(func(c *fiber.Ctx) error {
			limit, offset, err := page(c, chat.DefaultSessionsLimit, chat.MaxSessionsLimit)
			if err != nil {
				return err
			}
			list, err := chats.Sessions(c.UserContext(), limit, offset)
			if err != nil {
				return err
			}
			out := make([]chatSessionJSON, 0, len(list))
			for _, s := range list {
				out = append(out, chatSessionView(s))
			}
			return c.JSON(fiber.Map{"sessions": out})
		})},
		{Method: http.MethodGet, Path: "/api/v1/admin/chat/sessions/:session_id/messages", Errors: errsAdminChat, Handler: guard(func(c *fiber.Ctx) error {
			sess, ms, err := chats.Transcript(c.UserContext(), c.Params("session_id"))
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"session": chatSessionView(sess), "messages": chatMessagesView(ms)})
		})},
		{Method: http.MethodPost, Path: "/api/v1/admin/chat/sessions/:session_id/messages", Errors: errsAdminChat, Handler: guard(func(c *fiber.Ctx) error {
			var b chatTextBody
			if err := decodeStrict(c.Body(), &b); err != nil {
				return err
			}
			m, err := chats.Reply(c.UserContext(), c.Params("session_id"), *b.Text)
			if err != nil {
				return err
			}
			return c.Status(http.StatusCreated).JSON(chatMessageView(m))
		})},
		{Method: http.MethodPost, Path: "/api/v1/admin/chat/sessions/:session_id/close", Errors: errsAdminChat, Handler: guard(func(c *fiber.Ctx) error {
			sess, err := chats.Close(c.UserContext(), c.Params("session_id"))
			if err != nil {
				return err
			}
			return c.JSON(chatSessionView(sess))
		})},
	}}
}
