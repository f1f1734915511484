package evmtest_test

import (
	"math/big"
	"testing"

	"github.com/predictkit/predictkit/internal/evmtest"
)

// BenchmarkStart is what a test pays for a chain of its own, stopping it
// included.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		t := &exampleT{ctx: b.Context()}
		evmtest.Start(t, evmtest.Options{})
		t.finish()
	}
}

// BenchmarkCommit is a block holding one token transfer.
func BenchmarkCommit(b *testing.B) {
	chain := evmtest.Start(b, evmtest.Options{})
	token := chain.DeployToken(b, 6)
	from := chain.Accounts[0]
	chain.Mint(b, token, from.Address, big.NewInt(1e15))
	chain.Commit(b)
	to := evmtest.NewAccount(b).Address
	for b.Loop() {
		chain.Transfer(b, token, from, to, big.NewInt(1))
		chain.Commit(b)
	}
}

// BenchmarkMine is an empty block (a confirmation).
func BenchmarkMine(b *testing.B) {
	chain := evmtest.Start(b, evmtest.Options{})
	for b.Loop() {
		chain.Mine(b, 1)
	}
}
