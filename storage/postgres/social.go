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
// sqlInsertEffects takes (notificationArrays).
var notificationParams = []column{
	{name: "user_id", typ: "bigint"},
	{name: "type", typ: "text"},
	{name: "related_id", typ: "bigint"},
	{name: "related_type", typ: "text"},
	{name: "data", typ: "jsonb"},
	{name: "created_at", typ: "timestamptz"},
}

// notificationArrays are the arrays of notificationParams for the n
// notifications that get returns; at is the time of those that have none.
func notificationArrays(n int, get func(i int) *social.Notification, at time.Time) []any {
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
	var b []byte
	for i, n := range ns {
		b = n.Data.AppendJSON(b[:0])
		users[i], types[i], rel[i], relTypes[i], data[i], times[i] = n.UserID, n.Type, n.RelatedID, n.RelatedType, string(b), n.CreatedAt
		if times[i].IsZero() {
			times[i] = at
		}
	}
	return []any{users, types, rel, relTypes, data, times}
}

// CreateNotification implements social.NotificationStore. The
// notification's change-log entry is written in the same transaction.
func (s *Store) CreateNotification(ctx context.Context, n *social.Notification) error {
	if n.CreatedAt.IsZero() {
		n.CreatedAt = now()
	}
	n.CreatedAt = dbTime(n.CreatedAt)
	b := n.Data.AppendJSON(nil)
	var id int64
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
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

// A settlement writes no market_resolved notification (see settle.go):
// each holder's is read from its positions on the market, one per market
// and holder, with an id fixed by the market's notify_base (migration
// 00015). Marking it read writes it into notifications under that id,
// read, and from then on the row stands for it.

// derivedNotificationsSQL selects the market_resolved notifications of
// user u (an SQL expression) that settlements left to be read from
// positions and that are not written yet: id, event, market name, outcome
// code, what the user was paid (payoutSQL), and when.
func derivedNotificationsSQL(u string) string {
	return `SELECT d.* FROM (
	SELECT m.notify_base + min(x.id) - m.notify_first AS id, m.event_id, m.name, m.name_ru, m.winning_outcome,
		sum(` + payoutSQL("x", "m.winning_outcome") + `)::bigint AS amount, m.resolved_at
	FROM positions x JOIN markets m ON m.id = x.market_id
	WHERE x.user_id = ` + u + ` AND ` + settledSQL + ` AND m.notify_base IS NOT NULL
	GROUP BY m.id) d
WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.id = d.id)`
}

// derivedDataSQL is the data of a derived notification d, as
// social.NotificationData marshals it for the memory store: the market's
// names, the payout when not 0, and the outcome.
const derivedDataSQL = `jsonb_strip_nulls(jsonb_build_object('market_name', NULLIF(d.name, ''), 'market_name_ru', NULLIF(d.name_ru, ''), 'amount', NULLIF(d.amount, 0),
	'won', CASE d.winning_outcome WHEN 1 THEN 'YES' WHEN 0 THEN 'NO' ELSE '` + social.OutcomeVoid + `' END))`

// sqlNotifications lists user $1's notifications, written and derived,
// only the unread ones when $2, newest first (ties by id, descending),
// limit $3, offset $4. The page is chosen first, and only its derived
// notifications get their data built.
var sqlNotifications = `WITH d AS MATERIALIZED (` + derivedNotificationsSQL("$1") + `),
page AS (
	SELECT n.id, n.created_at, false AS derived FROM notifications n WHERE n.user_id = $1 AND (NOT $2 OR NOT n.read)
	UNION ALL
	SELECT d.id, d.resolved_at, true FROM d
	ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4)
SELECT p.id, COALESCE(n.type, '` + social.TypeMarketResolved + `'), COALESCE(n.related_id, d.event_id),
	COALESCE(n.related_type, '` + social.RelatedEvent + `'), COALESCE(n.data, ` + derivedDataSQL + `), COALESCE(n.read, false), p.created_at
FROM page p
LEFT JOIN notifications n ON NOT p.derived AND n.id = p.id
LEFT JOIN d ON p.derived AND d.id = p.id
ORDER BY p.created_at DESC, p.id DESC`

// writeDerivedSQL writes the derived notifications d (a CTE) that where
// selects into notifications, read.
const writeDerivedSQL = `INSERT INTO notifications (id, user_id, type, related_id, related_type, data, read, created_at)
	SELECT d.id, $1, '` + social.TypeMarketResolved + `', d.event_id, '` + social.RelatedEvent + `', ` + derivedDataSQL + `, true, d.resolved_at FROM d`

// sqlMarkRead marks notification $2 of user $1 read: a written one in
// place, a derived one by writing it, read. The count is 0 when user $1
// has no notification $2. Two of these racing on one derived
// notification both count it: the second finds it written and marks it
// again.
var sqlMarkRead = `WITH upd AS (UPDATE notifications SET read = true WHERE id = $2 AND user_id = $1 RETURNING id),
d AS (` + derivedNotificationsSQL("$1") + `),
ins AS (` + writeDerivedSQL + ` WHERE d.id = $2 AND NOT EXISTS (SELECT 1 FROM upd)
	ON CONFLICT (id) DO UPDATE SET read = true WHERE notifications.user_id = excluded.user_id
	RETURNING id)
SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM ins)`

// sqlMarkAllRead marks every notification of user $1 read, writing the
// derived ones, and counts those it changed.
var sqlMarkAllRead = `WITH upd AS (UPDATE notifications SET read = true WHERE user_id = $1 AND NOT read RETURNING id),
d AS (` + derivedNotificationsSQL("$1") + `),
ins AS (` + writeDerivedSQL + ` ORDER BY d.id ON CONFLICT (id) DO NOTHING RETURNING id)
SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM ins)`

// Notifications implements social.NotificationStore.
func (s *Store) Notifications(ctx context.Context, userID int64, unreadOnly bool, limit, offset int) ([]*social.Notification, error) {
	if limit < 0 {
		limit = 1 << 30
	}
	rows, err := s.pool.Query(ctx, sqlNotifications, userID, unreadOnly, limit, offset)
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []*social.Notification{}
	for rows.Next() {
		n := &social.Notification{UserID: userID}
		var data []byte
		if err := rows.Scan(&n.ID, &n.Type, &n.RelatedID, &n.RelatedType, &data, &n.Read, &n.CreatedAt); err != nil {
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
	var n int64
	if err := s.pool.QueryRow(ctx, sqlMarkRead, userID, id).Scan(&n); err != nil {
		return translate(err, nil)
	}
	if n == 0 {
		return social.ErrNotificationNotFound
	}
	return nil
}

// MarkAllRead implements social.NotificationStore.
func (s *Store) MarkAllRead(ctx context.Context, userID int64) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, sqlMarkAllRead, userID).Scan(&n); err != nil {
		return 0, translate(err, nil)
	}
	return n, nil
}
