package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
)

var _ chat.Store = (*Store)(nil)

// chatState is the support chat: sessions by id, by secret hash and by
// public id, each session's secret hash (none once revoked), each
// session's messages, and the escalations held (until when).
type chatState struct {
	sessions   map[int64]*chat.Session
	bySecret   map[string]int64
	secretOf   map[int64]string
	byPublic   map[string]int64
	messages   map[int64][]*chat.Message
	escalating map[int64]time.Time
}

// chatData returns the chat, made on first use; callers hold s.mu.
func (s *Store) chatData() *chatState {
	if s.chat == nil {
		s.chat = &chatState{
			sessions:   map[int64]*chat.Session{},
			bySecret:   map[string]int64{},
			secretOf:   map[int64]string{},
			byPublic:   map[string]int64{},
			messages:   map[int64][]*chat.Message{},
			escalating: map[int64]time.Time{},
		}
	}
	return s.chat
}

func cloneSession(c chat.Session) *chat.Session {
	c.PublicID = strings.Clone(c.PublicID)
	c.Language = strings.Clone(c.Language)
	return &c
}

// CreateChatSession implements chat.Store.
func (s *Store) CreateChatSession(_ context.Context, sess *chat.Session, secretHash []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.chatData()
	if _, ok := s.users[sess.UserID]; sess.UserID != 0 && !ok {
		return account.ErrUserNotFound
	}
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = s.now()
	}
	sess.CreatedAt = microUTC(sess.CreatedAt)
	sess.LastMessageAt = sess.CreatedAt
	sess.ID = s.next("chat_session")
	d.sessions[sess.ID] = cloneSession(*sess)
	d.bySecret[string(secretHash)] = sess.ID
	d.secretOf[sess.ID] = string(secretHash)
	d.byPublic[strings.Clone(sess.PublicID)] = sess.ID
	return nil
}

// ChatSessionBySecret implements chat.Store.
func (s *Store) ChatSessionBySecret(_ context.Context, secretHash []byte) (*chat.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.chatData().bySecret[string(secretHash)]
	if !ok {
		return nil, chat.ErrSessionNotFound
	}
	return cloneSession(*s.chat.sessions[id]), nil
}

// ChatSessionByPublicID implements chat.Store.
func (s *Store) ChatSessionByPublicID(_ context.Context, publicID string) (*chat.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.chatData().byPublic[publicID]
	if !ok {
		return nil, chat.ErrSessionNotFound
	}
	return cloneSession(*s.chat.sessions[id]), nil
}

// UserChatSession implements chat.Store.
func (s *Store) UserChatSession(_ context.Context, userID int64) (*chat.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *chat.Session
	for _, sess := range s.chatData().sessions {
		if userID == 0 || sess.UserID != userID {
			continue
		}
		if best == nil || sess.Open() && !best.Open() || sess.Open() == best.Open() && sess.ID > best.ID {
			best = sess
		}
	}
	if best == nil {
		return nil, chat.ErrSessionNotFound
	}
	return cloneSession(*best), nil
}

// ClaimChatSession implements chat.Store.
func (s *Store) ClaimChatSession(_ context.Context, id, userID int64, oldHash, newHash []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.chatData()
	sess, ok := d.sessions[id]
	if !ok || sess.UserID != 0 || d.bySecret[string(oldHash)] != id {
		return chat.ErrSessionNotFound
	}
	if _, ok := s.users[userID]; !ok {
		return account.ErrUserNotFound
	}
	sess.UserID = userID
	delete(d.bySecret, string(oldHash))
	d.bySecret[string(newHash)] = id
	d.secretOf[id] = string(newHash)
	return nil
}

// RevokeChatSecrets implements chat.Store.
func (s *Store) RevokeChatSecrets(_ context.Context, userID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.chatData()
	for id, sess := range d.sessions {
		if h, ok := d.secretOf[id]; ok && sess.UserID == userID {
			delete(d.bySecret, h)
			delete(d.secretOf, id)
		}
	}
	return nil
}

// AddChatMessage implements chat.Store.
func (s *Store) AddChatMessage(_ context.Context, m *chat.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.chatData()
	sess, ok := d.sessions[m.SessionID]
	if !ok {
		return chat.ErrSessionNotFound
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.now()
	}
	m.CreatedAt = microUTC(m.CreatedAt)
	m.ID = s.next("chat_message")
	c := *m
	c.Sender, c.Text = strings.Clone(m.Sender), strings.Clone(m.Text)
	d.messages[m.SessionID] = append(d.messages[m.SessionID], &c)
	if m.CreatedAt.After(sess.LastMessageAt) {
		sess.LastMessageAt = m.CreatedAt
	}
	sess.MessageCount++
	return nil
}

// ChatMessages implements chat.Store.
func (s *Store) ChatMessages(_ context.Context, sessionID int64, last int) ([]*chat.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.chatData().messages[sessionID]
	if last > 0 && len(ms) > last {
		ms = ms[len(ms)-last:]
	}
	out := make([]*chat.Message, 0, len(ms))
	for _, m := range ms {
		c := *m
		out = append(out, &c)
	}
	return out, nil
}

// BeginChatEscalation implements chat.Store.
func (s *Store) BeginChatEscalation(_ context.Context, id int64, at, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.chatData()
	sess, ok := d.sessions[id]
	if !ok {
		return false, chat.ErrSessionNotFound
	}
	if held, ok := d.escalating[id]; sess.Escalated || ok && held.After(microUTC(at)) {
		return false, nil
	}
	d.escalating[id] = microUTC(until)
	return true, nil
}

// CancelChatEscalation implements chat.Store.
func (s *Store) CancelChatEscalation(_ context.Context, id int64, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.chatData()
	if _, ok := d.sessions[id]; !ok {
		return chat.ErrSessionNotFound
	}
	if held, ok := d.escalating[id]; ok && held.Equal(microUTC(until)) {
		delete(d.escalating, id)
	}
	return nil
}

// EscalateChatSession implements chat.Store.
func (s *Store) EscalateChatSession(_ context.Context, id int64, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.chatData()
	sess, ok := d.sessions[id]
	if !ok {
		return false, chat.ErrSessionNotFound
	}
	delete(d.escalating, id)
	if sess.Escalated {
		return false, nil
	}
	sess.Escalated, sess.EscalatedAt = true, microUTC(at)
	return true, nil
}

// CloseChatSession implements chat.Store.
func (s *Store) CloseChatSession(_ context.Context, id int64, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.chatData().sessions[id]
	if !ok {
		return chat.ErrSessionNotFound
	}
	if sess.ClosedAt.IsZero() {
		sess.ClosedAt = microUTC(at)
	}
	return nil
}

// ChatSessions implements chat.Store.
func (s *Store) ChatSessions(_ context.Context, limit, offset int) ([]*chat.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]*chat.Session, 0, len(s.chatData().sessions))
	for _, sess := range s.chat.sessions {
		all = append(all, cloneSession(*sess))
	}
	waiting := func(x *chat.Session) int {
		if x.Escalated && x.Open() {
			return 0
		}
		return 1
	}
	slices.SortFunc(all, func(a, b *chat.Session) int {
		return cmp.Or(cmp.Compare(waiting(a), waiting(b)), b.LastMessageAt.Compare(a.LastMessageAt), cmp.Compare(b.ID, a.ID))
	})
	if offset >= len(all) {
		return []*chat.Session{}, nil
	}
	all = all[offset:]
	if limit >= 0 && limit < len(all) {
		all = all[:limit]
	}
	return all, nil
}
