package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
)

func resolvePath(marketID any) string {
	return fmt.Sprintf("/api/v1/admin/markets/%v/resolve", marketID)
}

// TestVoid voids a market through the creator's close and reads what every
// route then says of it.
func TestVoid(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		// alice holds YES; bob holds NO, bought with his bonus, and sold a
		// part of it at a loss.
		aBuy := h.buy(t, w.alice.token, w.a1.ID, "YES", 40_000)
		bBuy := h.buy(t, w.bob.token, w.a1.ID, "NO", 30_000, map[string]any{"use_bonus": true})
		bSell := h.sell(t, w.bob.token, w.a1.ID, "NO", bBuy.Shares/3)
		aliceBefore, bobBefore := h.me(t, w.alice.token), h.me(t, w.bob.token)
		bobRefund := bBuy.CostKopecks - bSell.PayoutKopecks

		expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token,
			body: map[string]any{"won_side": "VOID"}}), http.StatusOK, "")

		t.Run("the market shows VOID, when, and that its creator resolved it", func(t *testing.T) {
			m := h.market(t, w.a1.ID)
			if !m.Resolved || m.WinningOutcome == nil || *m.WinningOutcome != "VOID" || m.ResolvedAt == nil || m.ResolvedBy == nil || *m.ResolvedBy != "creator" {
				t.Fatalf("market %+v", m)
			}
			if open := h.market(t, w.a2.ID); open.ResolvedAt != nil || open.ResolvedBy != nil || open.WinningOutcome != nil {
				t.Fatalf("an unresolved market shows %+v", open)
			}
		})
		t.Run("each holder gets its net cost back, bonus money to the bonus balance", func(t *testing.T) {
			if got := h.me(t, w.alice.token); got.Balance != aliceBefore.Balance+aBuy.CostKopecks || got.BonusBalance != aliceBefore.BonusBalance {
				t.Fatalf("alice: %d / %d, was %d / %d, refund %d", got.Balance, got.BonusBalance, aliceBefore.Balance, aliceBefore.BonusBalance, aBuy.CostKopecks)
			}
			if got := h.me(t, w.bob.token); got.Balance != bobBefore.Balance || got.BonusBalance != bobBefore.BonusBalance+bobRefund {
				t.Fatalf("bob: %d / %d, was %d / %d, refund %d", got.Balance, got.BonusBalance, bobBefore.Balance, bobBefore.BonusBalance, bobRefund)
			}
		})
		t.Run("the closed positions show won_side 2 and a PnL of 0, which is no win", func(t *testing.T) {
			for _, u := range []apiUser{w.alice, w.bob} {
				p := h.me(t, u.token)
				if len(p.Positions) != 0 || len(p.ClosedPositions) != 1 || p.ClosedPositions[0].WonSide != 2 || p.ClosedPositions[0].PnL != 0 ||
					p.TotalPredictions != 1 || p.BiggestWin != 0 {
					t.Fatalf("%s: %+v", u.name, p)
				}
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/positions/closed", token: u.token})
				expect(t, r, http.StatusOK, "")
				if !strings.Contains(string(r.body), `"won_side":2`) {
					t.Fatalf("%s: closed positions %s", u.name, r.body)
				}
			}
		})
		t.Run("the PnL chart ends where it started: at 0", func(t *testing.T) {
			for _, u := range []apiUser{w.alice, w.bob} {
				r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/pnl/chart", token: u.token})
				expect(t, r, http.StatusOK, "")
				var c apiChart
				r.decode(t, &c)
				if n := len(c.Points); n < 2 || c.Points[n-1].PnL != 0 {
					t.Fatalf("%s: chart %+v", u.name, c.Points)
				}
			}
		})
		t.Run("each holder is told of its refund, in its language", func(t *testing.T) {
			ns := h.unread(t, w.alice.token)
			want := fmt.Sprintf(`"A1" was voided and its bets refunded. Your refund: %d.%02d RUB`, aBuy.CostKopecks/100, aBuy.CostKopecks%100)
			if len(ns) == 0 || ns[0].Type != "market_resolved" || ns[0].Title != "Market voided" || ns[0].Message != want {
				t.Fatalf("alice: %+v, want %q", ns, want)
			}
			expect(t, h.do(t, req{method: http.MethodPatch, path: "/api/v1/auth/me", token: w.bob.token, body: map[string]any{"language": "ru"}}), http.StatusOK, "")
			ns = h.unread(t, w.bob.token)
			if len(ns) == 0 || ns[0].Title != "Рынок отменён" || !strings.HasPrefix(ns[0].Message, "Рынок «A1» отменён, ставки возвращены. Возврат: ") {
				t.Fatalf("bob: %+v", ns)
			}
		})
		t.Run("a voided market takes no trade and no second close", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: w.alice.token,
				body: map[string]any{"side": "YES", "amount_kopecks": 1000}}), http.StatusConflict, "market_closed")
			expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.creator.token,
				body: map[string]any{"won_side": "YES"}}), http.StatusConflict, "market already resolved")
		})
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit: %v", problems)
		}
	})
}

// TestOperatorResolve is the operator's route: its errors in the order of
// its checks, a resolution recorded as the operator's, and the 409 after.
func TestOperatorResolve(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		buy := h.buy(t, w.alice.token, w.b1.ID, "NO", 20_000)
		path := resolvePath(w.b1.ID)
		for _, c := range []struct {
			name   string
			req    req
			status int
			code   string
		}{
			{"no token is 401", req{method: "POST", path: path, body: `{"won_side":"NO"}`}, 401, "unauthorized"},
			{"a user's token is 401", req{method: "POST", path: path, token: w.creator.token, body: `{"won_side":"NO"}`}, 401, "unauthorized"},
			{"an id that is not an integer is 404, before the body", req{method: "POST", path: resolvePath("b1"), token: adminToken, body: `{`}, 404, "market not found"},
			{"a body that is not JSON is 400", req{method: "POST", path: path, token: adminToken, body: `won_side=NO`}, 400, "invalid request"},
			{"no body is 400", req{method: "POST", path: path, token: adminToken}, 400, "invalid request"},
			{"a missing won_side is 400", req{method: "POST", path: path, token: adminToken, body: `{}`}, 400, "invalid request"},
			{"an unknown key is 400", req{method: "POST", path: path, token: adminToken, body: `{"won_side":"NO","why":"creator gone"}`}, 400, "invalid request"},
			{"a numeric won_side is 400", req{method: "POST", path: path, token: adminToken, body: `{"won_side":0}`}, 400, "invalid request"},
			{"a lower-case won_side is 400", req{method: "POST", path: path, token: adminToken, body: `{"won_side":"void"}`}, 400, "invalid request"},
			{"a bad won_side on an unknown market is 400 first", req{method: "POST", path: resolvePath(987654321), token: adminToken, body: `{"won_side":"MAYBE"}`}, 400, "invalid request"},
			{"an unknown market is 404", req{method: "POST", path: resolvePath(987654321), token: adminToken, body: `{"won_side":"NO"}`}, 404, "market not found"},
		} {
			t.Run(c.name, func(t *testing.T) {
				expect(t, h.do(t, c.req), c.status, c.code)
			})
		}
		if m := h.market(t, w.b1.ID); m.Resolved {
			t.Fatalf("a refused resolution resolved the market: %+v", m)
		}
		before := h.me(t, w.alice.token)

		r := h.do(t, req{method: "POST", path: path, token: adminToken, body: map[string]any{"won_side": "NO"}})
		expect(t, r, http.StatusOK, "")
		if string(r.body) != `{"status":"ok"}` {
			t.Fatalf("body %s", r.body)
		}
		t.Run("the market shows the operator resolved it", func(t *testing.T) {
			m := h.market(t, w.b1.ID)
			if !m.Resolved || m.WinningOutcome == nil || *m.WinningOutcome != "NO" || m.ResolvedBy == nil || *m.ResolvedBy != "operator" || m.ResolvedAt == nil {
				t.Fatalf("market %+v", m)
			}
		})
		t.Run("the winner is paid as the creator's close pays", func(t *testing.T) {
			if got := h.me(t, w.alice.token); got.Balance != before.Balance+buy.Shares || len(got.ClosedPositions) != 1 || got.ClosedPositions[0].WonSide != 0 {
				t.Fatalf("alice %+v, was %d, payout %d", got, before.Balance, buy.Shares)
			}
		})
		t.Run("a second resolution, by anyone, is 409", func(t *testing.T) {
			expect(t, h.do(t, req{method: "POST", path: path, token: adminToken, body: `{"won_side":"VOID"}`}), http.StatusConflict, "market already resolved")
			expect(t, h.do(t, req{method: "POST", path: w.closePath(w.event.ID, w.poolB.ID, w.b1.ID), token: w.creator.token, body: `{"won_side":"YES"}`}),
				http.StatusConflict, "market already resolved")
		})
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit: %v", problems)
		}
	})
	t.Run("without an admin token configured the route is 404 not_found", func(t *testing.T) {
		h := newHarness(t, memory.New(), withConfig(func(c *server.Config) { c.AdminToken = "" }))
		expect(t, h.do(t, req{method: "POST", path: resolvePath(1), token: adminToken, body: `{"won_side":"NO"}`}), http.StatusNotFound, "not_found")
	})
}

// TestResolutionsRace sends the creator's closes and the operator's
// resolutions of one market at once: exactly one settles, every other is
// 409, and the holder is paid once.
func TestResolutionsRace(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		buy := h.buy(t, w.alice.token, w.a2.ID, "YES", 50_000)
		before := h.me(t, w.alice.token).Balance
		reqs := []req{
			{method: "POST", path: w.closePath(w.event.ID, w.poolA.ID, w.a2.ID), token: w.creator.token, body: `{"won_side":"YES"}`},
			{method: "POST", path: resolvePath(w.a2.ID), token: adminToken, body: `{"won_side":"VOID"}`},
			{method: "POST", path: resolvePath(w.a2.ID), token: adminToken, body: `{"won_side":"NO"}`},
		}
		const rounds = 4
		statuses := make([]int, rounds*len(reqs))
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = h.do(t, reqs[i%len(reqs)]).status
			}()
		}
		wg.Wait()
		won := -1
		for i, s := range statuses {
			switch {
			case s == http.StatusOK && won >= 0:
				t.Fatalf("requests %d and %d both settled", won, i)
			case s == http.StatusOK:
				won = i
			case s != http.StatusConflict:
				t.Fatalf("request %d: %d", i, s)
			}
		}
		if won < 0 {
			t.Fatal("no request settled")
		}
		want := map[int]int64{0: before + buy.Shares, 1: before + buy.CostKopecks, 2: before}[won%len(reqs)]
		if got := h.me(t, w.alice.token).Balance; got != want {
			t.Fatalf("request %d settled; balance %d, want %d", won, got, want)
		}
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("audit: %v", problems)
		}
	})
}
