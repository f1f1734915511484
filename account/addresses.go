package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/predictkit/predictkit/wallet"
)

// DepositAddress is one entry of the address book: an address a user was
// given to receive deposits at.
//
// The book keeps every address ever given, not only the current ones:
// when the operator replaces an extended public key, money later sent to
// an address of the old key (a user's saved address, a payment already
// on its way) still has an owner, and is still credited.
type DepositAddress struct {
	Family wallet.Family
	// Address is in wallet.Format's form (EIP-55 hex, TRON base58check),
	// the one way each address is written in the book.
	Address string
	UserID  int64
	// Fingerprint is wallet.Deriver.Fingerprint of the key the address
	// was derived from.
	Fingerprint string
	CreatedAt   time.Time
}

// ErrAddressTaken refuses to give a user an address the book records for
// another user. Derivation never makes one (the addresses of distinct
// indexes and keys do not collide); it keeps a book whose users were
// renumbered (users imported from another database) from sending one
// user's deposits to another.
var ErrAddressTaken = errors.New("account: the deposit address belongs to another user")

// AddressBook is what deposit addresses need from storage.
// Implementations: storage/memory and storage/postgres.
type AddressBook interface {
	// SetDepositAddresses, in one transaction, records each address in
	// the book (unless it is there already; CreatedAt is when it is
	// recorded first) and makes it its user's current address of its
	// family: the profile's ethereum_address, bsc_address and
	// polygon_address for wallet.EVM, tron_address for wallet.Tron. An
	// entry with an empty Address records nothing and clears the user's
	// addresses of its family. At most one entry per user and family.
	// ErrAddressTaken if an address is in the book for another user,
	// ErrUserNotFound for an unknown user; then nothing changes.
	SetDepositAddresses(ctx context.Context, as []DepositAddress) error
	// UsersToAddress returns the ids above after, ascending, at most
	// limit, of the users that may have deposit addresses (not a
	// partner's sub-account, id at most wallet.MaxIndex) whose current
	// address of family is not one the book records for them with
	// fingerprint. With fingerprint "" (the family has no key), the users
	// whose current address of family is not "".
	UsersToAddress(ctx context.Context, family wallet.Family, fingerprint string, after int64, limit int) ([]int64, error)
	// AddressOwners returns the owner of each of addresses (in
	// wallet.Format's form) the book has for family, current or not;
	// addresses it does not have are absent from the map.
	AddressOwners(ctx context.Context, family wallet.Family, addresses []string) (map[string]int64, error)
}

// Addresser gives users their deposit addresses: it derives them from the
// operator's extended public keys (package wallet), records them in the
// address book and sets them on the profile. It is safe for concurrent
// use.
//
// A partner's sub-account gets no address: its money comes from its
// partner's float, never from a chain. Nor does a user whose id is past
// wallet.MaxIndex, which BIP-32 cannot derive from a public key: its
// addresses stay "".
type Addresser struct {
	book AddressBook
	// keys are the derivers by family; a family without one has no
	// addresses.
	keys map[wallet.Family]*wallet.Deriver
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// families are the address families, in a fixed order.
var families = []wallet.Family{wallet.EVM, wallet.Tron}

// NewAddresser returns an Addresser on book with the keys of the EVM and
// TRON families; either may be nil, and then that family's addresses are
// "". With neither, book may be nil: there is nothing to give.
func NewAddresser(book AddressBook, evm, tron *wallet.Deriver) *Addresser {
	keys := map[wallet.Family]*wallet.Deriver{}
	if evm != nil {
		keys[wallet.EVM] = evm
	}
	if tron != nil {
		keys[wallet.Tron] = tron
	}
	return &Addresser{book: book, keys: keys, Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// Enabled reports whether any family has a key.
func (a *Addresser) Enabled() bool { return len(a.keys) > 0 }

// Assign derives u's addresses from the current keys, records them and
// sets them on u. A user that gets no addresses (a partner's sub-account,
// an id past wallet.MaxIndex) or a server without keys changes nothing.
func (a *Addresser) Assign(ctx context.Context, u *User) error {
	if !a.Enabled() || u.PartnerID != 0 || u.ID <= 0 || u.ID > wallet.MaxIndex {
		return nil
	}
	var as []DepositAddress
	for _, f := range families {
		if d := a.keys[f]; d != nil {
			e, err := a.entry(f, u.ID)
			if err != nil {
				return err
			}
			as = append(as, e)
		}
	}
	if err := a.book.SetDepositAddresses(ctx, as); err != nil {
		return err
	}
	for _, e := range as {
		setAddress(u, e.Family, e.Address)
	}
	return nil
}

// entry is user id's address of family from the current key, or an entry
// that clears the family's addresses when it has no key.
func (a *Addresser) entry(f wallet.Family, id int64) (DepositAddress, error) {
	e := DepositAddress{Family: f, UserID: id, CreatedAt: a.Now()}
	d := a.keys[f]
	if d == nil {
		return e, nil
	}
	addr, err := d.Address(id)
	if err != nil {
		return e, fmt.Errorf("account: deposit address of user %d: %w", id, err)
	}
	e.Address, e.Fingerprint = addr, d.Fingerprint()
	return e, nil
}

// setAddress sets u's addresses of family f.
func setAddress(u *User, f wallet.Family, addr string) {
	switch f {
	case wallet.EVM:
		u.EthereumAddress, u.BscAddress, u.PolygonAddress = addr, addr, addr
	case wallet.Tron:
		u.TronAddress = addr
	}
}

// DefaultBackfillBatch is how many users Backfill gives addresses to in
// one transaction.
const DefaultBackfillBatch = 500

// Backfill brings every user's addresses to the current keys, batch users
// (DefaultBackfillBatch if batch ≤ 0) to a transaction: users made before
// a key was set, and users whose addresses came from a key since
// replaced, get the current key's; with a key removed, its family's
// addresses are cleared from the profiles (the book keeps them). It
// returns how many addresses (one per user and family) it changed.
//
// It is idempotent and needs no lock: every instance that runs it at once
// derives and writes the same addresses, and a user registering meanwhile
// is given the same ones.
func (a *Addresser) Backfill(ctx context.Context, batch int) (int, error) {
	if a.book == nil {
		return 0, nil
	}
	if batch <= 0 {
		batch = DefaultBackfillBatch
	}
	changed := 0
	for _, f := range families {
		fp := ""
		if d := a.keys[f]; d != nil {
			fp = d.Fingerprint()
		}
		for after := int64(0); ; {
			ids, err := a.book.UsersToAddress(ctx, f, fp, after, batch)
			if err != nil {
				return changed, err
			}
			if len(ids) == 0 {
				break
			}
			as := make([]DepositAddress, 0, len(ids))
			for _, id := range ids {
				e, err := a.entry(f, id)
				if err != nil {
					return changed, err
				}
				as = append(as, e)
			}
			if err := a.book.SetDepositAddresses(ctx, as); err != nil {
				return changed, err
			}
			changed += len(ids)
			after = ids[len(ids)-1]
		}
	}
	return changed, nil
}
