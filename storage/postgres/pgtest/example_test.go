package pgtest_test

import (
	"testing"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// New gives a test its own migrated schema, dropped when the test ends; it
// skips the test when PREDICTKIT_TEST_DATABASE_URL is unset (and fails it
// instead when PREDICTKIT_REQUIRE_POSTGRES=1). (Not run by go test on its
// own: it needs a *testing.T.)
func ExampleNew() {
	var t *testing.T // in a test function
	store := pgtest.New(t)
	_ = store
}
