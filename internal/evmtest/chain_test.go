package evmtest_test

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/predictkit/predictkit/internal/evmtest"
)

// dial connects a client of its own to the chain's URL, as the code under
// test does.
func dial(t *testing.T, url string) *ethclient.Client {
	t.Helper()
	c, err := ethclient.Dial(url)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(c.Close)
	return c
}

// transferLogs is what eth_getLogs answers for the token's Transfer logs in
// blocks from..to.
func transferLogs(t *testing.T, c *ethclient.Client, token common.Address, from, to uint64) []types.Log {
	t.Helper()
	logs, err := c.FilterLogs(t.Context(), ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(from),
		ToBlock:   new(big.Int).SetUint64(to),
		Addresses: []common.Address{token},
		Topics:    [][]common.Hash{{evmtest.TransferTopic}},
	})
	if err != nil {
		t.Fatalf("eth_getLogs %d..%d: %v", from, to, err)
	}
	return logs
}

func topicAddress(h common.Hash) common.Address { return common.BytesToAddress(h.Bytes()) }

func TestTransferLogOverURL(t *testing.T) {
	chain := evmtest.Start(t, evmtest.Options{ChainID: 137})
	rpc := dial(t, chain.URL)

	id, err := rpc.ChainID(t.Context())
	if err != nil || id.Int64() != 137 {
		t.Fatalf("eth_chainId = %v, %v; want 137", id, err)
	}
	token := chain.DeployToken(t, 6)
	sender := chain.Accounts[0]
	chain.Mint(t, token, sender.Address, evmtest.Units(100, 6))
	mintBlock := chain.Commit(t)
	recipient := evmtest.NewAccount(t).Address
	amount := big.NewInt(12_500_000) // 12.5 tokens
	tx := chain.Transfer(t, token, sender, recipient, amount)
	transferBlock := chain.Commit(t)
	head := chain.Head(t)

	n, err := rpc.BlockNumber(t.Context())
	if err != nil || n != head {
		t.Fatalf("eth_blockNumber = %d, %v; want %d", n, err, head)
	}
	header, err := rpc.HeaderByNumber(t.Context(), new(big.Int).SetUint64(head))
	if err != nil || header.Hash() != transferBlock {
		t.Fatalf("eth_getBlockByNumber(%d) = %v, %v; want block %s", head, header, err, transferBlock)
	}

	logs := transferLogs(t, rpc, token, 0, head)
	if len(logs) != 2 {
		t.Fatalf("eth_getLogs found %d Transfer logs, want 2 (the mint and the transfer): %+v", len(logs), logs)
	}
	cases := []struct {
		name     string
		log      types.Log
		from, to common.Address
		amount   *big.Int
		block    common.Hash
	}{
		{"the mint is a transfer from the zero address", logs[0], common.Address{}, sender.Address, evmtest.Units(100, 6), mintBlock},
		{"the transfer names its sender and recipient", logs[1], sender.Address, recipient, amount, transferBlock},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.log
			if len(l.Topics) != 3 || l.Topics[0] != evmtest.TransferTopic {
				t.Fatalf("topics = %v, want Transfer and two addresses", l.Topics)
			}
			if got := topicAddress(l.Topics[1]); got != tc.from {
				t.Errorf("from = %s, want %s", got, tc.from)
			}
			if got := topicAddress(l.Topics[2]); got != tc.to {
				t.Errorf("to = %s, want %s", got, tc.to)
			}
			if got := new(big.Int).SetBytes(l.Data); got.Cmp(tc.amount) != 0 {
				t.Errorf("amount = %s, want %s", got, tc.amount)
			}
			if l.BlockHash != tc.block || l.Address != token || l.Removed {
				t.Errorf("log in block %s of %s (removed %v), want block %s of %s", l.BlockHash, l.Address, l.Removed, tc.block, token)
			}
		})
	}
	if logs[1].TxHash != tx {
		t.Errorf("transfer log's transaction = %s, want %s", logs[1].TxHash, tx)
	}
	if got := chain.Balance(t, token, recipient); got.Cmp(amount) != 0 {
		t.Errorf("recipient's balance = %s, want %s", got, amount)
	}
	if got, want := chain.Balance(t, token, sender.Address), big.NewInt(87_500_000); got.Cmp(want) != 0 {
		t.Errorf("sender's balance = %s, want %s", got, want)
	}
}

func TestForkDropsTransfer(t *testing.T) {
	chain := evmtest.Start(t, evmtest.Options{})
	rpc := dial(t, chain.URL)
	token := chain.DeployToken(t, 18)
	sender := chain.Accounts[1]
	chain.Mint(t, token, sender.Address, evmtest.Units(5, 18))
	forkPoint := chain.Commit(t)
	recipient := evmtest.NewAccount(t).Address
	tx := chain.Transfer(t, token, sender, recipient, evmtest.Units(2, 18))
	oldBlock := chain.Commit(t)
	height := chain.Head(t)
	chain.Mine(t, 2) // two confirmations on the old chain
	if logs := transferLogs(t, rpc, token, height, height); len(logs) != 1 || logs[0].TxHash != tx {
		t.Fatalf("before the fork, block %d's Transfer logs are %+v, want the transfer %s", height, logs, tx)
	}

	chain.Fork(t, forkPoint)
	t.Run("the head goes back to the fork point", func(t *testing.T) {
		n, err := rpc.BlockNumber(t.Context())
		if err != nil || n != height-1 {
			t.Errorf("eth_blockNumber = %d, %v; want %d", n, err, height-1)
		}
	})
	chain.Mine(t, 4)
	t.Run("the new chain is longer and has another block at the transfer's height", func(t *testing.T) {
		if head := chain.Head(t); head != height+3 {
			t.Errorf("head = %d, want %d", head, height+3)
		}
		header, err := rpc.HeaderByNumber(t.Context(), new(big.Int).SetUint64(height))
		if err != nil {
			t.Fatalf("eth_getBlockByNumber(%d): %v", height, err)
		}
		if header.Hash() == oldBlock || header.ParentHash != forkPoint {
			t.Errorf("block %d is %s with parent %s; want a new block on %s", height, header.Hash(), header.ParentHash, forkPoint)
		}
	})
	t.Run("the transfer's log is gone from that height and from the chain", func(t *testing.T) {
		if logs := transferLogs(t, rpc, token, height, chain.Head(t)); len(logs) != 0 {
			t.Errorf("after the fork, Transfer logs from block %d are %+v, want none", height, logs)
		}
		if _, err := rpc.TransactionReceipt(t.Context(), tx); !errors.Is(err, ethereum.NotFound) {
			t.Errorf("receipt of the dropped transfer: err = %v, want not found", err)
		}
		if got := chain.Balance(t, token, recipient); got.Sign() != 0 {
			t.Errorf("recipient's balance = %s, want 0", got)
		}
	})
	t.Run("the same transaction sent again lands in a later block", func(t *testing.T) {
		chain.Resend(t, tx)
		block := chain.Commit(t)
		head := chain.Head(t)
		logs := transferLogs(t, rpc, token, height, head)
		if len(logs) != 1 || logs[0].TxHash != tx || logs[0].BlockNumber != head || logs[0].BlockHash != block {
			t.Errorf("Transfer logs = %+v, want the transfer %s in block %d (%s)", logs, tx, head, block)
		}
	})
}

func TestClientsByURLSeeTheSameHead(t *testing.T) {
	chain := evmtest.Start(t, evmtest.Options{})
	clients := []*ethclient.Client{dial(t, chain.URL), dial(t, chain.URL)}
	check := func(t *testing.T, want uint64) {
		t.Helper()
		for i, c := range clients {
			n, err := c.BlockNumber(t.Context())
			if err != nil || n != want {
				t.Errorf("client %d: eth_blockNumber = %d, %v; want %d", i, n, err, want)
			}
			h, err := c.HeaderByNumber(t.Context(), nil)
			if err != nil || h.Hash() != chain.BlockHash(t, want) {
				t.Errorf("client %d: latest block = %v, %v; want %s", i, h, err, chain.BlockHash(t, want))
			}
		}
	}
	t.Run("a new chain holds only its genesis block", func(t *testing.T) { check(t, 0) })
	chain.Mine(t, 3)
	t.Run("both see the mined blocks", func(t *testing.T) { check(t, 3) })
	chain.Fork(t, chain.BlockHash(t, 1))
	t.Run("both see the head go back on a fork", func(t *testing.T) { check(t, 1) })
}

func TestFundedAccounts(t *testing.T) {
	chain := evmtest.Start(t, evmtest.Options{Accounts: 2})
	if len(chain.Accounts) != 2 {
		t.Fatalf("%d accounts, want 2", len(chain.Accounts))
	}
	fresh := evmtest.NewAccount(t)
	chain.Fund(t, fresh.Address, big.NewInt(1e18))
	chain.Commit(t)
	ctx := context.Background()
	for _, a := range append(chain.Accounts, chain.Deployer, fresh) {
		bal, err := chain.Client.BalanceAt(ctx, a.Address, nil)
		if err != nil || bal.Sign() <= 0 {
			t.Errorf("ether of %s = %v, %v; want some", a.Address, bal, err)
		}
	}
	// The funded account can pay for its own token transfer.
	token := chain.DeployToken(t, 0)
	chain.Mint(t, token, fresh.Address, big.NewInt(7))
	chain.Commit(t)
	chain.Transfer(t, token, fresh, chain.Accounts[0].Address, big.NewInt(7))
	chain.Commit(t)
	if got := chain.Balance(t, token, chain.Accounts[0].Address); got.Int64() != 7 {
		t.Errorf("balance = %s, want 7", got)
	}
}

func TestStoppedChainRefusesConnections(t *testing.T) {
	chain := evmtest.Start(t, evmtest.Options{})
	rpc := dial(t, chain.URL)
	if _, err := rpc.BlockNumber(t.Context()); err != nil {
		t.Fatalf("eth_blockNumber before Stop: %v", err)
	}
	chain.Stop(t)
	chain.Stop(t) // again: nothing
	if n, err := rpc.BlockNumber(t.Context()); err == nil {
		t.Errorf("eth_blockNumber after Stop = %d, want an error", n)
	}
}
