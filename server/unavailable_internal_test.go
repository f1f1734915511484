package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/predictkit/predictkit/storage"
)

// TestDatabaseFailuresAre503OnEveryRoute: whatever the route, a database
// that cannot be reached is 503 database_unavailable and a commit whose
// outcome is unknown is 503 outcome_unknown, never a route's 500.
func TestDatabaseFailuresAre503OnEveryRoute(t *testing.T) {
	cases := []struct {
		err  error
		code string
	}{
		{fmt.Errorf("%w: dial tcp 127.0.0.1:5432: connect: connection refused", storage.ErrUnavailable), "database_unavailable"},
		{fmt.Errorf("%w: FATAL: terminating connection due to administrator command (SQLSTATE 57P01)", storage.ErrOutcomeUnknown), "outcome_unknown"},
	}
	for _, r := range canOccur {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s answers %s", r.route, c.code), func(t *testing.T) {
				for _, err := range []error{c.err, fmt.Errorf("service: %w", c.err)} {
					if status, code := r.table.resolve(err); status != http.StatusServiceUnavailable || code != c.code {
						t.Errorf("%v: got %d %q", err, status, code)
					}
				}
			})
		}
	}
}
