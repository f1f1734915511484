package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/server"
)

// snapshot is what a refused request must not change.
type snapshot struct {
	alice, bob  apiProfile
	a1          apiMarket
	postings    int64
	fees        int64
	aliceLedger int64
}

func takeSnapshot(t *testing.T, h *harness, w *world) snapshot {
	t.Helper()
	ok, postings, problems := h.audit(t)
	if !ok {
		t.Fatalf("the ledger is not sound: %v", problems)
	}
	fees, err := feeIncome(context.Background(), h.store)
	if err != nil {
		t.Fatal(err)
	}
	al, err := h.store.Balance(context.Background(), account.UserAccount(w.alice.id))
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{alice: h.me(t, w.alice.token), bob: h.me(t, w.bob.token), a1: h.market(t, w.a1.ID),
		postings: postings, fees: fees, aliceLedger: al}
}

func (s snapshot) same(t *testing.T, o snapshot) {
	t.Helper()
	if s.alice.Balance != o.alice.Balance || s.alice.BonusBalance != o.alice.BonusBalance ||
		s.bob.Balance != o.bob.Balance || s.bob.BonusBalance != o.bob.BonusBalance {
		t.Errorf("balances changed: alice %d/%d → %d/%d, bob %d/%d → %d/%d",
			s.alice.Balance, s.alice.BonusBalance, o.alice.Balance, o.alice.BonusBalance,
			s.bob.Balance, s.bob.BonusBalance, o.bob.Balance, o.bob.BonusBalance)
	}
	if len(s.alice.Positions) != len(o.alice.Positions) || len(s.bob.Positions) != len(o.bob.Positions) {
		t.Errorf("positions changed")
	}
	if s.a1.QYes != o.a1.QYes || s.a1.QNo != o.a1.QNo || s.a1.Volume != o.a1.Volume || s.a1.Resolved != o.a1.Resolved {
		t.Errorf("market changed: %+v → %+v", s.a1, o.a1)
	}
	if s.postings != o.postings || s.fees != o.fees || s.aliceLedger != o.aliceLedger {
		t.Errorf("ledger changed: %d postings, fees %d → %d postings, fees %d", s.postings, s.fees, o.postings, o.fees)
	}
}

// TestMoneyEndpointsRefuseMalformedBodies sends buy, sell and credit
// bodies that must be refused with 400 and change nothing.
func TestMoneyEndpointsRefuseMalformedBodies(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		held := h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
		buyPath := fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID)
		sellPath := fmt.Sprintf("/api/v1/markets/%d/sell", w.a1.ID)
		creditPath := fmt.Sprintf("/api/v1/admin/users/%d/credit", w.alice.id)
		before := takeSnapshot(t, h, w)

		cases := []struct {
			name, path, body, token, code string
			status                        int
		}{
			{"an empty buy body", buyPath, ``, w.alice.token, "invalid_request", 400},
			{"a buy body that is not JSON", buyPath, `side=YES&amount_kopecks=100`, w.alice.token, "invalid_request", 400},
			{"a truncated buy body", buyPath, `{"side":"YES","amount_kopecks":100`, w.alice.token, "invalid_request", 400},
			{"a buy body that is an array", buyPath, `[{"side":"YES","amount_kopecks":100}]`, w.alice.token, "invalid_request", 400},
			{"a buy body that is null", buyPath, `null`, w.alice.token, "invalid_request", 400},
			{"a buy body that is a number", buyPath, `100`, w.alice.token, "invalid_request", 400},
			{"a string amount", buyPath, `{"side":"YES","amount_kopecks":"100"}`, w.alice.token, "invalid_request", 400},
			{"a fractional amount", buyPath, `{"side":"YES","amount_kopecks":100.5}`, w.alice.token, "invalid_request", 400},
			{"an amount in exponent form", buyPath, `{"side":"YES","amount_kopecks":1e3}`, w.alice.token, "invalid_request", 400},
			{"a negative amount", buyPath, `{"side":"YES","amount_kopecks":-100}`, w.alice.token, "invalid_request", 400},
			{"a zero amount", buyPath, `{"side":"YES","amount_kopecks":0}`, w.alice.token, "invalid_request", 400},
			{"a missing amount", buyPath, `{"side":"YES"}`, w.alice.token, "invalid_request", 400},
			{"a null amount", buyPath, `{"side":"YES","amount_kopecks":null}`, w.alice.token, "invalid_request", 400},
			{"an amount past int64", buyPath, `{"side":"YES","amount_kopecks":9223372036854775808}`, w.alice.token, "invalid_request", 400},
			{"an amount of 1e30", buyPath, `{"side":"YES","amount_kopecks":1000000000000000000000000000000}`, w.alice.token, "invalid_request", 400},
			{"the largest int64 amount", buyPath, `{"side":"YES","amount_kopecks":9223372036854775807}`, w.alice.token, "invalid_request", 400},
			{"an unknown field", buyPath, `{"side":"YES","amount_kopecks":100,"price":1}`, w.alice.token, "invalid_request", 400},
			{"a key in another case", buyPath, `{"side":"YES","AMOUNT_KOPECKS":100}`, w.alice.token, "invalid_request", 400},
			{"a duplicated key", buyPath, `{"side":"YES","amount_kopecks":100,"amount_kopecks":100000}`, w.alice.token, "invalid_request", 400},
			{"a second JSON value after the body", buyPath, `{"side":"YES","amount_kopecks":100}{"side":"NO"}`, w.alice.token, "invalid_request", 400},
			{"garbage after the body", buyPath, `{"side":"YES","amount_kopecks":100} x`, w.alice.token, "invalid_request", 400},
			{"an unknown side", buyPath, `{"side":"MAYBE","amount_kopecks":100}`, w.alice.token, "invalid_request", 400},
			{"a missing side", buyPath, `{"amount_kopecks":100}`, w.alice.token, "invalid_request", 400},
			{"a numeric side", buyPath, `{"side":1,"amount_kopecks":100}`, w.alice.token, "invalid_request", 400},
			{"a string use_bonus", buyPath, `{"side":"YES","amount_kopecks":100,"use_bonus":"true"}`, w.alice.token, "invalid_request", 400},
			{"a negative max_cost_kopecks", buyPath, `{"side":"YES","amount_kopecks":100,"max_cost_kopecks":-1}`, w.alice.token, "invalid_request", 400},
			{"a fractional min_shares", buyPath, `{"side":"YES","amount_kopecks":100,"min_shares":0.5}`, w.alice.token, "invalid_request", 400},
			{"invalid UTF-8", buyPath, "{\"side\":\"YES\xff\",\"amount_kopecks\":100}", w.alice.token, "invalid_request", 400},
			{"a buy on a non-integer market id", "/api/v1/markets/a1/buy", `{"side":"YES","amount_kopecks":100}`, w.alice.token, "invalid_id", 400},
			{"a buy on an unknown market", "/api/v1/markets/987654321/buy", `{"side":"YES","amount_kopecks":100}`, w.alice.token, "market_not_found", 404},
			{"a buy without a token", buyPath, `{"side":"YES","amount_kopecks":100}`, "", "unauthorized", 401},
			{"a buy beyond the balance", buyPath, `{"side":"YES","amount_kopecks":5000000}`, w.alice.token, "insufficient_funds", 400},
			{"a buy from an empty bonus balance", buyPath, `{"side":"YES","amount_kopecks":100,"use_bonus":true}`, w.alice.token, "insufficient_funds", 400},
			{"a buy too small for a share", buyPath, `{"side":"YES","amount_kopecks":1}`, w.alice.token, "trade_refused", 400},
			{"a buy whose charge exceeds max_cost_kopecks", buyPath, `{"side":"YES","amount_kopecks":10000,"max_cost_kopecks":10}`, w.alice.token, "price_moved", 409},
			{"a buy that gets fewer than min_shares", buyPath, `{"side":"YES","amount_kopecks":10000,"min_shares":100000000}`, w.alice.token, "price_moved", 409},

			{"a fractional sale", sellPath, `{"side":"YES","shares":1.5}`, w.alice.token, "invalid_request", 400},
			{"a negative sale", sellPath, `{"side":"YES","shares":-10}`, w.alice.token, "invalid_request", 400},
			{"a zero sale", sellPath, `{"side":"YES","shares":0}`, w.alice.token, "invalid_request", 400},
			{"a sale past int64", sellPath, `{"side":"YES","shares":99999999999999999999}`, w.alice.token, "invalid_request", 400},
			{"a sale with an unknown field", sellPath, `{"side":"YES","shares":10,"use_bonus":true}`, w.alice.token, "invalid_request", 400},
			{"a sale with a string shares", sellPath, `{"side":"YES","shares":"10"}`, w.alice.token, "invalid_request", 400},
			{"a sale of more shares than held", sellPath, fmt.Sprintf(`{"side":"YES","shares":%d}`, held.Shares+1), w.alice.token, "insufficient_shares", 400},
			{"a sale of a side not held", sellPath, `{"side":"NO","shares":10}`, w.alice.token, "insufficient_shares", 400},
			{"a sale by someone with no position", sellPath, `{"side":"YES","shares":10}`, w.bob.token, "insufficient_shares", 400},
			{"a sale under min_payout_kopecks", sellPath, fmt.Sprintf(`{"side":"YES","shares":%d,"min_payout_kopecks":%d}`, held.Shares, held.CostKopecks*10), w.alice.token, "price_moved", 409},

			{"a fractional credit", creditPath, `{"amount_kopecks":10.5}`, adminToken, "invalid_request", 400},
			{"a negative credit", creditPath, `{"amount_kopecks":-10}`, adminToken, "invalid_request", 400},
			{"a zero credit", creditPath, `{"amount_kopecks":0}`, adminToken, "invalid_request", 400},
			{"a credit past the limit", creditPath, `{"amount_kopecks":10000000000001}`, adminToken, "invalid_request", 400},
			{"a credit past int64", creditPath, `{"amount_kopecks":9223372036854775808}`, adminToken, "invalid_request", 400},
			{"a credit with an unknown field", creditPath, `{"amount_kopecks":10,"currency":"RUB"}`, adminToken, "invalid_request", 400},
			{"a credit with a string bonus", creditPath, `{"amount_kopecks":10,"bonus":"yes"}`, adminToken, "invalid_request", 400},
			{"a credit with trailing data", creditPath, `{"amount_kopecks":10}]`, adminToken, "invalid_request", 400},
			{"a credit of a non-integer user id", "/api/v1/admin/users/x/credit", `{"amount_kopecks":10}`, adminToken, "invalid_id", 400},
			{"a credit of an unknown user", "/api/v1/admin/users/987654321/credit", `{"amount_kopecks":10}`, adminToken, "user_not_found", 404},
			{"a credit with a user's token", creditPath, `{"amount_kopecks":10}`, w.alice.token, "unauthorized", 401},
			{"a credit without a token", creditPath, `{"amount_kopecks":10}`, "", "unauthorized", 401},
		}
		for _, c := range cases {
			t.Run(c.name+" is "+fmt.Sprint(c.status)+" "+c.code+" and changes nothing", func(t *testing.T) {
				r := h.do(t, req{method: http.MethodPost, path: c.path, token: c.token, body: c.body})
				expect(t, r, c.status, c.code)
			})
		}
		t.Run("after all of them no balance, market or ledger entry changed", func(t *testing.T) {
			before.same(t, takeSnapshot(t, h, w))
		})
	})
}

// TestQuotes prices trades without trading.
func TestQuotes(t *testing.T) {
	h := newHarness(t, memoryStore())
	w := newWorld(t, h)
	q := func(query string) *response {
		return h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/quote?%s", w.a1.ID, query)})
	}
	t.Run("a buy quote costs at most the amount and matches the buy", func(t *testing.T) {
		r := q("side=YES&amount_kopecks=10000")
		expect(t, r, 200, "")
		var qt struct {
			Shares      int64 `json:"shares"`
			CostKopecks int64 `json:"cost_kopecks"`
			FeeKopecks  int64 `json:"fee_kopecks"`
		}
		r.decode(t, &qt)
		if qt.CostKopecks > 10000 || qt.Shares <= 0 {
			t.Fatalf("quote %s", r)
		}
		tr := h.buy(t, w.alice.token, w.a1.ID, "YES", 10000)
		if tr.Shares != qt.Shares || tr.CostKopecks != qt.CostKopecks || tr.FeeKopecks != qt.FeeKopecks {
			t.Errorf("the buy (%d shares for %d, fee %d) differs from its quote (%d for %d, fee %d)",
				tr.Shares, tr.CostKopecks, tr.FeeKopecks, qt.Shares, qt.CostKopecks, qt.FeeKopecks)
		}
	})
	t.Run("a sell quote answers a payout", func(t *testing.T) {
		r := q("side=yes&shares=100")
		expect(t, r, 200, "")
		if !strings.Contains(string(r.body), `"payout_kopecks"`) {
			t.Errorf("no payout in %s", r)
		}
	})
	for _, c := range []struct {
		name, query, code string
		status            int
	}{
		{"a quote with neither amount nor shares", "side=YES", "invalid_request", 400},
		{"a quote with both amount and shares", "side=YES&amount_kopecks=10&shares=10", "invalid_request", 400},
		{"a quote without a side", "amount_kopecks=10", "invalid_request", 400},
		{"a quote with a negative amount", "side=YES&amount_kopecks=-10", "invalid_request", 400},
		{"a quote with a fractional amount", "side=YES&amount_kopecks=10.5", "invalid_request", 400},
		{"a quote with a zero amount", "side=YES&amount_kopecks=0", "invalid_request", 400},
		{"a quote too small for a share", "side=YES&amount_kopecks=1", "trade_refused", 400},
	} {
		t.Run(c.name+" is "+c.code, func(t *testing.T) { expect(t, q(c.query), c.status, c.code) })
	}
	t.Run("a quote on an unknown market is 404 market_not_found", func(t *testing.T) {
		expect(t, h.do(t, req{method: "GET", path: "/api/v1/markets/987654321/quote?side=YES&amount_kopecks=100"}), 404, "market_not_found")
	})
	t.Run("a quote on a non-integer market id is 400 invalid_id", func(t *testing.T) {
		expect(t, h.do(t, req{method: "GET", path: "/api/v1/markets/x/quote?side=YES&amount_kopecks=100"}), 400, "invalid_id")
	})
	t.Run("a quote on a resolved market is 409 market_closed", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: w.closePath(w.event.ID, w.poolB.ID, w.b1.ID), token: w.creator.token, body: `{"won_side":"NO"}`}), 200, "")
		expect(t, h.do(t, req{method: "GET", path: fmt.Sprintf("/api/v1/markets/%d/quote?side=YES&amount_kopecks=100", w.b1.ID)}), 409, "market_closed")
		expect(t, h.do(t, req{method: "POST", path: fmt.Sprintf("/api/v1/markets/%d/buy", w.b1.ID), token: w.bob.token, body: `{"side":"YES","amount_kopecks":100}`}), 409, "market_closed")
	})
}

// TestOnlyCreatorsCreateAndOnlyTheirCreatorManages: roles and ownership.
func TestOnlyCreatorsCreateAndOnlyTheirCreatorManages(t *testing.T) {
	h := newHarness(t, memoryStore())
	w := newWorld(t, h)
	t.Run("a user who is not a creator cannot create an event", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: "/api/v1/events", token: w.alice.token, body: twoPoolEvent("Nope")}), 403, "forbidden")
	})
	t.Run("a non-creator with a malformed body is still 403", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: "/api/v1/events", token: w.alice.token, body: `{`}), 403, "forbidden")
	})
	t.Run("creating an event without a token is 401", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: "/api/v1/events", body: twoPoolEvent("Nope")}), 401, "unauthorized")
	})
	t.Run("a non-creator cannot activate or hide the event", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: fmt.Sprintf("/api/v1/events/%d/active", w.event.ID), token: w.alice.token, body: `{"is_active":false}`}), 403, "forbidden")
	})
	t.Run("a non-creator cannot close a market", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: w.closePath(w.event.ID, w.poolA.ID, w.a1.ID), token: w.bob.token, body: `{"won_side":"YES"}`}), 403, "forbidden")
	})
	t.Run("a creator's invalid event is 400 with the field named", func(t *testing.T) {
		for _, body := range []string{
			`{"name":"x","pools":[]}`,
			`{"name":"","pools":[{"name":"p","margin":0.01,"lmsr_b_kopecks":1000,"markets":[{"name":"m","probability":0.5}]}]}`,
			`{"name":"x","pools":[{"name":"p","margin":0.5,"lmsr_b_kopecks":1000,"markets":[{"name":"m","probability":0.5}]}]}`,
			`{"name":"x","pools":[{"name":"p","margin":0.01,"lmsr_b_kopecks":1,"markets":[{"name":"m","probability":0.5}]}]}`,
			`{"name":"x","pools":[{"name":"p","margin":0.01,"lmsr_b_kopecks":1000,"markets":[{"name":"m","probability":1.5}]}]}`,
			`{"name":"x","pools":[{"name":"p","lmsr_b_kopecks":1000,"markets":[{"name":"m","probability":0.5}]}]}`,
			`{"name":"x","pools":[{"name":"p","margin":0.01,"lmsr_b_kopecks":1000.5,"markets":[{"name":"m","probability":0.5}]}]}`,
			`{"name":"x","pools":[{"name":"p","margin":0.01,"lmsr_b_kopecks":1000,"markets":[{"name":"m","probability":0.5,"extra":1}]}]}`,
			`{"name":"x","pools":[{"name":"p","margin":0.01,"lmsr_b_kopecks":1000,"live_at":"tomorrow","markets":[{"name":"m","probability":0.5}]}]}`,
			`{"name":"x","pools":[{"name":"p","margin":0.01,"lmsr_b_kopecks":1000,"live_at":"2030-01-02T00:00:00Z","finish_at":"2030-01-01T00:00:00Z","markets":[{"name":"m","probability":0.5}]}]}`,
		} {
			r := h.do(t, req{method: "POST", path: "/api/v1/events", token: w.creator.token, body: body})
			expect(t, r, 400, "invalid_request")
			if !strings.Contains(string(r.body), `"detail"`) {
				t.Errorf("%s: no detail in %s", body, r)
			}
		}
	})
	t.Run("an inactive event is not in the feed but is reachable by id", func(t *testing.T) {
		e := h.createEvent(t, w.creator.token, twoPoolEvent("Hidden"))
		r := h.do(t, req{method: "GET", path: "/api/v1/events?limit=100"})
		expect(t, r, 200, "")
		if strings.Contains(string(r.body), `"Hidden"`) {
			t.Error("an inactive event is in the feed")
		}
		expect(t, h.do(t, req{method: "GET", path: fmt.Sprintf("/api/v1/events/%d", e.ID)}), 200, "")
		h.activate(t, w.creator.token, e.ID, true)
		r = h.do(t, req{method: "GET", path: "/api/v1/events?limit=1"})
		var feed struct {
			Events []apiEvent `json:"events"`
		}
		r.decode(t, &feed)
		if len(feed.Events) != 1 || feed.Events[0].ID != e.ID {
			t.Errorf("the newest active event is not first in the feed: %s", r)
		}
	})
	for _, c := range []struct{ name, path, code string }{
		{"an unknown event is 404 event_not_found", "/api/v1/events/987654321", "event_not_found"},
		{"an unknown market is 404 market_not_found", "/api/v1/markets/987654321", "market_not_found"},
		{"the history of an unknown market is 404 market_not_found", "/api/v1/markets/987654321/history", "market_not_found"},
	} {
		t.Run(c.name, func(t *testing.T) { expect(t, h.do(t, req{method: "GET", path: c.path}), 404, c.code) })
	}
	for _, c := range []struct{ name, path string }{
		{"a non-integer event id is 400 invalid_id", "/api/v1/events/abc"},
		{"a non-integer market id is 400 invalid_id", "/api/v1/markets/abc"},
		{"a non-integer history id is 400 invalid_id", "/api/v1/markets/abc/history"},
	} {
		t.Run(c.name, func(t *testing.T) { expect(t, h.do(t, req{method: "GET", path: c.path}), 400, "invalid_id") })
	}
	for _, q := range []string{"limit=-1", "limit=x", "offset=1.5", "offset=-3"} {
		t.Run("an events feed with "+q+" is 400 invalid_request", func(t *testing.T) {
			expect(t, h.do(t, req{method: "GET", path: "/api/v1/events?" + q}), 400, "invalid_request")
		})
	}
}

// TestHiddenProfiles: a hidden profile's chart is 404 to others but
// visible to its owner; its trades show as Anonymous.
func TestHiddenProfiles(t *testing.T) {
	h := newHarness(t, memoryStore())
	w := newWorld(t, h)
	h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
	r := h.do(t, req{method: "PATCH", path: "/api/v1/auth/me", token: w.alice.token, body: `{"profile_hidden":true,"nickname":"alice_x","avatar_url":"https://example.com/a.png"}`})
	expect(t, r, 200, "")
	chart := fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.alice.id)
	t.Run("anonymous visitors get 404 user_not_found", func(t *testing.T) {
		expect(t, h.do(t, req{method: "GET", path: chart}), 404, "user_not_found")
	})
	t.Run("another user gets 404 user_not_found", func(t *testing.T) {
		expect(t, h.do(t, req{method: "GET", path: chart, token: w.bob.token}), 404, "user_not_found")
	})
	t.Run("the owner sees it by id", func(t *testing.T) {
		expect(t, h.do(t, req{method: "GET", path: chart, token: w.alice.token}), 200, "")
	})
	t.Run("the owner sees it as me", func(t *testing.T) {
		expect(t, h.do(t, req{method: "GET", path: "/api/v1/users/me/pnl/chart", token: w.alice.token}), 200, "")
	})
	t.Run("the trade feed shows the hidden trader as Anonymous with no avatar", func(t *testing.T) {
		r := h.do(t, req{method: "GET", path: "/api/v1/market/trades/latest"})
		expect(t, r, 200, "")
		if !strings.Contains(string(r.body), `"name":"Anonymous","token":"YES"`) || !strings.Contains(string(r.body), `"avatar":null`) {
			t.Errorf("feed %s", r)
		}
		if strings.Contains(string(r.body), w.alice.name) {
			t.Errorf("the feed names the hidden trader: %s", r)
		}
	})
	t.Run("the profile shows the nickname and avatar, and nulls once cleared", func(t *testing.T) {
		p := h.me(t, w.alice.token)
		if p.Nickname == nil || *p.Nickname != "alice_x" || p.AvatarURL == nil || !p.ProfileHidden {
			t.Fatalf("profile %+v", p)
		}
		expect(t, h.do(t, req{method: "PATCH", path: "/api/v1/auth/me", token: w.alice.token, body: `{"nickname":"","avatar_url":""}`}), 200, "")
		p = h.me(t, w.alice.token)
		if p.Nickname != nil || p.AvatarURL != nil {
			t.Errorf("cleared nickname/avatar are not null: %+v", p)
		}
	})
	t.Run("a taken nickname is 409 nickname_taken", func(t *testing.T) {
		expect(t, h.do(t, req{method: "PATCH", path: "/api/v1/auth/me", token: w.bob.token, body: `{"nickname":"bobby"}`}), 200, "")
		expect(t, h.do(t, req{method: "PATCH", path: "/api/v1/auth/me", token: w.alice.token, body: `{"nickname":"bobby"}`}), 409, "nickname_taken")
	})
	t.Run("an invalid profile change is 400 invalid_request", func(t *testing.T) {
		for _, body := range []string{`{"theme":"neon"}`, `{"language":"de"}`, `{"avatar_url":"ftp://x"}`, `{"nickname":"a b"}`, `{"profile_hidden":"yes"}`, `{"Name":"x"}`} {
			expect(t, h.do(t, req{method: "PATCH", path: "/api/v1/auth/me", token: w.alice.token, body: body}), 400, "invalid_request")
		}
	})
	t.Run("a profile change without a token is 401 UNAUTHORIZED", func(t *testing.T) {
		expect(t, h.do(t, req{method: "PATCH", path: "/api/v1/auth/me", body: `{"theme":"dark"}`}), 401, "UNAUTHORIZED")
	})
}

// TestAuthFlow: register, log in, log out.
func TestAuthFlow(t *testing.T) {
	h := newHarness(t, memoryStore())
	u := h.register(t, "carol")
	t.Run("a duplicate e-mail is 409 email_taken", func(t *testing.T) {
		r := h.do(t, req{method: "POST", path: "/api/v1/auth/register", body: map[string]any{"email": strings.ToUpper(u.email), "password": "another-pass", "name": "C"}})
		expect(t, r, 409, "email_taken")
	})
	t.Run("an invalid registration is 400 invalid_request", func(t *testing.T) {
		for _, body := range []string{`{"email":"nope","password":"password1","name":"x"}`, `{"email":"a@b.co","password":"short","name":"x"}`,
			`{"email":"a@b.co","password":"password1","name":""}`, `{"email":"a@b.co","password":"password1"}`, `{"email":"a@b.co","password":"password1","name":"x","admin":true}`} {
			expect(t, h.do(t, req{method: "POST", path: "/api/v1/auth/register", body: body}), 400, "invalid_request")
		}
	})
	t.Run("a wrong password is 401 invalid_credentials", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": u.email, "password": "wrong-password"}}), 401, "invalid_credentials")
	})
	t.Run("an unknown e-mail is 401 invalid_credentials", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": "nobody@test.predictkit", "password": "password-x"}}), 401, "invalid_credentials")
	})
	t.Run("a login body without a password is 400 invalid_request", func(t *testing.T) {
		expect(t, h.do(t, req{method: "POST", path: "/api/v1/auth/login", body: `{"email":"a@b.co"}`}), 400, "invalid_request")
	})
	t.Run("log in, use the token, log out, and the token stops working", func(t *testing.T) {
		r := h.do(t, req{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": u.email, "password": "password-carol"}})
		expect(t, r, 200, "")
		var out struct {
			AccessToken string     `json:"access_token"`
			User        apiProfile `json:"user"`
		}
		r.decode(t, &out)
		if out.User.ID != u.id || out.AccessToken == "" || out.AccessToken == u.token {
			t.Fatalf("login answered %s", r)
		}
		h.me(t, out.AccessToken)
		expect(t, h.do(t, req{method: "POST", path: "/api/v1/auth/logout", token: out.AccessToken}), 200, "")
		expect(t, h.do(t, req{method: "GET", path: "/api/v1/auth/me", token: out.AccessToken}), 401, "UNAUTHORIZED")
		expect(t, h.do(t, req{method: "POST", path: "/api/v1/auth/logout", token: out.AccessToken}), 401, "unauthorized")
		h.me(t, u.token) // the other token still works
	})
}

// TestOperatorEndpoints: admin token checks and 404 when disabled.
func TestOperatorEndpoints(t *testing.T) {
	h := newHarness(t, memoryStore())
	u := h.register(t, "dave")
	t.Run("with no admin token configured every operator endpoint is 404 not_found", func(t *testing.T) {
		off := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.AdminToken = "" }))
		for _, r := range []req{
			{method: "POST", path: "/api/v1/admin/users/1/credit", body: `{"amount_kopecks":10}`},
			{method: "PATCH", path: "/api/v1/admin/users/1", body: `{"is_creator":true}`},
			{method: "GET", path: "/api/v1/admin/audit"},
			{method: "GET", path: "/api/v1/admin/audit", token: "anything"},
			{method: "GET", path: "/api/v1/admin/audit", token: ""},
		} {
			expect(t, off.do(t, r), 404, "not_found")
		}
	})
	t.Run("a wrong admin token is 401 unauthorized", func(t *testing.T) {
		for _, tok := range []string{"", "x", adminToken + "x", strings.ToUpper(adminToken), u.token} {
			expect(t, h.do(t, req{method: "GET", path: "/api/v1/admin/audit", token: tok}), 401, "unauthorized")
		}
	})
	t.Run("roles are granted and revoked", func(t *testing.T) {
		r := h.do(t, req{method: "PATCH", path: fmt.Sprintf("/api/v1/admin/users/%d", u.id), token: adminToken, body: `{"is_creator":true,"is_stats_viewer":true}`})
		expect(t, r, 200, "")
		if !h.me(t, u.token).IsCreator {
			t.Error("not a creator after the grant")
		}
		expect(t, h.do(t, req{method: "PATCH", path: fmt.Sprintf("/api/v1/admin/users/%d", u.id), token: adminToken, body: `{"is_creator":false}`}), 200, "")
		if h.me(t, u.token).IsCreator {
			t.Error("still a creator after the revocation")
		}
	})
	t.Run("a roles patch of an unknown user is 404 user_not_found", func(t *testing.T) {
		expect(t, h.do(t, req{method: "PATCH", path: "/api/v1/admin/users/987654321", token: adminToken, body: `{"is_creator":true}`}), 404, "user_not_found")
	})
	t.Run("a roles patch with a non-boolean is 400 invalid_request", func(t *testing.T) {
		expect(t, h.do(t, req{method: "PATCH", path: fmt.Sprintf("/api/v1/admin/users/%d", u.id), token: adminToken, body: `{"is_creator":"yes"}`}), 400, "invalid_request")
	})
	t.Run("a bonus credit goes to the bonus balance", func(t *testing.T) {
		r := h.do(t, req{method: "POST", path: fmt.Sprintf("/api/v1/admin/users/%d/credit", u.id), token: adminToken, body: `{"amount_kopecks":250,"bonus":true}`})
		expect(t, r, 200, "")
		var b struct {
			UserID       int64 `json:"user_id"`
			Balance      int64 `json:"balance"`
			BonusBalance int64 `json:"bonus_balance"`
		}
		r.decode(t, &b)
		if b.UserID != u.id || b.Balance != 0 || b.BonusBalance != 250 {
			t.Errorf("credit answered %s", r)
		}
	})
}

// feeIncome is the platform's fee income: the sum over every market's fee
// account.
func feeIncome(ctx context.Context, store account.Store) (int64, error) {
	accts, _, err := store.LedgerState(ctx)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, a := range accts {
		if a.Ref.Kind == account.KindFees {
			sum += a.Balance
		}
	}
	return sum, nil
}
