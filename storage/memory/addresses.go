package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/wallet"
)

var _ account.AddressBook = (*Store)(nil)

// bookKey names an address in the address book.
type bookKey struct {
	family  wallet.Family
	address string
}

// addressOf returns user u's current address of family f.
func addressOf(u *account.User, f wallet.Family) string {
	if f == wallet.Tron {
		return u.TronAddress
	}
	return u.EthereumAddress
}

// SetDepositAddresses implements account.AddressBook.
func (s *Store) SetDepositAddresses(_ context.Context, as []account.DepositAddress) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Check everything first, so that a refusal changes nothing.
	for _, a := range as {
		if a.Family != wallet.EVM && a.Family != wallet.Tron {
			return fmt.Errorf("memory: deposit address of unknown family %q", a.Family)
		}
		if _, ok := s.users[a.UserID]; !ok {
			return account.ErrUserNotFound
		}
		if e, ok := s.book[bookKey{a.Family, a.Address}]; ok && e.UserID != a.UserID {
			return account.ErrAddressTaken
		}
	}
	for _, a := range as {
		if a.Address != "" {
			k := bookKey{a.Family, a.Address}
			if _, ok := s.book[k]; !ok {
				if s.book == nil {
					s.book = map[bookKey]account.DepositAddress{}
				}
				a.CreatedAt = a.CreatedAt.UTC().Truncate(time.Microsecond)
				a.Address = strings.Clone(a.Address)
				a.Fingerprint = strings.Clone(a.Fingerprint)
				s.book[k] = a
			}
		}
		u := &s.users[a.UserID].u
		if a.Family == wallet.Tron {
			u.TronAddress = a.Address
		} else {
			u.EthereumAddress, u.BscAddress, u.PolygonAddress = a.Address, a.Address, a.Address
		}
	}
	return nil
}

// UsersToAddress implements account.AddressBook.
func (s *Store) UsersToAddress(_ context.Context, family wallet.Family, fingerprint string, after int64, limit int) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []int64{}
	if family != wallet.EVM && family != wallet.Tron || limit <= 0 {
		return out, nil
	}
	for id, rec := range s.users {
		u := &rec.u
		if id <= after || id > wallet.MaxIndex || u.PartnerID != 0 {
			continue
		}
		cur := addressOf(u, family)
		agree := family == wallet.Tron || u.BscAddress == cur && u.PolygonAddress == cur
		var stale bool
		if fingerprint == "" {
			stale = cur != "" || !agree
		} else {
			e, ok := s.book[bookKey{family, cur}]
			stale = !ok || e.UserID != id || e.Fingerprint != fingerprint || !agree
		}
		if stale {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), limit)], nil
}

// AddressOwners implements account.AddressBook.
func (s *Store) AddressOwners(_ context.Context, family wallet.Family, addresses []string) (map[string]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for _, a := range addresses {
		if e, ok := s.book[bookKey{family, a}]; ok {
			out[a] = e.UserID
		}
	}
	return out, nil
}
