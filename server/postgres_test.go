package server_test

import (
	"testing"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// The money tests also run on PostgreSQL: a fresh migrated schema per
// test (skipped without PREDICTKIT_TEST_DATABASE_URL, a failure without it
// when PREDICTKIT_REQUIRE_POSTGRES=1).
func init() {
	postgresStore = func(t *testing.T) server.Store { return pgtest.New(t) }
	postgresURL = func(t *testing.T) string { return pgtest.SchemaURL(t) }
}
