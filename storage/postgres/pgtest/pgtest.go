// Package pgtest gives a test a PostgreSQL store of its own: a fresh
// schema in the database named by PREDICTKIT_TEST_DATABASE_URL, migrated,
// and dropped when the test ends. Tests of any package may use it.
//
// When the variable is unset the test is skipped, unless
// PREDICTKIT_REQUIRE_POSTGRES=1 (as in CI), which makes it fail instead:
// a suite that silently skipped its database tests would pass for the
// wrong reason.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/storage/postgres"
)

// The environment variables pgtest reads.
const (
	EnvURL     = "PREDICTKIT_TEST_DATABASE_URL"
	EnvRequire = "PREDICTKIT_REQUIRE_POSTGRES"
)

// URL returns the test database's URL, or skips t (fails it when
// PostgreSQL is required) if there is none.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: %s is not set but %s=1 requires PostgreSQL", EnvURL, EnvRequire)
		}
		t.Skipf("pgtest: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run PostgreSQL tests", EnvURL)
	}
	return u
}

// Schema creates an empty schema for t, dropped with everything in it when
// t ends, and returns its name.
func Schema(t testing.TB) string {
	t.Helper()
	return schemaIn(t, URL(t))
}

func schemaIn(t testing.TB, dbURL string) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	name := "test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Errorf("pgtest: connect to drop schema %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+ident+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", name, err)
		}
	})
	return name
}

// SchemaURL returns a database URL whose connections work in a fresh,
// empty schema of their own (dropped when t ends): for tests that hand a
// URL to code that connects by itself, such as the server.
func SchemaURL(t testing.TB) string {
	t.Helper()
	return WithSearchPath(URL(t), Schema(t))
}

// WithSearchPath returns dbURL (a postgres:// URL or a key=value string)
// with its connections' search_path set to schema.
func WithSearchPath(dbURL, schema string) string {
	if strings.HasPrefix(dbURL, "postgres://") || strings.HasPrefix(dbURL, "postgresql://") {
		u, err := url.Parse(dbURL)
		if err == nil {
			q := u.Query()
			// pgx passes settings it does not know to the server as
			// run-time parameters.
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dbURL + " search_path=" + schema
}

// New returns a migrated store in a fresh schema of t's own, closed and
// dropped when t ends.
func New(t testing.TB, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	schema := Schema(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := postgres.New(ctx, URL(t), append([]postgres.Option{postgres.WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s
}
