package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// Follows (migration 00034): who follows which event. The statements
// that tell followers are beside those that tell holders: settle.go
// (sqlNotifyFollowers), amend.go, answers.go (sqlFollowers).

// Follow implements market.Store: one statement, which finds the event
// and inserts the follow unless it is there.
func (s *Store) Follow(ctx context.Context, userID, eventID int64, at time.Time) error {
	var found bool
	err := s.pool.QueryRow(ctx, `WITH e AS (SELECT id FROM events WHERE id = $2),
		ins AS (INSERT INTO follows (user_id, event_id, created_at) SELECT $1, e.id, $3 FROM e
			ON CONFLICT (user_id, event_id) DO NOTHING)
		SELECT EXISTS (SELECT 1 FROM e)`, userID, eventID, dbTime(at)).Scan(&found)
	if err != nil {
		return translate(err, nil)
	}
	if !found {
		return market.ErrEventNotFound
	}
	return nil
}

// Unfollow implements market.Store.
func (s *Store) Unfollow(ctx context.Context, userID, eventID int64) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM follows WHERE user_id = $1 AND event_id = $2`, userID, eventID)
	return translate(err, nil)
}

// Following implements market.Store: a range of follows_user_created_idx.
func (s *Store) Following(ctx context.Context, userID int64, after market.FollowCursor, limit int) ([]market.Followed, error) {
	rows, err := s.reader(ctx).Query(ctx, `SELECT event_id, created_at FROM follows
		WHERE user_id = $1 AND ($2::bigint = 0 OR (created_at, event_id) < ($3, $2))
		ORDER BY created_at DESC, event_id DESC LIMIT $4`, userID, after.EventID, dbTime(after.At), limit)
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []market.Followed{}
	var f market.Followed
	_, err = pgx.ForEachRow(rows, []any{&f.EventID, &f.At}, func() error {
		f.At = f.At.UTC()
		out = append(out, f)
		return nil
	})
	return out, translate(err, nil)
}

// sqlFollowers are the followers of event $1, ascending.
const sqlFollowers = `SELECT COALESCE(array_agg(user_id ORDER BY user_id), '{}') FROM follows WHERE event_id = $1`

// sqlNotifyFollowers tells the followers of market $1's event that hold
// no open position on it (those the settlement's notifications, derived
// from the positions, tell: see social.go) that it resolved, as the
// memory store does: its name and outcome, no amount, following. Run after the
// market is written resolved, in the settlement's transaction.
const sqlNotifyFollowers = `INSERT INTO notifications (user_id, type, related_id, related_type, data, created_at)
SELECT f.user_id, '` + social.TypeMarketResolved + `', m.event_id, '` + social.RelatedEvent + `',
	jsonb_strip_nulls(jsonb_build_object('market_name', NULLIF(m.name, ''), 'market_name_ru', NULLIF(m.name_ru, ''),
		'won', CASE m.winning_outcome WHEN 1 THEN 'YES' WHEN 0 THEN 'NO' ELSE '` + social.OutcomeVoid + `' END, 'following', true)),
	m.resolved_at
FROM markets m JOIN follows f ON f.event_id = m.event_id
WHERE m.id = $1 AND NOT EXISTS (SELECT 1 FROM positions x WHERE x.market_id = m.id AND x.user_id = f.user_id AND x.closed_at IS NULL)
ORDER BY f.user_id`
