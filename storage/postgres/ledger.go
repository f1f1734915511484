package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
)

// refsCTE is the set of ledger accounts an operation locks: the refs it
// names ($1 kinds, $2 owners) and the user and bonus accounts of the
// partner sub-accounts named by ($3 partner ids, $4 external ids). Under
// the market's lock that set cannot change between the statements that
// read it.
const refsCTE = `refs AS (
	SELECT r.kind, r.owner FROM unnest($1::text[], $2::bigint[]) AS r(kind, owner)
	UNION
	SELECT k.kind, u.id FROM unnest($3::bigint[], $4::text[]) AS s(partner_id, external_id)
	` + subAccountOf + `
	CROSS JOIN (VALUES ('user'), ('user_bonus')) AS k(kind)
)`

// The statements below take their plans from the plan cache, made once
// for any number of refs (a generic plan guesses ten). So that a big
// batch still finds its rows through the unique (kind, owner) index
// rather than by hashing the whole table, each ref is looked up on its
// own: OFFSET 0 keeps the planner from turning the lookups into a join.

// sqlEnsureAccounts creates the accounts of refs that do not exist yet.
// The NOT EXISTS spares the sequence a number per existing account; the
// fixed insertion order keeps two transactions creating the same new
// accounts from waiting on each other crosswise.
const sqlEnsureAccounts = `WITH ` + refsCTE + `
INSERT INTO ledger_accounts (kind, owner)
SELECT r.kind, r.owner FROM refs r
WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.kind = r.kind AND a.owner = r.owner OFFSET 0)
ORDER BY r.kind, r.owner
ON CONFLICT (kind, owner) DO NOTHING`

// sqlLockAccounts locks the accounts of refs in ascending id order: the
// lock order every money operation follows, so that two of them never
// hold each other's rows.
const sqlLockAccounts = `WITH ` + refsCTE + `
SELECT a.id, a.kind, a.owner, a.balance
FROM ledger_accounts a
WHERE a.id = ANY(ARRAY(
	SELECT l.id FROM refs r
	CROSS JOIN LATERAL (SELECT l.id FROM ledger_accounts l WHERE l.kind = r.kind AND l.owner = r.owner OFFSET 0) l))
ORDER BY a.id
FOR NO KEY UPDATE OF a`

// sqlLockAccountIDs locks ledger accounts $1 in ascending id order.
const sqlLockAccountIDs = `SELECT a.id, a.kind, a.owner, a.balance FROM ledger_accounts a
WHERE a.id = ANY($1)
ORDER BY a.id
FOR NO KEY UPDATE OF a`

const sqlInsertPostings = `INSERT INTO postings (from_account, to_account, amount, reason, trade_id, created_at)
SELECT u.from_account, u.to_account, u.amount, u.reason, NULLIF(u.trade_id, 0), u.created_at
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::timestamptz[])
	WITH ORDINALITY AS u(from_account, to_account, amount, reason, trade_id, created_at, ord)
ORDER BY u.ord`

// sqlAddBalances adds deltas $2 to accounts $1. The redundant
// a.id = ANY($1) keeps the planner on the primary key for long arrays (a
// settlement chunk), where it would otherwise scan the whole table.
const sqlAddBalances = `UPDATE ledger_accounts a SET balance = a.balance + u.delta
FROM unnest($1::bigint[], $2::bigint[]) AS u(id, delta)
WHERE a.id = u.id AND a.id = ANY($1)`

// refArrays returns refs deduplicated and sorted, as the kind and owner
// arrays the statements above take.
func refArrays(refs []account.Ref) (kinds []string, owners []int64) {
	refs = slices.Clone(refs)
	slices.SortFunc(refs, func(a, b account.Ref) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Owner, b.Owner))
	})
	refs = slices.Compact(refs)
	kinds, owners = make([]string, len(refs)), make([]int64, len(refs))
	for i, r := range refs {
		kinds[i], owners[i] = string(r.Kind), r.Owner
	}
	return kinds, owners
}

// accounts are the ledger accounts a transaction has locked.
type accounts struct {
	id      map[account.Ref]int64
	balance map[account.Ref]int64
}

func scanAccounts(rows pgx.Rows) (*accounts, error) {
	a := &accounts{id: map[account.Ref]int64{}, balance: map[account.Ref]int64{}}
	for rows.Next() {
		var id, owner, balance int64
		var kind string
		if err := rows.Scan(&id, &kind, &owner, &balance); err != nil {
			rows.Close()
			return nil, err
		}
		r := account.Ref{Kind: account.Kind(kind), Owner: owner}
		a.id[r], a.balance[r] = id, balance
	}
	return a, rows.Err()
}

// check applies postings to a copy of the locked balances, as the memory
// store does, so that a posting that would overdraw an account is refused
// with the domain's error before anything is written.
func (a *accounts) check(postings []account.Posting) error {
	if err := account.Apply(maps.Clone(a.balance), postings); err != nil {
		return &decideError{err}
	}
	return nil
}

// deltas returns the net change postings make to each account, ordered by
// account id. Every account must be locked: writing to one that is not
// would bypass the lock order.
func (a *accounts) deltas(postings []account.Posting) (ids, amounts []int64, err error) {
	net := map[int64]int64{}
	for _, p := range postings {
		from, ok1 := a.id[p.From]
		to, ok2 := a.id[p.To]
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("postgres: posting %s -> %s names an account the operation did not lock", p.From, p.To)
		}
		net[from] -= p.Amount
		net[to] += p.Amount
	}
	for _, id := range slices.Sorted(maps.Keys(net)) {
		if net[id] != 0 {
			ids, amounts = append(ids, id), append(amounts, net[id])
		}
	}
	return ids, amounts, nil
}

// postingArrays returns postings as the arrays sqlInsertPostings takes.
// tradeRef gives each posting's trade (an id, or an ordinal for Exec); a
// posting without a time gets at.
func (a *accounts) postingArrays(postings []account.Posting, tradeRef func(i int) int64, at time.Time) []any {
	n := len(postings)
	from, to, amount, ref := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	reason := make([]string, n)
	times := make([]time.Time, n)
	for i, p := range postings {
		from[i], to[i], amount[i], reason[i] = a.id[p.From], a.id[p.To], p.Amount, p.Reason
		ref[i] = tradeRef(i)
		times[i] = at
		if !p.At.IsZero() {
			times[i] = dbTime(p.At)
		}
	}
	return []any{from, to, amount, reason, ref, times}
}

// lockAccounts creates the accounts of refs that are missing and locks
// them all, in one round trip.
func lockAccounts(ctx context.Context, tx pgx.Tx, refs []account.Ref) (*accounts, error) {
	kinds, owners := refArrays(refs)
	b := &pgx.Batch{}
	none := []int64{}
	b.Queue(sqlEnsureAccounts, kinds, owners, none, []string{})
	b.Queue(sqlLockAccounts, kinds, owners, none, []string{})
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	a, err := scanAccounts(rows)
	if err != nil {
		return nil, err
	}
	return a, br.Close()
}

// post writes postings (checked already), those without a time at at,
// and the balances they change.
func post(ctx context.Context, tx pgx.Tx, a *accounts, postings []account.Posting, at time.Time) error {
	ids, amounts, err := a.deltas(postings)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(sqlInsertPostings, a.postingArrays(postings, func(i int) int64 { return postings[i].TradeID }, at)...)
	b.Queue(sqlAddBalances, ids, amounts)
	return tx.SendBatch(ctx, b).Close()
}

// Transfer writes postings atomically, or nothing. It refuses with
// account.ErrInvalidAmount a posting that is not positive and with
// account.ErrInsufficientFunds one that would take an account that may
// not go negative below zero. In the same transaction it writes a balance
// entry to the change log for every user whose money moved, so it locks
// both accounts of each (the entry tells both balances).
func (s *Store) Transfer(ctx context.Context, postings []account.Posting) error {
	if len(postings) == 0 {
		return nil
	}
	refs := make([]account.Ref, 0, 2*len(postings))
	for _, p := range postings {
		if p.Amount <= 0 {
			return fmt.Errorf("account: posting %s -> %s of %d: %w", p.From, p.To, p.Amount, account.ErrInvalidAmount)
		}
		for _, r := range [2]account.Ref{p.From, p.To} {
			refs = append(refs, r)
			if r.Kind == account.KindUser || r.Kind == account.KindUserBonus {
				refs = append(refs, account.UserAccount(r.Owner), account.BonusAccount(r.Owner))
			}
		}
	}
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		a, err := lockAccounts(ctx, tx, refs)
		if err != nil {
			return err
		}
		if err := a.check(postings); err != nil {
			return err
		}
		at := now()
		if err := post(ctx, tx, a, postings, at); err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, account.BalanceChanges(a.balance, postings, "", at))
	})
	return translate(err, nil)
}

// Balances returns user id's balances, zero for a user with no postings.
func (s *Store) Balances(ctx context.Context, id int64) (account.Balances, error) {
	var b account.Balances
	err := s.pool.QueryRow(ctx, `SELECT
		COALESCE(sum(balance) FILTER (WHERE kind = 'user'), 0)::bigint,
		COALESCE(sum(balance) FILTER (WHERE kind = 'user_bonus'), 0)::bigint
		FROM ledger_accounts WHERE kind IN ('user', 'user_bonus') AND owner = $1`, id).Scan(&b.Balance, &b.Bonus)
	return b, translate(err, nil)
}

// Balance returns one account's balance, zero if it has none.
func (s *Store) Balance(ctx context.Context, ref account.Ref) (int64, error) {
	var b int64
	err := s.pool.QueryRow(ctx, `SELECT balance FROM ledger_accounts WHERE kind = $1 AND owner = $2`,
		string(ref.Kind), ref.Owner).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return b, translate(err, nil)
}

// LedgerState returns every ledger account with its cached balance and the
// sum of its postings, and the number of postings, from one snapshot.
// The sums are numeric (sum of bigint is), read as text: a sum past int64
// is reported (PostingsSumOverflows), where a cast to bigint would fail
// the audit with "bigint out of range".
func (s *Store) LedgerState(ctx context.Context) ([]account.AccountState, int64, error) {
	var (
		states []account.AccountState
		n      int64
	)
	err := s.tx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		states, n = nil, 0
		rows, err := tx.Query(ctx, `SELECT a.kind, a.owner, a.balance,
			(COALESCE(i.sum, 0) - COALESCE(o.sum, 0))::text
			FROM ledger_accounts a
			LEFT JOIN (SELECT to_account AS id, sum(amount) AS sum FROM postings GROUP BY to_account) i ON i.id = a.id
			LEFT JOIN (SELECT from_account AS id, sum(amount) AS sum FROM postings GROUP BY from_account) o ON o.id = a.id
			ORDER BY a.id`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var st account.AccountState
			var kind, sum string
			if err := rows.Scan(&kind, &st.Ref.Owner, &st.Balance, &sum); err != nil {
				rows.Close()
				return err
			}
			st.Ref.Kind = account.Kind(kind)
			v, ok := new(big.Int).SetString(sum, 10)
			if !ok {
				rows.Close()
				return fmt.Errorf("postgres: the postings of %s sum to %q, not an integer", st.Ref, sum)
			}
			st.PostingsSum, st.PostingsSumOverflows = v.Int64(), !v.IsInt64()
			states = append(states, st)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM postings`).Scan(&n)
	})
	if err != nil {
		return nil, 0, translate(err, nil)
	}
	return states, n, nil
}

// tx runs fn in a transaction, from the start again while it fails with a
// serialization failure or deadlock or loses its connection before
// COMMIT. A COMMIT whose answer is lost is not retried: it may have
// committed (commitFailed), unless the transaction was read-only.
func (s *Store) tx(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	return retry(ctx, s.retries, func() error {
		tx, err := s.pool.BeginTx(ctx, opts)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback(ctx)
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			if opts.AccessMode == pgx.ReadOnly || errors.Is(err, pgx.ErrTxCommitRollback) {
				return err
			}
			return commitFailed(err)
		}
		return nil
	})
}
