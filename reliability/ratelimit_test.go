package reliability

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/internal/redistest"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// TestRateLimitsSharedByTwoServers: two server processes on one
// database and one Redis grant one registration budget between them,
// whichever gets each request; without Redis each grants its own.
func TestRateLimitsSharedByTwoServers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server: not in -short")
	}
	redisURL := redistest.URL(t)
	dbURL := pgtest.SchemaURL(t)
	// A client of this run's own (its /64, which the limit counts by), so
	// that no other run spends its budget; its key is deleted at the end.
	hi, lo := rand.N(1<<16), rand.N(1<<16)
	client := fmt.Sprintf("2001:db8:%x:%x::1", hi, lo)
	t.Cleanup(func() {
		redistest.Clean(t, redisURL, fmt.Sprintf("rate:predictkit:rl:login:POST /api/v1/auth/register 2001:db8:%x:%x::/64", hi, lo))
	})
	env := []string{"PREDICTKIT_RATE_LOGIN=5/m", "PREDICTKIT_TRUSTED_PROXIES=127.0.0.1"}
	// register sends n registrations, alternately to a and b, and
	// returns each answer's status.
	register := func(t *testing.T, a, b *proc, n int) []int {
		var got []int
		for i := range n {
			p := []*proc{a, b}[i%2]
			st, h, body := postJSON(t, p.base()+"/api/v1/auth/register", map[string]string{"X-Forwarded-For": client}, map[string]any{})
			switch st {
			case http.StatusBadRequest: // counted, then refused by the handler: the body is empty
			case http.StatusTooManyRequests:
				if !strings.Contains(string(body), `"error":"rate_limited"`) || h.Get("Retry-After") == "" {
					t.Fatalf("429 %s with Retry-After %q", body, h.Get("Retry-After"))
				}
			default:
				t.Fatalf("registration %d: %d %s", i+1, st, body)
			}
			got = append(got, st)
		}
		return got
	}
	count := func(sts []int, st int) int {
		n := 0
		for _, s := range sts {
			if s == st {
				n++
			}
		}
		return n
	}

	t.Run("with Redis the 6th request is refused whichever server gets it", func(t *testing.T) {
		a := newProc(t, dbURL, append(env, "PREDICTKIT_REDIS_URL="+redisURL)...)
		a.start()
		b := newProc(t, dbURL, append(env, "PREDICTKIT_REDIS_URL="+redisURL)...)
		b.start()
		sts := register(t, a, b, 12)
		for i, st := range sts {
			if want := map[bool]int{true: 400, false: 429}[i < 5]; st != want {
				t.Fatalf("answers %v; want five 400 then 429 from both servers", sts)
			}
		}
		st, body, err := get(b.base() + "/readyz")
		if err != nil || st != http.StatusOK || !strings.Contains(string(body), `"redis":{"status":"ok"`) {
			t.Fatalf("/readyz: %d %s %v; want redis ok", st, body, err)
		}
		a.kill()
		b.kill()
	})

	t.Run("without Redis each server grants its own 5", func(t *testing.T) {
		a := newProc(t, dbURL, env...)
		a.start()
		b := newProc(t, dbURL, env...)
		b.start()
		if sts := register(t, a, b, 14); count(sts, 400) != 10 {
			t.Fatalf("answers %v; want 10 granted (5 per server)", sts)
		}
	})
}
