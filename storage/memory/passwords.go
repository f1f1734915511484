package memory

import (
	"context"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
)

// resetRec is a password reset token: its user and when it expires.
type resetRec struct {
	user    int64
	expires time.Time
}

// PasswordHash implements account.Store.
func (s *Store) PasswordHash(_ context.Context, id int64) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.users[id]
	if !ok {
		return "", account.ErrUserNotFound
	}
	return strings.Clone(rec.hash), nil
}

// ChangePassword implements account.Store.
func (s *Store) ChangePassword(_ context.Context, id int64, oldHash, newHash string, keep []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.users[id]
	if !ok {
		return account.ErrUserNotFound
	}
	if rec.hash != oldHash {
		return account.ErrInvalidCredentials
	}
	rec.hash = strings.Clone(newHash)
	s.revoke(id, string(keep))
	return nil
}

// CreateResetToken implements account.Store.
func (s *Store) CreateResetToken(_ context.Context, hash []byte, userID int64, expiresAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[userID]; !ok {
		return account.ErrUserNotFound
	}
	if s.resets == nil {
		s.resets = map[string]resetRec{}
	}
	now := s.now()
	for k, r := range s.resets {
		if !r.expires.After(now) {
			delete(s.resets, k)
		}
	}
	s.resets[string(hash)] = resetRec{user: userID, expires: expiresAt}
	return nil
}

// ResetPassword implements account.Store.
func (s *Store) ResetPassword(_ context.Context, hash []byte, newHash string, now time.Time, revokeAPIKeys bool) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.resets[string(hash)]
	if !ok {
		return 0, account.ErrInvalidToken
	}
	delete(s.resets, string(hash))
	rec, ok := s.users[r.user]
	if !ok || !r.expires.After(now) {
		return 0, account.ErrInvalidToken
	}
	rec.hash = strings.Clone(newHash)
	s.revoke(r.user, "")
	if revokeAPIKeys && s.apiKeys != nil {
		for id, k := range s.apiKeys.byID {
			if k.k.UserID == r.user {
				delete(s.apiKeys.byID, id)
				delete(s.apiKeys.byHash, k.hash)
			}
		}
	}
	return r.user, nil
}

// revoke deletes every access token of user but the one whose hash is
// keep ("": none kept), and every reset token and stream ticket of user.
// Called under mu.
func (s *Store) revoke(user int64, keep string) {
	for h, t := range s.tokens {
		if t.user == user && h != keep {
			delete(s.tokens, h)
		}
	}
	for h, r := range s.resets {
		if r.user == user {
			delete(s.resets, h)
		}
	}
	for h, t := range s.tickets {
		if t.user == user {
			delete(s.tickets, h)
		}
	}
}
