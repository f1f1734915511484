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
	// UserChatSession returns user userID's chat: the open session with
	// the highest id, else (every one closed) the one with the highest
	// id. ErrSessionNotFound when the user has none.
	UserChatSession(ctx context.Context, userID int64) (*Session, error)
	// ClaimChatSession gives anonymous session id to user userID and
	// replaces its secret's hash oldHash with newHash, in one step, so
	// that the old secret opens nothing from then on. ErrSessionNotFound
	// when session id is not anonymous or its hash is not oldHash (any
	// more: a concurrent claim won); account.ErrUserNotFound.
	ClaimChatSession(ctx context.Context, id, userID int64, oldHash, newHash []byte) error
	// RevokeChatSecrets forgets the secret of every session of userID:
	// no secret opens them any more. They keep their history, state and
	// owner (the operator still answers them). Revoking twice, or for a
	// user with no session, changes nothing.
	RevokeChatSecrets(ctx context.Context, userID int64) error
	// AddChatMessage stores m in session m.SessionID, sets m.ID (and a
	// zero m.CreatedAt to now), and updates the session's LastMessageAt
	// and MessageCount in the same step. ErrSessionNotFound.
	AddChatMessage(ctx context.Context, m *Message) error
	// ChatMessages returns session id's messages, oldest first (by id);
	// with last > 0 only the last ones, still oldest first. A session's
	// messages are never another's.
	ChatMessages(ctx context.Context, sessionID int64, last int) ([]*Message, error)
	// BeginChatEscalation reserves the escalation of session id until
	// until, and reports whether it did: not when the session is
	// escalated already, or another reservation holds at at (one whose
	// until is after at). Of concurrent calls at most one gets it.
	// ErrSessionNotFound.
	BeginChatEscalation(ctx context.Context, id int64, at, until time.Time) (bool, error)
	// CancelChatEscalation drops the reservation until of session id (a
	// reservation since replaced is left alone). ErrSessionNotFound.
	CancelChatEscalation(ctx context.Context, id int64, until time.Time) error
	// EscalateChatSession marks session id escalated at at, unless it is
	// already, drops its reservation, and reports whether it changed.
	// ErrSessionNotFound.
	EscalateChatSession(ctx context.Context, id int64, at time.Time) (bool, error)
	// CloseChatSession closes session id at at (closing a closed session
	// changes nothing). ErrSessionNotFound.
	CloseChatSession(ctx context.Context, id int64, at time.Time) error
	// ChatSessions returns sessions for the operator: open escalated ones
	// first, then by LastMessageAt descending, then id descending.
	ChatSessions(ctx context.Context, limit, offset int) ([]*Session, error)
}
