package postgres

// Growth (migration 00040): lifetime volumes, levels and referral
// rewards. As the leaderboard's, the volumes are not written by the
// trade's transaction: a consumer of the change log adds the trades after
// its cursor ("growth" in change_consumers) and moves the cursor in the
// same transaction, which also raises levels and pays rewards. The
// cursor's row is locked first, so that of several servers one applies at
// a time; a reward is moreover paid only by the statement that sets its
// referral's qualified_at, which happens once.

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/social"
)

var _ growth.Store = (*Store)(nil)

// errGrowthGap: entries after the growth cursor were pruned, which the
// cursor should have prevented (someone moved or dropped it by hand).
var errGrowthGap = errors.New("postgres: growth: change-log entries after its cursor are gone; delete its cursor (change_consumers) to count the volumes again")

// growthBeforeCommit, when set (tests), runs just before the consumer's
// transaction commits; an error rolls it back, as a crash would.
var growthBeforeCommit func() error

// sqlGrowthApply adds the cost of trades $1 to their traders' volumes
// (partner sub-accounts have none) and returns, for each trader, the
// volume before and after, the level and, for a referred trader not yet
// qualified, the referrer. The old volumes are read from the statement's
// snapshot, before its insert; the cursor's lock keeps anyone else from
// writing them meanwhile.
var sqlGrowthApply = `WITH t AS MATERIALIZED (
	SELECT t.user_id, sum(t.cost::numeric) AS cost
	FROM unnest($1::bigint[]) AS i(id)
	JOIN trades t ON t.id = i.id
	WHERE t.partner_id IS NULL
	GROUP BY t.user_id
),
old AS (
	SELECT g.user_id, g.volume FROM growth_volumes g JOIN t ON t.user_id = g.user_id
),
v AS (
	INSERT INTO growth_volumes AS g (user_id, volume)
	SELECT user_id, LEAST(cost, ` + maxBigint + `)::bigint FROM t
	ON CONFLICT (user_id) DO UPDATE SET volume = LEAST(g.volume::numeric + EXCLUDED.volume, ` + maxBigint + `)::bigint
	RETURNING user_id, volume
)
SELECT v.user_id, COALESCE(old.volume, 0), v.volume, u.level, COALESCE(r.referrer_id, 0)
FROM v
JOIN users u ON u.id = v.user_id
LEFT JOIN old ON old.user_id = v.user_id
LEFT JOIN referrals r ON r.referee_id = v.user_id AND r.qualified_at IS NULL
ORDER BY v.user_id`

// ApplyGrowth implements growth.Store.
func (s *Store) ApplyGrowth(ctx context.Context, rules growth.Rules, limit int) (int, error) {
	limit = max(limit, 1)
	return s.applyConsumer(ctx, growth.Consumer, s.cursorAtHead(growth.Consumer), func(ctx context.Context, tx pgx.Tx, after int64) (int, error) {
		refs, err := changeRefsAfter(ctx, tx, after, limit, false)
		if errors.Is(err, errChangeGap) {
			return 0, errGrowthGap
		}
		if err != nil || refs.n == 0 {
			return 0, err
		}
		var es []changelog.Entry
		if len(refs.trades) > 0 {
			if es, err = s.growTraders(ctx, tx, rules, refs.trades); err != nil {
				return 0, err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE change_consumers SET after = $2, updated_at = now() WHERE name = $1`, growth.Consumer, refs.last); err != nil {
			return 0, err
		}
		if err := s.appendChanges(ctx, tx, es); err != nil {
			return 0, err
		}
		if growthBeforeCommit != nil {
			if err := growthBeforeCommit(); err != nil {
				return 0, err
			}
		}
		return refs.n, nil
	}, func(ctx context.Context) error { return s.backfillGrowth(ctx, rules) })
}

// grown is one trader's figures after an apply.
type grown struct {
	user, before, after, referrer int64
	level                         int
}

// growTraders adds trades to their traders' volumes, raises their levels
// and pays their referrers, and returns the change-log entries of it.
func (s *Store) growTraders(ctx context.Context, tx pgx.Tx, rules growth.Rules, trades []int64) ([]changelog.Entry, error) {
	rows, err := tx.Query(ctx, sqlGrowthApply, trades)
	if err != nil {
		return nil, err
	}
	var gs []grown
	var g grown
	if _, err := pgx.ForEachRow(rows, []any{&g.user, &g.before, &g.after, &g.level, &g.referrer}, func() error {
		gs = append(gs, g)
		return nil
	}); err != nil {
		return nil, err
	}
	at := now()
	var notes []social.Notification
	var ups []int64
	var upLevels []int32
	for _, g := range gs {
		if l := rules.Level(g.after); l > g.level {
			ups, upLevels = append(ups, g.user), append(upLevels, int32(l))
			notes = append(notes, growth.LevelUp(g.user, l, at))
		}
	}
	if len(ups) > 0 {
		// Levels never go down: a lowered threshold is no reason to
		// take one back.
		if _, err := tx.Exec(ctx, `UPDATE users u SET level = l.level
			FROM unnest($1::bigint[], $2::int[]) AS l(id, level) WHERE u.id = l.id AND u.level < l.level`, ups, upLevels); err != nil {
			return nil, err
		}
	}
	var qualified []int64
	for _, g := range gs {
		if g.referrer != 0 && rules.Qualified(g.after) {
			qualified = append(qualified, g.user)
		}
	}
	es, err := s.reward(ctx, tx, rules, qualified, at)
	if err != nil {
		return nil, err
	}
	ns, err := insertEachNote(ctx, tx, notes, at)
	if err != nil {
		return nil, err
	}
	return append(es, ns...), nil
}

// reward marks the referrals of referees qualified, those not already,
// and pays their referrers. The update that sets qualified_at is what
// makes each reward happen once.
func (s *Store) reward(ctx context.Context, tx pgx.Tx, rules growth.Rules, referees []int64, at time.Time) ([]changelog.Entry, error) {
	if len(referees) == 0 {
		return nil, nil
	}
	amount := max(rules.RewardKopecks, 0)
	rows, err := tx.Query(ctx, `UPDATE referrals r SET qualified_at = $2, reward = $3
		FROM users u WHERE r.referee_id = ANY ($1::bigint[]) AND r.qualified_at IS NULL AND u.id = r.referee_id
		RETURNING r.referrer_id, u.name, u.profile_hidden`, referees, at, amount)
	if err != nil {
		return nil, err
	}
	var postings []account.Posting
	var notes []social.Notification
	var referrer int64
	var name string
	var hidden bool
	if _, err := pgx.ForEachRow(rows, []any{&referrer, &name, &hidden}, func() error {
		if amount > 0 {
			postings = append(postings, growth.Reward(referrer, amount, at))
			notes = append(notes, growth.RewardNotification(referrer, amount, growth.PublicName(&account.User{Name: name, ProfileHidden: hidden}), at))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	es, err := postMoney(ctx, tx, postings, at)
	if err != nil {
		return nil, err
	}
	ns, err := insertEachNote(ctx, tx, notes, at)
	return append(es, ns...), err
}

// insertEachNote writes notifications that may be several for one user
// (insertNotes takes at most one each), one statement for each: growth
// notifies seldom.
func insertEachNote(ctx context.Context, tx pgx.Tx, ns []social.Notification, at time.Time) ([]changelog.Entry, error) {
	var es []changelog.Entry
	for i := range ns {
		e, err := insertNotes(ctx, tx, ns[i:i+1], at)
		if err != nil {
			return nil, err
		}
		es = append(es, e...)
	}
	return es, nil
}

// sqlGrowthBackfill sets every volume from the trades there are
// (partner sub-accounts have none) and raises levels to what the volumes
// make them, thresholds $1, without notifying anyone: what history
// earned is not news.
const sqlGrowthBackfill = `WITH v AS (
	INSERT INTO growth_volumes (user_id, volume)
	SELECT t.user_id, LEAST(sum(t.cost::numeric), ` + maxBigint + `)::bigint FROM trades t
	WHERE t.partner_id IS NULL GROUP BY t.user_id
	RETURNING user_id, volume
)
UPDATE users u SET level = l.level
FROM (SELECT v.user_id, GREATEST((SELECT count(*) FROM unnest($1::bigint[]) AS th(v) WHERE th.v <= v.volume), 1)::int AS level FROM v) l
WHERE u.id = l.user_id AND u.level < l.level`

// backfillGrowth counts the volumes from the trades and sets the cursor
// to the change log's head, in one repeatable-read transaction: its one
// snapshot holds exactly the transactions whose entries are at or before
// that head, so the consumer goes on from there with nothing counted
// twice or missed. Referred users already past the qualifying volume
// (registered before the consumer first ran, or with the cursor deleted
// by hand) are rewarded then, those not rewarded before. When another
// server got there first, inserting the cursor fails to serialize and the
// retry finds it: nothing is done.
func (s *Store) backfillGrowth(ctx context.Context, rules growth.Rules) error {
	err := s.tx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var head int64
		if err := tx.QueryRow(ctx, `SELECT last FROM change_log_head`).Scan(&head); err != nil {
			return err
		}
		var set int64
		err := tx.QueryRow(ctx, `INSERT INTO change_consumers (name, after) VALUES ($1, $2)
			ON CONFLICT (name) DO NOTHING RETURNING after`, growth.Consumer, head).Scan(&set)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM growth_volumes`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, sqlGrowthBackfill, rules.Levels); err != nil {
			return err
		}
		var referees []int64
		rows, err := tx.Query(ctx, `SELECT r.referee_id FROM referrals r JOIN growth_volumes g ON g.user_id = r.referee_id
			WHERE r.qualified_at IS NULL AND g.volume >= $1 ORDER BY r.referee_id`, rules.QualifyKopecks)
		if err != nil {
			return err
		}
		if referees, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return err
		}
		es, err := s.reward(ctx, tx, rules, referees, now())
		if err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, es)
	})
	return translate(err, nil)
}

// Referrals implements growth.Store.
func (s *Store) Referrals(ctx context.Context, userID int64) (growth.Summary, error) {
	var sum growth.Summary
	err := s.pool.QueryRow(ctx, `SELECT u.referral_code,
		(SELECT count(*) FROM referrals WHERE referrer_id = u.id),
		(SELECT count(*) FROM referrals WHERE referrer_id = u.id AND qualified_at IS NOT NULL),
		(SELECT COALESCE(sum(reward), 0)::bigint FROM referrals WHERE referrer_id = u.id)
		FROM users u WHERE u.id = $1`, userID).Scan(&sum.Code, &sum.Referred, &sum.Qualified, &sum.EarnedKopecks)
	return sum, translate(err, account.ErrUserNotFound)
}

// GrowthCursor is the last change-log entry the volumes count (0 before
// they were first counted).
func (s *Store) GrowthCursor(ctx context.Context) (int64, error) {
	return s.ChangeCursor(ctx, growth.Consumer)
}
