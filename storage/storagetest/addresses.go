package storagetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/wallet"
)

// testAddresses: the address book (account.AddressBook): addresses are
// recorded once and set on the profile, replaced ones stay in the book
// with their owner, a refused batch changes nothing, and the users whose
// addresses are not the current key's are found in id order.
func testAddresses(t *testing.T, newStores func(*testing.T) Stores) {
	setup := func(t *testing.T) (*env, account.AddressBook) {
		e := newEnv(t, newStores)
		book, ok := e.stores.Accounts.(account.AddressBook)
		if !ok {
			t.Skip("the store keeps no address book")
		}
		return e, book
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	evm := func(id int64, n int, fp string) account.DepositAddress {
		return account.DepositAddress{Family: wallet.EVM, Address: fmt.Sprintf("0x%040X", n), UserID: id, Fingerprint: fp, CreatedAt: at}
	}
	tron := func(id int64, n int, fp string) account.DepositAddress {
		return account.DepositAddress{Family: wallet.Tron, Address: fmt.Sprintf("T%033d", n), UserID: id, Fingerprint: fp, CreatedAt: at}
	}
	set := func(e *env, book account.AddressBook, as ...account.DepositAddress) {
		e.t.Helper()
		if err := book.SetDepositAddresses(e.ctx, as); err != nil {
			e.t.Fatalf("set %v: %v", as, err)
		}
	}
	profile := func(e *env, id int64) [4]string {
		e.t.Helper()
		u, err := e.accounts.User(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		return [4]string{u.EthereumAddress, u.BscAddress, u.PolygonAddress, u.TronAddress}
	}
	owners := func(e *env, book account.AddressBook, f wallet.Family, addrs ...string) map[string]int64 {
		e.t.Helper()
		m, err := book.AddressOwners(e.ctx, f, addrs)
		if err != nil {
			e.t.Fatal(err)
		}
		return m
	}
	toAddress := func(e *env, book account.AddressBook, f wallet.Family, fp string, after int64, limit int) []int64 {
		e.t.Helper()
		ids, err := book.UsersToAddress(e.ctx, f, fp, after, limit)
		if err != nil {
			e.t.Fatal(err)
		}
		return ids
	}

	t.Run("an address is set on the profile and its owner found", func(t *testing.T) {
		e, book := setup(t)
		ann, bob := e.user("ann", 0, 0), e.user("bob", 0, 0)
		set(e, book, evm(ann.ID, 1, "k1"), tron(ann.ID, 1, "t1"), evm(bob.ID, 2, "k1"))
		a1, t1, a2 := evm(0, 1, "").Address, tron(0, 1, "").Address, evm(0, 2, "").Address
		if got := profile(e, ann.ID); got != [4]string{a1, a1, a1, t1} {
			t.Errorf("ann's profile addresses = %q", got)
		}
		if got := profile(e, bob.ID); got != [4]string{a2, a2, a2, ""} {
			t.Errorf("bob's profile addresses = %q", got)
		}
		got := owners(e, book, wallet.EVM, a1, a2, evm(0, 3, "").Address, t1)
		if len(got) != 2 || got[a1] != ann.ID || got[a2] != bob.ID {
			t.Errorf("EVM owners = %v, want only %s→%d and %s→%d", got, a1, ann.ID, a2, bob.ID)
		}
		if got := owners(e, book, wallet.Tron, t1, a1); len(got) != 1 || got[t1] != ann.ID {
			t.Errorf("TRON owners = %v, want only %s→%d", got, t1, ann.ID)
		}
		if got := owners(e, book, wallet.EVM); len(got) != 0 {
			t.Errorf("owners of no addresses = %v", got)
		}
	})

	t.Run("setting the same addresses again changes nothing", func(t *testing.T) {
		e, book := setup(t)
		ann := e.user("ann", 0, 0)
		set(e, book, evm(ann.ID, 1, "k1"))
		set(e, book, evm(ann.ID, 1, "k1"))
		a1 := evm(0, 1, "").Address
		if got := profile(e, ann.ID); got != [4]string{a1, a1, a1, ""} {
			t.Errorf("profile addresses = %q", got)
		}
		if got := owners(e, book, wallet.EVM, a1); got[a1] != ann.ID {
			t.Errorf("owners = %v", got)
		}
	})

	t.Run("a replaced address stays in the book with its owner", func(t *testing.T) {
		e, book := setup(t)
		ann := e.user("ann", 0, 0)
		set(e, book, evm(ann.ID, 1, "old"))
		set(e, book, evm(ann.ID, 7, "new"))
		a1, a7 := evm(0, 1, "").Address, evm(0, 7, "").Address
		if got := profile(e, ann.ID); got != [4]string{a7, a7, a7, ""} {
			t.Errorf("profile addresses = %q, want the new key's", got)
		}
		if got := owners(e, book, wallet.EVM, a1, a7); got[a1] != ann.ID || got[a7] != ann.ID {
			t.Errorf("owners = %v, want both addresses ann's", got)
		}
		// Back to the old key: its address is in the book already.
		set(e, book, evm(ann.ID, 1, "old"))
		if got := profile(e, ann.ID); got != [4]string{a1, a1, a1, ""} {
			t.Errorf("profile addresses = %q, want the old key's again", got)
		}
	})

	t.Run("an empty address clears the profile and keeps the book", func(t *testing.T) {
		e, book := setup(t)
		ann := e.user("ann", 0, 0)
		set(e, book, evm(ann.ID, 1, "k1"), tron(ann.ID, 1, "t1"))
		set(e, book, account.DepositAddress{Family: wallet.Tron, UserID: ann.ID, CreatedAt: at})
		a1, t1 := evm(0, 1, "").Address, tron(0, 1, "").Address
		if got := profile(e, ann.ID); got != [4]string{a1, a1, a1, ""} {
			t.Errorf("profile addresses = %q, want TRON's cleared", got)
		}
		if got := owners(e, book, wallet.Tron, t1); got[t1] != ann.ID {
			t.Errorf("TRON owners = %v, want the cleared address still ann's", got)
		}
	})

	t.Run("another user's address is refused and the batch changes nothing", func(t *testing.T) {
		e, book := setup(t)
		ann, bob := e.user("ann", 0, 0), e.user("bob", 0, 0)
		set(e, book, evm(ann.ID, 1, "k1"))
		err := book.SetDepositAddresses(e.ctx, []account.DepositAddress{tron(bob.ID, 2, "t1"), evm(bob.ID, 1, "k1")})
		if !errors.Is(err, account.ErrAddressTaken) {
			t.Fatalf("err = %v, want ErrAddressTaken", err)
		}
		if got := profile(e, bob.ID); got != [4]string{} {
			t.Errorf("bob's profile addresses = %q, want none", got)
		}
		if got := owners(e, book, wallet.Tron, tron(0, 2, "").Address); len(got) != 0 {
			t.Errorf("TRON owners = %v, want the refused batch's address absent", got)
		}
	})

	t.Run("an unknown user is refused", func(t *testing.T) {
		e, book := setup(t)
		ann := e.user("ann", 0, 0)
		err := book.SetDepositAddresses(e.ctx, []account.DepositAddress{evm(ann.ID, 1, "k1"), evm(ann.ID+1000, 2, "k1")})
		if !errors.Is(err, account.ErrUserNotFound) {
			t.Fatalf("err = %v, want ErrUserNotFound", err)
		}
		if got := owners(e, book, wallet.EVM, evm(0, 1, "").Address); len(got) != 0 {
			t.Errorf("owners = %v, want nothing recorded", got)
		}
	})

	t.Run("the users to address are those without the current key's, in id order", func(t *testing.T) {
		e, book := setup(t)
		var ids []int64
		for i := range 5 {
			ids = append(ids, e.user(fmt.Sprintf("u%d", i), 0, 0).ID)
		}
		if e.partners != nil {
			p, _, err := e.partners.CreatePartner(e.ctx, "Bookie")
			if err != nil {
				t.Fatal(err)
			}
			sub := &account.User{Name: "sub", PartnerID: p.ID, ExternalID: "x1", Language: "en", Theme: "light", Level: 1, ReferralCode: "SUBCODE1"}
			if err := e.stores.Accounts.CreateUser(e.ctx, sub, ""); err != nil {
				t.Fatal(err)
			}
		}
		if got := toAddress(e, book, wallet.EVM, "k1", 0, 100); !slices.Equal(got, ids) {
			t.Fatalf("to address = %v, want every user but the partner's sub-account %v", got, ids)
		}
		set(e, book, evm(ids[0], 10, "k1"), evm(ids[2], 12, "old"), tron(ids[3], 13, "t1"))
		want := []int64{ids[1], ids[2], ids[3], ids[4]}
		if got := toAddress(e, book, wallet.EVM, "k1", 0, 100); !slices.Equal(got, want) {
			t.Errorf("to address = %v, want %v (the first has k1's address)", got, want)
		}
		if got := toAddress(e, book, wallet.EVM, "k1", ids[1], 2); !slices.Equal(got, want[1:3]) {
			t.Errorf("to address after %d, 2 = %v, want %v", ids[1], got, want[1:3])
		}
		if got := toAddress(e, book, wallet.EVM, "", 0, 100); !slices.Equal(got, []int64{ids[0], ids[2]}) {
			t.Errorf("to clear = %v, want the two with EVM addresses %v", got, []int64{ids[0], ids[2]})
		}
		if got := toAddress(e, book, wallet.Tron, "t1", 0, 100); !slices.Equal(got, []int64{ids[0], ids[1], ids[2], ids[4]}) {
			t.Errorf("TRON to address = %v, want all but %d", got, ids[3])
		}
		if got := toAddress(e, book, wallet.EVM, "k1", 0, 0); len(got) != 0 {
			t.Errorf("to address with limit 0 = %v", got)
		}
	})

	t.Run("many owners are found in one look-up", func(t *testing.T) {
		e, book := setup(t)
		const n = 120
		var as []account.DepositAddress
		var addrs []string
		for i := range n {
			u, err := e.accounts.User(e.ctx, e.user(fmt.Sprintf("m%d", i), 0, 0).ID)
			if err != nil {
				t.Fatal(err)
			}
			as = append(as, evm(u.ID, 1000+i, "k1"))
			addrs = append(addrs, as[i].Address)
		}
		set(e, book, as...)
		got := owners(e, book, wallet.EVM, addrs...)
		if len(got) != n {
			t.Fatalf("found %d owners, want %d", len(got), n)
		}
		for _, a := range as {
			if got[a.Address] != a.UserID {
				t.Fatalf("owner of %s = %d, want %d", a.Address, got[a.Address], a.UserID)
			}
		}
	})
}
