package evmtest

import (
	_ "embed"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// The ERC-20 token, compiled from contracts/Token.sol by contracts/compile.js
// (TestTokenBytecodeIsCurrent checks these are its output).
//
//go:generate node contracts/compile.js contracts
var (
	//go:embed contracts/Token.abi
	tokenABIJSON string
	//go:embed contracts/Token.bin
	tokenBin string

	tokenABI = mustABI(tokenABIJSON)
)

// TransferTopic is the first topic of an ERC-20 Transfer log:
// keccak256("Transfer(address,address,uint256)"). The sender and the
// recipient are the second and third topics; the amount is the data.
var TransferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

// Gas limits for the token's transactions: fixed, not estimated, since an
// estimate runs against the last block and would fail for a transfer of
// tokens minted in the same, not yet sealed, block. Generous: the
// development chain runs every fork go-ethereum knows, whose storage costs
// are above mainnet's (a first mint takes about 250,000 gas); what is not
// used is not paid.
const (
	deployGas   = 5_000_000
	tokenTxGas  = 1_000_000
	deployName  = "Test Token"
	deploySymbl = "TEST"
)

func mustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(fmt.Sprintf("evmtest: contracts/Token.abi: %v", err))
	}
	return a
}

// DeployToken deploys a token (name "Test Token", symbol "TEST") with the
// given decimals from the deployer, seals the block holding it, and returns
// its address. Only the deployer may Mint.
func (c *Chain) DeployToken(t testing.TB, decimals uint8) common.Address {
	t.Helper()
	args, err := tokenABI.Pack("", deployName, deploySymbl, decimals)
	if err != nil {
		t.Fatalf("evmtest: deploy token: pack constructor arguments: %v", err)
	}
	code := common.FromHex(strings.TrimSpace(tokenBin))
	c.mu.Lock()
	defer c.mu.Unlock()
	nonce, ok := c.nonces[c.Deployer.Address]
	if !ok {
		cx, cancel := ctx(t)
		nonce, err = c.Client.PendingNonceAt(cx, c.Deployer.Address)
		cancel()
		if err != nil {
			t.Fatalf("evmtest: deploy token: nonce: %v", err)
		}
		c.nonces[c.Deployer.Address] = nonce
	}
	addr := crypto.CreateAddress(c.Deployer.Address, nonce)
	c.send(t, c.Deployer.Key, nil, nil, deployGas, append(code, args...), "deploying a token")
	c.commit(t)
	cx, cancel := ctx(t)
	defer cancel()
	if got, err := c.Client.CodeAt(cx, addr, nil); err != nil || len(got) == 0 {
		t.Fatalf("evmtest: deploy token: no code at %s (%v)", addr, err)
	}
	return addr
}

// Mint sends the deployer's transaction creating amount (in the token's
// smallest units) for the address: a Transfer log from the zero address.
// Commit mines it. It returns the transaction's hash.
func (c *Chain) Mint(t testing.TB, token, to common.Address, amount *big.Int) common.Hash {
	t.Helper()
	data, err := tokenABI.Pack("mint", to, amount)
	if err != nil {
		t.Fatalf("evmtest: mint: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.send(t, c.Deployer.Key, &token, nil, tokenTxGas, data, fmt.Sprintf("minting %s for %s", amount, to))
}

// Transfer sends from's transaction moving amount (in the token's smallest
// units) to the address: a Transfer log from from's address. Commit mines
// it, and fails the test if from did not hold the amount then. It returns
// the transaction's hash.
func (c *Chain) Transfer(t testing.TB, token common.Address, from Account, to common.Address, amount *big.Int) common.Hash {
	t.Helper()
	data, err := tokenABI.Pack("transfer", to, amount)
	if err != nil {
		t.Fatalf("evmtest: transfer: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.send(t, from.Key, &token, nil, tokenTxGas, data, fmt.Sprintf("transferring %s from %s to %s", amount, from.Address, to))
}

// Balance is the address's token balance at the head, in the token's
// smallest units.
func (c *Chain) Balance(t testing.TB, token, of common.Address) *big.Int {
	t.Helper()
	data, err := tokenABI.Pack("balanceOf", of)
	if err != nil {
		t.Fatalf("evmtest: balance: %v", err)
	}
	cx, cancel := ctx(t)
	defer cancel()
	out, err := c.Client.CallContract(cx, ethereum.CallMsg{To: &token, Data: data}, nil)
	if err != nil {
		t.Fatalf("evmtest: balance of %s: %v", of, err)
	}
	vals, err := tokenABI.Unpack("balanceOf", out)
	if err != nil || len(vals) != 1 {
		t.Fatalf("evmtest: balance of %s: unpack %x: %v", of, out, err)
	}
	return vals[0].(*big.Int)
}

// Units is amount whole tokens in the smallest units of a token with the
// given decimals: Units(12, 6) is 12,000,000.
func Units(amount int64, decimals uint8) *big.Int {
	return new(big.Int).Mul(big.NewInt(amount), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
}
