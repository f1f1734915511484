package deposit

import (
	"context"
	"fmt"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// TransferTopic is the first topic of an ERC-20 (and TRC-20) Transfer
// log: keccak256("Transfer(address,address,uint256)").
var TransferTopic = common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")

// Node is what a Watcher asks a chain's node.
type Node interface {
	// BlockNumber is the number of the chain's head (eth_blockNumber).
	BlockNumber(ctx context.Context) (uint64, error)
	// BlockHash is the hash of block n as the node has it
	// (eth_getBlockByNumber); an error when the node has no block n.
	BlockHash(ctx context.Context, n uint64) (common.Hash, error)
	// TransferLogs are token's Transfer logs in blocks from to to
	// (eth_getLogs).
	TransferLogs(ctx context.Context, from, to uint64, token common.Address) ([]types.Log, error)
}

// RPC is a Node over JSON-RPC: the eth_blockNumber, eth_getBlockByNumber
// and eth_getLogs methods, which Ethereum's, BSC's and Polygon's nodes
// serve, and TRON's nodes too (java-tron's JSON-RPC, with 20-byte hex
// addresses).
type RPC struct {
	url string

	mu sync.Mutex
	c  *rpc.Client
	ec *ethclient.Client
}

// Dial connects to the JSON-RPC endpoint at url (http, https, ws or wss).
func Dial(ctx context.Context, url string) (*RPC, error) {
	r := &RPC{url: url}
	if _, _, err := r.client(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// NewRPC returns a Node of the JSON-RPC endpoint at url that connects on
// first use, and again on the next call after a connection failed: a
// server starts while a node is down, and a watcher reports and retries.
func NewRPC(url string) *RPC { return &RPC{url: url} }

// client returns the connection, made on first use.
func (r *RPC) client(ctx context.Context) (*rpc.Client, *ethclient.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c == nil {
		c, err := rpc.DialContext(ctx, r.url)
		if err != nil {
			return nil, nil, fmt.Errorf("connect: %w", err)
		}
		r.c, r.ec = c, ethclient.NewClient(c)
	}
	return r.c, r.ec, nil
}

// Close closes the connection.
func (r *RPC) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c != nil {
		r.c.Close()
		r.c, r.ec = nil, nil
	}
}

// BlockNumber implements Node.
func (r *RPC) BlockNumber(ctx context.Context) (uint64, error) {
	_, ec, err := r.client(ctx)
	if err != nil {
		return 0, err
	}
	return ec.BlockNumber(ctx)
}

// BlockHash implements Node. It reads only the block's number and hash,
// as the node gives them: a TRON block's hash is not the hash of an
// Ethereum header built from its fields, so the header is not rebuilt.
func (r *RPC) BlockHash(ctx context.Context, n uint64) (common.Hash, error) {
	var b *struct {
		Number *hexutil.Big `json:"number"`
		Hash   *common.Hash `json:"hash"`
	}
	c, _, err := r.client(ctx)
	if err != nil {
		return common.Hash{}, err
	}
	if err := c.CallContext(ctx, &b, "eth_getBlockByNumber", hexutil.EncodeBig(new(big.Int).SetUint64(n)), false); err != nil {
		return common.Hash{}, err
	}
	switch {
	case b == nil:
		return common.Hash{}, fmt.Errorf("block %d: %w", n, ethereum.NotFound)
	case b.Number == nil || b.Hash == nil:
		return common.Hash{}, fmt.Errorf("block %d: the node's answer has no number or hash", n)
	case (*big.Int)(b.Number).Cmp(new(big.Int).SetUint64(n)) != 0:
		return common.Hash{}, fmt.Errorf("block %d: the node answered block %s", n, (*big.Int)(b.Number))
	}
	return *b.Hash, nil
}

// TransferLogs implements Node.
func (r *RPC) TransferLogs(ctx context.Context, from, to uint64, token common.Address) ([]types.Log, error) {
	_, ec, err := r.client(ctx)
	if err != nil {
		return nil, err
	}
	return ec.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
		Addresses: []common.Address{token}, Topics: [][]common.Hash{{TransferTopic}},
	})
}
