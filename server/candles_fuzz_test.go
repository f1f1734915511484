package server

import (
	"errors"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// FuzzQueryCandles: the candles' from and to are absent (nil), refused
// with a request error, or read as exactly the RFC 3339 time they name.
func FuzzQueryCandles(f *testing.F) {
	for _, s := range []string{"", "from=2024-03-10T00:00:00Z", "to=2024-03-10T00:00:00.123456789%2B03:00", "from=2024-03-10T00:00:00+03:00",
		"from=2024-03-10", "to=1710028800", "from=0000-01-01T00:00:00Z", "to=9999-12-31T23:59:59Z", "from=2024-02-30T00:00:00Z", "from=%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		withQuery(raw, func(c *fiber.Ctx) {
			for _, name := range []string{"from", "to"} {
				got, err := queryTime(c, name)
				s := c.Query(name)
				want, perr := time.Parse(time.RFC3339, s)
				switch {
				case err != nil:
					if !errors.Is(err, errBadRequest) || perr == nil {
						t.Fatalf("%q: %s %q refused with %v", raw, name, s, err)
					}
				case s == "":
					if got != nil {
						t.Fatalf("%q: absent %s read as %v", raw, name, got)
					}
				case got == nil || perr != nil || !got.Equal(want):
					t.Fatalf("%q: %s %q read as %v", raw, name, s, got)
				}
			}
		})
	})
}
