package evmtest_test

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/predictkit/predictkit/internal/evmtest"
)

// failure runs f with a stand-in t and returns the message it failed the
// test with ("" when it did not).
func failure(t *testing.T, f func(t *exampleT)) (msg string) {
	t.Helper()
	ft := &exampleT{ctx: t.Context()}
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f(ft)
	return ""
}

func TestHelpersFailTheTest(t *testing.T) {
	chain := evmtest.Start(t, evmtest.Options{})
	token := chain.DeployToken(t, 6)
	poor := chain.Accounts[0] // holds ether but no tokens
	cases := []struct {
		name string
		do   func(t *exampleT)
		want string
	}{
		{
			name: "a transfer of more than the sender holds fails the commit",
			do: func(t *exampleT) {
				chain.Transfer(t, token, poor, chain.Accounts[1].Address, big.NewInt(1))
				chain.Commit(t)
			},
			want: "reverted",
		},
		{
			name: "a transfer from an account without ether is refused",
			do: func(t *exampleT) {
				chain.Transfer(t, token, evmtest.NewAccount(t), poor.Address, big.NewInt(1))
			},
			want: "send",
		},
		{
			name: "a fork with transactions waiting is refused",
			do: func(t *exampleT) {
				chain.Mint(t, token, poor.Address, big.NewInt(1))
				defer chain.Commit(t)
				chain.Fork(t, chain.BlockHash(t, 0))
			},
			want: "not committed",
		},
		{
			name: "a fork at an unknown block is refused",
			do:   func(t *exampleT) { chain.Fork(t, common.Hash{1}) },
			want: "parent not found",
		},
		{
			name: "resending a transaction the helpers never sent is refused",
			do:   func(t *exampleT) { chain.Resend(t, common.Hash{2}) },
			want: "no transaction",
		},
		{
			name: "asking for a block past the head is refused",
			do:   func(t *exampleT) { chain.BlockHash(t, chain.Head(t)+1) },
			want: "no block",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := failure(t, tc.do)
			if !strings.Contains(got, tc.want) {
				t.Errorf("failed with %q, want a failure saying %q", got, tc.want)
			}
		})
	}
	t.Run("the chain goes on after the refusals", func(t *testing.T) {
		chain.Mint(t, token, poor.Address, big.NewInt(3))
		chain.Commit(t)
		if got := chain.Balance(t, token, poor.Address); got.Int64() != 4 {
			t.Errorf("balance = %s, want 4 (the mint sent before the refused fork, and this one)", got)
		}
	})
}
