package wallet_test

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/predictkit/predictkit/wallet"
)

func TestParse(t *testing.T) {
	usdt, _ := hex.DecodeString("a614f803b6fd780986a42c78ec9c7f77e6ded13c")
	for _, tc := range []struct {
		name, chain, addr string
		want              []byte // nil: refused
	}{
		// EIP-55's own examples.
		{"a checksummed Ethereum address passes", wallet.Ethereum, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", hexBytes("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")},
		{"a checksummed BSC address passes", wallet.BSC, "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", hexBytes("fb6916095ca1df60bb79ce92ce3ea74c37c5d359")},
		{"a checksummed Polygon address passes", wallet.Polygon, "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb", hexBytes("d1220a0cf47c7b9be7a2e6ba89f429762e7b9adb")},
		{"one letter in the wrong case fails the checksum", wallet.Ethereum, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", nil},
		{"an all-lower-case address carries no checksum", wallet.Ethereum, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", nil},
		{"an address without 0x is refused", wallet.Ethereum, "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", nil},
		{"a short address is refused", wallet.Ethereum, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA", nil},
		{"a TRON address on an EVM chain is refused", wallet.Ethereum, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", nil},
		// The USDT contract on TRON, in its two published forms.
		{"a TRON address passes", wallet.TRON, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", usdt},
		{"a TRON address with a changed character fails its checksum", wallet.TRON, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u", nil},
		{"an EVM address on TRON is refused", wallet.TRON, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", nil},
		{"a Bitcoin address is no TRON address", wallet.TRON, "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", nil},
		{"an empty address is refused", wallet.TRON, "", nil},
		{"an unknown chain is refused", "dogecoin", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := wallet.Parse(tc.chain, tc.addr)
			if tc.want == nil {
				if !errors.Is(err, wallet.ErrInvalidAddress) {
					t.Fatalf("Parse = %x, %v; want ErrInvalidAddress", got, err)
				}
				return
			}
			if err != nil || string(got[:]) != string(tc.want) {
				t.Fatalf("Parse = %x, %v; want %x", got, err, tc.want)
			}
			f, _ := wallet.FamilyOf(tc.chain)
			if back := wallet.Format(f, got); back != tc.addr {
				t.Fatalf("Format = %s, want %s", back, tc.addr)
			}
		})
	}
}

func hexBytes(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestNewDeriverRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		want      error
	}{
		// BIP-32 vector 1's master private key.
		{"an extended private key", "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi", wallet.ErrPrivateKey},
		{"text that is no key", "not a key", wallet.ErrInvalidKey},
		{"a key with a changed character", "xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduC", wallet.ErrInvalidKey},
		{"nothing", "", wallet.ErrInvalidKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := wallet.NewDeriver(wallet.EVM, tc.key); !errors.Is(err, tc.want) {
				t.Fatalf("NewDeriver = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestUserIDsOutsideBIP32sRangeHaveNoAddress(t *testing.T) {
	d, err := wallet.NewDeriver(wallet.EVM, "xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{-1, wallet.MaxIndex + 1, 1 << 62} {
		if a, err := d.Address(id); !errors.Is(err, wallet.ErrIndex) {
			t.Errorf("Address(%d) = %q, %v; want ErrIndex", id, a, err)
		}
	}
	a, err := d.Address(wallet.MaxIndex)
	if err != nil || a == "" {
		t.Fatalf("Address(MaxIndex) = %q, %v", a, err)
	}
	b, _ := d.Address(wallet.MaxIndex - 1)
	if a == b {
		t.Fatal("two users got one address")
	}
}

func TestEveryChainHasItsOwnNumberAndAFamily(t *testing.T) {
	seen := map[int64]string{}
	for _, c := range wallet.Chains {
		n := wallet.Number(c)
		if _, ok := wallet.FamilyOf(c); !ok || n <= 0 || seen[n] != "" {
			t.Fatalf("chain %s: number %d (taken by %q)", c, n, seen[n])
		}
		seen[n] = c
	}
	if wallet.Number("solana") != 0 {
		t.Fatal("an unknown chain has a number")
	}
}
