// Package wallet derives users' deposit addresses from an operator's
// extended public keys and checks the addresses users ask to be paid to.
//
// The operator keeps the private keys; the server holds only the extended
// public keys (xpub), from which BIP-32 derives each user's address at
// path <xpub>/0/<user id>: one EVM address (Ethereum, BSC and Polygon share
// it, written with the EIP-55 checksum) and one TRON address (base58check).
// An extended private key is refused, so that a server that leaks its
// configuration leaks no money.
package wallet

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Family is a kind of chain whose addresses are derived alike.
type Family string

// The families of chains: EVM chains share one address per user.
const (
	EVM  Family = "evm"
	Tron Family = "tron"
)

// The chains predictkit knows.
const (
	Ethereum = "ethereum"
	BSC      = "bsc"
	Polygon  = "polygon"
	TRON     = "tron"
)

// Chains lists the chains predictkit knows, in the order the profile shows
// their addresses.
var Chains = []string{TRON, BSC, Polygon, Ethereum}

// Number returns chain's number: its EIP-155 chain id on its main
// network (TRON's is the one its JSON-RPC answers), and 0 for a chain
// predictkit does not know. It tells the chains' ledger accounts apart.
func Number(chain string) int64 {
	switch chain {
	case Ethereum:
		return 1
	case BSC:
		return 56
	case Polygon:
		return 137
	case TRON:
		return 728126428
	}
	return 0
}

// FamilyOf returns the family of chain, and false for a chain predictkit
// does not know.
func FamilyOf(chain string) (Family, bool) {
	switch chain {
	case Ethereum, BSC, Polygon:
		return EVM, true
	case TRON:
		return Tron, true
	}
	return "", false
}

// MaxIndex is the largest user id that has addresses: BIP-32 numbers the
// non-hardened children of a key 0 to 2^31-1, and a public key can derive
// only those.
const MaxIndex = 1<<31 - 1

// Errors.
var (
	// ErrPrivateKey: an extended private key where a public one belongs.
	ErrPrivateKey = errors.New("wallet: an extended private key; give the extended public key (xpub)")
	// ErrInvalidKey: not an extended key.
	ErrInvalidKey = errors.New("wallet: not an extended public key")
	// ErrIndex: a user id that BIP-32 cannot derive from a public key.
	ErrIndex = errors.New("wallet: user id out of BIP-32's non-hardened range")
	// ErrInvalidAddress: an address that is malformed or fails its checksum.
	ErrInvalidAddress = errors.New("wallet: invalid address")
)

// Deriver derives the addresses of one family from an extended public key.
// It is safe for concurrent use.
type Deriver struct {
	family Family
	// external is <xpub>/0, the BIP-32 chain of receiving addresses,
	// derived once.
	external    *hdkeychain.ExtendedKey
	fingerprint string
}

// NewDeriver parses xpub, an extended public key in BIP-32's base58 form
// (any version bytes: xpub, tpub, ...), for the addresses of family.
// ErrPrivateKey for an extended private key, ErrInvalidKey for anything
// else that is not an extended public key.
func NewDeriver(family Family, xpub string) (*Deriver, error) {
	if family != EVM && family != Tron {
		return nil, fmt.Errorf("wallet: unknown family %q", family)
	}
	k, err := hdkeychain.NewKeyFromString(strings.TrimSpace(xpub))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	if k.IsPrivate() {
		return nil, ErrPrivateKey
	}
	ext, err := k.Derive(0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	// The fingerprint names the key without revealing it: it tells an
	// operator (and the address book) which xpub an address came from.
	sum := sha256.Sum256([]byte(k.String()))
	return &Deriver{family: family, external: ext, fingerprint: hex.EncodeToString(sum[:4])}, nil
}

// Family returns the family d derives addresses for.
func (d *Deriver) Family() Family { return d.family }

// Fingerprint is a short, stable name of d's extended public key.
func (d *Deriver) Fingerprint() string { return d.fingerprint }

// Address returns the address of user id: EIP-55 hex for EVM, base58check
// for TRON. ErrIndex for an id outside 0..MaxIndex.
func (d *Deriver) Address(id int64) (string, error) {
	a, err := d.Bytes(id)
	if err != nil {
		return "", err
	}
	return Format(d.family, a), nil
}

// Bytes returns the 20 bytes of user id's address.
func (d *Deriver) Bytes(id int64) ([20]byte, error) {
	if id < 0 || id > MaxIndex {
		return [20]byte{}, ErrIndex
	}
	child, err := d.external.Derive(uint32(id))
	if err != nil {
		// BIP-32: an index whose key is invalid (probability below 2^-127)
		// has no address.
		return [20]byte{}, fmt.Errorf("wallet: user %d: %w", id, err)
	}
	pub, err := child.ECPubKey()
	if err != nil {
		return [20]byte{}, fmt.Errorf("wallet: user %d: %w", id, err)
	}
	return crypto.PubkeyToAddress(*pub.ToECDSA()), nil
}

// Format writes the 20 bytes of an address in family's form.
func Format(family Family, a [20]byte) string {
	if family == Tron {
		return base58.CheckEncode(a[:], tronPrefix)
	}
	return common.Address(a).Hex()
}

// tronPrefix is the version byte of TRON's mainnet addresses: it makes
// their base58 form start with T.
const tronPrefix = 0x41

// Parse checks s, an address on chain, and returns its 20 bytes. An EVM
// address must carry its EIP-55 checksum (mixed case): an all-lower or
// all-upper case address carries none, and a mistyped character in it
// would send money nowhere. A TRON address must be base58check with
// TRON's prefix. ErrInvalidAddress otherwise, or for an unknown chain.
func Parse(chain, s string) ([20]byte, error) {
	f, ok := FamilyOf(chain)
	if !ok {
		return [20]byte{}, fmt.Errorf("%w: unknown chain %q", ErrInvalidAddress, chain)
	}
	if f == Tron {
		return parseTron(s)
	}
	return parseEVM(s)
}

func parseEVM(s string) ([20]byte, error) {
	if !common.IsHexAddress(s) || !strings.HasPrefix(s, "0x") {
		return [20]byte{}, fmt.Errorf("%w: want 0x and 40 hexadecimal digits", ErrInvalidAddress)
	}
	a := common.HexToAddress(s)
	if a.Hex() != s {
		return [20]byte{}, fmt.Errorf("%w: the EIP-55 checksum (the letters' case) does not match", ErrInvalidAddress)
	}
	return a, nil
}

func parseTron(s string) ([20]byte, error) {
	b, version, err := base58.CheckDecode(s)
	if err != nil || version != tronPrefix || len(b) != 20 {
		return [20]byte{}, fmt.Errorf("%w: want a TRON base58check address (T…)", ErrInvalidAddress)
	}
	return [20]byte(b), nil
}
