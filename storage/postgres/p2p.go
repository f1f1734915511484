package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/p2p"
)

var _ p2p.Store = (*Store)(nil)

// adCols and adFrom read an ad with its owner and the owner's record.
const adCols = `a.id, a.user_id, a.type, a.fiat_currency, a.exchange_rate, a.min_amount, a.max_amount,
	a.remaining_amount, a.payment_methods, a.payment_duration, a.instructions, a.is_active,
	a.moderation_status, a.is_platform_ad, a.created_at, a.updated_at,
	u.name, u.nickname, u.avatar_url, u.profile_hidden,
	COALESCE(st.completed_orders, 0), COALESCE(st.rating_sum, 0), COALESCE(st.rating_count, 0)`

const adFrom = ` FROM p2p_ads a
	JOIN users u ON u.id = a.user_id
	LEFT JOIN p2p_user_stats st ON st.user_id = a.user_id`

func scanAd(row pgx.Row) (*p2p.Ad, error) {
	ad := &p2p.Ad{}
	var owner account.User
	o := &ad.Owner
	err := row.Scan(&ad.ID, &ad.UserID, &ad.Type, &ad.FiatCurrency, &ad.ExchangeRate, &ad.MinAmount, &ad.MaxAmount,
		&ad.RemainingAmount, &ad.PaymentMethods, &ad.PaymentDuration, &ad.Instructions, &ad.IsActive,
		&ad.ModerationStatus, &ad.IsPlatformAd, &ad.CreatedAt, &ad.UpdatedAt,
		&owner.Name, &owner.Nickname, &owner.AvatarURL, &owner.ProfileHidden,
		&o.Stats.CompletedOrders, &o.Stats.RatingSum, &o.Stats.RatingCount)
	if err != nil {
		return nil, err
	}
	o.ID, o.Stats.UserID, o.Name = ad.UserID, ad.UserID, owner.DisplayName()
	if !owner.ProfileHidden {
		if owner.Nickname != nil {
			o.Nickname = *owner.Nickname
		}
		if owner.AvatarURL != nil {
			o.AvatarURL = *owner.AvatarURL
		}
	}
	if ad.PaymentMethods == nil {
		ad.PaymentMethods = []string{}
	}
	return ad, nil
}

// isUserFK reports whether err is a foreign-key violation of one of the
// constraints that name a user.
func isUserFK(err error, constraints ...string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeForeignKeyViolation {
		return false
	}
	for _, c := range constraints {
		if pe.ConstraintName == c {
			return true
		}
	}
	return false
}

// CreateP2PAd stores ad and sets ad.ID. p2p.ErrUserNotFound.
func (s *Store) CreateP2PAd(ctx context.Context, ad *p2p.Ad) error {
	t := now()
	if ad.CreatedAt.IsZero() {
		ad.CreatedAt = t
	}
	if ad.UpdatedAt.IsZero() {
		ad.UpdatedAt = t
	}
	ad.CreatedAt, ad.UpdatedAt = dbTime(ad.CreatedAt), dbTime(ad.UpdatedAt)
	keys := make([]string, len(ad.PaymentMethods))
	for i, m := range ad.PaymentMethods {
		keys[i] = p2p.PaymentMethodKey(m)
	}
	methods := ad.PaymentMethods
	if methods == nil {
		methods = []string{}
	}
	err := s.pool.QueryRow(ctx, `INSERT INTO p2p_ads (user_id, type, fiat_currency, exchange_rate, min_amount, max_amount,
			remaining_amount, payment_methods, payment_method_keys, payment_duration, instructions, is_active,
			moderation_status, is_platform_ad, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
		ad.UserID, ad.Type, ad.FiatCurrency, ad.ExchangeRate, ad.MinAmount, ad.MaxAmount,
		ad.RemainingAmount, methods, keys, ad.PaymentDuration, ad.Instructions, ad.IsActive,
		ad.ModerationStatus, ad.IsPlatformAd, ad.CreatedAt, ad.UpdatedAt).Scan(&ad.ID)
	if isUserFK(err, "p2p_ads_user_id_fkey") {
		return p2p.ErrUserNotFound
	}
	return translate(err, nil)
}

// P2PAd returns ad id with its owner. p2p.ErrNotFound.
func (s *Store) P2PAd(ctx context.Context, id int64) (*p2p.Ad, error) {
	ad, err := scanAd(s.pool.QueryRow(ctx, `SELECT `+adCols+adFrom+` WHERE a.id = $1`, id))
	return ad, translate(err, p2p.ErrNotFound)
}

// ModerateP2PAd applies m to ad id and returns it. p2p.ErrNotFound.
func (s *Store) ModerateP2PAd(ctx context.Context, id int64, m p2p.Moderation, at time.Time) (*p2p.Ad, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE p2p_ads SET
			is_active = COALESCE($2, is_active),
			moderation_status = COALESCE($3, moderation_status),
			updated_at = $4
		WHERE id = $1`, id, m.IsActive, m.ModerationStatus, dbTime(at))
	if err != nil {
		return nil, translate(err, nil)
	}
	if tag.RowsAffected() == 0 {
		return nil, p2p.ErrNotFound
	}
	return s.P2PAd(ctx, id)
}

// P2PAds returns the approved ads q selects, filtered, sorted and paged
// by the database. The order is p2p.Query.Compare's, said in SQL.
func (s *Store) P2PAds(ctx context.Context, q p2p.Query) ([]*p2p.Ad, error) {
	sql, args := adsQuery(q)
	rows, err := s.reader(ctx).Query(ctx, sql, args...)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	out := []*p2p.Ad{}
	for rows.Next() {
		ad, err := scanAd(rows)
		if err != nil {
			return nil, translate(err, nil)
		}
		out = append(out, ad)
	}
	return out, translate(rows.Err(), nil)
}

// adsQuery is the SQL of q and its arguments.
func adsQuery(q p2p.Query) (string, []any) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{"a.moderation_status = 'approved'", "a.is_active = " + arg(q.IsActive)}
	if q.Type != "" {
		where = append(where, "a.type = "+arg(q.Type))
	}
	if q.FiatCurrency != "" {
		where = append(where, "a.fiat_currency = "+arg(q.FiatCurrency))
	}
	if q.HasAmount {
		n := arg(q.Amount)
		where = append(where, "a.min_amount <= "+n+" AND a.max_amount >= "+n)
	}
	if q.PaymentMethod != "" {
		where = append(where, "a.payment_method_keys @> ARRAY["+arg(p2p.PaymentMethodKey(q.PaymentMethod))+"::text]")
	}
	if q.HasMaxPaymentDuration {
		where = append(where, "a.payment_duration <= "+arg(q.MaxPaymentDuration))
	}
	if q.AuthorNickname != "" {
		// Nicknames are ASCII; the key is lowered in Go as the in-memory
		// store compares, and users_nickname_key serves the lookup.
		where = append(where, "a.user_id = (SELECT id FROM users WHERE lower(nickname) = "+arg(p2p.NicknameKey(q.AuthorNickname))+" AND NOT profile_hidden)")
	}
	var order string
	switch q.SortBy {
	case p2p.SortRating:
		order = `CASE WHEN COALESCE(st.rating_count, 0) = 0 THEN 0::float8
			ELSE st.rating_sum::float8 / st.rating_count END DESC, a.id`
	case p2p.SortOrdersCount:
		order = "COALESCE(st.completed_orders, 0) DESC, a.id"
	case p2p.SortBestPrice:
		switch q.Type {
		case p2p.TypeSell:
			order = "a.exchange_rate, a.id"
		case p2p.TypeBuy:
			order = "a.exchange_rate DESC, a.id"
		default:
			order = "(a.type = 'buy'), CASE WHEN a.type = 'sell' THEN a.exchange_rate ELSE -a.exchange_rate END, a.id"
		}
	default:
		order = "a.created_at DESC, a.id DESC"
	}
	sql := `SELECT ` + adCols + adFrom + ` WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY ` + order + ` LIMIT ` + arg(q.Limit) + ` OFFSET ` + arg(q.Offset)
	return sql, args
}

// SetP2PStats replaces user st.UserID's P2P record. p2p.ErrUserNotFound.
func (s *Store) SetP2PStats(ctx context.Context, st p2p.UserStats) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO p2p_user_stats (user_id, completed_orders, rating_sum, rating_count)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id) DO UPDATE SET completed_orders = EXCLUDED.completed_orders,
			rating_sum = EXCLUDED.rating_sum, rating_count = EXCLUDED.rating_count`,
		st.UserID, st.CompletedOrders, st.RatingSum, st.RatingCount)
	if isUserFK(err, "p2p_user_stats_user_id_fkey") {
		return p2p.ErrUserNotFound
	}
	return translate(err, nil)
}

// P2PStats returns user id's P2P record (zero without one).
// p2p.ErrUserNotFound.
func (s *Store) P2PStats(ctx context.Context, userID int64) (p2p.UserStats, error) {
	st := p2p.UserStats{UserID: userID}
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(st.completed_orders, 0), COALESCE(st.rating_sum, 0), COALESCE(st.rating_count, 0)
		FROM users u LEFT JOIN p2p_user_stats st ON st.user_id = u.id WHERE u.id = $1`, userID).
		Scan(&st.CompletedOrders, &st.RatingSum, &st.RatingCount)
	if err != nil {
		return p2p.UserStats{}, translate(err, p2p.ErrUserNotFound)
	}
	return st, nil
}
