package postgres

// Partner webhooks (migration 00023). A settlement writes nothing for
// webhooks: the dispatcher (DispatchWebhooks) reads the change log after
// its cursor, and for each market_resolved entry queues, in one INSERT …
// SELECT, a market.resolved per partner with a webhook whose sub-accounts
// held positions on the market and a bet.settled per such position, the
// positions found as the reads find a settlement's (settledSQL: open in
// their row, their market resolved) and paid payoutSQL; the same
// transaction moves the cursor (sqlSetChangeCursor), whose row it locks
// first, so that one dispatcher at a time reads and nothing is lost or
// queued twice.

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/webhook"
)

var _ webhook.Store = (*Store)(nil)

// webhookConsumer is the dispatcher's name in change_consumers.
const webhookConsumer = "webhooks"

// sqlStartWebhookCursor makes the dispatcher's cursor at the change
// log's end if there is none: nothing before the first webhook is owed.
const sqlStartWebhookCursor = `INSERT INTO change_consumers (name, after) SELECT $1, last FROM change_log_head
	ON CONFLICT (name) DO NOTHING`

// SetWebhook implements webhook.Store. The dispatcher's cursor is made
// in the same transaction if it has none, so that every resolution
// committed after the webhook is queued, however late the dispatcher
// first runs.
func (s *Store) SetWebhook(ctx context.Context, h *webhook.Hook) error {
	created := now()
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlStartWebhookCursor, webhookConsumer); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO partner_webhooks (partner_id, url, secret, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (partner_id) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret, created_at = EXCLUDED.created_at`,
			h.PartnerID, h.URL, h.Secret, created)
		return err
	})
	if err != nil {
		return translate(err, nil)
	}
	h.CreatedAt = created
	return nil
}

// Webhook implements webhook.Store.
func (s *Store) Webhook(ctx context.Context, partnerID int64) (*webhook.Hook, error) {
	h := &webhook.Hook{PartnerID: partnerID}
	err := s.pool.QueryRow(ctx, `SELECT url, secret, created_at FROM partner_webhooks WHERE partner_id = $1`, partnerID).
		Scan(&h.URL, &h.Secret, &h.CreatedAt)
	if err != nil {
		return nil, translate(err, webhook.ErrNoWebhook)
	}
	return h, nil
}

// DeleteWebhook implements webhook.Store.
func (s *Store) DeleteWebhook(ctx context.Context, partnerID int64, _ time.Time) error {
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM partner_webhooks WHERE partner_id = $1`, partnerID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return &decideError{webhook.ErrNoWebhook}
		}
		_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET status = 'failed', last_error = 'webhook removed'
			WHERE partner_id = $1 AND status = 'pending'`, partnerID)
		return err
	})
	return translate(err, nil)
}

// sqlQueueWebhooks queues the deliveries of the resolved markets $1 (in
// the order of their entries), due at $2 and retried until $3.
var sqlQueueWebhooks = `WITH r AS (
	SELECT m.id, m.event_id, m.winning_outcome AS won, m.resolved_at, u.ord
	FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord)
	JOIN markets m ON m.id = u.id AND m.resolved
),
held AS (
	SELECT r.ord, r.id AS market_id, r.event_id, r.won, r.resolved_at, x.id AS position_id, x.side, x.shares,
		(` + payoutSQL("x", "r.won") + `)::bigint AS payout, us.partner_id, us.external_id
	FROM r
	JOIN positions x ON x.market_id = r.id AND x.closed_at IS NULL
	JOIN users us ON us.id = x.user_id
	JOIN partner_webhooks w ON w.partner_id = us.partner_id
),
queued AS (
	(SELECT DISTINCT ON (ord, partner_id) ord, partner_id, 0 AS kind, 'market.resolved' AS type, market_id, event_id, won,
		resolved_at, 0::bigint AS position_id, ''::text AS external_id, 0::smallint AS side, 0::bigint AS shares, 0::bigint AS payout
	FROM held ORDER BY ord, partner_id)
	UNION ALL
	SELECT ord, partner_id, 1, 'bet.settled', market_id, event_id, won, resolved_at, position_id, external_id, side, shares, payout
	FROM held
)
INSERT INTO webhook_deliveries (partner_id, type, market_id, event_id, won_side, position_id, external_user_id,
	side, shares, payout_kopecks, created_at, next_attempt_at, expires_at)
SELECT partner_id, type, market_id, event_id, won, position_id, external_id, side, shares, payout, resolved_at, $2, $3
FROM queued ORDER BY ord, partner_id, kind, position_id
ON CONFLICT ON CONSTRAINT webhook_deliveries_once DO NOTHING`

// sqlQueueAnswerWebhooks queues a market.answer_added for each partner
// with a webhook whose users hold open positions in the pool of each new
// market $1 (as the split left them, or as trades since have).
const sqlQueueAnswerWebhooks = `INSERT INTO webhook_deliveries (partner_id, type, market_id, event_id, won_side, created_at, next_attempt_at, expires_at)
SELECT DISTINCT ON (n.id, us.partner_id) us.partner_id, 'market.answer_added', n.id, n.event_id, 0, n.created_at, $2::timestamptz, $3::timestamptz
FROM unnest($1::bigint[]) AS u(id)
JOIN markets n ON n.id = u.id
JOIN markets m ON m.pool_id = n.pool_id
JOIN positions x ON x.market_id = m.id AND x.closed_at IS NULL
JOIN users us ON us.id = x.user_id
JOIN partner_webhooks w ON w.partner_id = us.partner_id
ORDER BY n.id, us.partner_id
ON CONFLICT ON CONSTRAINT webhook_deliveries_once DO NOTHING`

// DispatchWebhooks implements webhook.Store: in one transaction, it
// locks the dispatcher's cursor (made with the first webhook: without
// it, nothing is owed and nothing is read), reads at most limit entries
// after it,
// queues the deliveries of their market_resolved entries and moves the
// cursor past them.
func (s *Store) DispatchWebhooks(ctx context.Context, at time.Time, limit int, window time.Duration) (int, error) {
	var n int
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		n = 0
		var after int64
		err := tx.QueryRow(ctx, `SELECT after FROM change_consumers WHERE name = $1 FOR UPDATE`, webhookConsumer).Scan(&after)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // no webhook was ever set: nothing is owed
		} else if err != nil {
			return err
		}
		// The entries are read on another connection: they are committed,
		// and the cursor's lock keeps every other dispatcher waiting.
		es, err := s.Changes(ctx, after, limit)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			return nil
		}
		var ids, answers []int64
		for _, e := range es {
			if e.Type == changelog.MarketResolved && e.MarketID != 0 {
				ids = append(ids, e.MarketID)
			}
			if e.Type == changelog.AnswerAdded && e.MarketID != 0 {
				answers = append(answers, e.MarketID)
			}
		}
		if len(ids) > 0 {
			if _, err := tx.Exec(ctx, sqlQueueWebhooks, ids, dbTime(at), dbTime(at.Add(window))); err != nil {
				return err
			}
		}
		if len(answers) > 0 {
			if _, err := tx.Exec(ctx, sqlQueueAnswerWebhooks, answers, dbTime(at), dbTime(at.Add(window))); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, sqlSetChangeCursor, webhookConsumer, es[len(es)-1].Seq); err != nil {
			return err
		}
		n = len(es)
		return nil
	})
	return n, translate(err, nil)
}

// DuePartners implements webhook.Store: partners are few, and each is
// asked through the due index.
func (s *Store) DuePartners(ctx context.Context, at time.Time) ([]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT w.partner_id FROM partner_webhooks w WHERE EXISTS (
		SELECT 1 FROM webhook_deliveries d WHERE d.partner_id = w.partner_id AND d.status = 'pending' AND d.next_attempt_at <= $1)
		ORDER BY 1`, dbTime(at))
	if err != nil {
		return nil, translate(err, nil)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return ids, translate(err, nil)
}

const deliveryCols = `d.id, d.partner_id, d.type, d.market_id, d.event_id, d.won_side, d.position_id, d.external_user_id,
	d.side, d.shares, d.payout_kopecks, d.created_at, d.status, d.attempts, d.next_attempt_at, d.expires_at,
	d.last_attempt_at, d.last_status_code, d.last_error, d.last_latency_us, d.delivered_at`

func deliveryDest(d *webhook.Delivery, won, side *int16, latency *int64) []any {
	return []any{&d.ID, &d.PartnerID, &d.Type, &d.MarketID, &d.EventID, won, &d.PositionID, &d.ExternalUserID,
		side, &d.Shares, &d.PayoutKopecks, &d.CreatedAt, &d.Status, &d.Attempts, &d.NextAttemptAt, &d.ExpiresAt,
		&d.LastAttemptAt, &d.LastStatusCode, &d.LastError, latency, &d.DeliveredAt}
}

func scanDeliveries(rows pgx.Rows, withHook bool) ([]*webhook.Delivery, error) {
	defer rows.Close()
	out := []*webhook.Delivery{}
	for rows.Next() {
		d := &webhook.Delivery{}
		var won, side int16
		var latency int64
		dest := deliveryDest(d, &won, &side, &latency)
		if withHook {
			dest = append(dest, &d.URL, &d.Secret)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		d.WonSide, d.Side, d.LastLatency = int(won), sideOf(side), time.Duration(latency)*time.Microsecond
		out = append(out, d)
	}
	return out, rows.Err()
}

// ClaimDeliveries implements webhook.Store: the due rows are locked
// SKIP LOCKED, so concurrent claimers take different ones, and leased by
// moving their next attempt.
func (s *Store) ClaimDeliveries(ctx context.Context, partnerID int64, at, leaseUntil time.Time, n int) ([]*webhook.Delivery, error) {
	rows, err := s.pool.Query(ctx, `WITH c AS (
		SELECT id FROM webhook_deliveries
		WHERE partner_id = $1 AND status = 'pending' AND next_attempt_at <= $2
		ORDER BY next_attempt_at, id LIMIT $4
		FOR UPDATE SKIP LOCKED)
	UPDATE webhook_deliveries d SET next_attempt_at = $3, attempts = d.attempts + 1
	FROM c, partner_webhooks w WHERE d.id = c.id AND w.partner_id = d.partner_id
	RETURNING `+deliveryCols+`, w.url, w.secret`, partnerID, dbTime(at), dbTime(leaseUntil), n)
	if err != nil {
		return nil, translate(err, nil)
	}
	ds, err := scanDeliveries(rows, true)
	if err != nil {
		return nil, translate(err, nil)
	}
	slices.SortFunc(ds, func(a, b *webhook.Delivery) int { return int(a.ID - b.ID) })
	return ds, nil
}

// RecordAttempt implements webhook.Store.
func (s *Store) RecordAttempt(ctx context.Context, a webhook.Attempt) error {
	_, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET status = $3, last_attempt_at = $4, last_status_code = $5,
		last_error = $6, last_latency_us = $7,
		next_attempt_at = CASE WHEN $3 = 'pending' THEN $8 ELSE next_attempt_at END,
		delivered_at = CASE WHEN $3 = 'delivered' THEN $4 ELSE delivered_at END
		WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
		a.ID, a.Attempts, a.Status, dbTime(a.At), a.StatusCode, a.Error, a.Latency.Microseconds(), dbTime(a.NextAttemptAt))
	return translate(err, nil)
}

// Deliveries implements webhook.Store. The cursor is cast: PostgreSQL
// would otherwise type it from the literal it is first compared with,
// int4, and a cursor past 2^31 would not be sent.
func (s *Store) Deliveries(ctx context.Context, partnerID, before int64, limit int) ([]*webhook.Delivery, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries d
		WHERE d.partner_id = $1 AND ($2::bigint = 0 OR d.id < $2::bigint) ORDER BY d.id DESC LIMIT $3`, partnerID, before, limit)
	if err != nil {
		return nil, translate(err, nil)
	}
	ds, err := scanDeliveries(rows, false)
	return ds, translate(err, nil)
}

// Redeliver implements webhook.Store.
func (s *Store) Redeliver(ctx context.Context, partnerID, id int64, at, expires time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $3, expires_at = $4,
		delivered_at = NULL WHERE id = $2 AND partner_id = $1`, partnerID, id, dbTime(at), dbTime(expires))
	if err != nil {
		return translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return webhook.ErrDeliveryNotFound
	}
	return nil
}

// WebhookQueue implements webhook.Store.
func (s *Store) WebhookQueue(ctx context.Context, at time.Time) (webhook.Queue, error) {
	var q webhook.Queue
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE next_attempt_at <= $1),
		min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1)
		FROM webhook_deliveries WHERE status = 'pending'`, dbTime(at)).Scan(&q.Pending, &q.Due, &oldest)
	if err != nil {
		return q, translate(err, nil)
	}
	if oldest != nil {
		q.OldestDue = *oldest
	}
	return q, nil
}
