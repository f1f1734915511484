package deposit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/wallet"
)

// fakeChain is a chain's JSON-RPC scripted by a test: blocks of Transfer
// logs of one token, reorganisations, and a node that is down or answers
// garbage. It serves eth_blockNumber, eth_getBlockByNumber and
// eth_getLogs, as a node does.
type fakeChain struct {
	mu     sync.Mutex
	token  common.Address
	blocks []fakeBlock // by number; block 0 is the genesis
	fork   int         // reorganisations so far, salted into new hashes
	// down: every call answers 503; garbage names a lie the node tells.
	down    bool
	garbage string
	// twice: every log is delivered twice.
	twice bool
	calls map[string]int
	srv   *httptest.Server
}

type fakeBlock struct {
	hash common.Hash
	logs []fakeLog
}

type fakeLog struct {
	to    [20]byte
	units *big.Int
	tx    common.Hash
	index int
}

func newFakeChain(t testing.TB, token [20]byte) *fakeChain {
	c := &fakeChain{token: token, calls: map[string]int{}}
	c.blocks = []fakeBlock{{hash: c.hash(0)}}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *fakeChain) hash(n int) common.Hash {
	return crypto.Keccak256Hash([]byte(fmt.Sprintf("block %d fork %d", n, c.fork)))
}

// mine adds n blocks; the transfers go in the first, whose number it
// returns.
func (c *fakeChain) mine(n int, transfers ...fakeLog) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := len(c.blocks)
	for i := range n {
		num := len(c.blocks)
		b := fakeBlock{hash: c.hash(num)}
		if i == 0 {
			for j, tr := range transfers {
				tr.tx = crypto.Keccak256Hash([]byte(fmt.Sprintf("tx %d %d %d", num, j, c.fork)))
				tr.index = j
				b.logs = append(b.logs, tr)
			}
		}
		c.blocks = append(c.blocks, b)
	}
	return int64(first)
}

// reorg replaces the blocks from block on with as many empty ones of
// other hashes: their transfers are gone.
func (c *fakeChain) reorg(block int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fork++
	for n := int(block); n < len(c.blocks); n++ {
		c.blocks[n] = fakeBlock{hash: c.hash(n)}
	}
}

func (c *fakeChain) set(f func(c *fakeChain)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

func (c *fakeChain) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[method]
}

func (c *fakeChain) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[req.Method]++
	if c.down {
		http.Error(w, "node down", http.StatusServiceUnavailable)
		return
	}
	result, rpcErr := c.answer(req.Method, req.Params)
	out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rpcErr != "" {
		out["error"] = map[string]any{"code": -32000, "message": rpcErr}
	} else {
		out["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// answer is the result of method, or an error message. Callers hold mu.
func (c *fakeChain) answer(method string, params []json.RawMessage) (any, string) {
	head := len(c.blocks) - 1
	switch method {
	case "eth_blockNumber":
		if c.garbage == "head back" {
			head -= 5
		}
		return hexutil.Uint64(head), ""
	case "eth_getBlockByNumber":
		var tag string
		if len(params) < 1 || json.Unmarshal(params[0], &tag) != nil {
			return nil, "bad params"
		}
		n, err := hexutil.DecodeUint64(tag)
		if err != nil {
			return nil, "bad block number"
		}
		if n > uint64(head) {
			return nil, ""
		}
		return map[string]any{"number": hexutil.Uint64(n), "hash": c.blocks[n].hash}, ""
	case "eth_getLogs":
		var f struct {
			FromBlock, ToBlock string
			Address            []common.Address
			Topics             [][]common.Hash
		}
		if len(params) < 1 || json.Unmarshal(params[0], &f) != nil {
			return nil, "bad filter"
		}
		from, err1 := hexutil.DecodeUint64(f.FromBlock)
		to, err2 := hexutil.DecodeUint64(f.ToBlock)
		if err1 != nil || err2 != nil || to > uint64(head) || len(f.Address) != 1 || f.Address[0] != c.token ||
			len(f.Topics) != 1 || len(f.Topics[0]) != 1 || f.Topics[0][0] != deposit.TransferTopic {
			return nil, "unexpected filter"
		}
		logs := []map[string]any{}
		for n := from; n <= to; n++ {
			b := c.blocks[n]
			for _, l := range b.logs {
				m := c.logJSON(n, b.hash, l)
				logs = append(logs, m)
				if c.twice {
					logs = append(logs, m)
				}
			}
		}
		return logs, ""
	}
	return nil, "the method " + method + " does not exist"
}

func (c *fakeChain) logJSON(n uint64, hash common.Hash, l fakeLog) map[string]any {
	var to, from common.Hash
	copy(to[12:], l.to[:])
	from[31] = 7
	data := common.LeftPadBytes(l.units.Bytes(), 32)
	switch c.garbage {
	case "wrong hash":
		hash = crypto.Keccak256Hash(hash[:])
	case "short data":
		data = data[1:]
	}
	return map[string]any{"address": c.token, "topics": []common.Hash{deposit.TransferTopic, from, to},
		"data": hexutil.Bytes(data), "blockNumber": hexutil.Uint64(n), "blockHash": hash,
		"transactionHash": l.tx, "transactionIndex": "0x0", "logIndex": hexutil.Uint(l.index), "removed": false}
}

// book is an address book of a map.
type book map[string]int64

func (b book) AddressOwners(_ context.Context, _ wallet.Family, addresses []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, a := range addresses {
		if id, ok := b[a]; ok {
			out[a] = id
		}
	}
	return out, nil
}

// addr is a test address: 19 zero bytes and i.
func addr(i int) [20]byte {
	var a [20]byte
	a[18], a[19] = byte(i>>8), byte(i)
	return a
}

// tokens is n whole tokens of decimals in units.
func tokens(n string, decimals int) *big.Int {
	whole, frac, _ := strings.Cut(n, ".")
	v, _ := new(big.Int).SetString(whole+frac+strings.Repeat("0", decimals-len(frac)), 10)
	return v
}
