package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// schemaExists says whether schema is in the database at url.
func schemaExists(t *testing.T, url, schema string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestMigrationOperations(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	// A schema that does not exist yet, dropped (if made) when the test ends.
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	s, err := postgres.New(ctx, url, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries, err := fs.ReadDir(postgres.Migrations(), ".")
	if err != nil {
		t.Fatal(err)
	}
	// A migration's version is the number its name starts with; numbers
	// may skip one (goose allows gaps).
	var names []string
	var versions []int64
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			v, err := strconv.ParseInt(strings.SplitN(e.Name(), "_", 2)[0], 10, 64)
			if err != nil {
				t.Fatalf("migration %s: %v", e.Name(), err)
			}
			names, versions = append(names, e.Name()), append(versions, v)
		}
	}
	latest := versions[len(versions)-1]

	t.Run("status and version of a schema that does not exist yet report nothing applied and create nothing", func(t *testing.T) {
		st, err := s.MigrationStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st) != len(names) {
			t.Fatalf("%d statuses for %d migrations", len(st), len(names))
		}
		for i, m := range st {
			if m.Applied || m.Name != names[i] || m.Version != versions[i] || !m.AppliedAt.IsZero() {
				t.Errorf("status %d: %+v", i, m)
			}
		}
		if v, err := s.MigrationVersion(ctx); err != nil || v != 0 {
			t.Fatalf("version %d, %v", v, err)
		}
		if _, err := s.MigrateDown(ctx); !errors.Is(err, postgres.ErrNothingToRollBack) {
			t.Fatalf("down: %v", err)
		}
		if schemaExists(t, url, schema) {
			t.Fatal("the schema was created")
		}
	})
	t.Run("up creates the schema and returns every migration it applied in order", func(t *testing.T) {
		res, err := s.MigrateUp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(names) {
			t.Fatalf("%d applied of %d", len(res), len(names))
		}
		for i, r := range res {
			if r.Name != names[i] || r.Version != versions[i] {
				t.Errorf("applied %d: %+v", i, r)
			}
		}
		if !schemaExists(t, url, schema) {
			t.Fatal("no schema")
		}
		if v, err := s.MigrationVersion(ctx); err != nil || v != latest {
			t.Fatalf("version %d, %v", v, err)
		}
		if res, err := s.MigrateUp(ctx); err != nil || len(res) != 0 {
			t.Fatalf("second up applied %v, %v", res, err)
		}
	})
	t.Run("status after up has every migration applied with a time", func(t *testing.T) {
		st, err := s.MigrationStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range st {
			if !m.Applied || time.Since(m.AppliedAt) > time.Hour || time.Until(m.AppliedAt) > time.Hour {
				t.Errorf("%+v", m)
			}
		}
	})
	t.Run("down rolls back exactly the last migration", func(t *testing.T) {
		r, err := s.MigrateDown(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Name != names[len(names)-1] || r.Version != latest {
			t.Fatalf("rolled back %+v", r)
		}
		if v, err := s.MigrationVersion(ctx); err != nil || v != versions[len(versions)-2] {
			t.Fatalf("version %d, %v", v, err)
		}
		st, err := s.MigrationStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st[len(st)-1].Applied || !st[len(st)-2].Applied {
			t.Fatalf("last two: %+v %+v", st[len(st)-2], st[len(st)-1])
		}
	})
	t.Run("the server's Migrate applies what down rolled back", func(t *testing.T) {
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if v, err := s.MigrationVersion(ctx); err != nil || v != latest {
			t.Fatalf("version %d, %v", v, err)
		}
	})
}
