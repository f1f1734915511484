package server_test

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// exclusiveEvent is an event with one exclusive pool of three markets at
// 0.5, 0.3 and 0.2, b = 10,000.
func exclusiveEvent() map[string]any {
	return map[string]any{"name": "Election", "pools": []any{map[string]any{
		"name": "Who wins", "margin": 0.02, "lmsr_b_kopecks": 10_000, "exclusive": true,
		"markets": []any{
			map[string]any{"name": "Ann", "probability": 0.5},
			map[string]any{"name": "Bob", "probability": 0.3},
			map[string]any{"name": "Cat", "probability": 0.2},
		}}}}
}

// TestExclusivePool: a pool created with "exclusive": true prices its
// markets as one LMSR. Its view says exclusive; a trade on one market
// moves every market's price, and the YES probabilities sum to 1 (each
// market's own within its q_no's rounding); quotes, trades and partner
// bets price against the whole pool; the audit holds the pool's one escrow
// to the payout of whichever market wins.
func TestExclusivePool(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		ev := h.createEvent(t, w.creator.token, exclusiveEvent())
		h.activate(t, w.creator.token, ev.ID, true)
		pool := func() apiPool {
			t.Helper()
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", ev.Pools[0].ID)})
			expect(t, r, http.StatusOK, "")
			var p apiPool
			r.decode(t, &p)
			if p.Exclusive == nil || !*p.Exclusive {
				t.Fatalf("the pool view says exclusive %v", p.Exclusive)
			}
			sum := 0.0
			for _, m := range p.Markets {
				sum += m.YesProbability
				// The binary formula on the view gives the market's price.
				if got := 1 / (1 + math.Exp(float64(m.QNo-m.QYes)/float64(m.B))); math.Abs(got-m.YesProbability) > 0.125/float64(m.B) {
					t.Fatalf("market %d: q_yes %d, q_no %d give %v, its price is %v", m.ID, m.QYes, m.QNo, got, m.YesProbability)
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("the pool's YES probabilities sum to %v", sum)
			}
			return p
		}
		if ev.Pools[0].Exclusive == nil || !*ev.Pools[0].Exclusive {
			t.Fatal("the created event's pool is not exclusive")
		}
		if w.poolA.Exclusive == nil || *w.poolA.Exclusive {
			t.Fatal("a pool created without exclusive is exclusive")
		}
		before := pool()
		ms := before.Markets

		r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/quote?side=YES&amount_kopecks=3000", ms[2].ID)})
		expect(t, r, http.StatusOK, "")
		var q struct {
			Shares int64 `json:"shares"`
		}
		r.decode(t, &q)
		tr := h.buy(t, w.alice.token, ms[2].ID, "YES", 3000)
		if tr.Shares != q.Shares {
			t.Fatalf("bought %d shares, quoted %d", tr.Shares, q.Shares)
		}
		after := pool()
		if after.Markets[2].YesProbability <= ms[2].YesProbability || after.Markets[0].YesProbability >= ms[0].YesProbability ||
			after.Markets[1].YesProbability >= ms[1].YesProbability {
			t.Fatalf("YES on Cat moved the prices from %+v to %+v", ms, after.Markets)
		}
		if after.Markets[0].QYes != ms[0].QYes || after.Markets[0].QNo == ms[0].QNo {
			t.Fatalf("Ann's market went from (%d, %d) to (%d, %d): want q_yes kept, q_no moved", ms[0].QYes, ms[0].QNo, after.Markets[0].QYes, after.Markets[0].QNo)
		}
		no := h.buy(t, w.bob.token, ms[0].ID, "NO", 5000)
		h.sell(t, w.bob.token, ms[0].ID, "NO", no.Shares/2)
		pool()

		bookie := h.createPartner(t, "Pool bookie", 100_000)
		rc := h.partnerBet(t, bookie.Key, map[string]any{"external_user_id": "p1", "market_id": ms[1].ID, "side": "yes",
			"amount_kopecks": 2000, "client_bet_id": "x1"})
		h.partnerSell(t, bookie.Key, map[string]any{"external_user_id": "p1", "market_id": ms[1].ID, "side": "yes",
			"shares": rc.SharesDelta, "client_bet_id": "x2"})
		pool()
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit: %v", problems)
		}
	})
}

// TestExclusivePoolRefusals: what an exclusive pool refuses at creation,
// each a 400 naming the field, and nothing created.
func TestExclusivePoolRefusals(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		for _, c := range []struct {
			name    string
			markets []any
			flag    any
			detail  string
		}{
			{"probabilities that sum to 0.9", []any{map[string]any{"name": "A", "probability": 0.5}, map[string]any{"name": "B", "probability": 0.4}}, true, "pools[0].markets"},
			{"probabilities that sum to 1.1", []any{map[string]any{"name": "A", "probability": 0.6}, map[string]any{"name": "B", "probability": 0.5}}, true, "pools[0].markets"},
			{"a single market", []any{map[string]any{"name": "A", "probability": 0.5}}, true, "pools[0].markets"},
			{"exclusive that is not a boolean", []any{map[string]any{"name": "A", "probability": 0.5}, map[string]any{"name": "B", "probability": 0.5}}, "yes", "exclusive"},
		} {
			t.Run(c.name+" is refused", func(t *testing.T) {
				body := map[string]any{"name": "Bad", "pools": []any{map[string]any{"name": "P", "margin": 0.02, "lmsr_b_kopecks": 10_000,
					"exclusive": c.flag, "markets": c.markets}}}
				r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: w.creator.token, body: body})
				expect(t, r, http.StatusBadRequest, "invalid_request")
				if !strings.Contains(string(r.body), c.detail) {
					t.Fatalf("the refusal does not name %s: %s", c.detail, r)
				}
			})
		}
		t.Run("probabilities that sum to 1 within 0.001 are accepted", func(t *testing.T) {
			body := map[string]any{"name": "Thirds", "pools": []any{map[string]any{"name": "P", "margin": 0.02, "lmsr_b_kopecks": 10_000,
				"exclusive": true, "markets": []any{map[string]any{"name": "A", "probability": 0.333}, map[string]any{"name": "B", "probability": 0.333},
					map[string]any{"name": "C", "probability": 0.333}}}}}
			ev := h.createEvent(t, w.creator.token, body)
			ps := ev.Pools[0].Markets
			if ps[0].QYes != ps[1].QYes || ps[1].QYes != ps[2].QYes {
				t.Fatalf("a pool given a third each opens at %+v", ps)
			}
		})
	})
}

// TestExclusivePoolResolution: closing a market of an exclusive pool with
// YES resolves the whole pool (that market YES, every other NO) and pays
// exactly; NO alone is 400 invalid request and changes nothing; of two
// concurrent closes of markets of one pool, one wins and the other is
// 409 market already resolved.
func TestExclusivePoolResolution(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		ev := h.createEvent(t, w.creator.token, exclusiveEvent())
		h.activate(t, w.creator.token, ev.ID, true)
		ms := ev.Pools[0].Markets
		yes := h.buy(t, w.alice.token, ms[1].ID, "YES", 4000)
		no := h.buy(t, w.bob.token, ms[0].ID, "NO", 3000)
		alice, bob := h.me(t, w.alice.token), h.me(t, w.bob.token)

		r := h.do(t, req{method: http.MethodPost, path: w.closePath(ev.ID, ev.Pools[0].ID, ms[0].ID), token: w.creator.token, body: map[string]any{"won_side": "NO"}})
		expect(t, r, http.StatusBadRequest, "invalid request")
		if h.market(t, ms[0].ID).Resolved {
			t.Fatal("NO alone resolved a market of an exclusive pool")
		}

		// Two closes at once: Bob's pick and Alice's.
		paths := []string{w.closePath(ev.ID, ev.Pools[0].ID, ms[1].ID), w.closePath(ev.ID, ev.Pools[0].ID, ms[2].ID)}
		rs := make([]*response, 2)
		var wg sync.WaitGroup
		for i := range rs {
			wg.Go(func() {
				rs[i] = h.do(t, req{method: http.MethodPost, path: paths[i], token: w.creator.token, body: map[string]any{"won_side": "YES"}})
			})
		}
		wg.Wait()
		winner := -1
		for i, r := range rs {
			switch r.status {
			case http.StatusOK:
				if winner >= 0 {
					t.Fatalf("both closes succeeded: %s, %s", rs[0], rs[1])
				}
				winner = i + 1
			case http.StatusConflict:
				if r.errorCode() != "market already resolved" {
					t.Fatalf("the losing close answered %s", r)
				}
			default:
				t.Fatalf("a close answered %s", r)
			}
		}
		if winner < 0 {
			t.Fatalf("no close succeeded: %s, %s", rs[0], rs[1])
		}
		for i, m := range ms {
			got := h.market(t, m.ID)
			want := "NO"
			if i == winner {
				want = "YES"
			}
			if !got.Resolved || got.WinningOutcome == nil || *got.WinningOutcome != want {
				t.Fatalf("market %d after the pool resolved: %+v, want %s", i, got, want)
			}
		}
		// Alice's YES on Bob's market pays if it won; Bob's NO on Ann's
		// market pays whoever of the others won.
		wantAlice, wantBob := alice.Balance, bob.Balance+no.Shares
		if winner == 1 {
			wantAlice += yes.Shares
		}
		if got := h.me(t, w.alice.token).Balance; got != wantAlice {
			t.Fatalf("Alice holds %d, want %d", got, wantAlice)
		}
		if got := h.me(t, w.bob.token).Balance; got != wantBob {
			t.Fatalf("Bob holds %d, want %d", got, wantBob)
		}
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit: %v", problems)
		}
	})
}

// TestExclusivePoolVoidAndOperator: VOID on any market of an exclusive
// pool voids the whole pool and refunds every net cost; the operator's
// resolution resolves a pool as the creator's close does, and refuses NO
// alone the same way.
func TestExclusivePoolVoidAndOperator(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		voided := h.createEvent(t, w.creator.token, exclusiveEvent())
		h.activate(t, w.creator.token, voided.ID, true)
		ms := voided.Pools[0].Markets
		before := h.me(t, w.alice.token).Balance
		h.buy(t, w.alice.token, ms[0].ID, "YES", 4000)
		h.buy(t, w.alice.token, ms[2].ID, "NO", 2000)
		r := h.do(t, req{method: http.MethodPost, path: w.closePath(voided.ID, voided.Pools[0].ID, ms[1].ID), token: w.creator.token, body: map[string]any{"won_side": "VOID"}})
		expect(t, r, http.StatusOK, "")
		if got := h.me(t, w.alice.token).Balance; got != before {
			t.Fatalf("Alice holds %d after the void, %d before her trades", got, before)
		}
		for i, m := range ms {
			if got := h.market(t, m.ID); !got.Resolved || got.WinningOutcome == nil || *got.WinningOutcome != "VOID" {
				t.Fatalf("market %d after the pool's void: %+v", i, got)
			}
		}

		ev := h.createEvent(t, w.creator.token, exclusiveEvent())
		h.activate(t, w.creator.token, ev.ID, true)
		ms = ev.Pools[0].Markets
		resolve := func(id int64, won string) *response {
			return h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/markets/%d/resolve", id), token: adminToken, body: map[string]any{"won_side": won}})
		}
		expect(t, resolve(ms[1].ID, "NO"), http.StatusBadRequest, "invalid request")
		expect(t, resolve(ms[1].ID, "YES"), http.StatusOK, "")
		expect(t, resolve(ms[0].ID, "YES"), http.StatusConflict, "market already resolved")
		for i, m := range ms {
			want := "NO"
			if i == 1 {
				want = "YES"
			}
			if got := h.market(t, m.ID); got.WinningOutcome == nil || *got.WinningOutcome != want {
				t.Fatalf("market %d after the operator resolved the pool: %+v, want %s", i, got, want)
			}
		}
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit: %v", problems)
		}
	})
}
