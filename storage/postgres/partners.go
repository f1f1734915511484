package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
)

var _ partner.Store = (*Store)(nil)

const partnerCols = `id, name, disabled, created_at`

func scanPartner(row pgx.Row) (*partner.Partner, error) {
	p := &partner.Partner{}
	if err := row.Scan(&p.ID, &p.Name, &p.Disabled, &p.CreatedAt); err != nil {
		return nil, err
	}
	return p, nil
}

// CreatePartner stores p with the hash of its key and sets p.ID and
// p.CreatedAt.
func (s *Store) CreatePartner(ctx context.Context, p *partner.Partner, keyHash []byte) error {
	created := now()
	err := s.pool.QueryRow(ctx, `INSERT INTO partners (name, disabled, key_hash, created_at)
		VALUES ($1, $2, $3, $4) RETURNING id`, p.Name, p.Disabled, keyHash, created).Scan(&p.ID)
	if err != nil {
		return translate(err, nil)
	}
	p.CreatedAt = created
	return nil
}

// PartnerByKey returns the partner whose key has hash, or
// partner.ErrUnauthorized.
func (s *Store) PartnerByKey(ctx context.Context, keyHash []byte) (*partner.Partner, error) {
	p := &partner.Partner{}
	var until *time.Time
	err := s.pool.QueryRow(ctx, `SELECT `+partnerCols+`, CASE WHEN key_hash = $1 THEN NULL ELSE old_key_until END
		FROM partners WHERE key_hash = $1 OR old_key_hash = $1`, keyHash).Scan(&p.ID, &p.Name, &p.Disabled, &p.CreatedAt, &until)
	if err != nil {
		return nil, translate(err, partner.ErrUnauthorized)
	}
	p.KeyExpiresAt = until
	return p, nil
}

// RotatePartnerKey gives partner id the key of hash newHash, keeping its
// current key until oldUntil (dropped when zero); an earlier previous key
// is dropped. The row's trigger (migration 00010) tells every server to
// forget the partner's cached keys. partner.ErrNotFound.
func (s *Store) RotatePartnerKey(ctx context.Context, id int64, newHash []byte, oldUntil time.Time) error {
	var until *time.Time
	if !oldUntil.IsZero() {
		t := dbTime(oldUntil)
		until = &t
	}
	tag, err := s.pool.Exec(ctx, `UPDATE partners SET
		old_key_hash = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE key_hash END,
		old_key_until = $3::timestamptz, key_hash = $2
		WHERE id = $1`, id, newHash, until)
	if err != nil {
		return translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return partner.ErrNotFound
	}
	return nil
}

// Partner returns partner id, or partner.ErrNotFound.
func (s *Store) Partner(ctx context.Context, id int64) (*partner.Partner, error) {
	p, err := scanPartner(s.pool.QueryRow(ctx, `SELECT `+partnerCols+` FROM partners WHERE id = $1`, id))
	return p, translate(err, partner.ErrNotFound)
}

// SetPartnerDisabled disables or re-enables partner id.
// partner.ErrNotFound.
func (s *Store) SetPartnerDisabled(ctx context.Context, id int64, disabled bool) error {
	tag, err := s.pool.Exec(ctx, `UPDATE partners SET disabled = $2 WHERE id = $1`, id, disabled)
	if err != nil {
		return translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return partner.ErrNotFound
	}
	return nil
}

// SubAccount returns the sub-account of partnerID's externalID, or
// partner.ErrNoAccount.
func (s *Store) SubAccount(ctx context.Context, partnerID int64, externalID string) (*account.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users u
		WHERE u.partner_id = $1 AND u.external_id = $2`, partnerID, externalID))
	return u, translate(err, partner.ErrNoAccount)
}

// SubAccountID returns the user id of sub-account sa, or 0 and no error
// when there is none.
func (s *Store) SubAccountID(ctx context.Context, sa market.SubAccount) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT u.id FROM users u WHERE u.partner_id = $1 AND u.external_id = $2`,
		sa.PartnerID, sa.ExternalID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return id, translate(err, nil)
}

// sqlTradeByKey finds the trade of partner $1's client bet id $2.
var sqlTradeByKey = `SELECT ` + tradeCols + ` FROM trades t WHERE t.partner_id = $1 AND t.client_bet_id = $2`

// TradeByKey returns the trade recorded under key, or nil and no error
// when there is none.
func (s *Store) TradeByKey(ctx context.Context, key market.Key) (*market.Trade, error) {
	rows, err := s.pool.Query(ctx, sqlTradeByKey, key.PartnerID, key.ClientBetID)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, translate(rows.Err(), nil)
	}
	t := &market.Trade{}
	dest, finish := tradeDest(t)
	if err := rows.Scan(dest...); err != nil {
		return nil, translate(err, nil)
	}
	finish()
	return t, nil
}
