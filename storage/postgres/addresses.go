package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/wallet"
)

// The address book (migration 00036): deposit_addresses keeps every
// deposit address ever given, users the current ones.

var _ account.AddressBook = (*Store)(nil)

// addressColumns are the profile's columns of each family's address.
var addressColumns = map[wallet.Family][]string{
	wallet.EVM:  {"ethereum_address", "bsc_address", "polygon_address"},
	wallet.Tron: {"tron_address"},
}

// SetDepositAddresses implements account.AddressBook in one transaction:
// the entries are inserted unless there, checked for another owner, and
// set on the users, one UPDATE per family.
func (s *Store) SetDepositAddresses(ctx context.Context, as []account.DepositAddress) error {
	if len(as) == 0 {
		return nil
	}
	n := len(as)
	fams, addrs, fps := make([]string, n), make([]string, n), make([]string, n)
	ids, ats := make([]int64, n), make([]time.Time, n)
	known := map[int64]bool{}
	for i, a := range as {
		if _, ok := addressColumns[a.Family]; !ok {
			return fmt.Errorf("postgres: deposit address of unknown family %q", a.Family)
		}
		fams[i], addrs[i], fps[i], ids[i], ats[i] = string(a.Family), a.Address, a.Fingerprint, a.UserID, dbTime(a.CreatedAt)
		known[a.UserID] = true
	}
	return s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var found int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM users WHERE id = ANY($1)`, ids).Scan(&found); err != nil {
			return translate(err, nil)
		}
		if found != len(known) {
			return account.ErrUserNotFound
		}
		var taken bool
		if err := tx.QueryRow(ctx, `WITH a AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::timestamptz[])
				AS a (family, address, user_id, fingerprint, created_at) WHERE address <> ''),
			ins AS (INSERT INTO deposit_addresses (family, address, user_id, fingerprint, created_at)
				SELECT * FROM a ON CONFLICT (family, address) DO NOTHING)
			SELECT EXISTS (SELECT 1 FROM a JOIN deposit_addresses d USING (family, address) WHERE d.user_id <> a.user_id)`,
			fams, addrs, ids, fps, ats).Scan(&taken); err != nil {
			return translate(err, nil)
		}
		if taken {
			return account.ErrAddressTaken
		}
		for f, cols := range addressColumns {
			set, differ := "", ""
			for i, c := range cols {
				if i > 0 {
					set, differ = set+", ", differ+" OR "
				}
				set += c + " = a.address"
				differ += "u." + c + " <> a.address"
			}
			if _, err := tx.Exec(ctx, `UPDATE users u SET `+set+`
				FROM unnest($1::text[], $2::text[], $3::bigint[]) AS a (family, address, user_id)
				WHERE u.id = a.user_id AND a.family = $4 AND (`+differ+`)`,
				fams, addrs, ids, string(f)); err != nil {
				return translate(err, nil)
			}
		}
		return nil
	})
}

// UsersToAddress implements account.AddressBook: a range of users' primary
// key, each user checked against the book's primary key.
func (s *Store) UsersToAddress(ctx context.Context, family wallet.Family, fingerprint string, after int64, limit int) ([]int64, error) {
	cols, ok := addressColumns[family]
	if !ok || limit <= 0 {
		return []int64{}, nil
	}
	// stale says the user's addresses of family are not the current
	// key's: with a key, the first column is not in the book for the user
	// with its fingerprint (or the columns disagree); without one, any
	// column is set.
	args := []any{after, int64(wallet.MaxIndex), limit}
	stale := ""
	if fingerprint == "" {
		for i, c := range cols {
			if i > 0 {
				stale += " OR "
			}
			stale += "u." + c + " <> ''"
		}
	} else {
		args = append(args, string(family), fingerprint)
		stale = `NOT EXISTS (SELECT 1 FROM deposit_addresses d WHERE d.family = $4 AND d.address = u.` + cols[0] + `
			AND d.user_id = u.id AND d.fingerprint = $5)`
		for _, c := range cols[1:] {
			stale += " OR u." + c + " <> u." + cols[0]
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT u.id FROM users u
		WHERE u.id > $1 AND u.id <= $2 AND u.partner_id IS NULL AND (`+stale+`)
		ORDER BY u.id LIMIT $3`, args...)
	if err != nil {
		return nil, translate(err, nil)
	}
	out := []int64{}
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		out = append(out, id)
		return nil
	})
	return out, translate(err, nil)
}

// sqlAddressOwners are the owners of the addresses $2 of family $1.
const sqlAddressOwners = `SELECT address, user_id FROM deposit_addresses WHERE family = $1 AND address = ANY($2)`

// AddressOwners implements account.AddressBook: one = ANY look-up of the
// book's primary key.
func (s *Store) AddressOwners(ctx context.Context, family wallet.Family, addresses []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(addresses) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, sqlAddressOwners, string(family), addresses)
	if err != nil {
		return nil, translate(err, nil)
	}
	var addr string
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&addr, &id}, func() error {
		out[addr] = id
		return nil
	})
	return out, translate(err, nil)
}
