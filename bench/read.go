package bench

import (
	"context"
	"net/http"
)

// The read scenario runs five phases with the same clients: /healthz
// alone (the server's floor: routing and JSON, no store), then the pool,
// the latest trades and auth/me each alone, then their 40/30/30 mix.
// Each phase's throughput is also given as a percentage of /healthz's.

const (
	epHealthz = "GET /healthz"
	epPool    = "GET /api/v1/pools/{id}"
	epLatest  = "GET /api/v1/market/trades/latest"
	epMe      = "GET /api/v1/auth/me"
)

// readMarkets is the default size of the read scenario's pool.
const readMarkets = 4

// readTrades is how many trades the setup makes, so that the latest
// trades are a full page of 50.
const readTrades = 60

// prepareRead trades readTrades times on the pool's markets, so that the
// pool has prices that moved, the latest trades a full page, and the
// users positions.
func prepareRead(ctx context.Context, a *api, cfg Config, fx *fixture) error {
	return parallel(ctx, readTrades, func(ctx context.Context, i int) error {
		u := fx.users[i%len(fx.users)]
		side := []string{"YES", "NO"}[i%2]
		return a.call(ctx, http.MethodPost, "/api/v1/markets/"+itoa(fx.markets[i%len(fx.markets)])+"/buy", u.auth,
			map[string]any{"side": side, "amount_kopecks": 500 + 10*i}, nil, http.StatusOK)
	})
}

func readPhases(fx *fixture, cfg Config) []phase {
	pool := "/api/v1/pools/" + itoa(fx.pools[0])
	// get returns a request of path, with client i's token when auth is set.
	get := func(path string, auth func(i int, s *session) string) func(ctx context.Context, s *session, i, ep int) {
		return func(ctx context.Context, s *session, i, ep int) {
			r := request{method: http.MethodGet, path: path}
			if auth != nil {
				r.auth = auth(i, s)
			}
			s.do(ctx, ep, r)
		}
	}
	me := func(i int, s *session) string {
		own := usersOf(fx.users, i, cfg.Clients)
		return own[s.rng.IntN(len(own))].auth
	}
	var phases []phase
	for _, e := range []struct {
		phase, endpoint, path string
		auth                  func(int, *session) string
	}{
		{"healthz", epHealthz, "/healthz", nil},
		{"pool", epPool, pool, nil},
		{"latest-trades", epLatest, "/api/v1/market/trades/latest", nil},
		{"auth-me", epMe, "/api/v1/auth/me", me},
	} {
		do := get(e.path, e.auth)
		phases = append(phases, phase{
			name: e.phase, share: 1, endpoints: []string{e.endpoint},
			client: func(i int) step { return func(ctx context.Context, s *session) { do(ctx, s, i, 0) } },
		})
	}
	doPool := get(pool, nil)
	doLatest := get("/api/v1/market/trades/latest", nil)
	doMe := get("/api/v1/auth/me", me)
	phases = append(phases, phase{
		name: "mix", share: 2, endpoints: []string{epPool, epLatest, epMe},
		client: func(i int) step {
			return func(ctx context.Context, s *session) {
				switch r := s.rng.IntN(10); {
				case r < 4:
					doPool(ctx, s, i, 0)
				case r < 7:
					doLatest(ctx, s, i, 1)
				default:
					doMe(ctx, s, i, 2)
				}
			}
		},
	})
	return phases
}

// relateToHealthz sets every phase's PercentOfHealthz when a phase named
// healthz ran.
func relateToHealthz(phases []PhaseReport) {
	var base float64
	for _, p := range phases {
		if p.Name == "healthz" {
			base = p.Throughput
		}
	}
	if base <= 0 {
		return
	}
	for i := range phases {
		if phases[i].Name != "healthz" {
			phases[i].PercentOfHealthz = 100 * phases[i].Throughput / base
		}
	}
}
