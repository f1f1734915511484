package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// slowServer answers every request after delay.
func slowServer(t *testing.T, delay time.Duration) (*api, *atomic.Int64) {
	t.Helper()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		served.Add(1)
		w.Write([]byte(`{"status":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	a := newAPI(Config{URL: srv.URL, Clients: 16, Timeout: 10 * time.Second})
	t.Cleanup(a.close)
	return a, &served
}

func getPhase() phase {
	return phase{name: "get", share: 1, endpoints: []string{"GET /"}, client: func(int) step {
		return func(ctx context.Context, s *session) { s.do(ctx, 0, request{method: http.MethodGet, path: "/"}) }
	}}
}

func TestOpenLoopCountsLatencyFromWhenARequestWasDue(t *testing.T) {
	const service = 20 * time.Millisecond
	cases := []struct {
		name    string
		clients int
		rate    float64
		warmup  time.Duration
		check   func(t *testing.T, pr PhaseReport)
	}{
		{"a closed loop times each request from its sending", 1, 0, 0, func(t *testing.T, pr PhaseReport) {
			// Slowness can only add to the service time; no upper bound is
			// asserted, since a busy machine may stretch any of them.
			if pr.Latency.P50 < service {
				t.Errorf("p50 %v: under the service time %v", pr.Latency.P50, service)
			}
		}},
		{"an open loop faster than one client can serve counts the queueing delay", 1, 200, 0, func(t *testing.T, pr PhaseReport) {
			// Request k is due at 5k ms but sent at 20k ms at the
			// earliest: its lateness grows through the run.
			if pr.Latency.P50 < 5*service {
				t.Errorf("p50 %v: the lateness of requests that waited for the busy client is not counted", pr.Latency.P50)
			}
			if pr.Latency.Max < 10*service {
				t.Errorf("max %v: the last requests waited for most of the run", pr.Latency.Max)
			}
			if pr.Unsent < 40 {
				t.Errorf("unsent %d: about 75 of the 100 requests due could not be sent", pr.Unsent)
			}
		}},
		{"an open loop with clients to spare sees only the service time", 8, 100, 0, func(t *testing.T, pr PhaseReport) {
			if pr.Latency.P50 < service {
				t.Errorf("p50 %v: under the service time %v", pr.Latency.P50, service)
			}
			if pr.Requests > 51 {
				t.Errorf("%d requests in 500ms at 100/s: an open loop sends no more than it schedules", pr.Requests)
			}
		}},
		{"an overloaded open loop measures after the warm-up the backlog it left", 1, 200, 300 * time.Millisecond, func(t *testing.T, pr PhaseReport) {
			// The requests sent in the measured window were due during
			// the warm-up, at least 225ms before.
			if pr.Latency.P50 < 10*service {
				t.Errorf("p50 %v: the backlog of the warm-up is not counted", pr.Latency.P50)
			}
			if pr.Requests > 30 {
				t.Errorf("%d requests measured: one client serves at most 25 in 500ms", pr.Requests)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, _ := slowServer(t, service)
			cfg := Config{Clients: c.clients, Rate: c.rate}
			pr, _ := runPhase(context.Background(), a, cfg, getPhase(), c.warmup, 500*time.Millisecond)
			if pr.ErrorCount != 0 {
				t.Fatalf("errors %v", pr.Errors)
			}
			if pr.Requests == 0 {
				t.Fatal("no request measured")
			}
			c.check(t, pr)
		})
	}
}

func TestWarmupIsNotMeasured(t *testing.T) {
	a, served := slowServer(t, time.Millisecond)
	pr, _ := runPhase(context.Background(), a, Config{Clients: 2}, getPhase(), 200*time.Millisecond, 200*time.Millisecond)
	if total := served.Load(); pr.Requests >= total || pr.Requests == 0 {
		t.Fatalf("measured %d of %d requests served: the warm-up must be served but not measured", pr.Requests, total)
	}
}

func TestErrorsAreCountedByStatusWithASample(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"error":"price_moved"}`))
	}))
	defer srv.Close()
	a := newAPI(Config{URL: srv.URL, Clients: 1, Timeout: time.Second})
	defer a.close()
	pr, _ := runPhase(context.Background(), a, Config{Clients: 1}, getPhase(), 0, 100*time.Millisecond)
	if pr.Errors["409"] == 0 || pr.Errors["409"] != pr.Requests || pr.ErrorCount != pr.Requests {
		t.Fatalf("errors %v of %d requests", pr.Errors, pr.Requests)
	}
	if pr.ErrorSamples["409"] != `{"error":"price_moved"}` {
		t.Fatalf("sample %q", pr.ErrorSamples["409"])
	}
}

func TestAnAnswerLaterThanTheTimeoutIsATransportError(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(2 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(release)
	a := newAPI(Config{URL: srv.URL, Clients: 1, Timeout: 50 * time.Millisecond})
	defer a.close()
	start := time.Now()
	pr, _ := runPhase(context.Background(), a, Config{Clients: 1}, getPhase(), 0, 200*time.Millisecond)
	if pr.Errors["transport"] == 0 || pr.Errors["transport"] != pr.Requests {
		t.Fatalf("errors %v of %d requests, want every one a transport error", pr.Errors, pr.Requests)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the phase took %v: a request outlived its timeout", took)
	}
}
