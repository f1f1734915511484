package postgres

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/withdrawal"
)

var _ withdrawal.Store = (*Store)(nil)

const withdrawalCols = `id, user_id, chain, address, amount, status, tx_hash, reason, created_at, decided_at`

func scanWithdrawal(row pgx.Row) (*withdrawal.Withdrawal, error) {
	w := &withdrawal.Withdrawal{}
	if err := row.Scan(&w.ID, &w.UserID, &w.Chain, &w.Address, &w.Amount, &w.Status, &w.TxHash, &w.Reason, &w.CreatedAt, &w.DecidedAt); err != nil {
		return nil, err
	}
	w.CreatedAt = w.CreatedAt.UTC()
	w.DecidedAt = timePtr(w.DecidedAt)
	return w, nil
}

// CreateWithdrawal implements withdrawal.Store. It locks the user's two
// ledger accounts (the lock of every movement of the user's money, so two
// requests of one user are decided one after the other), sums the user's
// counted withdrawals since since after taking it (read committed: the
// sum sees every request committed before the lock was granted), and
// then inserts the withdrawal and locks its new pending account.
func (s *Store) CreateWithdrawal(ctx context.Context, w *withdrawal.Withdrawal, since time.Time, check func(withdrawal.Load) error) error {
	user, bonus := account.UserAccount(w.UserID), account.BonusAccount(w.UserID)
	w.CreatedAt = dbTime(w.CreatedAt)
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		w.ID = 0
		a, err := lockAccounts(ctx, tx, []account.Ref{user, bonus})
		if err != nil {
			return err
		}
		var withdrawn int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(sum(amount), 0)::bigint FROM withdrawals
			WHERE user_id = $1 AND status IN ('pending', 'paid') AND created_at >= $2`, w.UserID, dbTime(since)).Scan(&withdrawn); err != nil {
			return err
		}
		if err := check(withdrawal.Load{Balance: a.balance[user], Withdrawn: withdrawn}); err != nil {
			return &decideError{err}
		}
		if err := tx.QueryRow(ctx, `INSERT INTO withdrawals (user_id, chain, address, amount, created_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, w.UserID, w.Chain, w.Address, w.Amount, w.CreatedAt).Scan(&w.ID); err != nil {
			return err
		}
		ps := []account.Posting{w.RequestPosting()}
		a, err = lockAccounts(ctx, tx, []account.Ref{user, bonus, w.PendingAccount()})
		if err != nil {
			return err
		}
		if err := a.check(ps); err != nil {
			return err
		}
		before := maps.Clone(a.balance)
		if err := post(ctx, tx, a, ps, w.CreatedAt); err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, append([]changelog.Entry{withdrawal.Change(w)}, account.BalanceChanges(before, ps, "", w.CreatedAt)...))
	})
	if err != nil {
		w.ID = 0
	}
	return translate(err, nil)
}

// DecideWithdrawal implements withdrawal.Store. It locks the
// withdrawal's row, then the accounts of the postings (and the bonus
// account of a user they pay, whose balance entry tells both).
func (s *Store) DecideWithdrawal(ctx context.Context, id int64, decide func(*withdrawal.Withdrawal) (*withdrawal.Decision, error)) (*withdrawal.Withdrawal, error) {
	var out *withdrawal.Withdrawal
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		w, err := scanWithdrawal(tx.QueryRow(ctx, `SELECT `+withdrawalCols+` FROM withdrawals WHERE id = $1 FOR UPDATE`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return &decideError{withdrawal.ErrNotFound}
		} else if err != nil {
			return err
		}
		d, err := decide(w)
		if err != nil {
			return &decideError{err}
		}
		at := dbTime(d.At)
		tag, err := tx.Exec(ctx, `UPDATE withdrawals SET status = $2, tx_hash = $3, reason = $4, decided_at = $5
			WHERE id = $1 AND status = 'pending'`, id, d.Status, d.TxHash, d.Reason, at)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 { // the row lock makes this impossible; never post twice
			return &decideError{withdrawal.ErrInvalidState}
		}
		var refs []account.Ref
		for _, p := range d.Postings {
			for _, r := range [2]account.Ref{p.From, p.To} {
				refs = append(refs, r)
				if r.Kind == account.KindUser {
					refs = append(refs, account.BonusAccount(r.Owner))
				}
			}
		}
		a, err := lockAccounts(ctx, tx, refs)
		if err != nil {
			return err
		}
		if err := a.check(d.Postings); err != nil {
			return err
		}
		before := maps.Clone(a.balance)
		if err := post(ctx, tx, a, d.Postings, at); err != nil {
			return err
		}
		w.Status, w.TxHash, w.Reason, w.DecidedAt = d.Status, d.TxHash, d.Reason, &at
		changes := append([]changelog.Entry{withdrawal.Change(w)}, account.BalanceChanges(before, d.Postings, "", at)...)
		if d.Notification != nil {
			n := *d.Notification
			n.CreatedAt = at
			if err := tx.QueryRow(ctx, sqlInsertNotification, n.UserID, n.Type, n.RelatedID, n.RelatedType,
				string(n.Data.AppendJSON(nil)), n.CreatedAt).Scan(&n.ID); err != nil {
				return err
			}
			changes = append(changes, social.NotificationChange(&n))
		}
		if err := s.appendChanges(ctx, tx, changes); err != nil {
			return err
		}
		out = w
		return nil
	})
	if err != nil {
		return nil, translate(err, nil)
	}
	return out, nil
}

// Withdrawals implements withdrawal.Store: withdrawals_user_id serves a
// user's, withdrawals_status_id the operator's by status.
func (s *Store) Withdrawals(ctx context.Context, q withdrawal.Query) ([]*withdrawal.Withdrawal, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.UserID != 0 {
		where = append(where, "user_id = "+arg(q.UserID))
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(q.Status))
	}
	order := "id DESC"
	switch {
	case q.Oldest:
		order = "id"
		if q.After > 0 {
			where = append(where, "id > "+arg(q.After))
		}
	case q.After > 0:
		where = append(where, "id < "+arg(q.After))
	}
	sql := `SELECT ` + withdrawalCols + ` FROM withdrawals`
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, " AND ")
	}
	sql += ` ORDER BY ` + order + ` LIMIT ` + arg(max(q.Limit, 0))
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	out := []*withdrawal.Withdrawal{}
	for rows.Next() {
		w, err := scanWithdrawal(rows)
		if err != nil {
			return nil, translate(err, nil)
		}
		out = append(out, w)
	}
	return out, translate(rows.Err(), nil)
}

// WithdrawnSince implements withdrawal.Store.
func (s *Store) WithdrawnSince(ctx context.Context, userID int64, since time.Time) (int64, error) {
	var sum int64
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(sum(amount), 0)::bigint FROM withdrawals
		WHERE user_id = $1 AND status IN ('pending', 'paid') AND created_at >= $2`, userID, dbTime(since)).Scan(&sum)
	return sum, translate(err, nil)
}

// PendingLedger implements withdrawal.Store, in one statement (one
// snapshot): a withdrawal decided between two reads would look unsound.
func (s *Store) PendingLedger(ctx context.Context) ([]withdrawal.PendingState, error) {
	rows, err := s.pool.Query(ctx, `SELECT COALESCE(w.id, a.owner), COALESCE(w.status, ''), COALESCE(w.amount, 0), COALESCE(a.balance, 0)
		FROM withdrawals w
		FULL JOIN (SELECT owner, balance FROM ledger_accounts WHERE kind = 'withdrawal_pending') a ON a.owner = w.id
		WHERE w.status = 'pending' OR a.balance <> 0
		ORDER BY 1`)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	out := []withdrawal.PendingState{}
	for rows.Next() {
		var p withdrawal.PendingState
		if err := rows.Scan(&p.ID, &p.Status, &p.Amount, &p.Balance); err != nil {
			return nil, translate(err, nil)
		}
		out = append(out, p)
	}
	return out, translate(rows.Err(), nil)
}
