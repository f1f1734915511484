package postgres_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

func TestScratchSeed(t *testing.T) {
	schema := os.Getenv("SCRATCH_SCHEMA")
	if schema == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("SCRATCH_N"))
	ctx := context.Background()
	conn, _ := postgres.New(ctx, os.Getenv("PREDICTKIT_TEST_DATABASE_URL"))
	conn.DB().Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	conn.DB().Exec(ctx, "CREATE SCHEMA "+schema)
	conn.Close()
	s, err := postgres.New(ctx, os.Getenv("PREDICTKIT_TEST_DATABASE_URL"), postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	acc := account.NewService(s)
	acc.BcryptCost = bcrypt.MinCost
	e := &env{t: t, ctx: ctx, store: s, accounts: acc, markets: market.NewService(s, acc)}
	ev, _ := e.event(0, 100_000_000, 0.5)
	m := ev.Pools[0].Markets[0]
	seedOpenPositions(t, e, m, n)
	t.Logf("market %d", m.ID)
}
