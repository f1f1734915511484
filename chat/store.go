package chat

import (
	"context"
	"time"
)

// Store keeps sessions and messages. Implementations: storage/memory and
// storage/postgres; both pass storage/storagetest.
type Store interface {
	// CreateChatSession stores s with the hash of its secret and sets
	// s.ID; a zero CreatedAt is set to now, and LastMessageAt starts at
	// CreatedAt. account.ErrUserNotFound when s.UserID names no user.
	CreateChatSession(ctx context.Context, s *Session, secretHash []byte) error
	// ChatSessionBySecret returns the session whose secret has hash.
	// ErrSessionNotFound.
	ChatSessionBySecret(ctx context.Context, secretHash []byte) (*Session, error)
	// ChatSessionByPublicID returns the session with that public id.
	// ErrSessionNotFound.
	ChatSessionByPublicID(ctx context.Context, publicID string) (*Session, error)
	// LinkChatSession gives anonymous session id to user userID (a
	// session that has an owner keeps it). ErrSessionNotFound,
	// account.ErrUserNotFound.
	LinkChatSession(ctx context.Context, id, userID int64) error
	// AddChatMessage stores m in session m.SessionID, sets m.ID (and a
	// zero m.CreatedAt to now), and updates the session's LastMessageAt
	// and MessageCount in the same step. ErrSessionNotFound.
	AddChatMessage(ctx context.Context, m *Message) error
	// ChatMessages returns session id's messages, oldest first (by id);
	// with last > 0 only the last ones, still oldest first. A session's
	// messages are never another's.
	ChatMessages(ctx context.Context, sessionID int64, last int) ([]*Message, error)
	// EscalateChatSession marks session id escalated at at, unless it is
	// already, and reports whether it changed. ErrSessionNotFound.
	EscalateChatSession(ctx context.Context, id int64, at time.Time) (bool, error)
	// CloseChatSession closes session id at at (closing a closed session
	// changes nothing). ErrSessionNotFound.
	CloseChatSession(ctx context.Context, id int64, at time.Time) error
	// ChatSessions returns sessions for the operator: open escalated ones
	// first, then by LastMessageAt descending, then id descending.
	ChatSessions(ctx context.Context, limit, offset int) ([]*Session, error)
}
