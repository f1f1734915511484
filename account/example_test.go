package account_test

import (
	"context"
	"fmt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/storage/memory"
)

// A user registers, an operator deposits 150 RUB, and the ledger audit
// finds every kopeck: the outside world is 15000 kopecks short.
func Example() {
	ctx := context.Background()
	accounts := account.NewService(memory.New())

	u, token, err := accounts.Register(ctx, account.Registration{Email: "ann@example.com", Password: "correct horse", Name: "Ann"})
	if err != nil {
		panic(err)
	}
	me, _ := accounts.Authenticate(ctx, token)
	fmt.Println("signed in as", me.Name)

	b, _ := accounts.Credit(ctx, u.ID, 15000, false)
	fmt.Println("balance:", b.Balance, "kopecks")

	r, _ := accounts.Audit(ctx)
	fmt.Println("ledger ok:", r.OK, "sum:", r.Sum, "postings:", r.Postings)
	// Output:
	// signed in as Ann
	// balance: 15000 kopecks
	// ledger ok: true sum: 0 postings: 1
}
