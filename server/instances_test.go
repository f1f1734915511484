package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// instance is one server serving a shared database on a local port.
type instance struct {
	h     *harness
	store server.Store
}

// startInstance builds a server on databaseURL with server.Build (which
// runs no start hook: the schema must be migrated already), serves it on
// 127.0.0.1:0 and stops it, and closes the pool it opened, when t ends.
func startInstance(t *testing.T, databaseURL string, batch int) *instance {
	t.Helper()
	_, router := openAPI(t)
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.DatabaseURL = databaseURL
	cfg.TradeBatchSize = batch
	var store server.Store
	app, err := server.Build(cfg, fx.Populate(&store))
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	t.Cleanup(func() {
		if err := app.ShutdownWithTimeout(10 * time.Second); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
		// The pool belongs to the app, whose stop hook (which Build never
		// arms) would close it.
		if c, ok := store.(interface{ Close() }); ok {
			c.Close()
		}
	})
	return &instance{h: &harness{base: ln.Addr().String(), router: router, store: store}, store: store}
}

// answer is a request sent from a goroutine and what came back.
type answer struct {
	r      req
	status int
	header http.Header
	body   []byte
	err    error
}

// instClient keeps connections to both instances alive across requests.
var instClient = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64},
}

// call is h.do without a *testing.T, for goroutines: the answer is
// checked against the OpenAPI document afterwards, by checkAnswers.
func call(base string, r req) answer {
	a := answer{r: r}
	raw, err := json.Marshal(r.body)
	if err != nil {
		a.err = err
		return a
	}
	hr, err := http.NewRequest(r.method, "http://"+base+r.path, bytes.NewReader(raw))
	if err != nil {
		a.err = err
		return a
	}
	hr.Header.Set("Content-Type", "application/json")
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	res, err := instClient.Do(hr)
	if err != nil {
		a.err = err
		return a
	}
	defer res.Body.Close()
	a.status, a.header = res.StatusCode, res.Header
	a.body, a.err = io.ReadAll(res.Body)
	return a
}

func checkAnswers(t *testing.T, h *harness, as []answer) {
	t.Helper()
	for _, a := range as {
		if a.err != nil {
			t.Fatalf("%s %s: %v", a.r.method, a.r.path, a.err)
		}
		hr := httptest.NewRequest(a.r.method, a.r.path, nil)
		h.validate(t, a.r, hr, &response{status: a.status, header: a.header, body: a.body})
	}
}

// TestTwoInstancesKeepTheAuditBalanced runs two servers on one database,
// each with its own pool and its own group commit, under concurrent
// trading on both: users' trades split across the instances (the same
// user on both at once) and a partner that sends every bet to both
// instances at the same time, as a client retrying through a load
// balancer would. The row locks in the database are all that orders
// them. Afterwards the ledger and the escrows audit clean through either
// instance, every accepted answer is exactly one trade in the log, and
// closing the markets pays everyone what the trade log says.
func TestTwoInstancesKeepTheAuditBalanced(t *testing.T) {
	url := pgtest.SchemaURL(t) // skips without a database
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := postgres.Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	a, b := startInstance(t, url, 16), startInstance(t, url, 16)
	ha, hb := a.h, b.h

	const users, credit = 8, 2_000_000
	creator := ha.register(t, "creator")
	ha.makeCreator(t, creator.id)
	traders := make([]apiUser, users)
	for i := range traders {
		traders[i] = ha.register(t, fmt.Sprintf("trader%d", i))
		ha.credit(t, traders[i].id, credit, false)
	}
	ev := ha.createEvent(t, creator.token, map[string]any{
		"name": "Two instances",
		"pools": []any{map[string]any{"name": "Winner", "margin": 0.02, "lmsr_b_kopecks": 500_000,
			"markets": []any{
				map[string]any{"name": "M1", "probability": 0.5},
				map[string]any{"name": "M2", "probability": 0.3},
				map[string]any{"name": "M3", "probability": 0.2},
			}}},
	})
	ha.activate(t, creator.token, ev.ID, true)
	ms := ev.Pools[0].Markets
	const float = 5_000_000
	p := ha.createPartner(t, "Bookie", float)
	// The other instance sees what the first one wrote.
	if got := hb.market(t, ms[2].ID); got.ID != ms[2].ID || got.Resolved {
		t.Fatalf("instance B reads market %+v", got)
	}

	const traderGoroutines = 16
	deadline := time.Now().Add(2 * time.Second)
	answers := make([][]answer, traderGoroutines)
	type betPair struct{ first, second answer }
	var bets []betPair
	var wg sync.WaitGroup
	for g := range traderGoroutines {
		u := traders[g%users]
		base := []string{ha.base, hb.base}[g%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for time.Now().Before(deadline) {
				m := ms[rng.IntN(len(ms))]
				side := []string{"YES", "NO"}[rng.IntN(2)]
				r := req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", m.ID), token: u.token,
					body: map[string]any{"side": side, "amount_kopecks": 500 + rng.Int64N(20_000)}}
				if rng.IntN(3) == 0 {
					r = req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/sell", m.ID), token: u.token,
						body: map[string]any{"side": side, "shares": 100 + rng.Int64N(20_000)}}
				}
				answers[g] = append(answers[g], call(base, r))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(99, 7))
		for i := 0; time.Now().Before(deadline); i++ {
			r := betReq(p.Key, map[string]any{
				"external_user_id": fmt.Sprintf("client-%d", rng.IntN(4)), "market_id": ms[rng.IntN(len(ms))].ID,
				"side": []string{"yes", "no"}[rng.IntN(2)], "amount_kopecks": 1000 + rng.Int64N(10_000),
				"client_bet_id": fmt.Sprintf("bet-%d", i),
			})
			var pair betPair
			var both sync.WaitGroup
			both.Add(2)
			go func() { defer both.Done(); pair.first = call(ha.base, r) }()
			go func() { defer both.Done(); pair.second = call(hb.base, r) }()
			both.Wait()
			bets = append(bets, pair)
		}
	}()
	wg.Wait()

	// Every answer is documented; count what was accepted.
	accepted := 0
	refused := map[string]int{}
	for g := range answers {
		checkAnswers(t, []*harness{ha, hb}[g%2], answers[g])
		for _, an := range answers[g] {
			switch {
			case an.status == http.StatusOK:
				accepted++
			case an.status == http.StatusBadRequest || an.status == http.StatusConflict:
				refused[(&response{body: an.body}).errorCode()]++
			default:
				t.Fatalf("%s %s answered %d %s", an.r.method, an.r.path, an.status, an.body)
			}
		}
	}
	for code := range refused {
		switch code {
		case "insufficient_shares", "insufficient_funds", "trade_refused", "price_moved":
		default:
			t.Errorf("a trade was refused with %q", code)
		}
	}
	var partnerPaid int64
	for _, pair := range bets {
		checkAnswers(t, ha, []answer{pair.first})
		checkAnswers(t, hb, []answer{pair.second})
		if pair.first.status != http.StatusOK || pair.second.status != http.StatusOK || !bytes.Equal(pair.first.body, pair.second.body) {
			t.Fatalf("a bet sent to both instances answered\nA: %d %s\nB: %d %s", pair.first.status, pair.first.body, pair.second.status, pair.second.body)
		}
		fresh := 0
		for _, an := range []answer{pair.first, pair.second} {
			if an.header.Get(server.HeaderIdempotentReplayed) == "" {
				fresh++
			}
		}
		if fresh != 1 {
			t.Fatalf("%d of the two answers to one bet say they executed, want 1: %s", fresh, pair.first.body)
		}
		var rc apiReceipt
		(&response{body: pair.first.body}).decode(t, &rc)
		partnerPaid += rc.CostKopecks
	}
	if accepted == 0 || len(bets) == 0 {
		t.Fatalf("%d trades and %d bets were accepted", accepted, len(bets))
	}
	t.Logf("%d user trades accepted, %v refused; %d partner bets, each sent to both instances", accepted, refused, len(bets))

	var trades []*market.Trade
	for _, m := range ms {
		ts, err := a.store.Trades(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		trades = append(trades, ts...)
	}
	if len(trades) != accepted+len(bets) {
		t.Fatalf("the trade log holds %d trades; %d user trades and %d bets were accepted", len(trades), accepted, len(bets))
	}
	for _, h := range []*harness{ha, hb} {
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit through %s: %v", h.base, problems)
		}
	}
	if got := hb.partner(t, p.ID).FloatKopecks; got != float-partnerPaid {
		t.Fatalf("float %d, want %d - %d", got, float, partnerPaid)
	}

	// Close every market through one instance: each user gets a kopeck a
	// share of the winning side they hold, as the trade log counts them.
	won := map[int64]market.Side{ms[0].ID: market.Yes, ms[1].ID: market.No, ms[2].ID: market.No}
	for _, m := range ms {
		r := ha.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", ev.ID, ev.Pools[0].ID, m.ID),
			token: creator.token, body: map[string]any{"won_side": strings.ToUpper(won[m.ID].String())}})
		expect(t, r, http.StatusOK, "")
	}
	want := map[int64]int64{}
	for _, u := range traders {
		want[u.id] = credit
	}
	for _, tr := range trades {
		if _, ok := want[tr.UserID]; !ok {
			continue // a partner's client
		}
		sign := int64(1)
		if tr.Action == market.ActionBuy {
			want[tr.UserID] -= tr.Amount
		} else {
			want[tr.UserID] += tr.Amount
			sign = -1
		}
		if tr.Side == won[tr.MarketID] {
			want[tr.UserID] += sign * tr.Shares
		}
	}
	for i, u := range traders {
		prof := []*harness{ha, hb}[i%2].me(t, u.token)
		if prof.Balance != want[u.id] || len(prof.Positions) != 0 {
			t.Errorf("trader %d: balance %d, want %d; open positions %+v", u.id, prof.Balance, want[u.id], prof.Positions)
		}
	}
	for _, h := range []*harness{ha, hb} {
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit through %s after closing: %v", h.base, problems)
		}
	}
}
