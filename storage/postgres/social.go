package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
)

var _ social.NotificationStore = (*Store)(nil)

// notificationParams are the arrays of new notifications that
// sqlInsertNotifications and sqlInsertEffects take (notificationArgs).
var notificationParams = []column{
	{name: "user_id", typ: "bigint"},
	{name: "type", typ: "text"},
	{name: "related_id", typ: "bigint"},
	{name: "related_type", typ: "text"},
	{name: "data", typ: "jsonb"},
	{name: "created_at", typ: "timestamptz"},
}

var sqlInsertNotifications = `INSERT INTO notifications (` + nameList(notificationParams) + `)
SELECT * FROM ` + unnest(1, notificationParams)

// notificationArgs are the arguments of sqlInsertNotifications; at is the
// time of those that have none.
func notificationArgs(ns []social.Notification, at time.Time) ([]any, error) {
	return notificationArrays(len(ns), func(i int) *social.Notification { return &ns[i] }, at)
}

// notificationArrays are the arrays of notificationParams for the n
// notifications that get returns.
func notificationArrays(n int, get func(i int) *social.Notification, at time.Time) ([]any, error) {
	ns := make([]*social.Notification, n)
	for i := range ns {
		ns[i] = get(i)
	}
	users := make([]int64, len(ns))
	types := make([]string, len(ns))
	rel := make([]int64, len(ns))
	relTypes := make([]string, len(ns))
	data := make([]string, len(ns))
	times := make([]time.Time, len(ns))
	for i, n := range ns {
		b, err := json.Marshal(n.Data)
		if err != nil {
			return nil, fmt.Errorf("postgres: notification data: %w", err)
		}
		users[i], types[i], rel[i], relTypes[i], data[i], times[i] = n.UserID, n.Type, n.RelatedID, n.RelatedType, string(b), n.CreatedAt
		if times[i].IsZero() {
			times[i] = at
		}
	}
	return []any{users, types, rel, relTypes, data, times}, nil
}

// CreateNotification implements social.NotificationStore. The
// notification's change-log entry is written in the same transaction.
func (s *Store) CreateNotification(ctx context.Context, n *social.Notification) error {
	if n.CreatedAt.IsZero() {
		n.CreatedAt = now()
	}
	n.CreatedAt = dbTime(n.CreatedAt)
	b, err := json.Marshal(n.Data)
	if err != nil {
		return fmt.Errorf("postgres: notification data: %w", err)
	}
	var id int64
	err = s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, sqlInsertNotification, n.UserID, n.Type, n.RelatedID, n.RelatedType, string(b), n.CreatedAt).Scan(&id); err != nil {
			return err
		}
		c := *n
		c.ID = id
		return s.appendChanges(ctx, tx, []changelog.Entry{social.NotificationChange(&c)})
	})
	if err != nil {
		return translate(err, nil)
	}
	n.ID = id
	return nil
}

// sqlInsertNotification inserts one notification and returns its id.
const sqlInsertNotification = `INSERT INTO notifications (user_id, type, related_id, related_type, data, created_at)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`

// Notifications implements social.NotificationStore.
func (s *Store) Notifications(ctx context.Context, userID int64, unreadOnly bool, limit, offset int) ([]*social.Notification, error) {
	if limit < 0 {
		limit = 1 << 30
	}
	rows, err := s.pool.Query(ctx, `SELECT id, user_id, type, related_id, related_type, data, read, created_at
FROM notifications WHERE user_id = $1 AND (NOT $2 OR NOT read)
ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, userID, unreadOnly, limit, offset)
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []*social.Notification{}
	for rows.Next() {
		n := &social.Notification{}
		var data []byte
		if err := rows.Scan(&n.ID, &n.UserID, &n.Type, &n.RelatedID, &n.RelatedType, &data, &n.Read, &n.CreatedAt); err != nil {
			rows.Close()
			return nil, translate(err, nil)
		}
		if err := json.Unmarshal(data, &n.Data); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: notification %d data: %w", n.ID, err)
		}
		n.CreatedAt = n.CreatedAt.UTC()
		out = append(out, n)
	}
	return out, translate(rows.Err(), nil)
}

// MarkRead implements social.NotificationStore.
func (s *Store) MarkRead(ctx context.Context, userID, id int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE notifications SET read = true WHERE id = $1 AND user_id = $2`, id, userID)
	if err != nil {
		return translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return social.ErrNotificationNotFound
	}
	return nil
}

// MarkAllRead implements social.NotificationStore.
func (s *Store) MarkAllRead(ctx context.Context, userID int64) (int64, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE notifications SET read = true WHERE user_id = $1 AND NOT read`, userID)
	if err != nil {
		return 0, translate(err, nil)
	}
	return tag.RowsAffected(), nil
}
