package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadPhasesAskForFullAnswers runs every phase of the read scenario
// against a server that tags its answers as the public views do (strong
// ETag, Cache-Control public) and answers 304 to a matching
// If-None-Match: the bench must measure full answers, so it must never
// revalidate.
func TestReadPhasesAskForFullAnswers(t *testing.T) {
	var conditional, served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Cache-Control", "public, max-age=1, stale-while-revalidate=5")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	fx := &fixture{users: []user{{id: 1, auth: "Bearer a"}, {id: 2, auth: "Bearer b"}},
		markets: []int64{10, 11}, pools: []int64{20}, events: []int64{30}}
	cfg := Config{URL: srv.URL, Clients: 2, Timeout: 5 * time.Second}
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"the default client (fasthttp)", nil},
		{"a net/http transport", http.DefaultTransport.(*http.Transport).Clone()},
	} {
		t.Run(c.name+" sends no conditional request", func(t *testing.T) {
			cfg := cfg
			cfg.Transport = c.rt
			a := newAPI(cfg)
			defer a.close()
			for _, ph := range readPhases(fx, cfg) {
				pr, _ := runPhase(context.Background(), a, cfg, ph, 0, 30*time.Millisecond)
				if pr.Requests == 0 || pr.ErrorCount != 0 {
					t.Errorf("phase %s: %d requests, errors %v", ph.name, pr.Requests, pr.Errors)
				}
			}
			if n := conditional.Load(); n != 0 {
				t.Fatalf("%d of %d requests were conditional", n, served.Load())
			}
		})
	}
}
