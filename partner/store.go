package partner

import (
	"context"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// Store is what the partner service needs from storage besides the ledger
// and the market store. Implementations: storage/memory, storage/postgres.
type Store interface {
	// CreatePartner stores p with the hash of its key and sets p.ID and
	// p.CreatedAt.
	CreatePartner(ctx context.Context, p *Partner, keyHash []byte) error
	// PartnerByKey returns the partner whose key, or whose previous key
	// (RotatePartnerKey), has hash, or ErrUnauthorized. Found by its
	// previous key, the partner comes with KeyExpiresAt set, even when
	// that time has passed: the caller decides against its clock.
	PartnerByKey(ctx context.Context, keyHash []byte) (*Partner, error)
	// Partner returns partner id, or ErrNotFound.
	Partner(ctx context.Context, id int64) (*Partner, error)
	// Partners returns every partner, by id ascending.
	Partners(ctx context.Context) ([]*Partner, error)
	// RotatePartnerKey gives partner id the key of hash newHash; its
	// current key becomes its previous key, accepted until oldUntil, or
	// dropped when oldUntil is zero. A previous key from an earlier
	// rotation stops working at once. ErrNotFound.
	RotatePartnerKey(ctx context.Context, id int64, newHash []byte, oldUntil time.Time) error
	// SetPartnerDisabled disables or re-enables partner id. ErrNotFound.
	SetPartnerDisabled(ctx context.Context, id int64, disabled bool) error
	// SubAccount returns the sub-account of partnerID's externalID, or
	// ErrNoAccount.
	SubAccount(ctx context.Context, partnerID int64, externalID string) (*account.User, error)
}

// Ledger is what the partner service needs of the ledger.
type Ledger interface {
	Transfer(ctx context.Context, postings []account.Posting) error
	Balance(ctx context.Context, ref account.Ref) (int64, error)
	Balances(ctx context.Context, userID int64) (account.Balances, error)
}

// Markets is what the partner service needs of the market service
// (*market.Service): the one door every trade goes through, and open
// positions valued at the current price.
type Markets interface {
	Execute(ctx context.Context, marketID int64, r market.Request) (*market.Result, error)
	OpenPositions(ctx context.Context, userID int64) ([]market.OpenPosition, error)
}
