package account

import (
	"context"
	"time"
)

// Store is what the account service needs from storage. Implementations:
// storage/memory and storage/postgres.
type Store interface {
	// CreateUser stores u with its password hash (empty for a partner's
	// sub-account) and sets u.ID and u.CreatedAt. ErrEmailTaken if the
	// e-mail is registered already (compared case-insensitively).
	CreateUser(ctx context.Context, u *User, passwordHash string) error
	// Join is CreateUser for a person signing up: in the same transaction
	// it records who referred them (j.Referral, a code compared
	// case-insensitively) and credits j.SignupBonus to their bonus
	// balance, so that an account never exists without either.
	// ErrInvalidReferralCode for a code no user has, or a partner
	// sub-account's (nothing is created); ErrReferralCodeTaken if
	// u.ReferralCode is another user's already.
	Join(ctx context.Context, u *User, passwordHash string, j Joining) error
	// User returns the user with id, or ErrUserNotFound.
	User(ctx context.Context, id int64) (*User, error)
	// UserByEmail returns the user registered with email (compared
	// case-insensitively) and its password hash, or ErrUserNotFound.
	UserByEmail(ctx context.Context, email string) (*User, string, error)
	// UpdateProfile applies p to user id and returns the result.
	// ErrUserNotFound, ErrNicknameTaken.
	UpdateProfile(ctx context.Context, id int64, p ProfilePatch) (*User, error)
	// UpdateRoles applies p to user id. ErrUserNotFound.
	UpdateRoles(ctx context.Context, id int64, p RolesPatch) (*User, error)
	// SearchUsers returns the users q selects (UserQuery says which and in
	// what order), at most q.Limit of them.
	SearchUsers(ctx context.Context, q UserQuery) ([]*User, error)

	// CreateToken stores the hash of an access token for userID.
	CreateToken(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error
	// UserByToken returns the user whose unexpired token has hash, and
	// when the token expires, or ErrUnauthorized.
	UserByToken(ctx context.Context, hash []byte, now time.Time) (*User, time.Time, error)
	// DeleteToken revokes the token with hash; revoking an unknown token is
	// not an error.
	DeleteToken(ctx context.Context, hash []byte) error

	// PasswordHash returns user id's password hash ("" for a partner's
	// sub-account), or ErrUserNotFound.
	PasswordHash(ctx context.Context, id int64) (string, error)
	// ChangePassword sets user id's password hash to newHash if it is
	// still oldHash, and in the same transaction revokes every access
	// token of the user but the one whose hash is keep (nil: every one),
	// every password reset token and every stream ticket of the user. ErrInvalidCredentials
	// if the hash is no longer oldHash (changed meanwhile), and then
	// nothing changes; ErrUserNotFound.
	ChangePassword(ctx context.Context, id int64, oldHash, newHash string, keep []byte) error
	// CreateResetToken stores the hash of a password reset token for
	// userID until expiresAt, and forgets the reset tokens expired by
	// then. ErrUserNotFound if there is no such user.
	CreateResetToken(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error
	// ResetPassword takes the reset token with hash, once: if it exists
	// and has not expired at now, it sets its user's password hash to
	// newHash and revokes every access token, reset token and stream
	// ticket of the user (and, with revokeAPIKeys, every personal API
	// key of the user), all in one transaction, and returns the user's
	// id. Otherwise it returns ErrInvalidToken and revokes nothing. The
	// token is gone afterwards either way; of two concurrent uses exactly
	// one succeeds.
	ResetPassword(ctx context.Context, hash []byte, newHash string, now time.Time, revokeAPIKeys bool) (int64, error)
	// CreateAPIKey stores personal API key k (its UserID, Name, Scopes and
	// CreatedAt) with the hash of its secret and sets k.ID, unless the user
	// holds max keys already (ErrTooManyAPIKeys) or does not exist
	// (ErrUserNotFound). Concurrent creations for one user never pass max.
	CreateAPIKey(ctx context.Context, k *APIKey, hash []byte, max int) error
	// APIKeys returns user userID's keys, newest (highest id) first.
	APIKeys(ctx context.Context, userID int64) ([]*APIKey, error)
	// DeleteAPIKey deletes user userID's key id and returns the hash of its
	// secret, or ErrAPIKeyNotFound when the user has no such key. The
	// deletion is announced as the revocation of that hash by a store
	// with an auth change feed.
	DeleteAPIKey(ctx context.Context, userID, id int64) ([]byte, error)
	// UserByAPIKey returns the user and the key whose secret has hash, or
	// ErrUnauthorized.
	UserByAPIKey(ctx context.Context, hash []byte) (*User, *APIKey, error)
	// TouchAPIKey sets key id's LastUsedAt to at, unless it is later
	// already; an unknown key is not an error. It is no auth change and is
	// not announced.
	TouchAPIKey(ctx context.Context, id int64, at time.Time) error

	// Transfer writes postings atomically, or nothing:
	// ErrInsufficientFunds if any account that may not go negative would.
	Transfer(ctx context.Context, postings []Posting) error
	// Balances returns user id's balances (zero for a user with no
	// postings).
	Balances(ctx context.Context, id int64) (Balances, error)
	// Balance returns one account's balance (zero if it has none).
	Balance(ctx context.Context, ref Ref) (int64, error)
	// LedgerState returns every ledger account with its cached balance and
	// the sum of its postings, and the number of postings, read in one
	// consistent snapshot.
	LedgerState(ctx context.Context) ([]AccountState, int64, error)
}
