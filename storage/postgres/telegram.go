package postgres

// Telegram links and the notification sender (migration 00042). The
// sender's cursor is its row in change_consumers, locked (FOR UPDATE)
// for as long as one DeliverTelegram sends, so that servers sharing the
// database take turns and an entry goes out once; the cursor commits
// with the last entry handled.

import (
	"context"
	"errors"

	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/telegram"
)

var _ telegram.Store = (*Store)(nil)

// telegramUpdateTTL is how long an update's id is remembered: Telegram
// stops redelivering an update after a day.
const telegramUpdateTTL = 48 * time.Hour

// CreateTelegramLinkToken implements telegram.Store.
func (s *Store) CreateTelegramLinkToken(ctx context.Context, userID int64, hash []byte, now, expiresAt time.Time) error {
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		// The user's row is locked first, so that two links at once
		// leave one token.
		var id int64
		if err := tx.QueryRow(ctx, `SELECT id FROM users WHERE id = $1 FOR UPDATE`, userID).Scan(&id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM telegram_link_tokens WHERE user_id = $1 OR expires_at <= $2`, userID, dbTime(now)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO telegram_link_tokens (hash, user_id, expires_at, created_at) VALUES ($1, $2, $3, $4)`,
			hash, userID, dbTime(expiresAt), dbTime(now))
		return err
	})
	return translate(err, account.ErrUserNotFound)
}

// markTelegramUpdate records update id; false when it was recorded
// already. The ids of long ago are pruned as new ones come.
func markTelegramUpdate(ctx context.Context, tx pgx.Tx, id int64, now time.Time) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO telegram_updates (update_id, received_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, id, dbTime(now))
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	_, err = tx.Exec(ctx, `DELETE FROM telegram_updates WHERE received_at < $1`, dbTime(now.Add(-telegramUpdateTTL)))
	return true, err
}

// MarkTelegramUpdate implements telegram.Store.
func (s *Store) MarkTelegramUpdate(ctx context.Context, updateID int64, now time.Time) (bool, error) {
	var fresh bool
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var err error
		fresh, err = markTelegramUpdate(ctx, tx, updateID, now)
		return err
	})
	return fresh, translate(err, nil)
}

// LinkTelegram implements telegram.Store. An invalid token commits the
// update's record (so that its redelivery is not told again) and is
// reported after the commit.
func (s *Store) LinkTelegram(ctx context.Context, updateID int64, hash []byte, chatID int64, now time.Time) (*account.User, error) {
	var u *account.User
	var refused error
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		u, refused = nil, nil
		fresh, err := markTelegramUpdate(ctx, tx, updateID, now)
		if err != nil {
			return err
		}
		if !fresh {
			refused = telegram.ErrUpdateSeen
			return nil
		}
		var userID int64
		var expires time.Time
		err = tx.QueryRow(ctx, `DELETE FROM telegram_link_tokens WHERE hash = $1 RETURNING user_id, expires_at`, hash).Scan(&userID, &expires)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && !now.Before(expires) {
			refused = telegram.ErrInvalidLinkToken
			return nil
		} else if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET telegram_verified = false, telegram_chat_id = NULL, telegram_notifications = false
			WHERE telegram_chat_id = $1 AND id <> $2`, chatID, userID); err != nil {
			return err
		}
		u, err = scanUser(tx.QueryRow(ctx, `UPDATE users u SET telegram_verified = true, telegram_chat_id = $2, telegram_notifications = true
			WHERE u.id = $1 RETURNING `+userCols, userID, chatID))
		return err
	})
	if err != nil {
		return nil, translate(err, telegram.ErrInvalidLinkToken)
	}
	return u, refused
}

// UnlinkTelegram implements telegram.Store.
func (s *Store) UnlinkTelegram(ctx context.Context, userID int64) error {
	return translate(s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		// Only a change updates the row (and announces it to the
		// servers' auth caches).
		var id int64
		err := tx.QueryRow(ctx, `WITH ch AS (
			UPDATE users SET telegram_verified = false, telegram_chat_id = NULL, telegram_notifications = false
			WHERE id = $1 AND (telegram_verified OR telegram_chat_id IS NOT NULL OR telegram_notifications))
			SELECT id FROM users WHERE id = $1`, userID).Scan(&id)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM telegram_link_tokens WHERE user_id = $1`, userID)
		return err
	}), account.ErrUserNotFound)
}

// telegramRecipient is a user whose notifications go to a chat.
type telegramRecipient struct {
	chat int64
	lang string
}

// telegramRecipients reads every user whose notifications go to a chat.
func telegramRecipients(ctx context.Context, tx pgx.Tx) (map[int64]telegram.Recipient, error) {
	rows, err := tx.Query(ctx, `SELECT id, telegram_chat_id, language FROM users WHERE telegram_notifications AND telegram_chat_id IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	out := map[int64]telegram.Recipient{}
	for rows.Next() {
		var id int64
		var r telegram.Recipient
		if err := rows.Scan(&id, &r.ChatID, &r.Language); err != nil {
			rows.Close()
			return nil, err
		}
		out[id] = r
	}
	return out, rows.Err()
}

// marketName is market id's name.
func (s *Store) marketName(ctx context.Context, id int64) (string, error) {
	var name string
	err := s.pool.QueryRow(ctx, `SELECT name FROM markets WHERE id = $1`, id).Scan(&name)
	return name, translate(err, market.ErrMarketNotFound)
}

// DeliverTelegram implements telegram.Store. It does not retry: a
// transaction run again would send again.
func (s *Store) DeliverTelegram(ctx context.Context, limit int, send func(context.Context, telegram.Delivery) error) (int, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `INSERT INTO change_consumers (name, after) SELECT $1, last FROM change_log_head
		ON CONFLICT (name) DO NOTHING`, telegram.ConsumerName); err != nil {
		return 0, translate(err, nil)
	}
	var after int64
	if err := tx.QueryRow(ctx, `SELECT after FROM change_consumers WHERE name = $1 FOR UPDATE`, telegram.ConsumerName).Scan(&after); err != nil {
		return 0, translate(err, nil)
	}
	// The entries are read on another connection: they are committed,
	// and the cursor's lock keeps every other sender waiting.
	es, err := s.Changes(ctx, after, limit)
	if err != nil {
		return 0, err
	}
	if len(es) == 0 {
		// The cursor may be new: it is kept.
		return 0, translate(tx.Commit(ctx), nil)
	}
	var users []int64
	for _, e := range es {
		if e.Type == changelog.Notification && e.UserID != 0 {
			users = append(users, e.UserID)
		}
	}
	to := map[int64]telegramRecipient{}
	if len(users) > 0 {
		rows, err := tx.Query(ctx, `SELECT id, telegram_chat_id, language FROM users
			WHERE id = ANY($1) AND telegram_notifications AND telegram_chat_id IS NOT NULL`, users)
		if err != nil {
			return 0, translate(err, nil)
		}
		for rows.Next() {
			var id int64
			var r telegramRecipient
			if err := rows.Scan(&id, &r.chat, &r.lang); err != nil {
				rows.Close()
				return 0, translate(err, nil)
			}
			to[id] = r
		}
		if err := rows.Err(); err != nil {
			return 0, translate(err, nil)
		}
	}
	// all are every user whose notifications go to a chat, read when a
	// resolution first needs them.
	var all map[int64]telegram.Recipient
	deliver := func(d telegram.Delivery) error {
		err := send(ctx, d)
		if errors.Is(err, telegram.ErrBlocked) {
			delete(to, d.Entry.UserID)
			delete(all, d.Entry.UserID)
			_, err = tx.Exec(ctx, `UPDATE users SET telegram_notifications = false WHERE id = $1 AND telegram_chat_id = $2`, d.Entry.UserID, d.ChatID)
		}
		return err
	}
	done, last := 0, after
	var sendErr error
	for _, e := range es {
		switch {
		case e.Type == changelog.Notification:
			if r, ok := to[e.UserID]; ok {
				sendErr = deliver(telegram.Delivery{Entry: e, ChatID: r.chat, Language: r.lang})
			}
		case e.Type == changelog.MarketResolved && e.UserID == 0:
			if all == nil {
				if all, sendErr = telegramRecipients(ctx, tx); sendErr != nil {
					break
				}
			}
			var ds []telegram.Delivery
			if ds, sendErr = telegram.ResolutionDeliveries(ctx, e, all, s, s.marketName); sendErr != nil {
				break
			}
			for _, d := range ds {
				if sendErr = deliver(d); sendErr != nil {
					break
				}
			}
		}
		if sendErr != nil {
			break
		}
		done, last = done+1, e.Seq
	}
	if last > after {
		if _, err := tx.Exec(ctx, `UPDATE change_consumers SET after = $2, updated_at = now() WHERE name = $1`, telegram.ConsumerName, last); err != nil {
			return 0, translate(err, nil)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, translate(commitFailed(err), nil)
	}
	return done, sendErr
}
