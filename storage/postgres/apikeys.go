package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
)

const apiKeyCols = `k.id, k.user_id, k.name, k.scopes, k.created_at, k.last_used_at`

func apiKeyDest(k *account.APIKey, scopes *[]string) []any {
	return []any{&k.ID, &k.UserID, &k.Name, scopes, &k.CreatedAt, &k.LastUsedAt}
}

func toScopes(s []string) []account.Scope {
	out := make([]account.Scope, len(s))
	for i, v := range s {
		out[i] = account.Scope(v)
	}
	return out
}

// CreateAPIKey implements account.Store. The user's row is locked (FOR
// NO KEY UPDATE, which trades and logins do not wait for) before its keys
// are counted, in a statement of its own: under READ COMMITTED each
// statement reads a fresh snapshot, so the count, taken once the lock is
// held, sees the keys of every creation that held it before, and
// concurrent creations never pass max. (Counting in the locking statement
// would read the snapshot taken before it waited.)
func (s *Store) CreateAPIKey(ctx context.Context, k *account.APIKey, hash []byte, max int) error {
	scopes := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		scopes[i] = string(sc)
	}
	created := dbTime(k.CreatedAt)
	var id int64
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, k.UserID).Scan(&one); err != nil {
			return translate(err, account.ErrUserNotFound)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM api_keys WHERE user_id = $1`, k.UserID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return account.ErrTooManyAPIKeys
		}
		return tx.QueryRow(ctx, `INSERT INTO api_keys (user_id, hash, name, scopes, created_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, k.UserID, hash, k.Name, scopes, created).Scan(&id)
	})
	if err != nil {
		return translate(err, nil)
	}
	k.ID, k.CreatedAt = id, created
	return nil
}

// APIKeys implements account.Store.
func (s *Store) APIKeys(ctx context.Context, userID int64) ([]*account.APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+apiKeyCols+` FROM api_keys k WHERE k.user_id = $1 ORDER BY k.id DESC`, userID)
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []*account.APIKey{}
	for rows.Next() {
		k := &account.APIKey{}
		var scopes []string
		if err := rows.Scan(apiKeyDest(k, &scopes)...); err != nil {
			rows.Close()
			return nil, translate(err, nil)
		}
		k.Scopes = toScopes(scopes)
		out = append(out, k)
	}
	return out, translate(rows.Err(), nil)
}

// DeleteAPIKey implements account.Store; the trigger of migration 00021
// announces the revoked hash to every server.
func (s *Store) DeleteAPIKey(ctx context.Context, userID, id int64) ([]byte, error) {
	var hash []byte
	err := s.pool.QueryRow(ctx, `DELETE FROM api_keys WHERE id = $1 AND user_id = $2 RETURNING hash`, id, userID).Scan(&hash)
	if err != nil {
		return nil, translate(err, account.ErrAPIKeyNotFound)
	}
	return hash, nil
}

// UserByAPIKey implements account.Store.
func (s *Store) UserByAPIKey(ctx context.Context, hash []byte) (*account.User, *account.APIKey, error) {
	k := &account.APIKey{}
	var scopes []string
	u, err := scanUser(s.pool.QueryRow(ctx, `SELECT `+userCols+`, `+apiKeyCols+` FROM api_keys k JOIN users u ON u.id = k.user_id
		WHERE k.hash = $1`, hash), apiKeyDest(k, &scopes)...)
	if err != nil {
		return nil, nil, translate(err, account.ErrUnauthorized)
	}
	k.Scopes = toScopes(scopes)
	return u, k, nil
}

// TouchAPIKey implements account.Store.
func (s *Store) TouchAPIKey(ctx context.Context, id int64, at time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`, id, dbTime(at))
	return translate(err, nil)
}
