package server

// Fuzz targets for the query-parameter parsers: paging (events, closed
// positions, operator chat sessions: strict; comments, replies,
// notifications: lenient), the quote's side and amount, and the P2P
// list's parameters as Fiber hands them over (p2p.ParseQuery itself has
// FuzzParseQuery in its package). FuzzQueries in app_fuzz_test.go sends
// the same strings to the routes themselves.

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/p2p"
)

// withQuery runs f with a Fiber context whose request has raw as its
// query string.
func withQuery(raw string, f func(c *fiber.Ctx)) {
	app := fiber.New()
	fc := &fasthttp.RequestCtx{}
	fc.Request.SetRequestURI("/q?" + raw)
	c := app.AcquireCtx(fc)
	defer app.ReleaseCtx(c)
	f(c)
}

var querySeeds = []string{"", "limit=20&offset=0", "limit=0", "limit=101&offset=5", "limit=-1", "limit=1.5", "limit=abc&offset=%31",
	"offset=2147483648", "offset=99999999999999999999", "limit=00000000000000000007", "limit=+5", "limit=5&limit=7", "limit=%00", "limit=1e3",
	"side=YES&amount_kopecks=10000", "side=no&shares=5000", "side=YES&amount_kopecks=10000&shares=1", "side=MAYBE&amount_kopecks=1",
	"side=YES&amount_kopecks=9223372036854775808", "side=YES&shares=-5", "type=buy&sort_by=best_price&amount=1000", "is_active=false&author_nickname=x"}

// FuzzQueryPage: the strict pager either refuses with a request error or
// gives a limit of 1 to the maximum and an offset of 0 to 2^31, the
// limit being the one asked for (0 or absent: the default).
func FuzzQueryPage(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		withQuery(raw, func(c *fiber.Ctx) {
			for _, p := range []struct{ def, max int }{{market.ClosedInProfile, market.MaxPageSize}, {market.DefaultEventsLimit, market.MaxPageSize}, {20, 100}} {
				limit, offset, err := page(c, p.def, p.max)
				if err != nil {
					if !errors.Is(err, errBadRequest) {
						t.Fatalf("%q: refused with %v", raw, err)
					}
					continue
				}
				if limit < 1 || limit > p.max || offset < 0 || offset > 1<<31 {
					t.Fatalf("%q: limit %d, offset %d", raw, limit, offset)
				}
				want := p.def
				if s := c.Query("limit"); s != "" {
					n, err := strconv.ParseInt(s, 10, 64)
					if err != nil || n < 0 {
						t.Fatalf("%q: limit %q was accepted", raw, s)
					}
					if n > 0 {
						want = int(min(n, int64(p.max)))
					}
				}
				if limit != want {
					t.Fatalf("%q: limit %d, want %d", raw, limit, want)
				}
			}
		})
	})
}

// FuzzQueryLenientPage: the lenient pager of comments, replies and
// notifications never refuses, and gives numbers the services can bound:
// 0 to MaxInt32.
func FuzzQueryLenientPage(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		withQuery(raw, func(c *fiber.Ctx) {
			limit, offset := lenientPage(c)
			if limit < 0 || limit > math.MaxInt32 || offset < 0 || offset > math.MaxInt32 {
				t.Fatalf("%q: limit %d, offset %d", raw, limit, offset)
			}
			if s := c.Query("limit"); s != "" && strings.TrimLeft(s, "0123456789") != "" && limit != 0 {
				t.Fatalf("%q: the malformed limit %q gave %d, not the default", raw, s, limit)
			}
		})
	})
}

// FuzzQueryQuote: the quote's side is YES or NO, and its amount a
// non-negative integer written in digits, or the request is refused
// with a request error.
func FuzzQueryQuote(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		withQuery(raw, func(c *fiber.Ctx) {
			if side, err := parseSide(c.Query("side")); err == nil {
				if side != market.Yes && side != market.No {
					t.Fatalf("%q: side %v", raw, side)
				}
			} else if !errors.Is(err, errBadRequest) {
				t.Fatalf("%q: side refused with %v", raw, err)
			}
			for _, name := range []string{"amount_kopecks", "shares"} {
				n, err := queryInt(c, name, 0)
				if err != nil {
					if !errors.Is(err, errBadRequest) {
						t.Fatalf("%q: %s refused with %v", raw, name, err)
					}
					continue
				}
				s := c.Query(name)
				if n < 0 || s != "" && strings.TrimLeft(s, "0") != strings.TrimLeft(strconv.FormatInt(n, 10), "0") {
					t.Fatalf("%q: %s %q read as %d", raw, name, s, n)
				}
			}
		})
	})
}

// FuzzQueryP2P: the P2P list's parameters, as the route hands them to
// p2p.ParseQuery, are refused with an *InvalidError or read into a
// query within its bounds.
func FuzzQueryP2P(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		withQuery(raw, func(c *fiber.Ctx) {
			q, err := p2p.ParseQuery(queryValues(c))
			if err != nil {
				if !errors.Is(err, input.ErrInvalid) {
					t.Fatalf("%q: refused with %v", raw, err)
				}
				return
			}
			if q.Limit < 1 || q.Limit > p2p.MaxLimit || q.Offset < 0 || q.Offset > p2p.MaxOffset {
				t.Fatalf("%q: %+v", raw, q)
			}
		})
	})
}
