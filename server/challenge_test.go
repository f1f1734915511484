package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// The challenge window over HTTP (docs/challenge-window.md).

type apiResolution struct {
	Proposed       string `json:"proposed"`
	By             int64  `json:"by"`
	ChallengeUntil string `json:"challenge_until"`
	Disputed       bool   `json:"disputed"`
}

// resolutionOf is market id's resolution, nil when its view has none.
func (h *harness) resolutionOf(t *testing.T, id int64) *apiResolution {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d", id)})
	expect(t, r, http.StatusOK, "")
	var m struct {
		Resolution *apiResolution `json:"resolution"`
	}
	r.decode(t, &m)
	return m.Resolution
}

func disputePath(id int64) string { return fmt.Sprintf("/api/v1/markets/%d/disputes", id) }

// checkAudit fails the test unless the operator's audit is clean.
func (h *harness) checkAudit(t *testing.T, after string) {
	t.Helper()
	if ok, _, problems := h.audit(t); !ok {
		t.Fatalf("audit after %s: %v", after, problems)
	}
}

// notesOfType are user token's notifications of type typ.
func (h *harness) notesOfType(t *testing.T, token, typ string) []apiNotification {
	t.Helper()
	var out []apiNotification
	for _, n := range h.allNotifications(t, token, "") {
		if n.Type == typ {
			out = append(out, n)
		}
	}
	return out
}

func challengeOn(d time.Duration) harnessOption {
	return withConfig(func(c *server.Config) { c.ResolutionChallenge = d })
}

func TestChallengeWindow(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h := newHarness(t, sc.new(t), challengeOn(time.Hour))
			w := newWorld(t, h)
			carol, dave := h.register(t, "carol"), h.register(t, "dave")
			h.credit(t, carol.id, 100_000, false)
			h.credit(t, dave.id, 6_000, false)
			h.buy(t, w.alice.token, w.a1.ID, "YES", 50_000)
			bobs := h.buy(t, w.bob.token, w.a1.ID, "NO", 30_000)
			h.buy(t, w.alice.token, w.a2.ID, "YES", 10_000)
			h.buy(t, dave.token, w.a1.ID, "NO", 5_000)

			t.Run("a creator's close answers 200 and only proposes: trading stops, the view carries the proposal, a second close is 409", func(t *testing.T) {
				r := h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}})
				expect(t, r, http.StatusOK, "")
				if string(r.body) != `{"status":"ok"}` {
					t.Fatalf("close answered %s", r)
				}
				m := h.market(t, w.a1.ID)
				if m.Resolved || !m.Paused || m.TradingOpen || m.ResolvedBy != nil {
					t.Fatalf("the proposed market: %+v", m)
				}
				res := h.resolutionOf(t, w.a1.ID)
				if res == nil || res.Proposed != "YES" || res.By != w.creator.id || res.Disputed {
					t.Fatalf("resolution %+v", res)
				}
				until, err := time.Parse(time.RFC3339Nano, res.ChallengeUntil)
				if err != nil || until.Before(time.Now().Add(50*time.Minute)) {
					t.Fatalf("challenge_until %q", res.ChallengeUntil)
				}
				if res := h.resolutionOf(t, w.a2.ID); res != nil {
					t.Fatalf("a market without a proposal shows %+v", res)
				}
				r = h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: carol.token, body: map[string]any{"side": "YES", "amount_kopecks": 1_000}})
				expect(t, r, http.StatusConflict, "market_closed")
				r = h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: map[string]any{"won_side": "NO"}})
				expect(t, r, http.StatusConflict, "market already resolved")
				for _, u := range []apiUser{w.alice, w.bob, dave} {
					if ns := h.notesOfType(t, u.token, "resolution_proposed"); len(ns) != 1 || ns[0].RelatedID != w.event.ID {
						t.Fatalf("user %d's proposal notifications: %+v", u.id, ns)
					}
				}
				if ns := h.notesOfType(t, carol.token, "resolution_proposed"); len(ns) != 0 {
					t.Fatalf("carol, holding nothing, was told: %+v", ns)
				}
				h.checkAudit(t, "the proposal")
			})

			t.Run("a dispute the rules refuse is a clear 4xx that changes nothing", func(t *testing.T) {
				key := h.createKey(t, w.alice.token, "bot", "read", "trade")
				cases := []struct {
					name   string
					r      req
					status int
					code   string
				}{
					{"without a token", req{method: http.MethodPost, path: disputePath(w.a1.ID), body: map[string]any{"reason": "x"}}, 401, "unauthorized"},
					{"on an id that is not one", req{method: http.MethodPost, path: "/api/v1/markets/abc/disputes", token: w.alice.token, body: map[string]any{"reason": "x"}}, 400, "invalid_id"},
					{"on a market that does not exist", req{method: http.MethodPost, path: disputePath(999_999), token: w.alice.token, body: map[string]any{"reason": "x"}}, 404, "market_not_found"},
					{"without a reason", req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.alice.token, body: map[string]any{}}, 400, "invalid_request"},
					{"with a blank reason", req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.alice.token, body: map[string]any{"reason": "   "}}, 400, "invalid_request"},
					{"with an unknown field", req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.alice.token, body: map[string]any{"reason": "x", "bond": 1}}, 400, "invalid_request"},
					{"as text/plain", req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.alice.token, body: `{"reason":"x"}`, header: map[string]string{"Content-Type": "text/plain"}}, 415, "unsupported_media_type"},
					{"on a market without a proposal", req{method: http.MethodPost, path: disputePath(w.a2.ID), token: w.alice.token, body: map[string]any{"reason": "x"}}, 409, "invalid_state"},
					{"without a position", req{method: http.MethodPost, path: disputePath(w.a1.ID), token: carol.token, body: map[string]any{"reason": "x"}}, 403, "forbidden"},
					{"without the bond", req{method: http.MethodPost, path: disputePath(w.a1.ID), token: dave.token, body: map[string]any{"reason": "x"}}, 400, "insufficient_funds"},
					{"with a personal API key", req{method: http.MethodPost, path: disputePath(w.a1.ID), token: key.Key, body: map[string]any{"reason": "x"}}, 403, "insufficient_scope"},
				}
				for _, tc := range cases {
					_, before, _ := h.audit(t)
					expect(t, h.do(t, tc.r), tc.status, tc.code)
					if _, after, _ := h.audit(t); after != before {
						t.Fatalf("%s: the refusal wrote %d postings", tc.name, after-before)
					}
				}
				h.checkAudit(t, "the refusals")
			})

			t.Run("a holder's dispute holds the bond; a second one is 409", func(t *testing.T) {
				before := h.me(t, w.alice.token).Balance
				r := h.do(t, req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.alice.token, body: map[string]any{"reason": "The match was abandoned"}})
				expect(t, r, http.StatusCreated, "")
				var d struct {
					MarketID    int64  `json:"market_id"`
					UserID      int64  `json:"user_id"`
					Reason      string `json:"reason"`
					BondKopecks int64  `json:"bond_kopecks"`
				}
				r.decode(t, &d)
				if d.MarketID != w.a1.ID || d.UserID != w.alice.id || d.BondKopecks != 10_000 || d.Reason != "The match was abandoned" {
					t.Fatalf("dispute %+v", d)
				}
				if got := h.me(t, w.alice.token).Balance; got != before-10_000 {
					t.Fatalf("alice's balance %d -> %d, want the bond of 10000 held", before, got)
				}
				expect(t, h.do(t, req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.alice.token, body: map[string]any{"reason": "again"}}), http.StatusConflict, "already_disputed")
				if res := h.resolutionOf(t, w.a1.ID); res == nil || !res.Disputed {
					t.Fatalf("resolution after the dispute: %+v", res)
				}
				r = h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/disputes", token: adminToken})
				expect(t, r, http.StatusOK, "")
				var q struct {
					Proposals []struct {
						MarketID int64  `json:"market_id"`
						Proposed string `json:"proposed"`
						Disputes []struct {
							UserID int64  `json:"user_id"`
							Reason string `json:"reason"`
						} `json:"disputes"`
					} `json:"proposals"`
				}
				r.decode(t, &q)
				if len(q.Proposals) != 1 || q.Proposals[0].MarketID != w.a1.ID || q.Proposals[0].Proposed != "YES" ||
					len(q.Proposals[0].Disputes) != 1 || q.Proposals[0].Disputes[0].UserID != w.alice.id {
					t.Fatalf("the operator's queue: %s", r)
				}
				h.checkAudit(t, "the dispute")
			})

			t.Run("the operator's different outcome resolves at once and returns the bond", func(t *testing.T) {
				alice, bob := h.me(t, w.alice.token).Balance, h.me(t, w.bob.token).Balance
				r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/markets/%d/resolve", w.a1.ID), token: adminToken, body: map[string]any{"won_side": "NO"}})
				expect(t, r, http.StatusOK, "")
				m := h.market(t, w.a1.ID)
				if !m.Resolved || m.WinningOutcome == nil || *m.WinningOutcome != "NO" || m.ResolvedBy == nil || *m.ResolvedBy != "operator" || m.Paused {
					t.Fatalf("after the operator: %+v", m)
				}
				if res := h.resolutionOf(t, w.a1.ID); res != nil {
					t.Fatalf("a resolved market shows %+v", res)
				}
				if got := h.me(t, w.alice.token).Balance - alice; got != 10_000 {
					t.Fatalf("alice (YES) got %d, want her bond of 10000 back", got)
				}
				if got := h.me(t, w.bob.token).Balance - bob; got != bobs.Shares {
					t.Fatalf("bob (NO) got %d, want %d", got, bobs.Shares)
				}
				ns := h.notesOfType(t, w.alice.token, "dispute_resolved")
				if len(ns) != 1 || ns[0].Title != "Dispute upheld" {
					t.Fatalf("alice's dispute notifications: %+v", ns)
				}
				r = h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/disputes", token: adminToken})
				expect(t, r, http.StatusOK, "")
				if string(r.body) != `{"proposals":[]}` {
					t.Fatalf("the queue after the decision: %s", r)
				}
				h.checkAudit(t, "the operator's resolution")
			})

			t.Run("the operator's agreeing outcome keeps the bond for the platform", func(t *testing.T) {
				r := h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a2.ID), token: w.creator.token, body: map[string]any{"won_side": "NO"}})
				expect(t, r, http.StatusOK, "")
				expect(t, h.do(t, req{method: http.MethodPost, path: disputePath(w.a2.ID), token: w.alice.token, body: map[string]any{"reason": "YES won"}}), http.StatusCreated, "")
				alice := h.me(t, w.alice.token).Balance
				expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/markets/%d/resolve", w.a2.ID), token: adminToken, body: map[string]any{"won_side": "NO"}}), http.StatusOK, "")
				if got := h.me(t, w.alice.token).Balance; got != alice {
					t.Fatalf("alice's balance %d -> %d: a rejected dispute's bond came back", alice, got)
				}
				ns := h.notesOfType(t, w.alice.token, "dispute_resolved")
				if len(ns) != 2 {
					t.Fatalf("alice's dispute notifications: %+v", ns)
				}
				h.checkAudit(t, "the kept bond")
			})
		})
	}
}

// TestChallengeWindowIsOffByDefault: without the setting a creator's
// close resolves at once, as it always did.
func TestChallengeWindowIsOffByDefault(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
		expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
		if m := h.market(t, w.a1.ID); !m.Resolved || m.Paused {
			t.Fatalf("after a close without the window: %+v", m)
		}
		if res := h.resolutionOf(t, w.a1.ID); res != nil {
			t.Fatalf("resolution %+v", res)
		}
		expect(t, h.do(t, req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.alice.token, body: map[string]any{"reason": "x"}}), http.StatusConflict, "invalid_state")
	})
}

// waitResolved polls market id until it is resolved (or a minute goes
// by) and returns it.
func (h *harness) waitResolved(t *testing.T, id int64) apiMarket {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		m := h.market(t, id)
		if m.Resolved || time.Now().After(deadline) {
			return m
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestChallengeWindowSettlesAtTheDeadline starts the server for real:
// its worker settles an undisputed proposal once its deadline passes, and
// a dispute after the deadline of a proposal nobody settled is 409.
func TestChallengeWindowSettlesAtTheDeadline(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			cfg := testConfig(sc.new(t))
			cfg.ResolutionChallenge = time.Second
			h, _ := startServer(t, cfg)
			w := newWorld(t, h)
			yes := h.buy(t, w.alice.token, w.a1.ID, "YES", 20_000)
			h.buy(t, w.bob.token, w.a1.ID, "NO", 20_000)
			before := h.me(t, w.alice.token).Balance
			expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
			m := h.waitResolved(t, w.a1.ID)
			if !m.Resolved || m.WinningOutcome == nil || *m.WinningOutcome != "YES" || m.ResolvedBy == nil || *m.ResolvedBy != "creator" {
				t.Fatalf("after the deadline: %+v", m)
			}
			if got := h.me(t, w.alice.token).Balance - before; got != yes.Shares {
				t.Fatalf("alice was paid %d, want %d", got, yes.Shares)
			}
			expect(t, h.do(t, req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.bob.token, body: map[string]any{"reason": "late"}}), http.StatusConflict, "invalid_state")
			h.checkAudit(t, "the settlement at the deadline")
		})
	}
}

// TestChallengeWindowOutsideTheWindow: a dispute after the deadline is
// 409 even before any worker settled the proposal (Build starts none).
func TestChallengeWindowOutsideTheWindow(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) { lateDispute(t, newHarness(t, sc.new(t), challengeOn(time.Second))) })
	}
}

func lateDispute(t *testing.T, h *harness) {
	w := newWorld(t, h)
	h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
	expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token, body: map[string]any{"won_side": "NO"}}), http.StatusOK, "")
	res := h.resolutionOf(t, w.a1.ID)
	until, err := time.Parse(time.RFC3339Nano, res.ChallengeUntil)
	if err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(until.Add(10 * time.Millisecond)) {
		time.Sleep(20 * time.Millisecond)
	}
	balance := h.me(t, w.alice.token).Balance
	expect(t, h.do(t, req{method: http.MethodPost, path: disputePath(w.a1.ID), token: w.alice.token, body: map[string]any{"reason": "late"}}), http.StatusConflict, "invalid_state")
	if h.me(t, w.alice.token).Balance != balance {
		t.Fatal("a late dispute moved money")
	}
	h.checkAudit(t, "the late dispute")
}
