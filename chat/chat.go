// Package chat is predictkit's support chat: a session per browser (or
// per signed-in user), messages between the user and support, an
// automatic first answer, and escalation to a human operator.
//
// A session is reached with a secret that only the client holds (the
// server keeps it in an HttpOnly cookie and stores only its SHA-256); its
// public id, which operators see, is a different random value. A session
// only ever reads its own messages. A signed-in user's chat belongs to
// their account: they reach it on every device where they are signed in,
// and never with a secret alone; an anonymous session is attached to the
// account of the user who signs in with it (when the account has no open
// chat) with a new secret; a logout ends the secrets of all the user's
// sessions (see Caller, Service.Claim, Service.SignOut).
//
// Two interfaces are the seams for deployments: a Responder writes the
// automatic answer to each user message (FAQResponder, the default,
// answers from a FAQ file in the user's language and otherwise offers the
// operator), and an OperatorNotifier tells the support team that a
// session asks for a person (LogNotifier writes a log line,
// WebhookNotifier POSTs JSON to a URL). A session is marked escalated
// only after its notifier succeeded, so a failed notification can be
// retried; concurrent calls notify once.
//
// When an operator answers a session that belongs to a signed-in user,
// the user gets a support_reply notification.
package chat

import "time"

// Senders of a message.
const (
	SenderUser    = "user"
	SenderSupport = "support"
)

// Limits.
const (
	// MaxTextLen is the longest message, in characters.
	MaxTextLen = 4000
	// ExcerptLen is how much of an operator's answer a notification quotes.
	ExcerptLen = 140
	// EscalationMessages is how many of the latest messages an
	// escalation carries to the operator.
	EscalationMessages = 10
	// DefaultSessionsLimit and MaxSessionsLimit page the operator's list.
	DefaultSessionsLimit = 50
	MaxSessionsLimit     = 100
)

// Languages a session answers in.
const (
	LangEN = "en"
	LangRU = "ru"
)

// Session is one support conversation.
type Session struct {
	// ID is the internal id (a notification's related_id).
	ID int64
	// PublicID is the id operators see and use in their routes; it is
	// not the secret that opens the session.
	PublicID string
	// UserID is the signed-in owner, 0 for an anonymous session.
	UserID int64
	// Language is the anonymous session's language (en or ru); a
	// signed-in user's profile language wins over it.
	Language string
	// Escalated is set once an operator was notified; EscalatedAt then
	// says when.
	Escalated   bool
	EscalatedAt time.Time
	// ClosedAt is set when an operator closed the session; a closed
	// session keeps its history but takes no more messages.
	ClosedAt      time.Time
	CreatedAt     time.Time
	LastMessageAt time.Time
	MessageCount  int64
}

// Open reports whether the session still takes messages.
func (s *Session) Open() bool { return s.ClosedAt.IsZero() }

// Message is one message of a session.
type Message struct {
	ID        int64
	SessionID int64
	// Sender is SenderUser or SenderSupport (an operator, or the
	// automatic answer).
	Sender    string
	Text      string
	CreatedAt time.Time
}
