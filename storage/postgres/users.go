package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/growth"
)

const userCols = `u.id, u.email, u.name, u.nickname, u.profile_hidden, u.referral_code, u.language,
	u.theme, u.level, u.avatar_url, u.telegram_verified, u.telegram_notifications, u.is_creator, u.is_stats_viewer,
	u.tron_address, u.bsc_address, u.polygon_address, u.ethereum_address,
	COALESCE(u.partner_id, 0), COALESCE(u.external_id, ''), u.created_at`

func scanUser(row pgx.Row, more ...any) (*account.User, error) {
	u := &account.User{}
	err := row.Scan(append([]any{&u.ID, &u.Email, &u.Name, &u.Nickname, &u.ProfileHidden, &u.ReferralCode, &u.Language,
		&u.Theme, &u.Level, &u.AvatarURL, &u.TelegramVerified, &u.TelegramNotifications, &u.IsCreator, &u.IsStatsViewer,
		&u.TronAddress, &u.BscAddress, &u.PolygonAddress, &u.EthereumAddress,
		&u.PartnerID, &u.ExternalID, &u.CreatedAt}, more...)...)
	if err != nil {
		return nil, err
	}
	return u, nil
}

// emptyNull stores an empty optional string as NULL, as the domain's
// "cleared" and as what keeps unique indexes from matching two empties.
func emptyNull(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	return s
}

// CreateUser stores u with its password hash and sets u.ID and
// u.CreatedAt. account.ErrEmailTaken if the e-mail is registered already
// and account.ErrNicknameTaken if the nickname is taken, both compared
// case-insensitively.
func (s *Store) CreateUser(ctx context.Context, u *account.User, passwordHash string) error {
	return s.Join(ctx, u, passwordHash, account.Joining{})
}

// Join implements account.Store: the referrer is found, the user made,
// the referral recorded and the sign-up bonus posted in one transaction.
func (s *Store) Join(ctx context.Context, u *account.User, passwordHash string, j account.Joining) error {
	created := now()
	var partnerID *int64
	var externalID *string
	if u.PartnerID != 0 {
		partnerID, externalID = &u.PartnerID, &u.ExternalID
	}
	var id int64
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var referrer int64
		if j.Referral != "" {
			var partner bool
			err := tx.QueryRow(ctx, `SELECT id, partner_id IS NOT NULL FROM users
				WHERE upper(referral_code) = upper($1) AND referral_code <> ''`, j.Referral).Scan(&referrer, &partner)
			if errors.Is(err, pgx.ErrNoRows) || err == nil && partner {
				return &decideError{account.ErrInvalidReferralCode}
			}
			if err != nil {
				return err
			}
		}
		err := tx.QueryRow(ctx, `INSERT INTO users (email, password_hash, name, nickname, profile_hidden,
		referral_code, language, theme, level, avatar_url, telegram_verified, is_creator, is_stats_viewer,
		tron_address, bsc_address, polygon_address, ethereum_address, partner_id, external_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
		RETURNING id`,
			u.Email, passwordHash, u.Name, emptyNull(u.Nickname), u.ProfileHidden,
			u.ReferralCode, u.Language, u.Theme, u.Level, emptyNull(u.AvatarURL), u.TelegramVerified, u.IsCreator, u.IsStatsViewer,
			u.TronAddress, u.BscAddress, u.PolygonAddress, u.EthereumAddress, partnerID, externalID, created,
		).Scan(&id)
		if err != nil {
			return err
		}
		if referrer != 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO referrals (referee_id, referrer_id, created_at) VALUES ($1, $2, $3)`, id, referrer, created); err != nil {
				return err
			}
		}
		if j.SignupBonus <= 0 {
			return nil
		}
		es, err := postMoney(ctx, tx, []account.Posting{growth.SignupBonus(id, j.SignupBonus, created)}, created)
		if err != nil {
			return err
		}
		return s.appendChanges(ctx, tx, es)
	})
	if err != nil {
		return translate(err, nil)
	}
	u.ID, u.CreatedAt = id, created
	return nil
}

// User returns the user with id, or account.ErrUserNotFound.
func (s *Store) User(ctx context.Context, id int64) (*account.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users u WHERE u.id = $1`, id))
	return u, translate(err, account.ErrUserNotFound)
}

// UserByEmail returns the user registered with email, compared
// case-insensitively, and its password hash, or account.ErrUserNotFound.
func (s *Store) UserByEmail(ctx context.Context, email string) (*account.User, string, error) {
	var hash string
	u := &account.User{}
	err := s.pool.QueryRow(ctx, `SELECT `+userCols+`, u.password_hash FROM users u
		WHERE lower(u.email) = lower($1) AND u.email <> ''`, email).Scan(
		&u.ID, &u.Email, &u.Name, &u.Nickname, &u.ProfileHidden, &u.ReferralCode, &u.Language,
		&u.Theme, &u.Level, &u.AvatarURL, &u.TelegramVerified, &u.TelegramNotifications, &u.IsCreator, &u.IsStatsViewer,
		&u.TronAddress, &u.BscAddress, &u.PolygonAddress, &u.EthereumAddress,
		&u.PartnerID, &u.ExternalID, &u.CreatedAt, &hash)
	if err != nil {
		return nil, "", translate(err, account.ErrUserNotFound)
	}
	return u, hash, nil
}

// UpdateProfile applies p to user id and returns the result: nil fields
// stay, an empty nickname or avatar clears it. account.ErrUserNotFound,
// account.ErrNicknameTaken.
func (s *Store) UpdateProfile(ctx context.Context, id int64, p account.ProfilePatch) (*account.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, `UPDATE users u SET
		name = COALESCE($2, u.name),
		nickname = CASE WHEN $3::text IS NULL THEN u.nickname ELSE NULLIF($3, '') END,
		language = COALESCE($4, u.language),
		theme = COALESCE($5, u.theme),
		profile_hidden = COALESCE($6, u.profile_hidden),
		avatar_url = CASE WHEN $7::text IS NULL THEN u.avatar_url ELSE NULLIF($7, '') END,
		telegram_notifications = COALESCE($8, u.telegram_notifications)
		WHERE u.id = $1
		RETURNING `+userCols,
		id, p.Name, p.Nickname, p.Language, p.Theme, p.ProfileHidden, p.AvatarURL, p.TelegramNotifications))
	return u, translate(err, account.ErrUserNotFound)
}

// UpdateRoles applies p to user id. account.ErrUserNotFound.
func (s *Store) UpdateRoles(ctx context.Context, id int64, p account.RolesPatch) (*account.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, `UPDATE users u SET
		is_creator = COALESCE($2, u.is_creator),
		is_stats_viewer = COALESCE($3, u.is_stats_viewer)
		WHERE u.id = $1
		RETURNING `+userCols,
		id, p.IsCreator, p.IsStatsViewer))
	return u, translate(err, account.ErrUserNotFound)
}

// CreateToken stores the hash of an access token for userID.
// account.ErrUserNotFound if there is no such user.
func (s *Store) CreateToken(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO access_tokens (hash, user_id, expires_at, created_at) VALUES ($1, $2, $3, $4)`,
		hash, userID, dbTime(expiresAt), now())
	return translate(err, nil)
}

// UserByToken returns the user whose token has hash and expires after
// now, and when it expires, or account.ErrUnauthorized.
func (s *Store) UserByToken(ctx context.Context, hash []byte, now time.Time) (*account.User, time.Time, error) {
	var expires time.Time
	u, err := scanUser(s.pool.QueryRow(ctx, `SELECT `+userCols+`, t.expires_at FROM access_tokens t JOIN users u ON u.id = t.user_id
		WHERE t.hash = $1 AND t.expires_at > $2`, hash, now), &expires)
	return u, expires, translate(err, account.ErrUnauthorized)
}

// DeleteToken revokes the token with hash; an unknown one is no error.
func (s *Store) DeleteToken(ctx context.Context, hash []byte) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM access_tokens WHERE hash = $1`, hash)
	return translate(err, nil)
}
