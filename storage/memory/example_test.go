package memory_test

import (
	"context"
	"fmt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/storage/memory"
)

// One memory store serves every domain service at once: here the account
// service and its ledger.
func Example() {
	ctx := context.Background()
	store := memory.New()
	accounts := account.NewService(store)
	u, _, _ := accounts.Register(ctx, account.Registration{Email: "m@example.com", Password: "password123", Name: "M"})
	accounts.Credit(ctx, u.ID, 500, true)
	b, _ := store.Balances(ctx, u.ID)
	fmt.Println("bonus:", b.Bonus)
	fmt.Println("postings:", len(store.Postings()))
	// Output:
	// bonus: 500
	// postings: 1
}
