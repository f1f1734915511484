package server_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// TestRateLimitsWithoutRedis: a server whose Redis does not answer from
// the start serves, ready, with per-instance limits, and says so on
// /readyz and in the metrics.
func TestRateLimitsWithoutRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	cfg := testConfig(memoryStore())
	cfg.RedisURL = "redis://" + closed + "/0"
	cfg.RateLogin = server.Rate{N: 2, Per: time.Minute}
	h, _ := startServer(t, cfg)

	r := h.do(t, req{method: http.MethodGet, path: "/readyz"})
	expect(t, r, http.StatusOK, "")
	if !strings.Contains(string(r.body), `"redis":{"status":"degraded"`) {
		t.Fatalf("/readyz %s; want redis degraded", r.body)
	}
	t.Run("the limits work per instance meanwhile", func(t *testing.T) {
		for range 2 {
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/register", body: map[string]any{}}), http.StatusBadRequest, "invalid_request")
		}
		expectLimited(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/register", body: map[string]any{}}), "30")
	})
	t.Run("the metrics say the limits are not shared", func(t *testing.T) {
		res, err := http.Get("http://" + h.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		for _, want := range []string{"predictkit_ratelimit_shared 0\n", "predictkit_ratelimit_fallbacks_total 3\n"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}
