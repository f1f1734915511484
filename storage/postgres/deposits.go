package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/social"
)

var _ deposit.Store = (*Store)(nil)

// depositColumns are a deposit's columns, with its confirmations at the
// chain's head (c is deposit_cursors, joined on the chain).
const depositColumns = `d.id, d.user_id, d.chain, d.tx_hash, d.log_index, d.block_number, d.block_hash, d.address,
	d.units::text, d.decimals, d.amount_kopecks, d.confirmations_required, d.status, d.created_at, d.credited_at,
	GREATEST(COALESCE(c.head, 0) - d.block_number + 1, 0)`

const depositFrom = ` FROM deposits d LEFT JOIN deposit_cursors c ON c.chain = d.chain`

func scanDeposits(rows pgx.Rows) ([]deposit.Deposit, error) {
	out := []deposit.Deposit{}
	var d deposit.Deposit
	_, err := pgx.ForEachRow(rows, []any{&d.ID, &d.UserID, &d.Chain, &d.TxHash, &d.LogIndex, &d.BlockNumber, &d.BlockHash,
		&d.Address, &d.Units, &d.Decimals, &d.AmountKopecks, &d.ConfirmationsRequired, &d.Status, &d.CreatedAt,
		&d.CreditedAt, &d.Confirmations}, func() error {
		out = append(out, d)
		d.CreditedAt = nil
		return nil
	})
	return out, err
}

// DepositCursor implements deposit.Store.
func (s *Store) DepositCursor(ctx context.Context, chain string) (deposit.Cursor, error) {
	c := deposit.Cursor{Blocks: map[int64]string{}}
	err := s.pool.QueryRow(ctx, `SELECT next_block, head FROM deposit_cursors WHERE chain = $1`, chain).Scan(&c.Next, &c.Head)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return c, translate(err, nil)
	}
	rows, err := s.pool.Query(ctx, `SELECT number, hash FROM deposit_blocks WHERE chain = $1`, chain)
	if err != nil {
		return c, translate(err, nil)
	}
	var n int64
	var h string
	_, err = pgx.ForEachRow(rows, []any{&n, &h}, func() error {
		c.Blocks[n] = h
		return nil
	})
	return c, translate(err, nil)
}

// RecordScan implements deposit.Store.
func (s *Store) RecordScan(ctx context.Context, chain string, sc deposit.Scan) ([]deposit.Deposit, error) {
	var news []deposit.Deposit
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		news = news[:0]
		for _, x := range sc.Deposits {
			if x.Chain != chain {
				continue
			}
			x.CreatedAt, x.Status, x.CreditedAt = dbTime(x.CreatedAt), deposit.StatusPending, nil
			err := tx.QueryRow(ctx, `INSERT INTO deposits (user_id, chain, tx_hash, log_index, block_number, block_hash, address,
				units, decimals, amount_kopecks, confirmations_required, status, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric, $9, $10, $11, 'pending', $12)
				ON CONFLICT (chain, tx_hash, log_index) DO NOTHING RETURNING id`,
				x.UserID, x.Chain, x.TxHash, x.LogIndex, x.BlockNumber, x.BlockHash, x.Address, x.Units, x.Decimals,
				x.AmountKopecks, x.ConfirmationsRequired, x.CreatedAt).Scan(&x.ID)
			if errors.Is(err, pgx.ErrNoRows) {
				continue // recorded already
			} else if err != nil {
				return err
			}
			news = append(news, x)
		}
		nums, hashes := make([]int64, 0, len(sc.Blocks)), make([]string, 0, len(sc.Blocks))
		for n, h := range sc.Blocks {
			nums, hashes = append(nums, n), append(hashes, h)
		}
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO deposit_blocks (chain, number, hash) SELECT $1, u.n, u.h FROM unnest($2::bigint[], $3::text[]) AS u(n, h)
			ON CONFLICT (chain, number) DO UPDATE SET hash = EXCLUDED.hash`, chain, nums, hashes)
		b.Queue(`DELETE FROM deposit_blocks WHERE chain = $1 AND number < $2`, chain, sc.Keep)
		var head int64
		b.Queue(`INSERT INTO deposit_cursors (chain, next_block, head) VALUES ($1, $2, $3)
			ON CONFLICT (chain) DO UPDATE SET next_block = GREATEST(deposit_cursors.next_block, EXCLUDED.next_block),
				head = GREATEST(deposit_cursors.head, EXCLUDED.head)
			RETURNING head`, chain, sc.To+1, sc.Head).QueryRow(func(r pgx.Row) error { return r.Scan(&head) })
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		es := make([]changelog.Entry, 0, len(news))
		for i := range news {
			news[i].Confirmations = max(head-news[i].BlockNumber+1, 0)
			es = append(es, deposit.Change(&news[i], news[i].CreatedAt))
		}
		return s.appendChanges(ctx, tx, es)
	})
	if err != nil {
		return nil, translate(err, nil)
	}
	return news, nil
}

// RewindDeposits implements deposit.Store.
func (s *Store) RewindDeposits(ctx context.Context, chain string, block int64) (int, error) {
	var n int64
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM deposit_blocks WHERE chain = $1 AND number >= $2`, chain, block)
		b.Queue(`UPDATE deposit_cursors SET next_block = LEAST(next_block, $2) WHERE chain = $1`, chain, block)
		b.Queue(`DELETE FROM deposits WHERE chain = $1 AND block_number >= $2 AND status = 'pending'`, chain, block).
			Exec(func(ct pgconn.CommandTag) error { n = ct.RowsAffected(); return nil })
		return tx.SendBatch(ctx, b).Close()
	})
	return int(n), translate(err, nil)
}

// PendingDeposits implements deposit.Store.
func (s *Store) PendingDeposits(ctx context.Context, chain string, maxBlock int64) ([]deposit.Deposit, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+depositColumns+depositFrom+`
		WHERE d.chain = $1 AND d.status = 'pending' AND d.block_number <= $2 ORDER BY d.block_number, d.id`, chain, maxBlock)
	if err != nil {
		return nil, translate(err, nil)
	}
	out, err := scanDeposits(rows)
	return out, translate(err, nil)
}

// CreditDeposit implements deposit.Store: the deposit's row is the lock;
// the update from pending is what makes the credit happen once.
func (s *Store) CreditDeposit(ctx context.Context, id int64, at time.Time) (deposit.Deposit, bool, error) {
	at = dbTime(at)
	var out deposit.Deposit
	credited := false
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		credited = false
		rows, err := tx.Query(ctx, `WITH d AS (UPDATE deposits SET status = 'credited', credited_at = $2
			WHERE id = $1 AND status = 'pending' RETURNING *)
			SELECT `+depositColumns+` FROM d LEFT JOIN deposit_cursors c ON c.chain = d.chain`, id, at)
		if err != nil {
			return err
		}
		ds, err := scanDeposits(rows)
		if err != nil || len(ds) == 0 {
			return err
		}
		out, credited = ds[0], true
		es := []changelog.Entry{deposit.Change(&out, at)}
		if out.AmountKopecks == 0 {
			return s.appendChanges(ctx, tx, es)
		}
		balances, err := postMoney(ctx, tx, []account.Posting{deposit.Posting(&out, at)}, at)
		if err != nil {
			return err
		}
		notes, err := insertNotes(ctx, tx, []social.Notification{deposit.Notification(&out, at)}, at)
		if err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, append(append(es, balances...), notes...))
	})
	if err != nil {
		return deposit.Deposit{}, false, translate(err, nil)
	}
	return out, credited, nil
}

// UserDeposits implements deposit.Store.
func (s *Store) UserDeposits(ctx context.Context, userID int64, limit int, before int64) ([]deposit.Deposit, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+depositColumns+depositFrom+`
		WHERE d.user_id = $1 AND ($2::bigint = 0 OR d.id < $2::bigint) ORDER BY d.id DESC LIMIT $3`, userID, before, limit)
	if err != nil {
		return nil, translate(err, nil)
	}
	out, err := scanDeposits(rows)
	return out, translate(err, nil)
}
