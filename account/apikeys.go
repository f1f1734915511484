package account

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/predictkit/predictkit/input"
)

// APIKeyPrefix starts every personal API key ("personal API key"), so
// that people, logs and secret scanners can tell a key from a session
// token (plain URL-safe base64) and from a partner's key ("pk_") at a
// glance.
const APIKeyPrefix = "pak_"

// Bounds of personal API keys.
const (
	// MaxAPIKeyName is the longest key name, in characters.
	MaxAPIKeyName = 64
	// MaxAPIKeys is how many keys one user may hold at once.
	MaxAPIKeys = 20
	// KeyUseResolution is how precise a key's LastUsedAt is: a key in use
	// has it written at most once per KeyUseResolution per server, so that
	// using a key costs no write per request.
	KeyUseResolution = time.Minute
)

// Scope is what a personal API key may do.
type Scope string

// The scopes a key may hold.
const (
	// ScopeRead allows reading: the GET routes.
	ScopeRead Scope = "read"
	// ScopeTrade allows what a trading bot writes: buys, sells and
	// marking its notifications read.
	ScopeTrade Scope = "trade"
)

// Scopes lists every scope, in the order a key's scopes are kept.
var Scopes = []Scope{ScopeRead, ScopeTrade}

// APIKey is a personal API key as it is kept: never the key itself, only
// what describes it. The key authenticates as UserID within Scopes.
type APIKey struct {
	ID     int64
	UserID int64
	Name   string
	// Scopes are distinct, in the order of the package's Scopes.
	Scopes    []Scope
	CreatedAt time.Time
	// LastUsedAt is when the key last authenticated a request, to within
	// KeyUseResolution; nil if never.
	LastUsedAt *time.Time
}

// Allows reports whether k holds scope s.
func (k *APIKey) Allows(s Scope) bool { return slices.Contains(k.Scopes, s) }

// Errors of personal API keys.
var (
	// ErrAPIKeyNotFound: no key with that id belongs to the user.
	ErrAPIKeyNotFound = errors.New("account: API key not found")
	// ErrTooManyAPIKeys: the user holds MaxAPIKeys keys already.
	ErrTooManyAPIKeys = errors.New("account: too many API keys")
)

// Credential is what authenticated a request: a user, and the personal
// API key it came with (nil for a session's access token, which may do
// everything its user may).
type Credential struct {
	User *User
	Key  *APIKey
}

// IsAPIKey reports whether a credential looks like a personal API key
// (it may still be unknown or revoked).
func IsAPIKey(secret string) bool { return strings.HasPrefix(secret, APIKeyPrefix) }

// CreateAPIKey makes a personal API key for user userID, named name, with
// scopes (a non-empty set of distinct Scopes), and returns it with the
// key itself, which is kept only as its HashToken and so can never be
// shown again. *input.Error for a bad name or scopes, ErrTooManyAPIKeys,
// ErrUserNotFound.
func (s *Service) CreateAPIKey(ctx context.Context, userID int64, name string, scopes []string) (*APIKey, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || !input.IsText(name) || utf8.RuneCountInString(name) > MaxAPIKeyName {
		return nil, "", input.Invalid("name", fmt.Sprintf("must be 1 to %d characters", MaxAPIKeyName))
	}
	sc, err := parseScopes(scopes)
	if err != nil {
		return nil, "", err
	}
	k := &APIKey{UserID: userID, Name: name, Scopes: sc, CreatedAt: s.Now()}
	secret := APIKeyPrefix + NewSecret()
	if err := s.store.CreateAPIKey(ctx, k, HashToken(secret), MaxAPIKeys); err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// parseScopes checks a key's requested scopes and returns them in the
// canonical order.
func parseScopes(scopes []string) ([]Scope, error) {
	if len(scopes) == 0 {
		return nil, input.Invalid("scopes", "must name at least one of read, trade")
	}
	seen := map[Scope]bool{}
	for _, v := range scopes {
		sc := Scope(v)
		if !slices.Contains(Scopes, sc) {
			return nil, input.Invalid("scopes", fmt.Sprintf("%q is not a scope: use read, trade", v))
		}
		if seen[sc] {
			return nil, input.Invalid("scopes", fmt.Sprintf("%q is named twice", v))
		}
		seen[sc] = true
	}
	out := make([]Scope, 0, len(seen))
	for _, sc := range Scopes {
		if seen[sc] {
			out = append(out, sc)
		}
	}
	return out, nil
}

// APIKeys returns user userID's keys, newest first.
func (s *Service) APIKeys(ctx context.Context, userID int64) ([]*APIKey, error) {
	return s.store.APIKeys(ctx, userID)
}

// UserAPIKeys is APIKeys for the operator: ErrUserNotFound when there is
// no user userID, rather than an empty list.
func (s *Service) UserAPIKeys(ctx context.Context, userID int64) ([]*APIKey, error) {
	if _, err := s.store.User(ctx, userID); err != nil {
		return nil, err
	}
	return s.store.APIKeys(ctx, userID)
}

// RevokeAPIKey deletes key id of user userID; from then on the key
// authenticates nothing, here at once and on the other servers of the
// same database as soon as they hear of it (see CacheAuth).
// ErrAPIKeyNotFound when the user has no such key (another user's
// included).
func (s *Service) RevokeAPIKey(ctx context.Context, userID, id int64) error {
	hash, err := s.store.DeleteAPIKey(ctx, userID, id)
	if err != nil {
		return err
	}
	s.invalidate(Invalidation{TokenHash: hash})
	s.keyUse.forget(id)
	return nil
}

// Credential returns what secret (an access token or a personal API key)
// authenticates, or ErrUnauthorized. A key's use is recorded in its
// LastUsedAt at most once per KeyUseResolution.
func (s *Service) Credential(ctx context.Context, secret string) (Credential, error) {
	if secret == "" || len(secret) > maxSecretLen {
		return Credential{}, ErrUnauthorized
	}
	hash, now := HashToken(secret), s.Now()
	h := [32]byte(hash)
	c, ok, epoch := s.auth.get(h, now)
	if ok {
		s.noteKeyUse(ctx, c.Key, now)
		return c, nil
	}
	if IsAPIKey(secret) {
		u, k, err := s.store.UserByAPIKey(ctx, hash)
		switch {
		case err == nil:
			s.auth.put(h, Credential{User: u, Key: k}, now, now.Add(100*365*24*time.Hour), epoch) // a key lives until revoked
			s.noteKeyUse(ctx, k, now)
			return Credential{User: u, Key: k}, nil
		case !errors.Is(err, ErrUnauthorized):
			return Credential{}, err
		}
		// A session token that happens to start with the prefix (one in
		// 2^24 of them) is still a session token.
	}
	u, expires, err := s.store.UserByToken(ctx, hash, now)
	if err != nil {
		return Credential{}, err
	}
	s.auth.put(h, Credential{User: u}, now, expires, epoch)
	return Credential{User: u}, nil
}

// noteKeyUse records that key k was used at now, unless it was recorded
// less than KeyUseResolution ago. The record is best effort: a store that
// fails to write it fails no request.
func (s *Service) noteKeyUse(ctx context.Context, k *APIKey, now time.Time) {
	if k == nil || !s.keyUse.due(k, now) {
		return
	}
	if err := s.store.TouchAPIKey(ctx, k.ID, now); err != nil {
		s.keyUse.forget(k.ID) // try again on the next use
	}
}

// keyUses remembers when this server last recorded each key's use.
type keyUses struct {
	mu   sync.Mutex
	last map[int64]time.Time
}

// due reports whether k's use at now should be recorded, and if so counts
// it as recorded.
func (u *keyUses) due(k *APIKey, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	last, ok := u.last[k.ID]
	if !ok && k.LastUsedAt != nil {
		last, ok = *k.LastUsedAt, true
	}
	if ok && now.Sub(last) < KeyUseResolution && !now.Before(last) {
		return false
	}
	if u.last == nil {
		u.last = map[int64]time.Time{}
	}
	if len(u.last) >= 100_000 {
		// Keys not used for a while need no memory: their next use is
		// due anyway.
		for id, t := range u.last {
			if now.Sub(t) >= KeyUseResolution {
				delete(u.last, id)
			}
		}
	}
	u.last[k.ID] = now
	return true
}

func (u *keyUses) forget(id int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.last, id)
}
