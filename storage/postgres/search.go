package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/partner"
)

// SearchUsers implements account.Store. The text is found with strpos over
// lower(): a substring taken literally, so '%', '_' and '\' in a query
// are the characters themselves, with no LIKE pattern to escape. The
// statement walks the primary key backwards from the cursor and stops at
// q.Limit matches; a search that matches few users reads the whole table,
// which is the price of substring search without a trigram index (an
// extension this store does not require) on an operator's rare request.
func (s *Store) SearchUsers(ctx context.Context, q account.UserQuery) ([]*account.User, error) {
	rows, err := s.reader(ctx).Query(ctx, `SELECT `+userCols+` FROM users u
		WHERE ($1::bigint <= 0 OR u.id < $1::bigint)
		  AND (($2::text = '' AND $3::bigint = 0)
		       OR u.id = $3
		       OR ($2 <> '' AND (strpos(lower(u.email), lower($2)) > 0
		                        OR strpos(lower(u.name), lower($2)) > 0
		                        OR strpos(lower(COALESCE(u.nickname, '')), lower($2)) > 0)))
		ORDER BY u.id DESC
		LIMIT $4`, q.Before, q.Text, q.ID, q.Limit)
	if err != nil {
		return nil, translate(err, nil)
	}
	users, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*account.User, error) { return scanUser(r) })
	if err != nil {
		return nil, translate(err, nil)
	}
	return users, nil
}

// Partners implements partner.Store.
func (s *Store) Partners(ctx context.Context) ([]*partner.Partner, error) {
	rows, err := s.reader(ctx).Query(ctx, `SELECT `+partnerCols+` FROM partners ORDER BY id`)
	if err != nil {
		return nil, translate(err, nil)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*partner.Partner, error) { return scanPartner(r) })
	if err != nil {
		return nil, translate(err, nil)
	}
	return ps, nil
}
