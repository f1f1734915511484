package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// BenchmarkProfileHandler10kClosed times GET /api/v1/auth/me, the whole
// handler through app.Test, on PostgreSQL for a user with 5 open and
// 10,000 closed positions among 100,000 closed positions of ten users:
// the target is under 10 ms. storage/postgres's
// BenchmarkProfile10kClosed times the reads one by one.
func BenchmarkProfileHandler10kClosed(b *testing.B) {
	ctx := context.Background()
	store := pgtest.New(b)
	accounts := account.NewService(store)
	accounts.BcryptCost = bcrypt.MinCost
	markets := market.NewService(store, accounts)

	creator, _, err := accounts.Register(ctx, account.Registration{Email: "creator@bench.predictkit", Password: "password123", Name: "creator"})
	if err != nil {
		b.Fatal(err)
	}
	yes := true
	if creator, err = accounts.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: &yes}); err != nil {
		b.Fatal(err)
	}
	np := market.NewPool{Name: "Winner", Margin: 0.02, B: 100_000}
	for i := range market.MaxMarketsPerPool {
		np.Markets = append(np.Markets, market.NewMarket{Name: fmt.Sprintf("Outcome %d", i), Probability: 0.5})
	}
	ev, err := markets.CreateEvent(ctx, creator, market.NewEvent{Name: "Season", Pools: []market.NewPool{np}})
	if err != nil {
		b.Fatal(err)
	}
	u, token, err := accounts.Register(ctx, account.Registration{Email: "profile@bench.predictkit", Password: "password123", Name: "profile"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := accounts.Credit(ctx, u.ID, 1_000_000, false); err != nil {
		b.Fatal(err)
	}
	ids := make([]int64, len(ev.Pools[0].Markets))
	for i, m := range ev.Pools[0].Markets {
		ids[i] = m.ID
		if i < 5 {
			if _, err := markets.Execute(ctx, m.ID, market.Request{UserID: u.ID, Side: market.Yes, Action: market.ActionBuy, Amount: 1000}); err != nil {
				b.Fatal(err)
			}
		}
	}
	// 10,000 closed positions for u and as many for each of nine others,
	// closed a minute apart, sold, lost or won.
	at := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := store.DB().Exec(ctx, `WITH
others AS (INSERT INTO users (name, created_at) SELECT 'other ' || k, $4 FROM generate_series(1, 9) k RETURNING id),
holders AS (SELECT $1::bigint AS id UNION ALL SELECT id FROM others)
INSERT INTO positions (user_id, market_id, side, shares, cost_basis, bought, spent, returned, created_at, updated_at, closed_at, won_side)
SELECT h.id, ($2::bigint[])[1 + g % cardinality($2::bigint[])], g % 2, 0, 0, 1000, 600 + g % 400,
	CASE g % 3 WHEN 0 THEN 0 ELSE (g * 7919) % 1100 END,
	$4 - make_interval(mins => g + 10), $4 - make_interval(mins => g), $4 - make_interval(mins => g), g % 3 - 1
FROM holders h CROSS JOIN generate_series(1, $3::int) g
ORDER BY g, h.id`, u.ID, ids, 10_000, at); err != nil {
		b.Fatal(err)
	}
	if _, err := store.DB().Exec(ctx, `VACUUM ANALYZE positions`); err != nil {
		b.Fatal(err)
	}

	cfg := testConfig(store)
	app, err := server.Build(cfg)
	if err != nil {
		b.Fatal(err)
	}
	get := func() (int, []byte) {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/auth/me", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		res, err := app.Test(r, -1)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			b.Fatal(err)
		}
		return res.StatusCode, body
	}
	st, body := get()
	var me struct {
		User apiProfile `json:"user"`
	}
	if err := json.Unmarshal(body, &me); st != http.StatusOK || err != nil || me.User.TotalPredictions != 10_000 ||
		len(me.User.Positions) != 5 || len(me.User.ClosedPositions) != market.ClosedInProfile || !me.User.ClosedPositionsHasMore {
		b.Fatalf("GET /auth/me answered %d %.300s", st, body)
	}
	for b.Loop() {
		get()
	}
}
