package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/social"
)

// What the live stream reads besides the change log: a resolution's
// settlement notifications and its holders' balances, and the tickets a
// browser opens its stream with (migration 00018).

// SettlementNotifications returns the market_resolved notifications about
// event eventID made at at (the resolution's time) for any of users: one
// probe of notifications_user_created per user.
func (s *Store) SettlementNotifications(ctx context.Context, eventID int64, at time.Time, users []int64) ([]*social.Notification, error) {
	rows, err := s.pool.Query(ctx, sqlSettlementNotifications, users, dbTime(at), social.TypeMarketResolved, social.RelatedEvent, eventID)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	var out []*social.Notification
	for rows.Next() {
		n := &social.Notification{}
		var data []byte
		if err := rows.Scan(&n.ID, &n.UserID, &n.Type, &n.RelatedID, &n.RelatedType, &data, &n.Read, &n.CreatedAt); err != nil {
			return nil, translate(err, nil)
		}
		if err := json.Unmarshal(data, &n.Data); err != nil {
			return nil, fmt.Errorf("postgres: notification %d data: %w", n.ID, err)
		}
		n.CreatedAt = n.CreatedAt.UTC()
		out = append(out, n)
	}
	return out, translate(rows.Err(), nil)
}

// sqlSettlementNotifications reads the notifications of
// SettlementNotifications: those written (a derived one the user marked
// read is written too), and those still derived from the user's settled
// positions (see derivedNotificationsSQL).
var sqlSettlementNotifications = `SELECT id, user_id, type, related_id, related_type, data, read, created_at
FROM notifications WHERE user_id = ANY($1) AND created_at = $2 AND type = $3 AND related_type = $4 AND related_id = $5
UNION ALL
SELECT d.id, u.id, $3, d.event_id, $4, ` + derivedDataSQL + `, false, d.resolved_at
FROM unnest($1::bigint[]) u(id) CROSS JOIN LATERAL (` + derivedNotificationsSQL("u.id") + `) d
WHERE d.event_id = $5 AND d.resolved_at = $2`

// BalancesOf returns the balances of users (zero for a user with no
// postings), in one query.
func (s *Store) BalancesOf(ctx context.Context, users []int64) (map[int64]account.Balances, error) {
	out := make(map[int64]account.Balances, len(users))
	for _, u := range users {
		out[u] = account.Balances{}
	}
	rows, err := s.pool.Query(ctx, `SELECT owner, kind, balance FROM ledger_accounts
WHERE kind IN ('user', 'user_bonus') AND owner = ANY($1)`, users)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	for rows.Next() {
		var owner, balance int64
		var kind string
		if err := rows.Scan(&owner, &kind, &balance); err != nil {
			return nil, translate(err, nil)
		}
		b := out[owner]
		if kind == string(account.KindUserBonus) {
			b.Bonus = balance
		} else {
			b.Balance = balance
		}
		out[owner] = b
	}
	return out, translate(rows.Err(), nil)
}

// CreateStreamTicket stores a stream ticket's hash for userID until
// expiresAt, and deletes the tickets expired by then.
func (s *Store) CreateStreamTicket(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error {
	_, err := s.pool.Exec(ctx, `WITH expired AS (DELETE FROM stream_tickets WHERE expires_at <= $4)
INSERT INTO stream_tickets (hash, user_id, expires_at) VALUES ($1, $2, $3)`, hash, userID, dbTime(expiresAt), now())
	return translate(err, nil)
}

// UseStreamTicket takes the ticket with hash, once: it returns its user
// and true if the ticket exists and has not expired at now, and deletes
// it either way. The DELETE makes it single-use across servers: of two
// concurrent uses, one finds the row.
func (s *Store) UseStreamTicket(ctx context.Context, hash []byte, now time.Time) (int64, bool, error) {
	var user int64
	var expires time.Time
	err := s.pool.QueryRow(ctx, `DELETE FROM stream_tickets WHERE hash = $1 RETURNING user_id, expires_at`, hash).Scan(&user, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, translate(err, nil)
	}
	if !expires.After(now) {
		return 0, false, nil
	}
	return user, true, nil
}
