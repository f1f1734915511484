package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// The rules of making markets where two of them meet: a proposal is
// neither edited nor split before the operator approves it, and an event
// whose resolution is proposed is no longer edited.

func TestProposalsAreNeitherEditedNorSplitBeforeApproval(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) {
				c.Proposals, c.ProposalAnteKopecks = true, testAnte
			}))
			alice := h.register(t, "alice")
			h.credit(t, alice.id, 50000, false)
			ev := h.propose(t, alice.token, otherEvent())
			pool := ev.Pools[0].ID
			answer := map[string]any{"name": "Cid", "probability": 0.05}
			before := h.mustAudit(t)

			for _, c := range []struct {
				name string
				r    req
			}{
				{"the proposer's edit is 409 invalid_state", req{method: http.MethodPatch, path: eventPath(ev.ID), token: alice.token, body: map[string]any{"name": "Renamed"}}},
				{"the proposer's answer is 409 invalid_state", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/pools/%d/answers", pool), token: alice.token, body: answer}},
				{"the operator's answer is 409 invalid_state", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/pools/%d/answers", pool), token: adminToken, body: answer}},
			} {
				t.Run(c.name+" and writes nothing", func(t *testing.T) {
					r := h.do(t, c.r)
					expect(t, r, http.StatusConflict, "invalid_state")
					if after := h.mustAudit(t); after != before {
						t.Fatalf("the refusal wrote %d postings", after-before)
					}
					if got := h.createdPool(t, pool); len(got) != 3 {
						t.Fatalf("the proposal's pool holds %d markets after a refusal, want 3", len(got))
					}
				})
			}

			t.Run("once approved, its owner adds the answer", func(t *testing.T) {
				h.decide(t, ev.ID, "approve", nil, http.StatusOK, "")
				r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/pools/%d/answers", pool), token: alice.token, body: answer})
				expect(t, r, http.StatusCreated, "")
				if got := h.createdPool(t, pool); len(got) != 4 {
					t.Fatalf("the pool holds %d markets after the answer, want 4", len(got))
				}
				h.mustAudit(t)
			})
		})
	}
}

func TestAnEventWhoseResolutionIsProposedIsNotEdited(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h := newHarness(t, sc.new(t), challengeOn(time.Hour))
			creator := h.register(t, "creator")
			h.makeCreator(t, creator.id)
			ev := h.createEvent(t, creator.token, twoPoolEvent("Proposed before a trade"))
			p, m := ev.Pools[0], ev.Pools[0].Markets[0]
			close := fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", ev.ID, p.ID, m.ID)
			expect(t, h.do(t, req{method: http.MethodPost, path: close, token: creator.token, body: map[string]any{"won_side": "NO"}}), http.StatusOK, "")
			if h.resolutionOf(t, m.ID) == nil {
				t.Fatal("the close proposed nothing")
			}
			before := h.mustAudit(t)
			r := h.do(t, req{method: http.MethodPatch, path: eventPath(ev.ID), token: creator.token, body: map[string]any{"pools": []any{twoPoolEvent("x")["pools"].([]any)[0]}}})
			expect(t, r, http.StatusConflict, "event_resolved")
			if after := h.mustAudit(t); after != before {
				t.Fatalf("the refused edit wrote %d postings", after-before)
			}
			if h.resolutionOf(t, m.ID) == nil {
				t.Fatal("the refused edit dropped the proposed resolution")
			}
		})
	}
}
