package postgres_test

import (
	"context"
	"testing"

	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	t.Run("migrating an up-to-date schema again changes nothing", func(t *testing.T) {
		s := pgtest.New(t)
		var before int64
		if err := s.DB().QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&before); err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("second migration: %v", err)
		}
		var after, rows int64
		if err := s.DB().QueryRow(ctx, `SELECT max(version_id), count(*) FROM goose_db_version`).Scan(&after, &rows); err != nil {
			t.Fatal(err)
		}
		if after != before || before < 2 {
			t.Fatalf("version %d after, %d before", after, before)
		}
	})
	t.Run("the package-level Migrate creates the schema and its tables", func(t *testing.T) {
		schema := pgtest.Schema(t)
		for range 2 {
			if err := postgres.Migrate(ctx, pgtest.URL(t), postgres.WithSchema(schema)); err != nil {
				t.Fatal(err)
			}
		}
		s, err := postgres.New(ctx, pgtest.URL(t), postgres.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var n int
		if err := s.DB().QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
			WHERE table_schema = $1 AND table_name IN ('users', 'ledger_accounts', 'markets', 'positions', 'trades', 'partners')`, schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 6 {
			t.Fatalf("%d of 6 tables in %s", n, schema)
		}
	})
	t.Run("a search_path in the URL is honoured as a schema", func(t *testing.T) {
		url := pgtest.SchemaURL(t)
		s, err := postgres.New(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.User(ctx, 1); err == nil {
			t.Fatal("a fresh schema has a user 1")
		}
		var where string
		if err := s.DB().QueryRow(ctx, `SELECT table_schema FROM information_schema.tables WHERE table_name = 'users' AND table_schema = current_schema()`).Scan(&where); err != nil {
			t.Fatalf("users table not in the URL's schema: %v", err)
		}
	})
	t.Run("a bad schema name is refused before connecting", func(t *testing.T) {
		if _, err := postgres.New(ctx, "postgres://nowhere.invalid/x", postgres.WithSchema(`x"; DROP`)); err == nil {
			t.Fatal("accepted")
		}
	})
}
