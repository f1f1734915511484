package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
)

// PasswordHash returns user id's password hash ("" for a partner's
// sub-account), or account.ErrUserNotFound.
func (s *Store) PasswordHash(ctx context.Context, id int64) (string, error) {
	var hash string
	err := s.pool.QueryRow(ctx, `SELECT password_hash FROM users WHERE id = $1`, id).Scan(&hash)
	return hash, translate(err, account.ErrUserNotFound)
}

// ChangePassword sets user id's password hash to newHash if it is still
// oldHash, and revokes the user's access tokens but keep, its reset
// tokens and its stream tickets, in one transaction. The compare-and-set makes two concurrent
// changes with the same current password serialize: the second finds the
// hash changed and is account.ErrInvalidCredentials. Every deleted token
// and the changed user are announced to the other servers by the triggers
// of migration 00008.
func (s *Store) ChangePassword(ctx context.Context, id int64, oldHash, newHash string, keep []byte) error {
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var changed, exists bool
		if err := tx.QueryRow(ctx, `WITH u AS (UPDATE users SET password_hash = $3 WHERE id = $1 AND password_hash = $2 RETURNING 1)
			SELECT EXISTS (SELECT 1 FROM u), EXISTS (SELECT 1 FROM users WHERE id = $1)`, id, oldHash, newHash).Scan(&changed, &exists); err != nil {
			return err
		}
		switch {
		case !exists:
			return account.ErrUserNotFound
		case !changed:
			return account.ErrInvalidCredentials
		}
		return revoke(ctx, tx, id, keep)
	})
	if errors.Is(err, account.ErrUserNotFound) || errors.Is(err, account.ErrInvalidCredentials) {
		return err
	}
	return translate(err, nil)
}

// revoke deletes user's access tokens but the one whose hash is keep
// (nil: every one), its reset tokens and its stream tickets.
func revoke(ctx context.Context, tx pgx.Tx, user int64, keep []byte) error {
	if _, err := tx.Exec(ctx, `DELETE FROM access_tokens WHERE user_id = $1 AND ($2::bytea IS NULL OR hash <> $2)`, user, keep); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM password_reset_tokens WHERE user_id = $1`, user); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM stream_tickets WHERE user_id = $1`, user)
	return err
}

// CreateResetToken stores a reset token's hash for userID until
// expiresAt, and deletes the reset tokens expired by then.
// account.ErrUserNotFound if there is no such user.
func (s *Store) CreateResetToken(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error {
	_, err := s.pool.Exec(ctx, `WITH expired AS (DELETE FROM password_reset_tokens WHERE expires_at <= $4)
INSERT INTO password_reset_tokens (hash, user_id, expires_at, created_at) VALUES ($1, $2, $3, $4)`, hash, userID, dbTime(expiresAt), now())
	return translate(err, nil)
}

// ResetPassword takes the reset token with hash, once, and if it had not
// expired at now sets its user's password hash to newHash and revokes
// every access token, reset token and stream ticket of the user (and,
// with revokeAPIKeys, its API keys, each announced by the trigger of
// migration 00021), in one transaction. The
// DELETE makes the token single-use across servers: of two concurrent
// uses, the second waits on the row's lock and then finds it gone. An
// expired token is deleted too (committed), and is
// account.ErrInvalidToken.
func (s *Store) ResetPassword(ctx context.Context, hash []byte, newHash string, now time.Time, revokeAPIKeys bool) (int64, error) {
	var user int64
	var ok bool
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		user, ok = 0, false
		var expires time.Time
		err := tx.QueryRow(ctx, `DELETE FROM password_reset_tokens WHERE hash = $1 RETURNING user_id, expires_at`, hash).Scan(&user, &expires)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil || !expires.After(now) {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, user, newHash); err != nil {
			return err
		}
		ok = true
		if revokeAPIKeys {
			if _, err := tx.Exec(ctx, `DELETE FROM api_keys WHERE user_id = $1`, user); err != nil {
				return err
			}
		}
		return revoke(ctx, tx, user, nil)
	})
	if err != nil {
		return 0, translate(err, nil)
	}
	if !ok {
		return 0, account.ErrInvalidToken
	}
	return user, nil
}
