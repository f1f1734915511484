package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
)

// apiKeys are the personal API keys, made on first use.
type apiKeys struct {
	byID   map[int64]*apiKeyRec
	byHash map[string]int64
}

type apiKeyRec struct {
	k    account.APIKey
	hash string
}

func (s *Store) keys() *apiKeys {
	if s.apiKeys == nil {
		s.apiKeys = &apiKeys{byID: map[int64]*apiKeyRec{}, byHash: map[string]int64{}}
	}
	return s.apiKeys
}

func cloneKey(k account.APIKey) *account.APIKey {
	k.Name = strings.Clone(k.Name)
	k.Scopes = slices.Clone(k.Scopes)
	if k.LastUsedAt != nil {
		t := *k.LastUsedAt
		k.LastUsedAt = &t
	}
	return &k
}

// CreateAPIKey implements account.Store.
func (s *Store) CreateAPIKey(_ context.Context, k *account.APIKey, hash []byte, max int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[k.UserID]; !ok {
		return account.ErrUserNotFound
	}
	ks := s.keys()
	n := 0
	for _, r := range ks.byID {
		if r.k.UserID == k.UserID {
			n++
		}
	}
	if n >= max {
		return account.ErrTooManyAPIKeys
	}
	k.ID = s.next("api_key")
	rec := &apiKeyRec{k: *cloneKey(*k), hash: string(hash)}
	ks.byID[k.ID] = rec
	ks.byHash[rec.hash] = k.ID
	return nil
}

// APIKeys implements account.Store.
func (s *Store) APIKeys(_ context.Context, userID int64) ([]*account.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*account.APIKey{}
	if s.apiKeys == nil {
		return out, nil
	}
	for _, r := range s.apiKeys.byID {
		if r.k.UserID == userID {
			out = append(out, cloneKey(r.k))
		}
	}
	slices.SortFunc(out, func(a, b *account.APIKey) int { return cmp.Compare(b.ID, a.ID) })
	return out, nil
}

// DeleteAPIKey implements account.Store.
func (s *Store) DeleteAPIKey(_ context.Context, userID, id int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apiKeys == nil {
		return nil, account.ErrAPIKeyNotFound
	}
	r, ok := s.apiKeys.byID[id]
	if !ok || r.k.UserID != userID {
		return nil, account.ErrAPIKeyNotFound
	}
	delete(s.apiKeys.byID, id)
	delete(s.apiKeys.byHash, r.hash)
	return []byte(r.hash), nil
}

// UserByAPIKey implements account.Store.
func (s *Store) UserByAPIKey(_ context.Context, hash []byte) (*account.User, *account.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apiKeys == nil {
		return nil, nil, account.ErrUnauthorized
	}
	id, ok := s.apiKeys.byHash[string(hash)]
	if !ok {
		return nil, nil, account.ErrUnauthorized
	}
	r := s.apiKeys.byID[id]
	u, ok := s.users[r.k.UserID]
	if !ok {
		return nil, nil, account.ErrUnauthorized
	}
	uc := cloneUser(u.u)
	return &uc, cloneKey(r.k), nil
}

// TouchAPIKey implements account.Store.
func (s *Store) TouchAPIKey(_ context.Context, id int64, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apiKeys == nil {
		return nil
	}
	if r, ok := s.apiKeys.byID[id]; ok && (r.k.LastUsedAt == nil || r.k.LastUsedAt.Before(at)) {
		r.k.LastUsedAt = &at
	}
	return nil
}
