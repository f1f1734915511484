package wallet_test

import (
	"fmt"

	"github.com/predictkit/predictkit/wallet"
)

func Example() {
	// The operator's wallet exports an extended public key; the server
	// derives each user's address from it and never sees a private key.
	evm, err := wallet.NewDeriver(wallet.EVM, "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt")
	if err != nil {
		fmt.Println(err)
		return
	}
	addr, _ := evm.Address(1)
	fmt.Println(addr)

	// A withdrawal address is checked before any money moves.
	_, err = wallet.Parse(wallet.Ethereum, "0x6fac4d18c912343bf86fa7049364dd4e424ab9c0")
	fmt.Println(err)
	// Output:
	// 0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0
	// wallet: invalid address: the EIP-55 checksum (the letters' case) does not match
}
