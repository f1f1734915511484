package storagetest

import (
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
)

// testResetRevokesAPIKeys: a reset that asks for it revokes every API key
// of its user, and only then, and only with a reset that succeeds.
func testResetRevokesAPIKeys(t *testing.T, newStores func(*testing.T) Stores) {
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	reset := func(e *env, u *account.User) []byte {
		e.t.Helper()
		h := account.HashToken(account.NewSecret())
		if err := e.stores.Accounts.CreateResetToken(e.ctx, h, u.ID, now().Add(time.Hour)); err != nil {
			e.t.Fatal(err)
		}
		return h
	}
	key := func(e *env, u *account.User) string {
		e.t.Helper()
		_, secret, err := e.accounts.CreateAPIKey(e.ctx, u.ID, "bot", []string{"read"})
		if err != nil {
			e.t.Fatal(err)
		}
		return secret
	}
	works := func(e *env, secret string) bool {
		e.t.Helper()
		_, _, err := e.stores.Accounts.UserByAPIKey(e.ctx, account.HashToken(secret))
		if err != nil && !errors.Is(err, account.ErrUnauthorized) {
			e.t.Fatal(err)
		}
		return err == nil
	}

	t.Run("a reset with revokeAPIKeys revokes every key of its user and no other's; without, none", func(t *testing.T) {
		e := newEnv(t, newStores)
		u, other := e.user("kim", 0, 0), e.user("lou", 0, 0)
		k1, k2, theirs := key(e, u), key(e, u), key(e, other)
		if _, err := e.stores.Accounts.ResetPassword(e.ctx, reset(e, u), "h1", now(), false); err != nil {
			t.Fatal(err)
		}
		if !works(e, k1) || !works(e, k2) {
			t.Fatal("a reset without revokeAPIKeys revoked a key")
		}
		if id, err := e.stores.Accounts.ResetPassword(e.ctx, reset(e, u), "h2", now(), true); err != nil || id != u.ID {
			t.Fatalf("ResetPassword = %d, %v", id, err)
		}
		if works(e, k1) || works(e, k2) || !works(e, theirs) {
			t.Fatalf("after the reset the user's keys work %v %v, another user's %v; want false false true", works(e, k1), works(e, k2), works(e, theirs))
		}
		if ks, err := e.stores.Accounts.APIKeys(e.ctx, u.ID); err != nil || len(ks) != 0 {
			t.Fatalf("the user's keys after the reset: %v, %v", ks, err)
		}
	})
	t.Run("a refused reset revokes no key", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("max", 0, 0)
		k := key(e, u)
		expired := account.HashToken(account.NewSecret())
		if err := e.stores.Accounts.CreateResetToken(e.ctx, expired, u.ID, now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		for name, h := range map[string][]byte{"unknown": account.HashToken("nope"), "expired": expired} {
			if _, err := e.stores.Accounts.ResetPassword(e.ctx, h, "h", now(), true); !errors.Is(err, account.ErrInvalidToken) {
				t.Fatalf("%s token: %v, want ErrInvalidToken", name, err)
			}
		}
		if !works(e, k) {
			t.Fatal("a refused reset revoked a key")
		}
	})
}

// testTicketRevocations: a password change or reset revokes every stream
// ticket of its user, and no other user's.
func testTicketRevocations(t *testing.T, newStores func(*testing.T) Stores, store func(*env) StreamStore) {
	ticket := func(e *env, u *account.User) []byte {
		e.t.Helper()
		h := account.HashToken(account.NewSecret())
		if err := store(e).CreateStreamTicket(e.ctx, h, u.ID, time.Now().Add(time.Minute)); err != nil {
			e.t.Fatal(err)
		}
		return h
	}
	opens := func(e *env, h []byte) bool {
		e.t.Helper()
		_, ok, err := store(e).UseStreamTicket(e.ctx, h, time.Now())
		if err != nil {
			e.t.Fatal(err)
		}
		return ok
	}
	for _, c := range []struct {
		name   string
		change func(e *env, u *account.User) error
	}{
		{"a password change", func(e *env, u *account.User) error {
			old, err := e.stores.Accounts.PasswordHash(e.ctx, u.ID)
			if err != nil {
				return err
			}
			return e.stores.Accounts.ChangePassword(e.ctx, u.ID, old, "new-hash", nil)
		}},
		{"a password reset", func(e *env, u *account.User) error {
			h := account.HashToken(account.NewSecret())
			if err := e.stores.Accounts.CreateResetToken(e.ctx, h, u.ID, time.Now().Add(time.Hour)); err != nil {
				return err
			}
			_, err := e.stores.Accounts.ResetPassword(e.ctx, h, "new-hash", time.Now(), false)
			return err
		}},
	} {
		t.Run(c.name+" revokes the user's stream tickets and no other user's", func(t *testing.T) {
			e := newEnv(t, newStores)
			u, other := e.user("nia", 0, 0), e.user("oz", 0, 0)
			mine, theirs := ticket(e, u), ticket(e, other)
			if err := c.change(e, u); err != nil {
				t.Fatal(err)
			}
			if opens(e, mine) || !opens(e, theirs) {
				t.Fatal("after the change the user's ticket must be refused, and another user's work")
			}
			if !opens(e, ticket(e, u)) {
				t.Fatal("a ticket made after the change is refused")
			}
		})
	}
}
