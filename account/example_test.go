package account_test

import (
	"context"
	"fmt"
	"time"

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

// With the cache on, a token is looked up once and then trusted from
// memory; a logout through the same Service still takes effect at once.
// (Several processes on one database also pass each other's changes to
// Invalidate: see postgres.Store.WatchAuth.)
func ExampleService_CacheAuth() {
	ctx := context.Background()
	accounts := account.NewService(memory.New())
	accounts.CacheAuth(5 * time.Second)

	_, token, err := accounts.Register(ctx, account.Registration{Email: "bob@example.com", Password: "correct horse", Name: "Bob"})
	if err != nil {
		panic(err)
	}
	for range 3 {
		if _, err := accounts.Authenticate(ctx, token); err != nil { // one store look-up, then memory
			panic(err)
		}
	}
	_ = accounts.Logout(ctx, token)
	_, err = accounts.Authenticate(ctx, token)
	fmt.Println("after logout:", err)
	// Output:
	// after logout: account: missing, unknown or revoked access token
}

// A user makes a personal API key for a bot: the key authenticates as the
// user, says which scopes it holds, and stops working once revoked.
func ExampleService_CreateAPIKey() {
	ctx := context.Background()
	accounts := account.NewService(memory.New())
	accounts.CacheAuth(time.Minute) // revocation goes through the cache too

	u, _, err := accounts.Register(ctx, account.Registration{Email: "cy@example.com", Password: "correct horse", Name: "Cy"})
	if err != nil {
		panic(err)
	}
	k, secret, err := accounts.CreateAPIKey(ctx, u.ID, "Scalper", []string{"trade"})
	if err != nil {
		panic(err)
	}
	fmt.Println("key:", secret[:len(account.APIKeyPrefix)]+"…", len(secret), "characters")

	cr, _ := accounts.Credential(ctx, secret)
	fmt.Println("signed in as", cr.User.Name, "with key", cr.Key.Name, "read:", cr.Key.Allows(account.ScopeRead), "trade:", cr.Key.Allows(account.ScopeTrade))

	_ = accounts.RevokeAPIKey(ctx, u.ID, k.ID)
	_, err = accounts.Credential(ctx, secret)
	fmt.Println("after revocation:", err)
	// Output:
	// key: pak_… 47 characters
	// signed in as Cy with key Scalper read: false trade: true
	// after revocation: account: missing, unknown or revoked access token
}
