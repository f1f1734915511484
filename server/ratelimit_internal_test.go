package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/storage/memory"
)

func TestParseRate(t *testing.T) {
	cases := []struct {
		in   string
		want Rate
		ok   bool
	}{
		{"10/m", Rate{10, time.Minute}, true},
		{"200/s", Rate{200, time.Second}, true},
		{"5/h", Rate{5, time.Hour}, true},
		{" 30 / 10s ", Rate{30, 10 * time.Second}, true},
		{"1/min", Rate{1, time.Minute}, true},
		{"0", Rate{}, true},
		{"off", Rate{}, true},
		{"Unlimited", Rate{}, true},
		{"10", Rate{}, false},
		{"-1/m", Rate{}, false},
		{"0/m", Rate{}, false},
		{"1.5/m", Rate{}, false},
		{"10/fortnight", Rate{}, false},
		{"10/-1s", Rate{}, false},
		{"2000000000/s", Rate{}, false},
		{"1000/1ns", Rate{}, false},
		{"", Rate{}, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q reads as %v (ok %v)", c.in, c.want, c.ok), func(t *testing.T) {
			got, err := ParseRate(c.in)
			if (err == nil) != c.ok || got != c.want {
				t.Fatalf("ParseRate(%q) = %v, %v", c.in, got, err)
			}
			if c.ok {
				again, err := ParseRate(got.String())
				if err != nil || again != got {
					t.Errorf("%v prints as %q, which reads as %v, %v", got, got.String(), again, err)
				}
			}
		})
	}
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestLimiter(t *testing.T) {
	t.Run("a bucket of N lets N through at once, then one per Per/N", func(t *testing.T) {
		clk := &fakeClock{time.Unix(1000, 0)}
		l := newLimiter(Rate{N: 4, Per: time.Minute}, clk.now)
		for i := range 4 {
			if ok, _ := l.take("k"); !ok {
				t.Fatalf("request %d refused", i+1)
			}
		}
		ok, wait := l.take("k")
		if ok || wait != 15*time.Second {
			t.Fatalf("fifth: ok %v, wait %v; want a wait of 15s", ok, wait)
		}
		clk.t = clk.t.Add(14 * time.Second)
		if ok, wait := l.take("k"); ok || wait != time.Second {
			t.Fatalf("after 14s: ok %v, wait %v", ok, wait)
		}
		clk.t = clk.t.Add(time.Second)
		if ok, _ := l.take("k"); !ok {
			t.Fatal("refused after the wait")
		}
		if ok, _ := l.take("other"); !ok {
			t.Fatal("another key was refused")
		}
	})
	t.Run("an unlimited rate has no limiter", func(t *testing.T) {
		if newLimiter(Rate{}, nil) != nil {
			t.Fatal("a limiter for an unlimited rate")
		}
	})
	t.Run("buckets that are full again are forgotten, and the map never outgrows its bound", func(t *testing.T) {
		clk := &fakeClock{time.Unix(1000, 0)}
		l := newLimiter(Rate{N: 10, Per: time.Second}, clk.now)
		l.max = 1000
		for i := range 5000 {
			l.take(fmt.Sprint("ip-", i))
			if l.size() > l.max {
				t.Fatalf("%d buckets after %d keys", l.size(), i+1)
			}
		}
		clk.t = clk.t.Add(2 * time.Second)
		l.take("late")
		if n := l.size(); n != 1 {
			t.Errorf("%d buckets after every other went idle, want 1", n)
		}
	})
	t.Run("Retry-After rounds up to whole seconds, at least 1", func(t *testing.T) {
		for _, c := range []struct {
			wait time.Duration
			want int64
		}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {59 * time.Second, 59}} {
			if got := retryAfterSeconds(c.wait); got != c.want {
				t.Errorf("retryAfterSeconds(%v) = %d, want %d", c.wait, got, c.want)
			}
		}
	})
}

// TestLimitedRoutesAreServed: every route that names a limit exists, so
// that renaming a route cannot silently drop its limit.
func TestLimitedRoutesAreServed(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Store = memory.New()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	app, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, r := range app.GetRoutes(true) {
		served[r.Method+" "+r.Path] = true
	}
	for route := range limitedRoutes {
		if !served[route] {
			t.Errorf("the rate limit of %s applies to no route", route)
		}
	}
}

func TestRateAndCORSSettings(t *testing.T) {
	t.Run("the defaults are on", func(t *testing.T) {
		c := DefaultConfig()
		if c.RateLogin.Unlimited() || c.RateTrade.Unlimited() || c.RatePartner.Unlimited() || len(c.CORSOrigins) != 0 {
			t.Errorf("defaults %v %v %v %v", c.RateLogin, c.RateTrade, c.RatePartner, c.CORSOrigins)
		}
	})
	t.Run("the variables are read", func(t *testing.T) {
		env := map[string]string{"PREDICTKIT_RATE_LOGIN": "10/m", "PREDICTKIT_RATE_TRADE": "off", "PREDICTKIT_RATE_PARTNER": "50/s",
			"PREDICTKIT_CORS_ORIGINS": "https://a.example, http://localhost:3000", "PREDICTKIT_TRUSTED_PROXIES": "10.0.0.1,fd00::/8"}
		c, err := configFrom(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		if c.RateLogin != (Rate{10, time.Minute}) || !c.RateTrade.Unlimited() || c.RatePartner != (Rate{50, time.Second}) ||
			strings.Join(c.CORSOrigins, " ") != "https://a.example http://localhost:3000" || len(c.TrustedProxies) != 2 {
			t.Errorf("config %+v", c)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("refused: %v", err)
		}
	})
	t.Run("malformed values are reported by variable", func(t *testing.T) {
		env := map[string]string{"PREDICTKIT_RATE_LOGIN": "ten", "PREDICTKIT_RATE_TRADE": "5", "PREDICTKIT_RATE_PARTNER": "1/fortnight",
			"PREDICTKIT_CORS_ORIGINS": "example.com", "PREDICTKIT_TRUSTED_PROXIES": "10.0.0.300"}
		_, err := configFrom(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err == nil {
			t.Fatal("accepted")
		}
		for k := range env {
			if !strings.Contains(err.Error(), k) {
				t.Errorf("the error does not name %s: %v", k, err)
			}
		}
	})
	t.Run("serve -h lists them with their defaults", func(t *testing.T) {
		var b bytes.Buffer
		PrintSettings(&b)
		for _, want := range []string{"PREDICTKIT_RATE_LOGIN", "300/m", "PREDICTKIT_RATE_TRADE", "6000/m", "PREDICTKIT_RATE_PARTNER", "600000/m", "PREDICTKIT_CORS_ORIGINS"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("settings lack %s:\n%s", want, b.String())
			}
		}
	})
	t.Run("a 429 is rate_limited on every route", func(t *testing.T) {
		for _, tb := range []*errorTable{nil, errsLogin, errsTrade, errsPartnerBet, errsPartnerState} {
			if s, code := tb.resolve(errRateLimited); s != http.StatusTooManyRequests || code != "rate_limited" {
				t.Errorf("errRateLimited resolves to %d %s", s, code)
			}
		}
	})
}
