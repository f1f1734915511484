package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
)

var _ chat.Store = (*Store)(nil)

const chatSessionCols = `id, public_id, COALESCE(user_id, 0), language, escalated, escalated_at, closed_at,
	message_count, created_at, last_message_at`

func scanChatSession(row pgx.Row) (*chat.Session, error) {
	s := &chat.Session{}
	var escalatedAt, closedAt *time.Time
	if err := row.Scan(&s.ID, &s.PublicID, &s.UserID, &s.Language, &s.Escalated, &escalatedAt, &closedAt,
		&s.MessageCount, &s.CreatedAt, &s.LastMessageAt); err != nil {
		return nil, err
	}
	if escalatedAt != nil {
		s.EscalatedAt = *escalatedAt
	}
	if closedAt != nil {
		s.ClosedAt = *closedAt
	}
	return s, nil
}

// nullUser is a user id as a nullable column: 0 is NULL.
func nullUser(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// CreateChatSession stores sess with the hash of its secret and sets
// sess.ID.
func (s *Store) CreateChatSession(ctx context.Context, sess *chat.Session, secretHash []byte) error {
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now()
	}
	sess.CreatedAt = dbTime(sess.CreatedAt)
	sess.LastMessageAt = sess.CreatedAt
	err := s.pool.QueryRow(ctx, `INSERT INTO chat_sessions (public_id, secret_hash, user_id, language, created_at, last_message_at)
		VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`,
		sess.PublicID, secretHash, nullUser(sess.UserID), sess.Language, sess.CreatedAt).Scan(&sess.ID)
	if isUserFK(err, "chat_sessions_user_id_fkey") {
		return account.ErrUserNotFound
	}
	return translate(err, nil)
}

// ChatSessionBySecret returns the session whose secret has hash.
// chat.ErrSessionNotFound.
func (s *Store) ChatSessionBySecret(ctx context.Context, secretHash []byte) (*chat.Session, error) {
	sess, err := scanChatSession(s.pool.QueryRow(ctx, `SELECT `+chatSessionCols+` FROM chat_sessions WHERE secret_hash = $1`, secretHash))
	return sess, translate(err, chat.ErrSessionNotFound)
}

// ChatSessionByPublicID returns the session with that public id.
// chat.ErrSessionNotFound.
func (s *Store) ChatSessionByPublicID(ctx context.Context, publicID string) (*chat.Session, error) {
	sess, err := scanChatSession(s.pool.QueryRow(ctx, `SELECT `+chatSessionCols+` FROM chat_sessions WHERE public_id = $1`, publicID))
	return sess, translate(err, chat.ErrSessionNotFound)
}

// UserChatSession returns userID's chat: the open session with the
// highest id, else the latest one (chat_sessions_user_idx).
// chat.ErrSessionNotFound.
func (s *Store) UserChatSession(ctx context.Context, userID int64) (*chat.Session, error) {
	sess, err := scanChatSession(s.pool.QueryRow(ctx, `SELECT `+chatSessionCols+` FROM chat_sessions
		WHERE user_id = $1 ORDER BY (closed_at IS NULL) DESC, id DESC LIMIT 1`, userID))
	return sess, translate(err, chat.ErrSessionNotFound)
}

// ClaimChatSession gives anonymous session id, reached by oldHash, to
// userID and replaces its secret's hash with newHash, in one statement.
// chat.ErrSessionNotFound, account.ErrUserNotFound.
func (s *Store) ClaimChatSession(ctx context.Context, id, userID int64, oldHash, newHash []byte) error {
	tag, err := s.pool.Exec(ctx, `UPDATE chat_sessions SET user_id = $2, secret_hash = $4
		WHERE id = $1 AND user_id IS NULL AND secret_hash = $3`, id, userID, oldHash, newHash)
	if isUserFK(err, "chat_sessions_user_id_fkey") {
		return account.ErrUserNotFound
	}
	if err != nil {
		return translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return chat.ErrSessionNotFound
	}
	return nil
}

// RevokeChatSecrets forgets the secret of every session of userID
// (through chat_sessions_user_id_idx).
func (s *Store) RevokeChatSecrets(ctx context.Context, userID int64) error {
	_, err := s.pool.Exec(ctx, `UPDATE chat_sessions SET secret_hash = NULL WHERE user_id = $1 AND secret_hash IS NOT NULL`, userID)
	return translate(err, nil)
}

// AddChatMessage stores m and updates its session's activity in one
// statement. chat.ErrSessionNotFound.
func (s *Store) AddChatMessage(ctx context.Context, m *chat.Message) error {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now()
	}
	m.CreatedAt = dbTime(m.CreatedAt)
	err := s.pool.QueryRow(ctx, `WITH sess AS (
			UPDATE chat_sessions SET message_count = message_count + 1,
				last_message_at = GREATEST(last_message_at, $3)
			WHERE id = $1 RETURNING id)
		INSERT INTO chat_messages (session_id, sender, text, created_at)
		SELECT id, $2, $4, $3 FROM sess RETURNING id`,
		m.SessionID, m.Sender, m.CreatedAt, m.Text).Scan(&m.ID)
	return translate(err, chat.ErrSessionNotFound)
}

const sqlChatMessages = `SELECT id, session_id, sender, text, created_at FROM chat_messages
	WHERE session_id = $1 ORDER BY id`

// sqlChatSessions is the operator's queue; chat_sessions_queue_idx holds
// its order.
const sqlChatSessions = `SELECT ` + chatSessionCols + ` FROM chat_sessions
	ORDER BY (escalated AND closed_at IS NULL) DESC, last_message_at DESC, id DESC
	LIMIT $1 OFFSET $2`

// ChatMessages returns session id's messages, oldest first; with last > 0
// only the last ones.
func (s *Store) ChatMessages(ctx context.Context, sessionID int64, last int) ([]*chat.Message, error) {
	var rows pgx.Rows
	var err error
	if last > 0 {
		rows, err = s.pool.Query(ctx, `SELECT id, session_id, sender, text, created_at FROM (
				SELECT id, session_id, sender, text, created_at FROM chat_messages
				WHERE session_id = $1 ORDER BY id DESC LIMIT $2) m ORDER BY id`, sessionID, last)
	} else {
		rows, err = s.pool.Query(ctx, sqlChatMessages, sessionID)
	}
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	out := []*chat.Message{}
	for rows.Next() {
		m := &chat.Message{}
		if err := rows.Scan(&m.ID, &m.SessionID, &m.Sender, &m.Text, &m.CreatedAt); err != nil {
			return nil, translate(err, nil)
		}
		out = append(out, m)
	}
	return out, translate(rows.Err(), nil)
}

// BeginChatEscalation reserves session id's escalation until until
// unless it is escalated or held at at. Concurrent calls queue on the
// row's lock, and each one re-checks the row it then sees, so at most
// one gets it. chat.ErrSessionNotFound.
func (s *Store) BeginChatEscalation(ctx context.Context, id int64, at, until time.Time) (bool, error) {
	var found, held bool
	err := s.pool.QueryRow(ctx, `WITH held AS (
			UPDATE chat_sessions SET escalating_until = $3
			WHERE id = $1 AND NOT escalated AND (escalating_until IS NULL OR escalating_until <= $2)
			RETURNING id)
		SELECT EXISTS (SELECT FROM chat_sessions WHERE id = $1), EXISTS (SELECT FROM held)`,
		id, dbTime(at), dbTime(until)).Scan(&found, &held)
	if err != nil {
		return false, translate(err, nil)
	}
	if !found {
		return false, chat.ErrSessionNotFound
	}
	return held, nil
}

// CancelChatEscalation drops session id's reservation until.
// chat.ErrSessionNotFound.
func (s *Store) CancelChatEscalation(ctx context.Context, id int64, until time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE chat_sessions
		SET escalating_until = CASE WHEN escalating_until = $2 THEN NULL ELSE escalating_until END
		WHERE id = $1`, id, dbTime(until))
	if err != nil {
		return translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return chat.ErrSessionNotFound
	}
	return nil
}

// EscalateChatSession marks session id escalated unless it is already,
// and drops its reservation. chat.ErrSessionNotFound.
func (s *Store) EscalateChatSession(ctx context.Context, id int64, at time.Time) (bool, error) {
	var changed bool
	err := s.pool.QueryRow(ctx, `WITH old AS (SELECT escalated FROM chat_sessions WHERE id = $1 FOR UPDATE)
		UPDATE chat_sessions c SET escalated = true, escalated_at = COALESCE(c.escalated_at, $2), escalating_until = NULL
		FROM old WHERE c.id = $1 RETURNING NOT old.escalated`, id, dbTime(at)).Scan(&changed)
	if err != nil {
		return false, translate(err, chat.ErrSessionNotFound)
	}
	return changed, nil
}

// CloseChatSession closes session id. chat.ErrSessionNotFound.
func (s *Store) CloseChatSession(ctx context.Context, id int64, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE chat_sessions SET closed_at = COALESCE(closed_at, $2) WHERE id = $1`, id, dbTime(at))
	if err != nil {
		return translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return chat.ErrSessionNotFound
	}
	return nil
}

// ChatSessions returns sessions for the operator: open escalated first,
// then by latest activity.
func (s *Store) ChatSessions(ctx context.Context, limit, offset int) ([]*chat.Session, error) {
	rows, err := s.pool.Query(ctx, sqlChatSessions, limit, offset)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	out := []*chat.Session{}
	for rows.Next() {
		sess, err := scanChatSession(rows)
		if err != nil {
			return nil, translate(err, nil)
		}
		out = append(out, sess)
	}
	return out, translate(rows.Err(), nil)
}
