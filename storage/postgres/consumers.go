package postgres

// The change log's consumers that keep aggregates in the database (the
// leaderboard, the growth rules, the statistics) share one shape: a
// cursor row in change_consumers, locked by each apply so that of
// several servers one applies at a time; the apply's writes and the
// cursor's move in one transaction, so a crash neither loses nor repeats
// an entry; and, where the cursor has no row yet, a fill from the tables
// in one snapshot that also places the cursor at the log's head.

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// consumerStep applies, in tx, what follows the cursor after (whose row
// tx holds locked), moves the cursor, and returns how many entries it
// applied.
type consumerStep func(ctx context.Context, tx pgx.Tx, after int64) (int, error)

// applyConsumer runs one apply of consumer name. caughtUp, asked first
// without a transaction (a consumer looks after every commit and every
// second), may tell that there is nothing to do; fill fills the
// aggregates on a database where the cursor has no row, after which the
// apply runs.
func (s *Store) applyConsumer(ctx context.Context, name string, caughtUp func(context.Context) (bool, error), step consumerStep,
	fill func(context.Context) error) (int, error) {
	done, err := caughtUp(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	if done {
		return 0, nil
	}
	for {
		applied, fresh := 0, false
		err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
			applied, fresh = 0, false
			var after int64
			err := tx.QueryRow(ctx, `SELECT after FROM change_consumers WHERE name = $1 FOR UPDATE`, name).Scan(&after)
			if errors.Is(err, pgx.ErrNoRows) {
				fresh = true
				return nil
			}
			if err != nil {
				return err
			}
			// The statements are planned for the ids they get: a
			// generic plan of "id = ANY($1)" may scan whole tables.
			if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_custom_plan`); err != nil {
				return err
			}
			applied, err = step(ctx, tx, after)
			return err
		})
		if err != nil {
			return 0, translate(err, nil)
		}
		if !fresh {
			return applied, nil
		}
		if err := fill(ctx); err != nil {
			return 0, err
		}
	}
}

// cursorAtHead is the usual caughtUp of applyConsumer: the cursor of
// consumer name has reached the change log's head.
func (s *Store) cursorAtHead(name string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		var done bool
		err := s.pool.QueryRow(ctx, `SELECT COALESCE((SELECT after FROM change_consumers WHERE name = $1) >= (SELECT last FROM change_log_head), false)`,
			name).Scan(&done)
		return done, err
	}
}
