package server_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"
)

// otherEvent is an event with one exclusive pool of Ann (0.5), Bob (0.3)
// and Other (0.2, "other": true), b = 10,000, as the docs' example.
func otherEvent() map[string]any {
	return map[string]any{"name": "Election", "pools": []any{map[string]any{
		"name": "Who wins", "margin": 0, "lmsr_b_kopecks": 10_000, "exclusive": true,
		"markets": []any{
			map[string]any{"name": "Ann", "probability": 0.5},
			map[string]any{"name": "Bob", "probability": 0.3},
			map[string]any{"name": "Other", "probability": 0.2, "other": true},
		}}}}
}

type apiAnswerMarket struct {
	apiMarket
	Other *bool `json:"other"`
}

// TestAnswersAddedLater: POST /pools/{id}/answers splits the pool's Other
// answer for the event's creator (and the operator's twin for any pool):
// 201 the new market, every other price kept, the holders notified, the
// audit holding, and each holder paid at the resolution what the holdings
// before the split paid.
func TestAnswersAddedLater(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		ev := h.createEvent(t, w.creator.token, otherEvent())
		h.activate(t, w.creator.token, ev.ID, true)
		pool := ev.Pools[0]
		path := fmt.Sprintf("/api/v1/pools/%d/answers", pool.ID)
		ann, other := pool.Markets[0], pool.Markets[2]
		readPool := func() []apiAnswerMarket {
			t.Helper()
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", pool.ID)})
			expect(t, r, http.StatusOK, "")
			var p struct {
				Markets []apiAnswerMarket `json:"markets"`
			}
			r.decode(t, &p)
			return p.Markets
		}
		if ms := readPool(); ms[2].Other == nil || !*ms[2].Other || *ms[0].Other {
			t.Fatalf("the pool's markets say other %v, %v, %v", ms[0].Other, ms[1].Other, ms[2].Other)
		}
		h.buy(t, w.alice.token, ann.ID, "YES", 2000)
		h.buy(t, w.alice.token, other.ID, "YES", 1000)
		h.buy(t, w.bob.token, other.ID, "NO", 3000)
		before := readPool()
		aliceBefore, bobBefore := h.me(t, w.alice.token), h.me(t, w.bob.token)

		t.Run("the creator adds an answer and gets 201 with the new market", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: path, token: w.creator.token,
				body: map[string]any{"name": "Cid", "name_ru": "Сид", "probability": 0.05}})
			expect(t, r, http.StatusCreated, "")
			var m apiAnswerMarket
			r.decode(t, &m)
			if m.Name != "Cid" || m.PoolID != pool.ID || m.OutcomeIndex != 3 || m.Other == nil || *m.Other || math.Abs(m.YesProbability-0.05) > 1e-3 {
				t.Fatalf("the new market reads %+v", m)
			}
			after := readPool()
			if len(after) != 4 {
				t.Fatalf("the pool has %d markets after the split", len(after))
			}
			for i := range 2 {
				if d := after[i].YesProbability - before[i].YesProbability; math.Abs(d) > 1e-3 {
					t.Fatalf("market %d's price moved by %v", i, d)
				}
			}
			if d := after[2].YesProbability + after[3].YesProbability - before[2].YesProbability; math.Abs(d) > 1e-3 {
				t.Fatalf("Other and Cid sum to %v, Other was %v", after[2].YesProbability+after[3].YesProbability, before[2].YesProbability)
			}
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("audit after the split: %v", problems)
			}
		})

		t.Run("every holder is notified", func(t *testing.T) {
			for _, u := range []apiUser{w.alice, w.bob} {
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications", token: u.token})
				expect(t, r, http.StatusOK, "")
				var ns struct {
					Notifications []struct {
						Type string `json:"type"`
					} `json:"notifications"`
				}
				r.decode(t, &ns)
				if len(ns.Notifications) == 0 || ns.Notifications[0].Type != "answer_added" {
					t.Fatalf("%s's newest notification: %+v", u.name, ns)
				}
			}
		})

		t.Run("the operator adds an answer to any pool", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/pools/%d/answers", pool.ID), token: adminToken,
				body: map[string]any{"name": "Dee", "probability": 0.02}})
			expect(t, r, http.StatusCreated, "")
		})

		t.Run("the pool resolved on the new answer pays the old Other's holders", func(t *testing.T) {
			ms := readPool()
			r := h.do(t, req{method: http.MethodPost, path: w.closePath(ev.ID, pool.ID, ms[3].ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}})
			expect(t, r, http.StatusOK, "")
			// Alice's YES on Other (its shares) is paid, Bob's NO on Other is not.
			alice, bob := h.me(t, w.alice.token), h.me(t, w.bob.token)
			if alice.Balance <= aliceBefore.Balance || bob.Balance != bobBefore.Balance {
				t.Fatalf("Cid won: alice %d → %d, bob %d → %d", aliceBefore.Balance, alice.Balance, bobBefore.Balance, bob.Balance)
			}
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("audit after the resolution: %v", problems)
			}
		})
	})
}

// TestAnswersAddedLaterRefusals: every rule of the route, each refusal
// changing nothing.
func TestAnswersAddedLaterRefusals(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		ev := h.createEvent(t, w.creator.token, otherEvent())
		h.activate(t, w.creator.token, ev.ID, true)
		pool := ev.Pools[0]
		path := fmt.Sprintf("/api/v1/pools/%d/answers", pool.ID)
		plain := h.createEvent(t, w.creator.token, exclusiveEvent())
		done := h.createEvent(t, w.creator.token, otherEvent())
		h.activate(t, w.creator.token, done.ID, true)
		dp := done.Pools[0]
		r := h.do(t, req{method: http.MethodPost, path: w.closePath(done.ID, dp.ID, dp.Markets[0].ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}})
		expect(t, r, http.StatusOK, "")
		other := pool.Markets[2].YesProbability
		ok := map[string]any{"name": "Cid", "probability": 0.05}
		for _, c := range []struct {
			name   string
			r      req
			status int
			code   string
		}{
			{"no token is 401", req{method: http.MethodPost, path: path, body: ok}, 401, "unauthorized"},
			{"a pool id that is not a number is 400 invalid_pool_id", req{method: http.MethodPost, path: "/api/v1/pools/x/answers", token: w.creator.token, body: ok}, 400, "invalid_pool_id"},
			{"an unknown pool is 404", req{method: http.MethodPost, path: "/api/v1/pools/999999/answers", token: w.creator.token, body: ok}, 404, "pool_not_found"},
			{"another user is 403", req{method: http.MethodPost, path: path, token: w.alice.token, body: ok}, 403, "forbidden"},
			{"a probability at Other's is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"name": "Cid", "probability": other}}, 400, "invalid_request"},
			{"a probability above Other's is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"name": "Cid", "probability": 0.5}}, 400, "invalid_request"},
			{"a probability of 0 is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"name": "Cid", "probability": 0}}, 400, "invalid_request"},
			{"a negative probability is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"name": "Cid", "probability": -0.1}}, 400, "invalid_request"},
			{"no probability is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"name": "Cid"}}, 400, "invalid_request"},
			{"a probability that is a string is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"name": "Cid", "probability": "0.1"}}, 400, "invalid_request"},
			{"no name is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"probability": 0.05}}, 400, "invalid_request"},
			{"an unknown field is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"name": "Cid", "probability": 0.05, "other": true}}, 400, "invalid_request"},
			{"a body that is not JSON is 400", req{method: http.MethodPost, path: path, token: w.creator.token, body: "{", header: map[string]string{"Content-Type": "application/json"}}, 400, "invalid_request"},
			{"a pool without Other is 409", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/pools/%d/answers", plain.Pools[0].ID), token: w.creator.token, body: ok}, 409, "invalid_state"},
			{"a binary pool is 409", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/pools/%d/answers", w.poolA.ID), token: w.creator.token, body: ok}, 409, "invalid_state"},
			{"a resolved pool is 409", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/pools/%d/answers", dp.ID), token: w.creator.token, body: ok}, 409, "invalid_state"},
			{"the operator's route without the token is 401", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/pools/%d/answers", pool.ID), body: ok}, 401, "unauthorized"},
			{"the operator's route on an unknown pool is 404", req{method: http.MethodPost, path: "/api/v1/admin/pools/999999/answers", token: adminToken, body: ok}, 404, "pool_not_found"},
			{"the operator's route on a pool without Other is 409", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/pools/%d/answers", plain.Pools[0].ID), token: adminToken, body: ok}, 409, "invalid_state"},
		} {
			t.Run(c.name, func(t *testing.T) {
				expect(t, h.do(t, c.r), c.status, c.code)
			})
		}
		if got := len(h.createdPool(t, pool.ID)); got != 3 {
			t.Fatalf("after the refusals the pool has %d markets", got)
		}
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit: %v", problems)
		}
	})
}

// TestOtherAtCreation: "other" marks at most one market of an exclusive
// pool; on a binary pool, or twice, the event is 400 and not created.
func TestOtherAtCreation(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		for _, c := range []struct {
			name      string
			exclusive bool
			markets   []any
		}{
			{"on a binary pool", false, []any{map[string]any{"name": "A", "probability": 0.5, "other": true}}},
			{"twice in one pool", true, []any{map[string]any{"name": "A", "probability": 0.5, "other": true}, map[string]any{"name": "B", "probability": 0.5, "other": true}}},
			{"that is not a boolean", true, []any{map[string]any{"name": "A", "probability": 0.5, "other": "yes"}, map[string]any{"name": "B", "probability": 0.5}}},
		} {
			t.Run("other "+c.name+" is refused", func(t *testing.T) {
				body := map[string]any{"name": "Bad", "pools": []any{map[string]any{"name": "P", "margin": 0.02, "lmsr_b_kopecks": 10_000,
					"exclusive": c.exclusive, "markets": c.markets}}}
				r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: w.creator.token, body: body})
				expect(t, r, http.StatusBadRequest, "invalid_request")
			})
		}
	})
}

// createdPool reads pool id's markets.
func (h *harness) createdPool(t *testing.T, id int64) []apiMarket {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/pools/%d", id)})
	expect(t, r, http.StatusOK, "")
	var p apiPool
	r.decode(t, &p)
	return p.Markets
}

// TestAnswersAddedLaterAfterAProposal: with the challenge window, a
// creator's close proposes the pool's winner and pauses the pool; an
// answer is then 409 invalid_state and changes nothing.
func TestAnswersAddedLaterAfterAProposal(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h := newHarness(t, sc.new(t), challengeOn(time.Hour))
			w := newWorld(t, h)
			ev := h.createEvent(t, w.creator.token, otherEvent())
			h.activate(t, w.creator.token, ev.ID, true)
			pool := ev.Pools[0]
			h.buy(t, w.alice.token, pool.Markets[2].ID, "YES", 1000)
			r := h.do(t, req{method: http.MethodPost, path: w.closePath(ev.ID, pool.ID, pool.Markets[0].ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}})
			expect(t, r, http.StatusOK, "")
			r = h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/pools/%d/answers", pool.ID), token: w.creator.token,
				body: map[string]any{"name": "Cid", "probability": 0.05}})
			expect(t, r, http.StatusConflict, "invalid_state")
			r = h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/pools/%d/answers", pool.ID), token: adminToken,
				body: map[string]any{"name": "Cid", "probability": 0.05}})
			expect(t, r, http.StatusConflict, "invalid_state")
			if got := len(h.createdPool(t, pool.ID)); got != 3 {
				t.Fatalf("the proposed pool has %d markets", got)
			}
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("audit: %v", problems)
			}
		})
	}
}
