package account_test

import (
	"context"
	"fmt"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/wallet"
)

// Account 0 of the abandon mnemonic for Ethereum and TRON: public test
// keys, never to receive real money.
const (
	testEVMXPub  = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
	testTronXPub = "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"
)

func deriver(t *testing.T, f wallet.Family, xpub string) *wallet.Deriver {
	t.Helper()
	d, err := wallet.NewDeriver(f, xpub)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestAddresser(t *testing.T) {
	ctx := context.Background()
	evm, tron := deriver(t, wallet.EVM, testEVMXPub), deriver(t, wallet.Tron, testTronXPub)
	// users makes n users on store without addresses.
	users := func(t *testing.T, store *memory.Store, n int) []int64 {
		t.Helper()
		s := account.NewService(store)
		s.BcryptCost = bcrypt.MinCost
		var ids []int64
		for i := range n {
			u, _, err := s.Register(ctx, account.Registration{Email: fmt.Sprintf("u%d@example.com", i), Password: "password123", Name: "U"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, u.ID)
		}
		return ids
	}
	addresses := func(t *testing.T, store *memory.Store, id int64) [4]string {
		t.Helper()
		u, err := store.User(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return [4]string{u.EthereumAddress, u.BscAddress, u.PolygonAddress, u.TronAddress}
	}
	want := func(t *testing.T, d *wallet.Deriver, id int64) string {
		t.Helper()
		a, err := d.Address(id)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	t.Run("a partner's sub-account gets no addresses", func(t *testing.T) {
		store := memory.New()
		u := &account.User{Name: "sub", PartnerID: 1, ExternalID: "x"}
		if err := store.CreateUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
		a := account.NewAddresser(store, evm, tron)
		if err := a.Assign(ctx, u); err != nil {
			t.Fatal(err)
		}
		if got := addresses(t, store, u.ID); got != [4]string{} || u.TronAddress != "" {
			t.Errorf("addresses = %q", got)
		}
		if n, err := a.Backfill(ctx, 10); err != nil || n != 0 {
			t.Errorf("backfill = %d, %v; want nothing to do", n, err)
		}
	})

	t.Run("an id past BIP-32's range gets no addresses", func(t *testing.T) {
		u := &account.User{ID: wallet.MaxIndex + 1}
		if err := account.NewAddresser(memory.New(), evm, tron).Assign(ctx, u); err != nil || u.EthereumAddress != "" {
			t.Errorf("assign = %v, address %q", err, u.EthereumAddress)
		}
	})

	t.Run("the backfill reaches every user in batches, once", func(t *testing.T) {
		store := memory.New()
		ids := users(t, store, 5)
		a := account.NewAddresser(store, evm, tron)
		if n, err := a.Backfill(ctx, 2); err != nil || n != 10 {
			t.Fatalf("backfill = %d, %v; want 10 (5 users, 2 families)", n, err)
		}
		for _, id := range ids {
			e := want(t, evm, id)
			if got := addresses(t, store, id); got != [4]string{e, e, e, want(t, tron, id)} {
				t.Errorf("user %d's addresses = %q", id, got)
			}
		}
		if n, err := a.Backfill(ctx, 2); err != nil || n != 0 {
			t.Errorf("second backfill = %d, %v; want nothing to do", n, err)
		}
	})

	t.Run("a removed key's addresses are cleared from the profiles and stay in the book", func(t *testing.T) {
		store := memory.New()
		ids := users(t, store, 3)
		if _, err := account.NewAddresser(store, evm, tron).Backfill(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if n, err := account.NewAddresser(store, nil, tron).Backfill(ctx, 0); err != nil || n != 3 {
			t.Fatalf("backfill without the EVM key = %d, %v; want 3", n, err)
		}
		old := want(t, evm, ids[0])
		if got := addresses(t, store, ids[0]); got != [4]string{"", "", "", want(t, tron, ids[0])} {
			t.Errorf("addresses = %q, want only TRON's", got)
		}
		if owners, err := store.AddressOwners(ctx, wallet.EVM, []string{old}); err != nil || owners[old] != ids[0] {
			t.Errorf("owners = %v, %v; want %s still user %d's", owners, err, old, ids[0])
		}
	})
}

// failingBook is an address book that cannot be written.
type failingBook struct{ account.AddressBook }

func (failingBook) SetDepositAddresses(context.Context, []account.DepositAddress) error {
	return fmt.Errorf("the book is down")
}

func TestRegistrationOutlivesAFailedAddressAssignment(t *testing.T) {
	ctx := context.Background()
	evm := deriver(t, wallet.EVM, testEVMXPub)
	store := memory.New()
	s := account.NewService(store)
	s.BcryptCost = bcrypt.MinCost
	s.Addresses = account.NewAddresser(failingBook{store}, evm, nil)
	u, tok, err := s.Register(ctx, account.Registration{Email: "late@example.com", Password: "correct horse 1", Name: "Late"})
	if err != nil || tok == "" {
		t.Fatalf("Register = %v: the account is made, so the registration must succeed", err)
	}
	if u.EthereumAddress != "" {
		t.Fatalf("an address was set though the book failed: %q", u.EthereumAddress)
	}
	if _, _, err := s.Login(ctx, "late@example.com", "correct horse 1"); err != nil {
		t.Fatalf("the account cannot log in: %v", err)
	}
	// The first look (or the backfill) gives the address later.
	if err := account.NewAddresser(store, evm, nil).Assign(ctx, u); err != nil || u.EthereumAddress == "" {
		t.Fatalf("Assign later: %v, %q", err, u.EthereumAddress)
	}
}
