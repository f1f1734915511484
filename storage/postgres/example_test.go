package postgres_test

import (
	"context"
	"log"
	"os"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/postgres"
)

// Open a database, bring its schema up to date and run the services on it.
// (Not run by go test: it needs a database.)
func Example() {
	ctx := context.Background()
	store, err := postgres.New(ctx, os.Getenv("PREDICTKIT_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	accounts := account.NewService(store)
	markets := market.NewService(store, accounts)
	partners := partner.NewService(store, store, markets)
	_, _ = markets, partners
}
