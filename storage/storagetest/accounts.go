package storagetest

import (
	"errors"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
)

func testUsers(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a registered user can be read back by id and by e-mail", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("alice", 0, 0)
		got, err := e.stores.Accounts.User(e.ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Email != u.Email || got.Name != "alice" || got.Language != "en" || got.ReferralCode == "" || !within(got.CreatedAt, u.CreatedAt) {
			t.Fatalf("read back %+v, want %+v", got, u)
		}
		byEmail, hash, err := e.stores.Accounts.UserByEmail(e.ctx, u.Email)
		if err != nil || byEmail.ID != u.ID || hash == "" {
			t.Fatalf("UserByEmail = %+v, %q, %v", byEmail, hash, err)
		}
	})
	t.Run("an e-mail registers once, whatever its case", func(t *testing.T) {
		e := newEnv(t, newStores)
		if err := e.stores.Accounts.CreateUser(e.ctx, &account.User{Email: "bob@example.com", Name: "Bob"}, "h"); err != nil {
			t.Fatal(err)
		}
		err := e.stores.Accounts.CreateUser(e.ctx, &account.User{Email: "BOB@example.com", Name: "Bob"}, "h")
		if !errors.Is(err, account.ErrEmailTaken) {
			t.Fatalf("second registration: %v, want ErrEmailTaken", err)
		}
	})
	t.Run("an unknown user is ErrUserNotFound", func(t *testing.T) {
		e := newEnv(t, newStores)
		if _, err := e.stores.Accounts.User(e.ctx, 424242); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("User = %v", err)
		}
		if _, _, err := e.stores.Accounts.UserByEmail(e.ctx, "nobody@example.com"); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("UserByEmail = %v", err)
		}
		if _, err := e.stores.Accounts.UpdateRoles(e.ctx, 424242, account.RolesPatch{IsCreator: ptr(true)}); !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("UpdateRoles = %v", err)
		}
	})
	t.Run("a profile update changes only the fields it names", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("carol", 0, 0)
		got, err := e.stores.Accounts.UpdateProfile(e.ctx, u.ID, account.ProfilePatch{Nickname: ptr("carol_c"), ProfileHidden: ptr(true), AvatarURL: ptr("https://example.com/a.png")})
		if err != nil {
			t.Fatal(err)
		}
		if got.Nickname == nil || *got.Nickname != "carol_c" || !got.ProfileHidden || got.AvatarURL == nil || got.Name != "carol" || got.Language != "en" {
			t.Fatalf("after update: %+v", got)
		}
		got, err = e.stores.Accounts.UpdateProfile(e.ctx, u.ID, account.ProfilePatch{Nickname: ptr(""), AvatarURL: ptr("")})
		if err != nil || got.Nickname != nil || got.AvatarURL != nil {
			t.Fatalf("clearing nickname and avatar: %+v, %v", got, err)
		}
	})
	t.Run("a nickname belongs to one user", func(t *testing.T) {
		e := newEnv(t, newStores)
		a, b := e.user("a", 0, 0), e.user("b", 0, 0)
		if _, err := e.stores.Accounts.UpdateProfile(e.ctx, a.ID, account.ProfilePatch{Nickname: ptr("winner")}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.stores.Accounts.UpdateProfile(e.ctx, b.ID, account.ProfilePatch{Nickname: ptr("winner")}); !errors.Is(err, account.ErrNicknameTaken) {
			t.Fatalf("taking a taken nickname: %v", err)
		}
		if _, err := e.stores.Accounts.UpdateProfile(e.ctx, a.ID, account.ProfilePatch{Nickname: ptr("winner")}); err != nil {
			t.Fatalf("keeping one's own nickname: %v", err)
		}
	})
	t.Run("roles are set by the operator", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("dan", 0, 0)
		got, err := e.stores.Accounts.UpdateRoles(e.ctx, u.ID, account.RolesPatch{IsCreator: ptr(true), IsStatsViewer: ptr(true)})
		if err != nil || !got.IsCreator || !got.IsStatsViewer {
			t.Fatalf("UpdateRoles = %+v, %v", got, err)
		}
	})
}

func testTokens(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a token finds its user until it is deleted", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("erin", 0, 0)
		hash := account.HashToken("secret-token")
		now := time.Now().UTC().Truncate(time.Microsecond)
		if err := e.stores.Accounts.CreateToken(e.ctx, hash, u.ID, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, expires, err := e.stores.Accounts.UserByToken(e.ctx, hash, now)
		if err != nil || got.ID != u.ID {
			t.Fatalf("UserByToken = %+v, %v", got, err)
		}
		if !expires.Equal(now.Add(time.Hour)) {
			t.Fatalf("UserByToken says the token expires at %v, want %v", expires, now.Add(time.Hour))
		}
		if err := e.stores.Accounts.DeleteToken(e.ctx, hash); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.stores.Accounts.UserByToken(e.ctx, hash, now); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("after delete: %v", err)
		}
		if err := e.stores.Accounts.DeleteToken(e.ctx, hash); err != nil {
			t.Fatalf("deleting twice: %v", err)
		}
	})
	t.Run("an expired token is refused", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("fay", 0, 0)
		hash := account.HashToken("old-token")
		now := time.Now().UTC()
		if err := e.stores.Accounts.CreateToken(e.ctx, hash, u.ID, now.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.stores.Accounts.UserByToken(e.ctx, hash, now); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("expired token: %v", err)
		}
	})
	t.Run("an unknown token is refused", func(t *testing.T) {
		e := newEnv(t, newStores)
		if _, _, err := e.stores.Accounts.UserByToken(e.ctx, account.HashToken("nope"), time.Now()); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("unknown token: %v", err)
		}
	})
}

func testLedger(t *testing.T, newStores func(*testing.T) Stores) {
	t.Run("a deposit moves money from outside to the user", func(t *testing.T) {
		e := newEnv(t, newStores)
		u := e.user("gus", 1500, 300)
		if b := e.balances(u); b.Balance != 1500 || b.Bonus != 300 {
			t.Fatalf("balances = %+v", b)
		}
		ext, err := e.stores.Accounts.Balance(e.ctx, account.External)
		if err != nil || ext != -1800 {
			t.Fatalf("external = %d, %v", ext, err)
		}
		e.audit()
	})
	t.Run("a transfer that would overdraw writes nothing", func(t *testing.T) {
		e := newEnv(t, newStores)
		a, b := e.user("hal", 100, 0), e.user("ivy", 0, 0)
		err := e.stores.Accounts.Transfer(e.ctx, []account.Posting{
			{From: account.UserAccount(a.ID), To: account.UserAccount(b.ID), Amount: 60, Reason: "test"},
			{From: account.UserAccount(a.ID), To: account.UserAccount(b.ID), Amount: 60, Reason: "test"},
		})
		if !errors.Is(err, account.ErrInsufficientFunds) {
			t.Fatalf("overdraw: %v", err)
		}
		if e.balances(a).Balance != 100 || e.balances(b).Balance != 0 {
			t.Fatalf("balances changed: %+v %+v", e.balances(a), e.balances(b))
		}
		e.audit()
	})
	t.Run("an account with no postings has a zero balance", func(t *testing.T) {
		e := newEnv(t, newStores)
		if b, err := e.stores.Accounts.Balances(e.ctx, 999); err != nil || b != (account.Balances{}) {
			t.Fatalf("Balances = %+v, %v", b, err)
		}
	})
	t.Run("the ledger state counts every account and posting", func(t *testing.T) {
		e := newEnv(t, newStores)
		e.user("jo", 10, 20)
		accts, postings, err := e.stores.Accounts.LedgerState(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if postings != 2 || len(accts) != 3 {
			t.Fatalf("%d accounts, %d postings; want 3 and 2", len(accts), postings)
		}
		if r := account.Check(accts, postings, time.Now()); !r.OK {
			t.Fatalf("check: %v", r.Problems)
		}
	})
}
