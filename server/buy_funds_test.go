package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestABuyBeyondTheBalanceIsInsufficientFunds: a buy of 10^9
// kopecks by a user holding 10^5, is large enough to pass the price bound
// of market A1 (b = 10^6), but what the user lacks is the money: 400
// insufficient_funds. A user who could pay it hears about the price
// bound. Both change nothing.
func TestABuyBeyondTheBalanceIsInsufficientFunds(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		small, rich := h.register(t, "small"), h.register(t, "rich")
		h.credit(t, small.id, 100_000, false)
		h.credit(t, rich.id, 2_000_000_000, false)
		buy := func(u apiUser, body string) *response {
			return h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID), token: u.token, body: body})
		}
		_, postings, _ := h.audit(t)

		t.Run("a buy of 10^9 kopecks by a user holding 10^5 is 400 insufficient_funds", func(t *testing.T) {
			expect(t, buy(small, `{"side":"YES","amount_kopecks":1000000000}`), http.StatusBadRequest, "insufficient_funds")
		})
		t.Run("a bonus buy of 10^9 kopecks by a user with no bonus is 400 insufficient_funds", func(t *testing.T) {
			expect(t, buy(rich, `{"side":"YES","amount_kopecks":1000000000,"use_bonus":true}`), http.StatusBadRequest, "insufficient_funds")
		})
		t.Run("the same buy by a user holding 2 × 10^9 is 400 trade_refused for the price bound", func(t *testing.T) {
			expect(t, buy(rich, `{"side":"YES","amount_kopecks":1000000000}`), http.StatusBadRequest, "trade_refused")
		})
		t.Run("a buy the user can pay still trades", func(t *testing.T) {
			h.buy(t, small.token, w.a1.ID, "YES", 100_000)
			if b := h.me(t, small.token).Balance; b != 0 {
				t.Fatalf("balance after buying for all of it: %d", b)
			}
		})
		t.Run("the refused buys changed nothing", func(t *testing.T) {
			ok, after, problems := h.audit(t)
			if !ok {
				t.Fatalf("the ledger is not sound: %v", problems)
			}
			if after != postings+2 { // the one accepted buy: cost and fee
				t.Fatalf("postings %d → %d", postings, after)
			}
			if b := h.me(t, rich.token).Balance; b != 2_000_000_000 {
				t.Fatalf("the refused buys moved money: balance %d", b)
			}
		})
	})
}

// TestAPartnerBetBeyondTheFloatIsInsufficientFunds: the same rule on the
// partner API, where the float pays what the sub-account lacks.
func TestAPartnerBetBeyondTheFloatIsInsufficientFunds(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		poor, rich := h.createPartner(t, "Poor", 100_000), h.createPartner(t, "Rich", 2_000_000_000)
		bet := func(p apiNewPartner) *response {
			return h.do(t, betReq(p.Key, map[string]any{"external_user_id": "u1", "market_id": w.a1.ID, "side": "yes",
				"amount_kopecks": 1_000_000_000, "client_bet_id": "big-1"}))
		}
		t.Run("a bet of 10^9 on a float of 10^5 is 400 TRADE_FAILED: insufficient funds", func(t *testing.T) {
			r := bet(poor)
			expect(t, r, http.StatusBadRequest, "TRADE_FAILED")
			if d := r.errorDetail(t); d != "insufficient funds" {
				t.Fatalf("detail %q", d)
			}
		})
		t.Run("a bet of 10^9 on a float of 2 × 10^9 is 400 TRADE_FAILED for the price bound", func(t *testing.T) {
			r := bet(rich)
			expect(t, r, http.StatusBadRequest, "TRADE_FAILED")
			if d := r.errorDetail(t); !strings.Contains(d, "price bound") {
				t.Fatalf("detail %q", d)
			}
		})
		if ok, _, problems := h.audit(t); !ok {
			t.Fatalf("the ledger is not sound: %v", problems)
		}
		if h.partner(t, poor.ID).FloatKopecks != 100_000 || h.partner(t, rich.ID).FloatKopecks != 2_000_000_000 {
			t.Fatal("a refused bet moved a float")
		}
	})
}
