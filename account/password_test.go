package account_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/storage/memory"
)

// spyStore records the reset token hashes the service stores.
type spyStore struct {
	*memory.Store
	resets [][]byte
}

func (s *spyStore) CreateResetToken(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error {
	s.resets = append(s.resets, bytes.Clone(hash))
	return s.Store.CreateResetToken(ctx, hash, userID, expiresAt)
}

// pwEnv is a Service on a spied memory store, with a clock the test
// moves and one registered user.
type pwEnv struct {
	ctx   context.Context
	store *spyStore
	svc   *account.Service
	now   time.Time
	user  *account.User
	token string
}

func newPwEnv(t *testing.T) *pwEnv {
	t.Helper()
	e := &pwEnv{ctx: context.Background(), store: &spyStore{Store: memory.New()}, now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	e.svc = account.NewService(e.store)
	e.svc.BcryptCost = bcrypt.MinCost
	e.svc.Now = func() time.Time { return e.now }
	var err error
	if e.user, e.token, err = e.svc.Register(e.ctx, account.Registration{Email: "ann@example.com", Password: "password123", Name: "Ann"}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *pwEnv) login(t *testing.T, password string) (string, bool) {
	t.Helper()
	_, tok, err := e.svc.Login(e.ctx, "ann@example.com", password)
	if errors.Is(err, account.ErrInvalidCredentials) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return tok, true
}

func (e *pwEnv) works(t *testing.T, tok string) bool {
	t.Helper()
	_, err := e.svc.Authenticate(e.ctx, tok)
	if err != nil && !errors.Is(err, account.ErrUnauthorized) {
		t.Fatal(err)
	}
	return err == nil
}

// subAccount stores a partner's sub-account: no e-mail, no password.
func (e *pwEnv) subAccount(t *testing.T) *account.User {
	t.Helper()
	u := &account.User{Name: "sub", PartnerID: 1, ExternalID: "x", Language: "en", Theme: "light", Level: 1}
	if err := e.store.CreateUser(e.ctx, u, ""); err != nil {
		t.Fatal(err)
	}
	return u
}

func invalidField(err error) string {
	var ie *input.Error
	if errors.As(err, &ie) {
		return ie.Field
	}
	return ""
}

func TestCheckPassword(t *testing.T) {
	for _, c := range []struct {
		name, password string
		ok             bool
	}{
		{"7 characters are too few", "1234567", false},
		{"8 characters are enough", "12345678", true},
		{"8 two-byte characters are enough", "йййййййй", true},
		{"72 bytes are the most", strings.Repeat("x", 72), true},
		{"73 bytes are too many, since bcrypt would cut them", strings.Repeat("x", 73), false},
		{"37 two-byte characters are 74 bytes, too many", strings.Repeat("й", 37), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := account.CheckPassword("new_password", c.password)
			if (err == nil) != c.ok || (err != nil && invalidField(err) != "new_password") {
				t.Fatalf("CheckPassword = %v, want ok %v", err, c.ok)
			}
		})
	}
}

func TestServiceChangePassword(t *testing.T) {
	t.Run("a change keeps the caller's token and revokes the others, even cached ones", func(t *testing.T) {
		e := newPwEnv(t)
		e.svc.CacheAuth(time.Hour)
		other, _ := e.login(t, "password123")
		if !e.works(t, other) { // now cached
			t.Fatal("the second token does not work")
		}
		if err := e.svc.ChangePassword(e.ctx, e.user.ID, e.token, "password123", "new password 1"); err != nil {
			t.Fatal(err)
		}
		if !e.works(t, e.token) || e.works(t, other) {
			t.Fatal("want the caller's token kept and the other revoked")
		}
		if _, ok := e.login(t, "password123"); ok {
			t.Fatal("the old password still signs in")
		}
		if _, ok := e.login(t, "new password 1"); !ok {
			t.Fatal("the new password does not sign in")
		}
	})
	t.Run("refusals", func(t *testing.T) {
		e := newPwEnv(t)
		sub := e.subAccount(t)
		cases := []struct {
			name          string
			id            int64
			current, next string
			want          error
			field         string
		}{
			{"a wrong current password", e.user.ID, "password124", "new password 1", account.ErrInvalidCredentials, ""},
			{"a short new password", e.user.ID, "password123", "short", input.ErrInvalid, "new_password"},
			{"a new password bcrypt would cut", e.user.ID, "password123", strings.Repeat("x", 73), input.ErrInvalid, "new_password"},
			{"a user with no password", sub.ID, "", "new password 1", account.ErrNoPassword, ""},
			{"an unknown user", e.user.ID + 100, "password123", "new password 1", account.ErrUserNotFound, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := e.svc.ChangePassword(e.ctx, c.id, e.token, c.current, c.next)
				if !errors.Is(err, c.want) || invalidField(err) != c.field {
					t.Fatalf("err = %v, want %v (field %q)", err, c.want, c.field)
				}
			})
		}
		if _, ok := e.login(t, "password123"); !ok || !e.works(t, e.token) {
			t.Fatal("a refused change changed something")
		}
	})
}

func TestServiceReset(t *testing.T) {
	t.Run("a token is mailed as a secret and stored as its SHA-256 only", func(t *testing.T) {
		e := newPwEnv(t)
		r, err := e.svc.RequestReset(e.ctx, "  ANN@example.com ")
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(r.Token))
		if len(e.store.resets) != 1 || !bytes.Equal(e.store.resets[0], sum[:]) || bytes.Contains(e.store.resets[0], []byte(r.Token)) {
			t.Fatalf("the store got %x for the token %q", e.store.resets, r.Token)
		}
		if r.User.ID != e.user.ID || !r.Expires.Equal(e.now.Add(account.ResetTokenTTL)) || len(r.Token) < 40 {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("a reset sets the password once and signs the user out", func(t *testing.T) {
		e := newPwEnv(t)
		r, err := e.svc.IssueReset(e.ctx, e.user.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.ResetPassword(e.ctx, r.Token, "short", false); invalidField(err) != "new_password" {
			t.Fatalf("a short password: %v", err)
		}
		id, err := e.svc.ResetPassword(e.ctx, r.Token, "new password 1", false) // the refusal above left the token good
		if err != nil || id != e.user.ID {
			t.Fatalf("ResetPassword = %d, %v", id, err)
		}
		if e.works(t, e.token) {
			t.Fatal("the reset left a token working")
		}
		if _, ok := e.login(t, "new password 1"); !ok {
			t.Fatal("the new password does not sign in")
		}
		if _, err := e.svc.ResetPassword(e.ctx, r.Token, "new password 2", false); !errors.Is(err, account.ErrInvalidToken) {
			t.Fatalf("a second use: %v, want ErrInvalidToken", err)
		}
	})
	t.Run("a token an hour old is refused", func(t *testing.T) {
		e := newPwEnv(t)
		r, err := e.svc.IssueReset(e.ctx, e.user.ID)
		if err != nil {
			t.Fatal(err)
		}
		e.now = e.now.Add(account.ResetTokenTTL)
		if _, err := e.svc.ResetPassword(e.ctx, r.Token, "new password 1", false); !errors.Is(err, account.ErrInvalidToken) {
			t.Fatalf("err = %v, want ErrInvalidToken", err)
		}
		if _, ok := e.login(t, "password123"); !ok {
			t.Fatal("an expired token changed the password")
		}
	})
	t.Run("requests that name no account with a password", func(t *testing.T) {
		e := newPwEnv(t)
		sub := e.subAccount(t)
		for _, c := range []struct {
			name string
			err  func() error
			want error
		}{
			{"an unknown e-mail", func() error { _, err := e.svc.RequestReset(e.ctx, "bob@example.com"); return err }, account.ErrUserNotFound},
			{"an e-mail that is no address", func() error { _, err := e.svc.RequestReset(e.ctx, "Ann <ann@example.com>"); return err }, input.ErrInvalid},
			{"a sub-account, by id", func() error { _, err := e.svc.IssueReset(e.ctx, sub.ID); return err }, account.ErrNoPassword},
			{"an unknown id", func() error { _, err := e.svc.IssueReset(e.ctx, sub.ID+100); return err }, account.ErrUserNotFound},
			{"an unknown token", func() error { _, err := e.svc.ResetPassword(e.ctx, "nope", "new password 1", false); return err }, account.ErrInvalidToken},
			{"an empty token", func() error { _, err := e.svc.ResetPassword(e.ctx, "", "new password 1", false); return err }, account.ErrInvalidToken},
		} {
			t.Run(c.name, func(t *testing.T) {
				if err := c.err(); !errors.Is(err, c.want) {
					t.Fatalf("err = %v, want %v", err, c.want)
				}
			})
		}
		if len(e.store.resets) != 0 {
			t.Fatalf("%d tokens were stored", len(e.store.resets))
		}
	})
}
