package bench

import (
	"context"
	"net/http"
)

// The read scenario runs one phase per read route with the same
// clients: /healthz alone (the server's floor: routing and JSON, no
// store), then each public read (the events feed's first page, an event,
// a pool, a market, the latest trades, the leaderboard's first page, a
// market's candles of the last day) and auth/me alone, then a 40/30/30
// mix of the pool, the latest trades and auth/me. Each phase's
// throughput is also given as a percentage of /healthz's.
//
// Every request is a full answer: the client sends no If-None-Match (nor
// any other conditional header), so a server that answers 304 to
// revalidations still renders each body; a 304 would count as an error.

const (
	epHealthz     = "GET /healthz"
	epEvents      = "GET /api/v1/events"
	epEvent       = "GET /api/v1/events/{id}"
	epPool        = "GET /api/v1/pools/{id}"
	epMarket      = "GET /api/v1/markets/{id}"
	epLatest      = "GET /api/v1/market/trades/latest"
	epLeaderboard = "GET /api/v1/leaderboard"
	epCandles     = "GET /api/v1/markets/{id}/candles"
	epMe          = "GET /api/v1/auth/me"
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
	mkt := "/api/v1/markets/" + itoa(fx.markets[0])
	var phases []phase
	for _, e := range []struct {
		phase, endpoint, path string
		auth                  func(int, *session) string
	}{
		{"healthz", epHealthz, "/healthz", nil},
		{"events", epEvents, "/api/v1/events", nil},
		{"event", epEvent, "/api/v1/events/" + itoa(fx.events[0]), nil},
		{"pool", epPool, pool, nil},
		{"market", epMarket, mkt, nil},
		{"latest-trades", epLatest, "/api/v1/market/trades/latest", nil},
		{"leaderboard", epLeaderboard, "/api/v1/leaderboard", nil},
		// 1m candles' default window is the last 24 hours.
		{"candles", epCandles, mkt + "/candles?interval=1m", nil},
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
