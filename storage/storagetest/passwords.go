package storagetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
)

// testPasswords checks the password store: the compare-and-set of a
// change, and reset tokens (kept by hash, expiring, single use even
// under concurrent use), and what each revokes.
func testPasswords(t *testing.T, newStores func(*testing.T) Stores) {
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	// tokens gives u n access tokens and returns their hashes.
	tokens := func(e *env, u *account.User, n int) [][]byte {
		e.t.Helper()
		var hs [][]byte
		for range n {
			h := account.HashToken(account.NewSecret())
			if err := e.stores.Accounts.CreateToken(e.ctx, h, u.ID, now().Add(time.Hour)); err != nil {
				e.t.Fatal(err)
			}
			hs = append(hs, h)
		}
		return hs
	}
	works := func(e *env, h []byte) bool {
		e.t.Helper()
		_, _, err := e.stores.Accounts.UserByToken(e.ctx, h, now())
		if err != nil && !errors.Is(err, account.ErrUnauthorized) {
			e.t.Fatal(err)
		}
		return err == nil
	}
	hashOf := func(e *env, u *account.User) string {
		e.t.Helper()
		h, err := e.stores.Accounts.PasswordHash(e.ctx, u.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		return h
	}
	reset := func(e *env, u *account.User, expires time.Time) []byte {
		e.t.Helper()
		h := account.HashToken(account.NewSecret())
		if err := e.stores.Accounts.CreateResetToken(e.ctx, h, u.ID, expires); err != nil {
			e.t.Fatal(err)
		}
		return h
	}

	t.Run("a password change keeps one token and revokes the user's others, and nobody else's", func(t *testing.T) {
		e := newEnv(t, newStores)
		u, other := e.user("pat", 0, 0), e.user("quinn", 0, 0)
		mine, theirs := tokens(e, u, 3), tokens(e, other, 1)
		pending := reset(e, u, now().Add(time.Hour))
		old := hashOf(e, u)
		if err := e.stores.Accounts.ChangePassword(e.ctx, u.ID, old, "new-hash", mine[0]); err != nil {
			t.Fatal(err)
		}
		if got := hashOf(e, u); got != "new-hash" {
			t.Fatalf("the hash is %q after the change", got)
		}
		if !works(e, mine[0]) || works(e, mine[1]) || works(e, mine[2]) || !works(e, theirs[0]) {
			t.Fatalf("after the change the kept token works %v, the others %v %v, another user's %v; want true false false true",
				works(e, mine[0]), works(e, mine[1]), works(e, mine[2]), works(e, theirs[0]))
		}
		if _, err := e.stores.Accounts.ResetPassword(e.ctx, pending, "x", now(), false); !errors.Is(err, account.ErrInvalidToken) {
			t.Fatalf("a reset token issued before the change: %v, want ErrInvalidToken", err)
		}
	})
	t.Run("a password change with no token to keep revokes them all", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("rae", 0, 0)
		mine := tokens(e, u, 2)
		if err := e.stores.Accounts.ChangePassword(e.ctx, u.ID, hashOf(e, u), "new-hash", nil); err != nil {
			t.Fatal(err)
		}
		if works(e, mine[0]) || works(e, mine[1]) {
			t.Fatal("a token survived")
		}
	})
	t.Run("a password change over a hash that moved on changes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("sal", 0, 0)
		mine := tokens(e, u, 2)
		old := hashOf(e, u)
		if err := e.stores.Accounts.ChangePassword(e.ctx, u.ID, "not-the-hash", "new-hash", mine[0]); !errors.Is(err, account.ErrInvalidCredentials) {
			t.Fatalf("err = %v, want ErrInvalidCredentials", err)
		}
		if hashOf(e, u) != old || !works(e, mine[1]) {
			t.Fatal("a refused change changed the hash or revoked a token")
		}
		if err := e.stores.Accounts.ChangePassword(e.ctx, u.ID+1000, old, "new-hash", nil); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("an unknown user: %v, want ErrUserNotFound", err)
		}
		if _, err := e.stores.Accounts.PasswordHash(e.ctx, u.ID+1000); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("the hash of an unknown user: %v, want ErrUserNotFound", err)
		}
	})
	t.Run("a reset token sets the password once and revokes every token of its user", func(t *testing.T) {
		e := newEnv(t, newStores)
		u, other := e.user("tess", 0, 0), e.user("uma", 0, 0)
		mine, theirs := tokens(e, u, 2), tokens(e, other, 1)
		tok, second := reset(e, u, now().Add(time.Hour)), reset(e, u, now().Add(time.Hour))
		othersReset := reset(e, other, now().Add(time.Hour))
		id, err := e.stores.Accounts.ResetPassword(e.ctx, tok, "new-hash", now(), false)
		if err != nil || id != u.ID {
			t.Fatalf("ResetPassword = %d, %v; want %d", id, err, u.ID)
		}
		if hashOf(e, u) != "new-hash" {
			t.Fatal("the hash did not change")
		}
		if works(e, mine[0]) || works(e, mine[1]) || !works(e, theirs[0]) {
			t.Fatal("the reset must revoke every token of its user and no other's")
		}
		for name, h := range map[string][]byte{"the used token": tok, "another reset token of the user": second} {
			if _, err := e.stores.Accounts.ResetPassword(e.ctx, h, "again", now(), false); !errors.Is(err, account.ErrInvalidToken) {
				t.Fatalf("%s: %v, want ErrInvalidToken", name, err)
			}
		}
		if hashOf(e, u) != "new-hash" {
			t.Fatal("a refused reset changed the hash")
		}
		if id, err := e.stores.Accounts.ResetPassword(e.ctx, othersReset, "h2", now(), false); err != nil || id != other.ID {
			t.Fatalf("another user's reset token: %d, %v", id, err)
		}
	})
	t.Run("an expired reset token is refused, and gone", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("val", 0, 0)
		at := now()
		tok := reset(e, u, at.Add(time.Hour))
		old := hashOf(e, u)
		if _, err := e.stores.Accounts.ResetPassword(e.ctx, tok, "new-hash", at.Add(time.Hour), false); !errors.Is(err, account.ErrInvalidToken) {
			t.Fatalf("at its expiry: %v, want ErrInvalidToken", err)
		}
		if hashOf(e, u) != old {
			t.Fatal("an expired token changed the password")
		}
		if _, err := e.stores.Accounts.ResetPassword(e.ctx, tok, "new-hash", at, false); !errors.Is(err, account.ErrInvalidToken) {
			t.Fatalf("an expired token tried again earlier: %v, want ErrInvalidToken", err)
		}
	})
	t.Run("an unknown reset token is refused, and one for an unknown user is not stored", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("wes", 0, 0)
		if _, err := e.stores.Accounts.ResetPassword(e.ctx, account.HashToken("nope"), "h", now(), false); !errors.Is(err, account.ErrInvalidToken) {
			t.Fatalf("unknown: %v", err)
		}
		if err := e.stores.Accounts.CreateResetToken(e.ctx, account.HashToken("x"), u.ID+1000, now().Add(time.Hour)); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("an unknown user's token: %v, want ErrUserNotFound", err)
		}
	})
	t.Run("a reset token is looked up by its hash, not its secret", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("xan", 0, 0)
		r, err := e.accounts.RequestReset(e.ctx, u.Email)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.stores.Accounts.ResetPassword(e.ctx, []byte(r.Token), "h", now(), false); !errors.Is(err, account.ErrInvalidToken) {
			t.Fatalf("the secret itself as the key: %v, want ErrInvalidToken", err)
		}
		if id, err := e.stores.Accounts.ResetPassword(e.ctx, account.HashToken(r.Token), "h", now(), false); err != nil || id != u.ID {
			t.Fatalf("by its SHA-256: %d, %v", id, err)
		}
	})
	t.Run("of concurrent uses of one reset token exactly one wins", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("yul", 0, 0)
		tok := reset(e, u, now().Add(time.Hour))
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		hashes := make([]string, n)
		for i := range n {
			hashes[i] = "hash-" + itoa(i)
			wg.Go(func() { _, errs[i] = e.stores.Accounts.ResetPassword(e.ctx, tok, hashes[i], now(), false) })
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("uses %d and %d both won", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, account.ErrInvalidToken):
				t.Fatalf("use %d: %v", i, err)
			}
		}
		if won < 0 {
			t.Fatal("no use won")
		}
		if got := hashOf(e, u); got != hashes[won] {
			t.Fatalf("the hash is %q, want the winner's %q", got, hashes[won])
		}
	})
}
