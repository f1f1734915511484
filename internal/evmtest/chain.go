// Package evmtest runs a real EVM chain inside a test: go-ethereum's own
// node and block chain, sealed on demand by its simulated beacon (what
// go-ethereum's ethclient/simulated backend does), serving JSON-RPC over
// HTTP on a random port of 127.0.0.1. Code under test reaches it by URL,
// with ethclient.Dial, exactly as it reaches a production node.
//
// Blocks are made only when a test asks: [Chain.Commit] seals one holding
// the transactions sent since the last one, [Chain.Mine] seals empty ones
// (confirmations), and [Chain.Fork] moves the head back to an earlier block
// so that the blocks mined next replace the ones after it (a
// reorganisation). The chain has a funded deployer and funded accounts, and
// deploys an ERC-20 token ([Chain.DeployToken], compiled from
// contracts/Token.sol) whose Mint and Transfer make real Transfer logs.
//
// The package is for tests only: nothing outside _test.go files imports it.
package evmtest

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

// DefaultChainID is the chain id of a chain started without
// Options.ChainID: go-ethereum's development chain id.
const DefaultChainID = 1337

// DefaultAccounts is how many funded accounts a chain has when
// Options.Accounts is 0.
const DefaultAccounts = 3

// callTimeout bounds each JSON-RPC call the helpers make, so that a wedged
// chain fails the test instead of hanging it.
const callTimeout = 30 * time.Second

// Options tune a chain; the zero value is a good default.
type Options struct {
	// ChainID is what eth_chainId answers and what transactions are signed
	// for (EIP-155); 0 means DefaultChainID. Use wallet.Number(chain) to
	// pretend to be a given chain.
	ChainID int64
	// Accounts is how many funded accounts (besides the deployer) the chain
	// starts with; 0 means DefaultAccounts.
	Accounts int
}

// Account is a key with its address.
type Account struct {
	Key     *ecdsa.PrivateKey
	Address common.Address
}

// NewAccount makes a fresh key. The account holds no ether: to send
// transactions from it, Fund it (or use one of Chain.Accounts).
func NewAccount(t testing.TB) Account {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatalf("evmtest: generate key: %v", err)
	}
	return Account{Key: key, Address: crypto.PubkeyToAddress(key.PublicKey)}
}

// Chain is a running test chain. Its methods take the calling test's t (a
// Chain may be shared by subtests) and fail it on any error. They are safe
// to call while other goroutines read the chain over RPC.
type Chain struct {
	// URL is the HTTP JSON-RPC endpoint, http://127.0.0.1:PORT, serving
	// the eth, net and web3 namespaces.
	URL string
	// Client is an ethclient connected to URL.
	Client *ethclient.Client
	// ChainID is the chain's EIP-155 id.
	ChainID *big.Int
	// Deployer deploys the tokens and is the only one who may mint them; it
	// holds plenty of ether.
	Deployer Account
	// Accounts hold plenty of ether from the genesis block on, to send
	// tokens from.
	Accounts []Account

	node    *node.Node
	backend *eth.Ethereum
	beacon  *catalyst.SimulatedBeacon
	signer  types.Signer

	stop   sync.Once
	mu     sync.Mutex
	nonces map[common.Address]uint64          // next nonce of senders since the last block
	sent   []sentTx                           // sent since the last block, checked when it is sealed
	signed map[common.Hash]*types.Transaction // everything sent, for Resend
}

type sentTx struct {
	hash common.Hash
	what string
}

// Start starts a chain for the test and stops it when the test ends. The
// chain holds only its genesis block (number 0) until the test mines.
func Start(t testing.TB, opts Options) *Chain {
	t.Helper()
	chainID := big.NewInt(DefaultChainID)
	if opts.ChainID != 0 {
		chainID = big.NewInt(opts.ChainID)
	}
	n := opts.Accounts
	if n == 0 {
		n = DefaultAccounts
	}
	c := &Chain{
		ChainID:  chainID,
		Deployer: NewAccount(t),
		signer:   types.LatestSignerForChainID(chainID),
		nonces:   map[common.Address]uint64{},
		signed:   map[common.Hash]*types.Transaction{},
	}
	// 1,000,000 ether each: no test runs out.
	rich := new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(params.Ether))
	alloc := core.SystemContractAllocs() // the dev chain's forks call into these
	alloc[c.Deployer.Address] = types.Account{Balance: rich}
	for range n {
		a := NewAccount(t)
		c.Accounts = append(c.Accounts, a)
		alloc[a.Address] = types.Account{Balance: rich}
	}

	// What ethclient/simulated.NewBackend does, plus an HTTP endpoint on a
	// port the kernel picks: simulated.Backend keeps its node to itself, and
	// only the node knows which port it bound.
	nodeConf := node.DefaultConfig
	nodeConf.DataDir = "" // in memory
	nodeConf.P2P = p2p.Config{NoDiscovery: true}
	nodeConf.HTTPHost = "127.0.0.1"
	nodeConf.HTTPPort = 0
	nodeConf.HTTPModules = []string{"eth", "net", "web3"}
	nodeConf.AuthPort = 0
	stack, err := node.New(&nodeConf)
	if err != nil {
		t.Fatalf("evmtest: new node: %v", err)
	}
	genesisConf := *params.AllDevChainProtocolChanges
	genesisConf.ChainID = chainID
	ethConf := ethconfig.Defaults
	ethConf.Genesis = &core.Genesis{Config: &genesisConf, GasLimit: ethconfig.Defaults.Miner.GasCeil, Alloc: alloc}
	ethConf.NetworkId = chainID.Uint64()
	ethConf.SyncMode = ethconfig.FullSync
	ethConf.TxPool.NoLocals = true
	ethConf.LogNoHistory = true // no background log indexer: eth_getLogs scans blocks
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		stack.Close()
		t.Fatalf("evmtest: new ethereum service: %v", err)
	}
	stack.RegisterAPIs([]rpc.API{{
		Namespace: "eth",
		Service:   filters.NewFilterAPI(filters.NewFilterSystem(backend.APIBackend, filters.Config{})),
	}})
	if err := stack.Start(); err != nil {
		stack.Close()
		t.Fatalf("evmtest: start node: %v", err)
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend)
	if err != nil {
		stack.Close()
		t.Fatalf("evmtest: simulated beacon: %v", err)
	}
	c.node, c.backend, c.beacon = stack, backend, beacon
	c.URL = stack.HTTPEndpoint()
	t.Cleanup(func() { c.Stop(t) })
	if !strings.HasPrefix(c.URL, "http://127.0.0.1:") {
		t.Fatalf("evmtest: the node serves HTTP at %q, not on 127.0.0.1", c.URL)
	}
	c.Client, err = ethclient.Dial(c.URL)
	if err != nil {
		t.Fatalf("evmtest: dial %s: %v", c.URL, err)
	}
	return c
}

// Stop stops the chain: its URL refuses connections from then on, as a
// node that went down does. The test's end stops it too; stopping twice
// does nothing.
func (c *Chain) Stop(t testing.TB) {
	t.Helper()
	c.stop.Do(func() {
		if c.Client != nil {
			c.Client.Close()
		}
		if err := c.beacon.Stop(); err != nil {
			t.Errorf("evmtest: stop beacon: %v", err)
		}
		if err := c.node.Close(); err != nil {
			t.Errorf("evmtest: close node: %v", err)
		}
	})
}

func ctx(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), callTimeout)
}

// Commit seals a block holding every transaction sent since the last one
// and returns its hash. It fails the test if any of them is not in the
// block or reverted (its message says which helper sent it).
func (c *Chain) Commit(t testing.TB) common.Hash {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commit(t)
}

func (c *Chain) commit(t testing.TB) common.Hash {
	t.Helper()
	before := c.backend.BlockChain().CurrentBlock().Number.Uint64()
	hash := c.beacon.Commit()
	head := c.backend.BlockChain().CurrentBlock()
	if head.Number.Uint64() != before+1 || head.Hash() != hash {
		t.Fatalf("evmtest: sealing a block failed: the head is still block %d", head.Number.Uint64())
	}
	sent := c.sent
	c.sent = nil
	clear(c.nonces)
	for _, s := range sent {
		r, err := c.receipt(t, s.hash)
		if err != nil {
			t.Fatalf("evmtest: %s (transaction %s) is not in block %d: %v", s.what, s.hash, head.Number.Uint64(), err)
		}
		if r.BlockHash != hash {
			t.Fatalf("evmtest: %s (transaction %s) is in block %s, not in the new block %s", s.what, s.hash, r.BlockHash, hash)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("evmtest: %s (transaction %s) reverted", s.what, s.hash)
		}
	}
	return hash
}

func (c *Chain) receipt(t testing.TB, hash common.Hash) (*types.Receipt, error) {
	cx, cancel := ctx(t)
	defer cancel()
	return c.Client.TransactionReceipt(cx, hash)
}

// Mine seals n empty blocks (n confirmations more for what is already
// mined) and returns the hash of the last one. Transactions sent but not
// yet committed go into the first of them, checked as Commit checks them.
func (c *Chain) Mine(t testing.TB, n int) common.Hash {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var hash common.Hash
	for range n {
		hash = c.commit(t)
	}
	return hash
}

// Head is the number of the newest block of the canonical chain.
func (c *Chain) Head(t testing.TB) uint64 {
	t.Helper()
	return c.backend.BlockChain().CurrentBlock().Number.Uint64()
}

// BlockHash is the hash of the canonical chain's block number n.
func (c *Chain) BlockHash(t testing.TB, n uint64) common.Hash {
	t.Helper()
	h := c.backend.BlockChain().GetCanonicalHash(n)
	if h == (common.Hash{}) {
		t.Fatalf("evmtest: no block %d (the head is %d)", n, c.Head(t))
	}
	return h
}

// Fork makes the block parent the head of the canonical chain: the blocks
// after it stop being canonical at once (eth_blockNumber goes back to
// parent's number), and the blocks mined next build on parent, so once as
// many are mined the old blocks' numbers name new blocks with new hashes,
// as in a reorganisation. The transactions of the dropped blocks are
// dropped too (they are in no block of the new chain); send one again with
// Resend to have it mined in a later block. Fork fails the test if
// transactions are waiting to be committed.
func (c *Chain) Fork(t testing.TB, parent common.Hash) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sent) > 0 {
		t.Fatalf("evmtest: fork with %d transactions not committed (%s first)", len(c.sent), c.sent[0].what)
	}
	if err := c.beacon.Fork(parent); err != nil {
		t.Fatalf("evmtest: fork at %s: %v", parent, err)
	}
	// The pool takes the dropped blocks' transactions back in; make it
	// finish that, then forget them, so that they stay dropped.
	pool := c.backend.TxPool()
	if err := pool.Sync(); err != nil {
		t.Fatalf("evmtest: fork: sync the transaction pool: %v", err)
	}
	pool.Clear()
	clear(c.nonces)
	if head := c.backend.BlockChain().CurrentBlock().Hash(); head != parent {
		t.Fatalf("evmtest: fork at %s left the head at %s", parent, head)
	}
}

// Resend sends again a transaction that an earlier helper sent, signed as
// it was (same hash), for instance one dropped by Fork; Commit mines it.
func (c *Chain) Resend(t testing.TB, hash common.Hash) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	tx, ok := c.signed[hash]
	if !ok {
		t.Fatalf("evmtest: resend: no transaction %s was sent by this chain's helpers", hash)
	}
	cx, cancel := ctx(t)
	defer cancel()
	if err := c.Client.SendTransaction(cx, tx); err != nil {
		t.Fatalf("evmtest: resend %s: %v", hash, err)
	}
	c.sent = append(c.sent, sentTx{hash: hash, what: "the resent transaction"})
}

// fundGas pays for an ether transfer to a new account on any fork.
const fundGas = 100_000

// Fund sends wei from the deployer to the address; Commit mines it.
func (c *Chain) Fund(t testing.TB, to common.Address, wei *big.Int) common.Hash {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.send(t, c.Deployer.Key, &to, wei, fundGas, nil, fmt.Sprintf("funding %s with %s wei", to, wei))
}

// send signs and sends a transaction (to == nil creates a contract) and
// records it for the next commit. c.mu must be held.
func (c *Chain) send(t testing.TB, key *ecdsa.PrivateKey, to *common.Address, value *big.Int, gas uint64, data []byte, what string) common.Hash {
	t.Helper()
	from := crypto.PubkeyToAddress(key.PublicKey)
	cx, cancel := ctx(t)
	defer cancel()
	nonce, ok := c.nonces[from]
	if !ok {
		var err error
		nonce, err = c.Client.PendingNonceAt(cx, from)
		if err != nil {
			t.Fatalf("evmtest: %s: nonce of %s: %v", what, from, err)
		}
	}
	head, err := c.Client.HeaderByNumber(cx, nil)
	if err != nil {
		t.Fatalf("evmtest: %s: head: %v", what, err)
	}
	tip := big.NewInt(params.GWei)
	// Twice the base fee: room for it to rise before the block is sealed.
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	if value == nil {
		value = new(big.Int)
	}
	tx, err := types.SignNewTx(key, c.signer, &types.DynamicFeeTx{
		ChainID:   c.ChainID,
		Nonce:     nonce,
		GasTipCap: tip,
		GasFeeCap: feeCap,
		Gas:       gas,
		To:        to,
		Value:     value,
		Data:      data,
	})
	if err != nil {
		t.Fatalf("evmtest: %s: sign: %v", what, err)
	}
	if err := c.Client.SendTransaction(cx, tx); err != nil {
		t.Fatalf("evmtest: %s: send: %v", what, err)
	}
	c.nonces[from] = nonce + 1
	c.sent = append(c.sent, sentTx{hash: tx.Hash(), what: what})
	c.signed[tx.Hash()] = tx
	return tx.Hash()
}
