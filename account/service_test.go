package account_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/storage/memory"
	"golang.org/x/crypto/bcrypt"
)

func newService(t *testing.T) *account.Service {
	t.Helper()
	s := account.NewService(memory.New())
	s.BcryptCost = bcrypt.MinCost
	return s
}

func TestRegister(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		reg   account.Registration
		field string
	}{
		{"an address without a domain is refused", account.Registration{Email: "alice", Password: "password123", Name: "Alice"}, "email"},
		{"an address with a display name is refused", account.Registration{Email: "Alice <a@example.com>", Password: "password123", Name: "Alice"}, "email"},
		{"a short password is refused", account.Registration{Email: "a@example.com", Password: "short", Name: "Alice"}, "password"},
		{"a password bcrypt would cut is refused", account.Registration{Email: "a@example.com", Password: strings.Repeat("x", 73), Name: "Alice"}, "password"},
		{"a blank name is refused", account.Registration{Email: "a@example.com", Password: "password123", Name: "   "}, "name"},
		{"a name with control characters is refused", account.Registration{Email: "a@example.com", Password: "password123", Name: "A\x00lice"}, "name"},
		{"an unknown language is refused", account.Registration{Email: "a@example.com", Password: "password123", Name: "Alice", Language: "de"}, "language"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := newService(t).Register(ctx, c.reg)
			var inv *input.Error
			if !errors.As(err, &inv) || inv.Field != c.field || !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("err = %v, want an invalid %s", err, c.field)
			}
		})
	}
	t.Run("a valid registration returns a token that authenticates", func(t *testing.T) {
		s := newService(t)
		u, tok, err := s.Register(ctx, account.Registration{Email: " Alice@Example.com ", Password: "password123", Name: " Alice "})
		if err != nil {
			t.Fatal(err)
		}
		if u.Email != "alice@example.com" || u.Name != "Alice" || u.Language != "en" || len(tok) < 40 {
			t.Fatalf("user %+v, token %q", u, tok)
		}
		got, err := s.Authenticate(ctx, tok)
		if err != nil || got.ID != u.ID {
			t.Fatalf("Authenticate = %+v, %v", got, err)
		}
	})
}

func TestLogin(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	u, first, err := s.Register(ctx, account.Registration{Email: "bob@example.com", Password: "password123", Name: "Bob"})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the right password logs in, whatever the e-mail's case", func(t *testing.T) {
		got, tok, err := s.Login(ctx, "BOB@example.com", "password123")
		if err != nil || got.ID != u.ID || tok == first {
			t.Fatalf("Login = %+v, %q, %v", got, tok, err)
		}
	})
	for _, c := range []struct{ name, email, password string }{
		{"a wrong password is refused", "bob@example.com", "password124"},
		{"an unknown e-mail is refused alike", "nobody@example.com", "password123"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := s.Login(ctx, c.email, c.password); !errors.Is(err, account.ErrInvalidCredentials) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	t.Run("logging out revokes only that token", func(t *testing.T) {
		_, tok, _ := s.Login(ctx, "bob@example.com", "password123")
		if err := s.Logout(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, tok); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("revoked token: %v", err)
		}
		if _, err := s.Authenticate(ctx, first); err != nil {
			t.Fatalf("other token: %v", err)
		}
	})
	t.Run("a token expires", func(t *testing.T) {
		s.Now = func() time.Time { return time.Now().Add(account.DefaultTokenTTL + time.Hour) }
		defer func() { s.Now = func() time.Time { return time.Now().UTC() } }()
		if _, err := s.Authenticate(ctx, first); !errors.Is(err, account.ErrUnauthorized) {
			t.Fatalf("expired token: %v", err)
		}
	})
	t.Run("an empty or oversized token is refused without a lookup", func(t *testing.T) {
		for _, tok := range []string{"", strings.Repeat("a", 500)} {
			if _, err := s.Authenticate(ctx, tok); !errors.Is(err, account.ErrUnauthorized) {
				t.Fatalf("token %q: %v", tok, err)
			}
		}
	})
}

func TestUpdateProfile(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	u, _, _ := s.Register(ctx, account.Registration{Email: "c@example.com", Password: "password123", Name: "C"})
	str := func(v string) *string { return &v }
	cases := []struct {
		name  string
		patch account.ProfilePatch
		field string
	}{
		{"a nickname with spaces is refused", account.ProfilePatch{Nickname: str("a b c")}, "nickname"},
		{"a two-letter nickname is refused", account.ProfilePatch{Nickname: str("ab")}, "nickname"},
		{"an unknown theme is refused", account.ProfilePatch{Theme: str("neon")}, "theme"},
		{"an unknown language is refused", account.ProfilePatch{Language: str("fr")}, "language"},
		{"an avatar that is not an http URL is refused", account.ProfilePatch{AvatarURL: str("javascript:alert(1)")}, "avatar_url"},
		{"an empty name is refused", account.ProfilePatch{Name: str("")}, "name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.UpdateProfile(ctx, u.ID, c.patch)
			var inv *input.Error
			if !errors.As(err, &inv) || inv.Field != c.field {
				t.Fatalf("err = %v, want an invalid %s", err, c.field)
			}
		})
	}
	t.Run("valid changes are kept", func(t *testing.T) {
		got, err := s.UpdateProfile(ctx, u.ID, account.ProfilePatch{Nickname: str(" cee "), Theme: str("dark"), Language: str("ru")})
		if err != nil || *got.Nickname != "cee" || got.Theme != "dark" || got.Language != "ru" {
			t.Fatalf("UpdateProfile = %+v, %v", got, err)
		}
	})
}

func TestCredit(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	u, _, _ := s.Register(ctx, account.Registration{Email: "d@example.com", Password: "password123", Name: "D"})
	for _, amount := range []int64{0, -5, account.MaxCredit + 1} {
		if _, err := s.Credit(ctx, u.ID, amount, false); !errors.Is(err, input.ErrInvalid) {
			t.Fatalf("credit %d: %v", amount, err)
		}
	}
	if _, err := s.Credit(ctx, 999, 100, false); !errors.Is(err, account.ErrUserNotFound) {
		t.Fatalf("credit to nobody: %v", err)
	}
	b, err := s.Credit(ctx, u.ID, 250, true)
	if err != nil || b.Bonus != 250 || b.Balance != 0 || b.Total() != 250 {
		t.Fatalf("bonus credit = %+v, %v", b, err)
	}
	r, err := s.Audit(ctx)
	if err != nil || !r.OK || r.Sum != 0 || r.Postings != 1 {
		t.Fatalf("audit = %+v, %v", r, err)
	}
}

func TestApply(t *testing.T) {
	u, ext := account.UserAccount(1), account.External
	cases := []struct {
		name     string
		start    int64
		postings []account.Posting
		want     error
	}{
		{"money may leave the outside world without limit", 0, []account.Posting{{From: ext, To: u, Amount: 500}}, nil},
		{"a user may spend what it has", 100, []account.Posting{{From: u, To: account.FeeAccount(1), Amount: 100}}, nil},
		{"a user may not spend a kopeck more", 100, []account.Posting{{From: u, To: account.FeeAccount(1), Amount: 101}}, account.ErrInsufficientFunds},
		{"a zero posting is refused", 100, []account.Posting{{From: u, To: account.FeeAccount(1), Amount: 0}}, account.ErrInvalidAmount},
		{"a negative posting is refused", 100, []account.Posting{{From: u, To: account.FeeAccount(1), Amount: -1}}, account.ErrInvalidAmount},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bal := map[account.Ref]int64{u: c.start}
			if err := account.Apply(bal, c.postings); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	now := time.Now()
	ok := []account.AccountState{{Ref: account.External, Balance: -100, PostingsSum: -100}, {Ref: account.UserAccount(1), Balance: 100, PostingsSum: 100}}
	if r := account.Check(ok, 1, now); !r.OK || len(r.Problems) != 0 {
		t.Fatalf("balanced ledger: %+v", r)
	}
	cases := []struct {
		name     string
		accounts []account.AccountState
	}{
		{"a balance that differs from its postings is reported", []account.AccountState{{Ref: account.External, Balance: -100, PostingsSum: -100}, {Ref: account.UserAccount(1), Balance: 100, PostingsSum: 90}}},
		{"a negative user balance is reported", []account.AccountState{{Ref: account.External, Balance: 100, PostingsSum: 100}, {Ref: account.UserAccount(1), Balance: -100, PostingsSum: -100}}},
		{"a ledger that does not sum to zero is reported", []account.AccountState{{Ref: account.External, Balance: -90, PostingsSum: -90}, {Ref: account.UserAccount(1), Balance: 100, PostingsSum: 100}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r := account.Check(c.accounts, 1, now); r.OK || len(r.Problems) == 0 {
				t.Fatalf("report = %+v", r)
			}
		})
	}
}
