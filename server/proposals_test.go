package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/server"
)

const testAnte = 10000

// eachStoreProposing runs f once per store on a server that takes
// proposals with an ante of testAnte.
func eachStoreProposing(t *testing.T, f func(t *testing.T, h *harness)) {
	t.Helper()
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			f(t, newHarness(t, sc.new(t), withConfig(func(c *server.Config) {
				c.Proposals, c.ProposalAnteKopecks = true, testAnte
			})))
		})
	}
}

// apiProposed is an event as the proposal routes answer it.
type apiProposed struct {
	apiEvent
	Status   string `json:"status"`
	Proposal *struct {
		AnteKopecks int64   `json:"ante_kopecks"`
		DecidedAt   *string `json:"decided_at"`
		Reason      string  `json:"reason"`
		Refunded    bool    `json:"refunded"`
	} `json:"proposal"`
}

// propose has token propose body and answers the proposal (201).
func (h *harness) propose(t *testing.T, token string, body any) apiProposed {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: token, body: body})
	expect(t, r, http.StatusCreated, "")
	var e apiProposed
	r.decode(t, &e)
	if e.Status != "proposed" || e.Proposal == nil || e.Proposal.AnteKopecks != testAnte || e.Proposal.DecidedAt != nil || e.IsActive {
		t.Fatalf("proposed: %s", r)
	}
	return e
}

// decide posts the operator's decision (approve, or reject with body)
// on event id and answers the event.
func (h *harness) decide(t *testing.T, id int64, what string, body any, status int, code string) apiProposed {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/events/%d/%s", id, what), token: adminToken, body: body})
	expect(t, r, status, code)
	var e apiProposed
	if status == http.StatusOK {
		r.decode(t, &e)
	}
	return e
}

// ledger reads one account's balance from the store.
func (h *harness) ledger(t *testing.T, ref account.Ref) int64 {
	t.Helper()
	b, err := h.store.Balance(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// preview answers POST /events/preview's total subsidy for body.
func (h *harness) preview(t *testing.T, token string, body any) int64 {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events/preview", token: token, body: body})
	expect(t, r, http.StatusOK, "")
	var p struct {
		SubsidyKopecks int64 `json:"subsidy_kopecks"`
	}
	r.decode(t, &p)
	return p.SubsidyKopecks
}

// notificationTypes lists the types of token's notifications, newest
// first, with their messages.
func (h *harness) notificationTypes(t *testing.T, token string) (types, messages []string) {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/notifications", token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Notifications []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"notifications"`
	}
	r.decode(t, &out)
	for _, n := range out.Notifications {
		types, messages = append(types, n.Type), append(messages, n.Message)
	}
	return types, messages
}

// TestProposalsOff: without PREDICTKIT_PROPOSALS a user who is not a
// creator may neither create, propose nor preview, and the profile says so.
func TestProposalsOff(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		u := h.register(t, "plain")
		h.credit(t, u.id, 50000, false)
		for _, path := range []string{"/api/v1/events", "/api/v1/events/preview"} {
			r := h.do(t, req{method: http.MethodPost, path: path, token: u.token, body: twoPoolEvent("x")})
			expect(t, r, http.StatusForbidden, "forbidden")
		}
		r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: u.token})
		expect(t, r, http.StatusOK, "")
		var me struct {
			User struct {
				MayCreate  bool  `json:"may_create_events"`
				MayPropose bool  `json:"may_propose_events"`
				Ante       int64 `json:"proposal_ante_kopecks"`
			} `json:"user"`
		}
		r.decode(t, &me)
		if me.User.MayCreate || me.User.MayPropose || me.User.Ante != 0 {
			t.Fatalf("profile: %+v", me.User)
		}
		h.mustAudit(t)
	})
}

// TestProposals: a proposal holds its ante and nothing else until the
// operator decides; approval and rejection move exactly what they say.
func TestProposals(t *testing.T) {
	eachStoreProposing(t, func(t *testing.T, h *harness) {
		creator, alice, bob := h.register(t, "creator"), h.register(t, "alice"), h.register(t, "bob")
		h.makeCreator(t, creator.id)
		h.credit(t, alice.id, 50000, false)
		h.credit(t, bob.id, 100000, false)

		t.Run("the profile says who may create and who may propose, with the ante", func(t *testing.T) {
			for _, c := range []struct {
				token           string
				create, propose bool
				ante            int64
			}{{creator.token, true, false, 0}, {alice.token, false, true, testAnte}} {
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: c.token})
				expect(t, r, http.StatusOK, "")
				var me struct {
					User struct {
						MayCreate  bool  `json:"may_create_events"`
						MayPropose bool  `json:"may_propose_events"`
						Ante       int64 `json:"proposal_ante_kopecks"`
					} `json:"user"`
				}
				r.decode(t, &me)
				if me.User.MayCreate != c.create || me.User.MayPropose != c.propose || me.User.Ante != c.ante {
					t.Fatalf("profile: %+v, want %v %v %d", me.User, c.create, c.propose, c.ante)
				}
			}
		})

		t.Run("a proposal without the ante is 400 insufficient_funds, and the bonus does not count", func(t *testing.T) {
			poor := h.register(t, "poor")
			h.credit(t, poor.id, testAnte-1, false)
			h.credit(t, poor.id, 1_000_000, true)
			before := h.mustAudit(t)
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: poor.token, body: twoPoolEvent("Too poor")})
			expect(t, r, http.StatusBadRequest, "insufficient_funds")
			if after := h.mustAudit(t); after != before {
				t.Fatalf("the refused proposal wrote %d postings", after-before)
			}
			if me := h.me(t, poor.token); me.Balance != testAnte-1 || me.BonusBalance != 1_000_000 {
				t.Fatalf("balances %d + %d after a refused proposal", me.Balance, me.BonusBalance)
			}
		})

		same := h.createEvent(t, creator.token, twoPoolEvent("Same"))
		want := h.preview(t, creator.token, twoPoolEvent("Same"))
		if h.preview(t, alice.token, twoPoolEvent("Same")) != want {
			t.Fatal("the preview of a proposal differs from a creator's")
		}
		ev := h.propose(t, alice.token, twoPoolEvent("Alice's"))

		t.Run("the proposal holds the ante, posts no subsidy and cannot be shown, traded or resolved", func(t *testing.T) {
			if me := h.me(t, alice.token); me.Balance != 50000-testAnte {
				t.Fatalf("balance %d, want %d", me.Balance, 50000-testAnte)
			}
			if got := h.ledger(t, account.AnteAccount(ev.ID)); got != testAnte {
				t.Fatalf("ante account %d", got)
			}
			for _, p := range ev.Pools {
				for _, m := range p.Markets {
					if b := h.ledger(t, account.EscrowAccount(m.ID)); b != 0 {
						t.Fatalf("escrow of market %d holds %d before approval", m.ID, b)
					}
				}
			}
			m := ev.Pools[0].Markets[0]
			refused := []struct {
				name   string
				r      req
				status int
				code   string
			}{
				{"its proposer may not show it", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/active", ev.ID), token: alice.token,
					body: map[string]any{"is_active": true}}, http.StatusConflict, "invalid_state"},
				{"the operator may not show it", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/events/%d/active", ev.ID), token: adminToken,
					body: map[string]any{"is_active": true}}, http.StatusConflict, "invalid_state"},
				{"its market takes no buy by id", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", m.ID), token: bob.token,
					body: map[string]any{"side": "YES", "amount_kopecks": 1000}}, http.StatusConflict, "market_closed"},
				{"its market gives no quote", req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/quote?side=YES&amount_kopecks=1000", m.ID)}, http.StatusConflict, "market_closed"},
				{"its proposer may not resolve it", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", ev.ID, m.PoolID, m.ID), token: alice.token,
					body: map[string]any{"won_side": "YES"}}, http.StatusConflict, "invalid_state"},
				{"the operator may not resolve it", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/markets/%d/resolve", m.ID), token: adminToken,
					body: map[string]any{"won_side": "YES"}}, http.StatusConflict, "invalid_state"},
			}
			for _, c := range refused {
				t.Run(c.name, func(t *testing.T) {
					before := h.mustAudit(t)
					expect(t, h.do(t, c.r), c.status, c.code)
					if after := h.mustAudit(t); after != before {
						t.Fatalf("the refused request wrote %d postings", after-before)
					}
				})
			}
			if feedHas(t, h, ev.ID) {
				t.Fatal("a proposal is in the feed")
			}
		})

		t.Run("the queue lists the proposal with its proposer and ante", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/events?status=proposed", token: adminToken})
			expect(t, r, http.StatusOK, "")
			var q struct {
				Events []struct {
					ID       int64 `json:"id"`
					Proposer struct {
						ID int64 `json:"id"`
					} `json:"proposer"`
					Ante int64 `json:"ante_kopecks"`
				} `json:"events"`
			}
			r.decode(t, &q)
			if len(q.Events) != 1 || q.Events[0].ID != ev.ID || q.Events[0].Proposer.ID != alice.id || q.Events[0].Ante != testAnte {
				t.Fatalf("queue: %s", r)
			}
		})

		t.Run("approval posts the subsidy a creator's event posts, returns the ante, lists the event and notifies", func(t *testing.T) {
			treasury := h.ledger(t, account.Treasury)
			got := h.decide(t, ev.ID, "approve", nil, http.StatusOK, "")
			if got.Status != "approved" || !got.IsActive || got.Proposal == nil || got.Proposal.DecidedAt == nil {
				t.Fatalf("approved: %+v", got)
			}
			if moved := treasury - h.ledger(t, account.Treasury); moved != want {
				t.Fatalf("the treasury escrowed %d, want %d (the preview's, and what %q's creation posted)", moved, want, same.Name)
			}
			if me := h.me(t, alice.token); me.Balance != 50000 {
				t.Fatalf("balance %d after approval, want the ante back", me.Balance)
			}
			if types, _ := h.notificationTypes(t, alice.token); len(types) != 1 || types[0] != "proposal_approved" {
				t.Fatalf("notifications: %v", types)
			}
			if !feedHas(t, h, ev.ID) {
				t.Fatal("the approved event is not in the feed")
			}
			h.buy(t, bob.token, ev.Pools[0].Markets[0].ID, "YES", 5000)
			h.mustAudit(t)
			// The proposer owns it: they may hide it and resolve its markets.
			h.activate(t, alice.token, ev.ID, false)
			m := ev.Pools[1].Markets[0]
			r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", ev.ID, m.PoolID, m.ID), token: alice.token,
				body: map[string]any{"won_side": "NO"}})
			expect(t, r, http.StatusOK, "")
			h.mustAudit(t)
		})

		t.Run("a second decision on a decided proposal is 409 invalid_state and moves nothing", func(t *testing.T) {
			before := h.mustAudit(t)
			h.decide(t, ev.ID, "approve", nil, http.StatusConflict, "invalid_state")
			h.decide(t, ev.ID, "reject", map[string]any{"reason": "late", "refund": true}, http.StatusConflict, "invalid_state")
			h.decide(t, same.ID, "approve", nil, http.StatusConflict, "invalid_state")
			if after := h.mustAudit(t); after != before {
				t.Fatalf("refused decisions wrote %d postings", after-before)
			}
		})

		for _, refund := range []bool{true, false} {
			name := "a rejection without refund gives the ante to the platform"
			if refund {
				name = "a refunded rejection gives the ante back"
			}
			t.Run(name+", notifies with the reason, and cannot be undone", func(t *testing.T) {
				p := h.propose(t, bob.token, twoPoolEvent("Bob's"))
				balance, treasury := h.me(t, bob.token).Balance, h.ledger(t, account.Treasury)
				got := h.decide(t, p.ID, "reject", map[string]any{"reason": "Duplicate", "refund": refund}, http.StatusOK, "")
				if got.Status != "rejected" || got.IsActive || got.Proposal.Reason != "Duplicate" || got.Proposal.Refunded != refund {
					t.Fatalf("rejected: %+v", got)
				}
				wantBalance, wantTreasury := balance, treasury+testAnte
				if refund {
					wantBalance, wantTreasury = balance+testAnte, treasury
				}
				if b, tr := h.me(t, bob.token).Balance, h.ledger(t, account.Treasury); b != wantBalance || tr != wantTreasury {
					t.Fatalf("balance %d (want %d), treasury %d (want %d)", b, wantBalance, tr, wantTreasury)
				}
				types, messages := h.notificationTypes(t, bob.token)
				if len(types) == 0 || types[0] != "proposal_rejected" {
					t.Fatalf("notifications: %v", types)
				}
				if msg := messages[0]; !contains(msg, "Duplicate") {
					t.Fatalf("message %q does not give the reason", msg)
				}
				h.decide(t, p.ID, "reject", map[string]any{"reason": "again", "refund": true}, http.StatusConflict, "invalid_state")
				h.decide(t, p.ID, "approve", nil, http.StatusConflict, "invalid_state")
				r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/active", p.ID), token: bob.token, body: map[string]any{"is_active": true}})
				expect(t, r, http.StatusConflict, "invalid_state")
				if b := h.me(t, bob.token).Balance; b != wantBalance {
					t.Fatalf("balance moved to %d after refused decisions", b)
				}
				h.mustAudit(t)
			})
		}

		t.Run("bad input to the operator's routes is refused and writes nothing", func(t *testing.T) {
			p := h.propose(t, bob.token, twoPoolEvent("Pending"))
			path := func(id any, what string) string { return fmt.Sprintf("/api/v1/admin/events/%v/%s", id, what) }
			cases := []struct {
				name   string
				r      req
				status int
				code   string
			}{
				{"a reject without a reason", req{method: http.MethodPost, path: path(p.ID, "reject"), token: adminToken, body: map[string]any{"refund": true}}, http.StatusBadRequest, "invalid_request"},
				{"a reject with an empty reason", req{method: http.MethodPost, path: path(p.ID, "reject"), token: adminToken, body: map[string]any{"reason": "  ", "refund": true}}, http.StatusBadRequest, "invalid_request"},
				{"a reject without refund", req{method: http.MethodPost, path: path(p.ID, "reject"), token: adminToken, body: map[string]any{"reason": "no"}}, http.StatusBadRequest, "invalid_request"},
				{"a reject whose refund is not a boolean", req{method: http.MethodPost, path: path(p.ID, "reject"), token: adminToken, body: map[string]any{"reason": "no", "refund": "yes"}}, http.StatusBadRequest, "invalid_request"},
				{"a reject with an unknown field", req{method: http.MethodPost, path: path(p.ID, "reject"), token: adminToken, body: map[string]any{"reason": "no", "refund": true, "keep": 1}}, http.StatusBadRequest, "invalid_request"},
				{"a reject with a reason over 1000 characters", req{method: http.MethodPost, path: path(p.ID, "reject"), token: adminToken, body: map[string]any{"reason": string(make([]byte, 1001)), "refund": true}}, http.StatusBadRequest, "invalid_request"},
				{"a reject of no event", req{method: http.MethodPost, path: path(int64(1)<<40, "reject"), token: adminToken, body: map[string]any{"reason": "no", "refund": true}}, http.StatusNotFound, "event_not_found"},
				{"an approval of no event", req{method: http.MethodPost, path: path(int64(1)<<40, "approve"), token: adminToken}, http.StatusNotFound, "event_not_found"},
				{"an approval of a bad id", req{method: http.MethodPost, path: path("x1", "approve"), token: adminToken}, http.StatusBadRequest, "invalid_id"},
				{"an approval with a user's token", req{method: http.MethodPost, path: path(p.ID, "approve"), token: bob.token}, http.StatusUnauthorized, "unauthorized"},
				{"a queue of an unknown status", req{method: http.MethodGet, path: "/api/v1/admin/events?status=pending", token: adminToken}, http.StatusBadRequest, "invalid_request"},
				{"a queue with a user's token", req{method: http.MethodGet, path: "/api/v1/admin/events", token: bob.token}, http.StatusUnauthorized, "unauthorized"},
				{"a proposal with a bad body", req{method: http.MethodPost, path: "/api/v1/events", token: bob.token, body: map[string]any{"name": "x", "pools": []any{}}}, http.StatusBadRequest, "invalid_request"},
				{"a proposal with an unknown tag", req{method: http.MethodPost, path: "/api/v1/events", token: bob.token, body: with(twoPoolEvent("x"), map[string]any{"tags": []string{"nope"}})}, http.StatusBadRequest, "invalid_request"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					before := h.mustAudit(t)
					expect(t, h.do(t, c.r), c.status, c.code)
					if after := h.mustAudit(t); after != before {
						t.Fatalf("wrote %d postings", after-before)
					}
				})
			}
			if got := h.decide(t, p.ID, "approve", nil, http.StatusOK, ""); got.Status != "approved" {
				t.Fatalf("the proposal was not left pending: %+v", got)
			}
		})
	})
}

// TestEventPreview: the preview checks a body exactly as the creation
// does and answers the subsidy the creation posts, writing nothing.
func TestEventPreview(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		creator := h.register(t, "creator")
		h.makeCreator(t, creator.id)
		exclusive := map[string]any{"name": "Who wins", "pools": []any{map[string]any{"name": "Winner", "margin": 0.02, "lmsr_b_kopecks": 300_000, "exclusive": true,
			"markets": []any{map[string]any{"name": "A", "probability": 0.5}, map[string]any{"name": "B", "probability": 0.3}, map[string]any{"name": "C", "probability": 0.2}}}}}
		for name, body := range map[string]map[string]any{"two binary pools": twoPoolEvent("Preview"), "an exclusive pool of three": exclusive} {
			t.Run("the preview of "+name+" is what the creation escrows, and writes nothing", func(t *testing.T) {
				before := h.mustAudit(t)
				r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events/preview", token: creator.token, body: body})
				expect(t, r, http.StatusOK, "")
				var p struct {
					Status         string `json:"status"`
					SubsidyKopecks int64  `json:"subsidy_kopecks"`
					Pools          []struct {
						SubsidyKopecks int64 `json:"subsidy_kopecks"`
						Markets        []struct {
							SubsidyKopecks int64 `json:"subsidy_kopecks"`
						} `json:"markets"`
					} `json:"pools"`
				}
				r.decode(t, &p)
				if after := h.mustAudit(t); after != before {
					t.Fatalf("the preview wrote %d postings", after-before)
				}
				if p.Status != "approved" || p.SubsidyKopecks <= 0 {
					t.Fatalf("preview: %s", r)
				}
				treasury := h.ledger(t, account.Treasury)
				e := h.createEvent(t, creator.token, body)
				if moved := treasury - h.ledger(t, account.Treasury); moved != p.SubsidyKopecks {
					t.Fatalf("the creation escrowed %d, the preview said %d", moved, p.SubsidyKopecks)
				}
				for i, pool := range e.Pools {
					var sum int64
					for j, m := range pool.Markets {
						if b := h.ledger(t, account.EscrowAccount(m.ID)); b != p.Pools[i].Markets[j].SubsidyKopecks {
							t.Fatalf("market %d escrows %d, the preview said %d", m.ID, b, p.Pools[i].Markets[j].SubsidyKopecks)
						}
						sum += p.Pools[i].Markets[j].SubsidyKopecks
					}
					if sum != p.Pools[i].SubsidyKopecks {
						t.Fatalf("pool %d: markets sum to %d, pool says %d", i, sum, p.Pools[i].SubsidyKopecks)
					}
				}
			})
		}
		bad := []map[string]any{
			{"name": "", "pools": twoPoolEvent("x")["pools"]},
			with(twoPoolEvent("x"), map[string]any{"tags": []string{"unknown-tag"}}),
			{"name": "x", "pools": []any{map[string]any{"name": "P", "margin": 0, "lmsr_b_kopecks": 10, "markets": []any{map[string]any{"name": "M", "probability": 0.5}}}}},
			{"name": "x", "pools": []any{map[string]any{"name": "P", "margin": 0, "lmsr_b_kopecks": 10000, "exclusive": true,
				"markets": []any{map[string]any{"name": "A", "probability": 0.5}, map[string]any{"name": "B", "probability": 0.1}}}}},
			{"name": "x", "colour": "red", "pools": []any{}},
		}
		for i, body := range bad {
			t.Run(fmt.Sprintf("bad body %d is the creation's 400 with the same detail", i), func(t *testing.T) {
				before := h.mustAudit(t)
				pr := h.do(t, req{method: http.MethodPost, path: "/api/v1/events/preview", token: creator.token, body: body})
				cr := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: creator.token, body: body})
				expect(t, pr, http.StatusBadRequest, "invalid_request")
				expect(t, cr, http.StatusBadRequest, "invalid_request")
				if string(pr.body) != string(cr.body) {
					t.Fatalf("preview %s, creation %s", pr.body, cr.body)
				}
				if after := h.mustAudit(t); after != before {
					t.Fatalf("wrote %d postings", after-before)
				}
			})
		}
		r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events/preview", body: twoPoolEvent("x")})
		expect(t, r, http.StatusUnauthorized, "unauthorized")
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
