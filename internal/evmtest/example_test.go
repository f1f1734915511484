package evmtest_test

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/predictkit/predictkit/internal/evmtest"
)

// exampleT stands in for the *testing.T a real test passes: examples get
// none. It implements what evmtest calls; a failure panics, failing the
// example.
type exampleT struct {
	testing.TB
	ctx      context.Context
	cleanups []func()
}

func (t *exampleT) Helper()                           {}
func (t *exampleT) Context() context.Context          { return t.ctx }
func (t *exampleT) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (t *exampleT) finish() {
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
}

// A deposit watcher's test: a token on a test chain, a transfer to a
// deposit address, and the watcher's view of it through the chain's URL.
func Example() {
	t := &exampleT{ctx: context.Background()} // in a test: the test's t
	defer t.finish()

	chain := evmtest.Start(t, evmtest.Options{ChainID: 56})
	token := chain.DeployToken(t, 18)
	payer := chain.Accounts[0]
	chain.Mint(t, token, payer.Address, evmtest.Units(100, 18))
	chain.Commit(t)
	deposit := common.HexToAddress("0x00000000000000000000000000000000000000d1")
	chain.Transfer(t, token, payer, deposit, evmtest.Units(25, 18))
	chain.Commit(t)
	chain.Mine(t, 3) // three confirmations

	// What the code under test does, given chain.URL as the node's address.
	client, err := ethclient.Dial(chain.URL)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	head, _ := client.BlockNumber(t.ctx)
	logs, err := client.FilterLogs(t.ctx, ethereum.FilterQuery{
		Addresses: []common.Address{token},
		Topics:    [][]common.Hash{{evmtest.TransferTopic}, nil, {common.BytesToHash(deposit.Bytes())}},
		FromBlock: big.NewInt(0),
	})
	if err != nil {
		panic(err)
	}
	for _, l := range logs {
		fmt.Printf("block %d of %d: %s to %s\n", l.BlockNumber, head, new(big.Int).SetBytes(l.Data), common.BytesToAddress(l.Topics[2].Bytes()).Hex())
	}
	// Output:
	// block 3 of 6: 25000000000000000000 to 0x00000000000000000000000000000000000000D1
}
