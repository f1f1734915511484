package wallet_test

import (
	"encoding/hex"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/predictkit/predictkit/wallet"
)

// BIP-32's published test vectors, the steps a public key can take:
// non-hardened children of an extended public key.
func TestPublicDerivationFollowsBIP32Vectors(t *testing.T) {
	for _, tc := range []struct {
		name, parent string
		index        uint32
		child        string
	}{
		{
			"vector 2: m to m/0",
			"xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB",
			0,
			"xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH",
		},
		{
			"vector 1: m/0H/1/2H to m/0H/1/2H/2",
			"xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5",
			2,
			"xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV",
		},
		{
			"vector 1: m/0H/1/2H/2 to m/0H/1/2H/2/1000000000",
			"xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV",
			1000000000,
			"xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := hdkeychain.NewKeyFromString(tc.parent)
			if err != nil {
				t.Fatal(err)
			}
			c, err := k.Derive(tc.index)
			if err != nil {
				t.Fatal(err)
			}
			if c.String() != tc.child {
				t.Fatalf("child %s, want %s", c, tc.child)
			}
		})
	}
}

// abandonSeed is the BIP-39 seed of "abandon abandon abandon abandon
// abandon abandon abandon abandon abandon abandon abandon about" with no
// passphrase, the mnemonic wallets publish their test addresses for.
const abandonSeed = "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4"

// accountXPub is the extended public key of account 0 of coin type coin
// (m/44'/coin'/0') of the abandon seed: what an operator's wallet exports.
func accountXPub(t *testing.T, coin uint32) string {
	t.Helper()
	seed, _ := hex.DecodeString(abandonSeed)
	k, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []uint32{44, coin, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := k.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	return pub.String()
}

func TestAddressesMatchWhatWalletsShow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		family wallet.Family
		coin   uint32
		user   int64
		want   string
	}{
		// m/44'/60'/0'/0/0 and /0/1: MetaMask's and Ledger's first two
		// accounts of the abandon mnemonic.
		{"user 0 has the first Ethereum account", wallet.EVM, 60, 0, "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
		{"user 1 has the second Ethereum account", wallet.EVM, 60, 1, "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"},
		// m/44'/195'/0'/0/0: TronLink's first account of the same mnemonic.
		{"user 0 has the first TRON account", wallet.Tron, 195, 0, "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := wallet.NewDeriver(tc.family, accountXPub(t, tc.coin))
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Address(tc.user)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("address %s, want %s", got, tc.want)
			}
		})
	}
}
