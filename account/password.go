package account

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/input"
)

// ResetTokenTTL is how long a password reset token lives.
const ResetTokenTTL = time.Hour

// maxSecretLen bounds a token read from a request: NewSecret's are 43
// characters, so anything much longer is no token and is not hashed.
const maxSecretLen = 128

// CheckPassword applies the password rule, the same at registration, at a
// change and at a reset: at least MinPasswordLen characters and at most
// MaxPasswordLen bytes (bcrypt reads no further, so a longer password
// would be cut without a word). field names the refused field.
func CheckPassword(field, password string) error {
	if utf8.RuneCountInString(password) < MinPasswordLen || len(password) > MaxPasswordLen {
		return input.Invalid(field, fmt.Sprintf("must be %d to %d bytes", MinPasswordLen, MaxPasswordLen))
	}
	return nil
}

// ChangePassword replaces user id's password with next once current is
// proved, and revokes every other access token, every reset token and
// every stream ticket of the user: token, the one the request came
// with, keeps working. Personal API keys are not access tokens and are
// left alone. Checks run *input.Error (next breaks
// the password rule), then ErrNoPassword, ErrInvalidCredentials (current
// is wrong, or the password changed meanwhile).
func (s *Service) ChangePassword(ctx context.Context, id int64, token, current, next string) error {
	if err := CheckPassword("new_password", next); err != nil {
		return err
	}
	old, err := s.store.PasswordHash(ctx, id)
	if err != nil {
		return err
	}
	if old == "" {
		return ErrNoPassword
	}
	if bcrypt.CompareHashAndPassword([]byte(old), []byte(current)) != nil {
		return ErrInvalidCredentials
	}
	hash, err := s.hashPassword(next)
	if err != nil {
		return err
	}
	var keep []byte
	if token != "" {
		keep = HashToken(token)
	}
	// Dropped even on failure: the store may have committed before the
	// error reached us.
	defer s.invalidate(Invalidation{UserID: id})
	return s.store.ChangePassword(ctx, id, old, hash, keep)
}

// A Reset is a password reset token just issued, for its user. Token is
// the secret to hand the user (by mail, or by the operator); only its
// hash is stored.
type Reset struct {
	User    *User
	Token   string
	Expires time.Time
}

// RequestReset issues a reset token for the user registered with email.
// ErrUserNotFound when no user with a password has that e-mail (the
// caller must not tell its client so); *input.Error for an e-mail that
// is no address at all, which no account can have.
func (s *Service) RequestReset(ctx context.Context, email string) (Reset, error) {
	u, err := s.UserForReset(ctx, email)
	if err != nil {
		return Reset{}, err
	}
	return s.issueReset(ctx, u)
}

// UserForReset returns the user with a password registered with email,
// whom a reset request for email is about; errors as RequestReset's.
func (s *Service) UserForReset(ctx context.Context, email string) (*User, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	u, hash, err := s.store.UserByEmail(ctx, email)
	if err != nil {
		return nil, err
	}
	if hash == "" {
		return nil, ErrUserNotFound
	}
	return u, nil
}

// IssueReset issues a reset token for user id, for an operator to hand
// over. ErrUserNotFound, ErrNoPassword.
func (s *Service) IssueReset(ctx context.Context, id int64) (Reset, error) {
	u, err := s.store.User(ctx, id)
	if err != nil {
		return Reset{}, err
	}
	hash, err := s.store.PasswordHash(ctx, id)
	if err != nil {
		return Reset{}, err
	}
	if hash == "" {
		return Reset{}, ErrNoPassword
	}
	return s.issueReset(ctx, u)
}

func (s *Service) issueReset(ctx context.Context, u *User) (Reset, error) {
	tok := NewSecret()
	exp := s.Now().Add(ResetTokenTTL)
	if err := s.store.CreateResetToken(ctx, HashToken(tok), u.ID, exp); err != nil {
		return Reset{}, err
	}
	return Reset{User: u, Token: tok, Expires: exp}, nil
}

// ResetPassword sets a new password with a reset token, which it uses
// up, and revokes every access token, every other reset token and every
// stream ticket of the user: whoever knew the old password, or held a
// token or ticket got with it, is signed out everywhere. With
// revokeAPIKeys the user's personal API keys go too, in the same
// transaction (a key is no password's child, so without it they stay).
// It returns the user's id. Checks run *input.Error (next breaks the
// password rule; the token is then still good), then ErrInvalidToken.
func (s *Service) ResetPassword(ctx context.Context, token, next string, revokeAPIKeys bool) (int64, error) {
	if err := CheckPassword("new_password", next); err != nil {
		return 0, err
	}
	if token == "" || len(token) > maxSecretLen {
		return 0, ErrInvalidToken
	}
	hash, err := s.hashPassword(next)
	if err != nil {
		return 0, err
	}
	id, err := s.store.ResetPassword(ctx, HashToken(token), hash, s.Now(), revokeAPIKeys)
	if err != nil {
		return 0, err
	}
	s.invalidate(Invalidation{UserID: id})
	return id, nil
}

func (s *Service) hashPassword(p string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(p), s.BcryptCost)
	if err != nil {
		return "", fmt.Errorf("account: hash password: %w", err)
	}
	return string(h), nil
}
