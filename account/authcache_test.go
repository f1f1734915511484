package account_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/storage/memory"
)

// countingStore counts token look-ups; when hold is set, a look-up reads
// the store and then waits for hold to close before it answers.
type countingStore struct {
	*memory.Store
	lookups atomic.Int64
	hold    chan struct{}
	reading chan struct{}
}

func (s *countingStore) UserByToken(ctx context.Context, hash []byte, now time.Time) (*account.User, time.Time, error) {
	s.lookups.Add(1)
	u, exp, err := s.Store.UserByToken(ctx, hash, now)
	if s.hold != nil {
		s.reading <- struct{}{}
		<-s.hold
	}
	return u, exp, err
}

// cacheEnv is a Service with the auth cache on, a clock the test moves,
// and one registered user.
type cacheEnv struct {
	ctx   context.Context
	store *countingStore
	svc   *account.Service
	now   time.Time
	user  *account.User
	token string
}

func newCacheEnv(t *testing.T, ttl time.Duration) *cacheEnv {
	t.Helper()
	e := &cacheEnv{ctx: context.Background(), store: &countingStore{Store: memory.New()}, now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	e.svc = account.NewService(e.store)
	e.svc.BcryptCost = bcrypt.MinCost
	e.svc.Now = func() time.Time { return e.now }
	e.svc.CacheAuth(ttl)
	var err error
	if e.user, e.token, err = e.svc.Register(e.ctx, account.Registration{Email: "ann@example.com", Password: "password123", Name: "Ann"}); err != nil {
		t.Fatal(err)
	}
	return e
}

// auth authenticates tok and fails the test unless the answer is want
// (nil: the user is refused) and the store was asked lookups times in
// all.
func (e *cacheEnv) auth(t *testing.T, tok string, lookups int64) *account.User {
	t.Helper()
	u, err := e.svc.Authenticate(e.ctx, tok)
	if err != nil && !errors.Is(err, account.ErrUnauthorized) {
		t.Fatal(err)
	}
	if got := e.store.lookups.Load(); got != lookups {
		t.Fatalf("the store was asked %d times, want %d", got, lookups)
	}
	return u
}

func TestAuthCache(t *testing.T) {
	t.Run("a cache that is off asks the store on every request", func(t *testing.T) {
		e := newCacheEnv(t, 0)
		e.auth(t, e.token, 1)
		e.auth(t, e.token, 2)
	})
	t.Run("a token is looked up once per TTL", func(t *testing.T) {
		e := newCacheEnv(t, 5*time.Second)
		for range 3 {
			if u := e.auth(t, e.token, 1); u == nil || u.ID != e.user.ID {
				t.Fatalf("Authenticate = %+v", u)
			}
		}
		e.now = e.now.Add(4 * time.Second)
		e.auth(t, e.token, 1)
		e.now = e.now.Add(time.Second)
		e.auth(t, e.token, 2)
		e.auth(t, e.token, 2)
	})
	t.Run("an unknown token is asked about every time", func(t *testing.T) {
		e := newCacheEnv(t, time.Minute)
		for i := range int64(3) {
			if u := e.auth(t, "not-a-token", i+1); u != nil {
				t.Fatalf("an unknown token authenticated %+v", u)
			}
		}
	})
	t.Run("logout refuses the token at once", func(t *testing.T) {
		e := newCacheEnv(t, time.Hour)
		e.auth(t, e.token, 1)
		if err := e.svc.Logout(e.ctx, e.token); err != nil {
			t.Fatal(err)
		}
		if u := e.auth(t, e.token, 2); u != nil {
			t.Fatalf("a revoked token authenticated %+v", u)
		}
	})
	t.Run("a role change is seen at once", func(t *testing.T) {
		e := newCacheEnv(t, time.Hour)
		e.auth(t, e.token, 1)
		if _, err := e.svc.SetRoles(e.ctx, e.user.ID, account.RolesPatch{IsCreator: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if u := e.auth(t, e.token, 2); u == nil || !u.IsCreator {
			t.Fatalf("after the role change: %+v", u)
		}
	})
	t.Run("a profile change is seen at once", func(t *testing.T) {
		e := newCacheEnv(t, time.Hour)
		e.auth(t, e.token, 1)
		if _, err := e.svc.UpdateProfile(e.ctx, e.user.ID, account.ProfilePatch{Name: ptr("Annie")}); err != nil {
			t.Fatal(err)
		}
		if u := e.auth(t, e.token, 2); u == nil || u.Name != "Annie" {
			t.Fatalf("after the profile change: %+v", u)
		}
	})
	t.Run("a token is not trusted past its expiry", func(t *testing.T) {
		e := newCacheEnv(t, time.Hour)
		e.svc.TokenTTL = 3 * time.Second
		_, tok, err := e.svc.Login(e.ctx, "ann@example.com", "password123")
		if err != nil {
			t.Fatal(err)
		}
		e.auth(t, tok, 1)
		e.now = e.now.Add(2 * time.Second)
		e.auth(t, tok, 1)
		e.now = e.now.Add(time.Second)
		if u := e.auth(t, tok, 2); u != nil {
			t.Fatalf("an expired token authenticated %+v", u)
		}
	})
	t.Run("changes made elsewhere are seen once invalidated", func(t *testing.T) {
		cases := []struct {
			name   string
			change func(e *cacheEnv) error
			inv    func(e *cacheEnv) account.Invalidation
			check  func(u *account.User) bool
		}{
			{"a revoked token", func(e *cacheEnv) error { return e.store.DeleteToken(e.ctx, account.HashToken(e.token)) },
				func(e *cacheEnv) account.Invalidation {
					return account.Invalidation{TokenHash: account.HashToken(e.token)}
				},
				func(u *account.User) bool { return u == nil }},
			{"a changed user", func(e *cacheEnv) error {
				_, err := e.store.UpdateRoles(e.ctx, e.user.ID, account.RolesPatch{IsStatsViewer: ptr(true)})
				return err
			},
				func(e *cacheEnv) account.Invalidation { return account.Invalidation{UserID: e.user.ID} },
				func(u *account.User) bool { return u != nil && u.IsStatsViewer }},
			{"everything", func(e *cacheEnv) error { return e.store.DeleteToken(e.ctx, account.HashToken(e.token)) },
				func(*cacheEnv) account.Invalidation { return account.Invalidation{All: true} },
				func(u *account.User) bool { return u == nil }},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				e := newCacheEnv(t, time.Hour)
				e.auth(t, e.token, 1)
				if err := c.change(e); err != nil {
					t.Fatal(err)
				}
				if u := e.auth(t, e.token, 1); c.check(u) {
					t.Fatal("the change was seen without an invalidation: the cache was not used")
				}
				e.svc.Invalidate(c.inv(e))
				if u := e.auth(t, e.token, 2); !c.check(u) {
					t.Fatalf("after the invalidation: %+v", u)
				}
			})
		}
	})
	t.Run("an invalidation for another user keeps the entry", func(t *testing.T) {
		e := newCacheEnv(t, time.Hour)
		e.auth(t, e.token, 1)
		e.svc.Invalidate(account.Invalidation{UserID: e.user.ID + 1, TokenHash: account.HashToken("other")})
		e.auth(t, e.token, 1)
	})
	t.Run("a look-up that an invalidation overtakes is not cached", func(t *testing.T) {
		e := newCacheEnv(t, time.Hour)
		e.store.hold, e.store.reading = make(chan struct{}), make(chan struct{})
		done := make(chan *account.User)
		go func() {
			u, _ := e.svc.Authenticate(e.ctx, e.token)
			done <- u
		}()
		<-e.store.reading // it has read the user as it was
		if _, err := e.store.UpdateRoles(e.ctx, e.user.ID, account.RolesPatch{IsCreator: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		e.svc.Invalidate(account.Invalidation{UserID: e.user.ID})
		close(e.store.hold)
		if u := <-done; u == nil || u.IsCreator {
			t.Fatalf("the overtaken look-up answered %+v, want the user as it was read", u)
		}
		e.store.hold = nil
		if u := e.auth(t, e.token, 2); u == nil || !u.IsCreator {
			t.Fatalf("the next request: %+v, want the changed user from the store", u)
		}
	})
	t.Run("turning the cache off empties it", func(t *testing.T) {
		e := newCacheEnv(t, time.Hour)
		e.auth(t, e.token, 1)
		e.svc.CacheAuth(0)
		e.auth(t, e.token, 2)
		e.svc.CacheAuth(time.Hour)
		e.auth(t, e.token, 3)
		e.auth(t, e.token, 3)
	})
}

func ptr[T any](v T) *T { return &v }
