package deposit_test

import (
	"fmt"
	"math/big"

	"github.com/predictkit/predictkit/deposit"
)

// A transfer of 12.5 tokens of 6 decimals, at the operator's rate of 90
// RUB a token, is credited as 1,125 RUB; amounts round down to the
// kopeck.
func ExampleKopecks() {
	units := big.NewInt(12_500_000)
	kopecks, ok := deposit.Kopecks(units, 6, 9000)
	fmt.Println(deposit.TokenAmount(units.String(), 6), kopecks, ok)
	// Output: 12.5 112500 true
}
