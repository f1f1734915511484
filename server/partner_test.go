package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// The partner API's shapes, as the tests read them.

type apiNewPartner struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Key  string `json:"key"`
}

type apiPartner struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Disabled     bool   `json:"disabled"`
	FloatKopecks int64  `json:"float_kopecks"`
	CreatedAt    string `json:"created_at"`
}

type apiReceipt struct {
	Status         string `json:"status"`
	ClientBetID    string `json:"client_bet_id"`
	ExternalUserID string `json:"external_user_id"`
	UserID         int64  `json:"user_id"`
	MarketID       int64  `json:"market_id"`
	Side           string `json:"side"`
	CostKopecks    int64  `json:"cost_kopecks"`
	PayoutKopecks  int64  `json:"payout_kopecks"`
	SharesDelta    int64  `json:"shares_delta"`
}

type apiPartnerPosition struct {
	MarketID     int64  `json:"market_id"`
	Side         string `json:"side"`
	Shares       int64  `json:"shares"`
	AvgPriceBps  int64  `json:"avg_price_bps"`
	ValueKopecks int64  `json:"value_kopecks"`
}

type apiPartnerState struct {
	ExternalUserID       string               `json:"external_user_id"`
	Exists               bool                 `json:"exists"`
	UserID               int64                `json:"user_id"`
	BalanceKopecks       int64                `json:"balance_kopecks"`
	OpenPositionsKopecks int64                `json:"open_positions_kopecks"`
	Positions            []apiPartnerPosition `json:"positions"`
}

// errorDetail is the "detail" of an error body.
func (r *response) errorDetail(t *testing.T) string {
	t.Helper()
	var e struct {
		Detail string `json:"detail"`
	}
	r.decode(t, &e)
	return e.Detail
}

// createPartner creates a partner through the operator API and funds its
// float when float > 0.
func (h *harness) createPartner(t *testing.T, name string, float int64) apiNewPartner {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/partners", token: adminToken, body: map[string]any{"name": name}})
	expect(t, r, http.StatusCreated, "")
	var p apiNewPartner
	r.decode(t, &p)
	if p.ID == 0 || p.Name != name || !strings.HasPrefix(p.Key, "pk_") {
		t.Fatalf("create partner answered %s", r)
	}
	if float > 0 {
		h.fundFloat(t, p.ID, float)
	}
	return p
}

func (h *harness) fundFloat(t *testing.T, id, amount int64) int64 {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/partners/%d/float", id), token: adminToken,
		body: map[string]any{"amount_kopecks": amount}})
	expect(t, r, http.StatusOK, "")
	var out struct {
		PartnerID    int64 `json:"partner_id"`
		FloatKopecks int64 `json:"float_kopecks"`
	}
	r.decode(t, &out)
	if out.PartnerID != id {
		t.Fatalf("fund float answered %s", r)
	}
	return out.FloatKopecks
}

func (h *harness) partner(t *testing.T, id int64) apiPartner {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/admin/partners/%d", id), token: adminToken})
	expect(t, r, http.StatusOK, "")
	var p apiPartner
	r.decode(t, &p)
	return p
}

func (h *harness) setPartnerDisabled(t *testing.T, id int64, disabled bool) apiPartner {
	t.Helper()
	r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/partners/%d", id), token: adminToken,
		body: map[string]any{"disabled": disabled}})
	expect(t, r, http.StatusOK, "")
	var p apiPartner
	r.decode(t, &p)
	if p.ID != id || p.Disabled != disabled {
		t.Fatalf("patch partner answered %s", r)
	}
	return p
}

func partnerReq(method, path, key string, body any) req {
	r := req{method: method, path: path, body: body}
	if key != "" {
		r.header = map[string]string{"X-Partner-Key": key}
	}
	return r
}

func betReq(key string, body any) req {
	return partnerReq(http.MethodPost, "/api/v1/partner/bet", key, body)
}

func sellReq(key string, body any) req {
	return partnerReq(http.MethodPost, "/api/v1/partner/sell", key, body)
}

func statePath(externalID string) string {
	return "/api/v1/partner/users/" + url.PathEscape(externalID)
}

// bet places an accepted bet and returns its receipt.
func (h *harness) partnerBet(t *testing.T, key string, body map[string]any) apiReceipt {
	t.Helper()
	r := h.do(t, betReq(key, body))
	expect(t, r, http.StatusOK, "")
	var rc apiReceipt
	r.decode(t, &rc)
	if rc.Status != "accepted" || rc.SharesDelta <= 0 || rc.CostKopecks <= 0 {
		t.Fatalf("bet answered %s", r)
	}
	return rc
}

func (h *harness) partnerSell(t *testing.T, key string, body map[string]any) apiReceipt {
	t.Helper()
	r := h.do(t, sellReq(key, body))
	expect(t, r, http.StatusOK, "")
	var rc apiReceipt
	r.decode(t, &rc)
	if rc.Status != "accepted" || rc.SharesDelta >= 0 {
		t.Fatalf("sell answered %s", r)
	}
	return rc
}

func (h *harness) partnerState(t *testing.T, key, externalID string) apiPartnerState {
	t.Helper()
	r := h.do(t, partnerReq(http.MethodGet, statePath(externalID), key, nil))
	expect(t, r, http.StatusOK, "")
	var st apiPartnerState
	r.decode(t, &st)
	if st.Positions == nil {
		t.Fatalf("positions is not an array: %s", r)
	}
	return st
}

// tradeCount is the number of trades on the markets.
func (h *harness) tradeCount(t *testing.T, markets ...int64) int {
	t.Helper()
	n := 0
	for _, id := range markets {
		ts, err := h.store.Trades(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		n += len(ts)
	}
	return n
}

// partnerWorld is newWorld plus partners: bookie (funded), poor (a float
// too small for most bets) and disabled; holder is a bookie user with a
// YES position on A1; closed is a resolved market holder bet on first.
type partnerWorld struct {
	*world
	bookie, poor, disabled apiNewPartner
	held                   apiReceipt
	closed                 apiMarket
}

const bookieFloat = 10_000_000

func newPartnerWorld(t *testing.T, h *harness) *partnerWorld {
	t.Helper()
	w := &partnerWorld{world: newWorld(t, h)}
	w.bookie = h.createPartner(t, "Bookie", bookieFloat)
	w.poor = h.createPartner(t, "Poor", 1_000)
	w.disabled = h.createPartner(t, "Gone", 50_000)
	h.setPartnerDisabled(t, w.disabled.ID, true)
	w.held = h.partnerBet(t, w.bookie.Key, map[string]any{"external_user_id": "holder", "market_id": w.a1.ID, "side": "yes",
		"amount_kopecks": 20_000, "client_bet_id": "setup-1"})
	ev := h.createEvent(t, w.creator.token, twoPoolEvent("Finished"))
	w.closed = ev.Pools[1].Markets[0]
	h.partnerBet(t, w.bookie.Key, map[string]any{"external_user_id": "holder", "market_id": w.closed.ID, "side": "no",
		"amount_kopecks": 5_000, "client_bet_id": "setup-2"})
	expect(t, h.do(t, req{method: http.MethodPost, path: w.closePath(ev.ID, w.closed.PoolID, w.closed.ID), token: w.creator.token,
		body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
	return w
}

// partnerSnapshot is what a refused partner request must not change.
type partnerSnapshot struct {
	floats   [3]int64
	trades   int
	postings int64
	holder   apiPartnerState
	newcomer bool
	a1       apiMarket
}

func (w *partnerWorld) snapshot(t *testing.T, h *harness) partnerSnapshot {
	t.Helper()
	ok, postings, problems := h.audit(t)
	if !ok {
		t.Fatalf("the ledger is not sound: %v", problems)
	}
	return partnerSnapshot{
		floats:   [3]int64{h.partner(t, w.bookie.ID).FloatKopecks, h.partner(t, w.poor.ID).FloatKopecks, h.partner(t, w.disabled.ID).FloatKopecks},
		trades:   h.tradeCount(t, w.a1.ID, w.a2.ID, w.b1.ID, w.closed.ID),
		postings: postings,
		holder:   h.partnerState(t, w.bookie.Key, "holder"),
		newcomer: h.partnerState(t, w.bookie.Key, "newcomer").Exists || h.partnerState(t, w.poor.Key, "newcomer").Exists,
		a1:       h.market(t, w.a1.ID),
	}
}

func (s partnerSnapshot) same(t *testing.T, o partnerSnapshot) {
	t.Helper()
	if s.floats != o.floats {
		t.Errorf("floats changed: %v → %v", s.floats, o.floats)
	}
	if s.trades != o.trades || s.postings != o.postings {
		t.Errorf("trades %d → %d, postings %d → %d", s.trades, o.trades, s.postings, o.postings)
	}
	if s.holder.BalanceKopecks != o.holder.BalanceKopecks || len(s.holder.Positions) != len(o.holder.Positions) ||
		s.holder.Positions[0].Shares != o.holder.Positions[0].Shares {
		t.Errorf("the holder's sub-account changed: %+v → %+v", s.holder, o.holder)
	}
	if o.newcomer {
		t.Error("a refused bet created the newcomer's sub-account")
	}
	if s.a1.QYes != o.a1.QYes || s.a1.QNo != o.a1.QNo || s.a1.Volume != o.a1.Volume {
		t.Errorf("market A1 changed: %+v → %+v", s.a1, o.a1)
	}
}

// with returns a copy of body with the changes; a nil value deletes the
// key.
func with(body map[string]any, changes map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// TestPartnerWalkthrough is the whole partner flow through HTTP: the
// operator creates and funds a partner, which bets for its user, reads
// the state, sells, reads it again and bets from the payout.
func TestPartnerWalkthrough(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		r := h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/partners", token: adminToken, body: `{"name":"  Bookie  "}`})
		expect(t, r, http.StatusCreated, "")
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("the key's answer may be cached: Cache-Control %q", r.header.Get("Cache-Control"))
		}
		var p apiNewPartner
		r.decode(t, &p)
		if p.Name != "Bookie" || !strings.HasPrefix(p.Key, "pk_") {
			t.Fatalf("created %s", r)
		}
		if info := h.partner(t, p.ID); info.Name != "Bookie" || info.Disabled || info.FloatKopecks != 0 || info.CreatedAt == "" {
			t.Fatalf("new partner %+v", info)
		}
		if got := h.fundFloat(t, p.ID, 60_000); got != 60_000 {
			t.Fatalf("float after funding %d", got)
		}
		if got := h.fundFloat(t, p.ID, 40_000); got != 100_000 {
			t.Fatalf("float after a second funding %d", got)
		}

		t.Run("before the first bet the user does not exist", func(t *testing.T) {
			st := h.partnerState(t, p.Key, "alice-ext")
			if st.Exists || st.UserID != 0 || st.BalanceKopecks != 0 || st.OpenPositionsKopecks != 0 || len(st.Positions) != 0 || st.ExternalUserID != "alice-ext" {
				t.Fatalf("state %+v", st)
			}
		})
		b := h.partnerBet(t, p.Key, map[string]any{"external_user_id": "alice-ext", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 20_000,
			"client_bet_id": "walk-1", "max_cost_kopecks": 20_000})
		t.Run("the bet's receipt echoes the request and draws on the float", func(t *testing.T) {
			if b.ClientBetID != "walk-1" || b.ExternalUserID != "alice-ext" || b.MarketID != w.a1.ID || b.Side != "buy_yes" ||
				b.CostKopecks > 20_000 || b.UserID == 0 || b.PayoutKopecks != 0 {
				t.Errorf("receipt %+v", b)
			}
			if got := h.partner(t, p.ID).FloatKopecks; got != 100_000-b.CostKopecks {
				t.Errorf("float %d, want %d", got, 100_000-b.CostKopecks)
			}
		})
		t.Run("the state shows the position, valued at what selling it would pay", func(t *testing.T) {
			st := h.partnerState(t, p.Key, "alice-ext")
			if !st.Exists || st.UserID != b.UserID || st.BalanceKopecks != 0 || len(st.Positions) != 1 {
				t.Fatalf("state %+v", st)
			}
			pos := st.Positions[0]
			if pos.MarketID != w.a1.ID || pos.Side != "yes" || pos.Shares != b.SharesDelta || pos.AvgPriceBps <= 0 || pos.AvgPriceBps >= 10_000 ||
				pos.ValueKopecks <= 0 || pos.ValueKopecks > b.CostKopecks || st.OpenPositionsKopecks != pos.ValueKopecks {
				t.Errorf("position %+v, open %d, after %+v", pos, st.OpenPositionsKopecks, b)
			}
			q := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/quote?side=yes&shares=%d", w.a1.ID, pos.Shares)})
			expect(t, q, http.StatusOK, "")
			var quote struct {
				PayoutKopecks int64 `json:"payout_kopecks"`
			}
			q.decode(t, &quote)
			if quote.PayoutKopecks != pos.ValueKopecks {
				t.Errorf("value %d, but a quote pays %d", pos.ValueKopecks, quote.PayoutKopecks)
			}
		})
		s := h.partnerSell(t, p.Key, map[string]any{"external_user_id": "alice-ext", "market_id": w.a1.ID, "side": "yes", "shares": b.SharesDelta,
			"client_bet_id": "walk-2", "min_payout_kopecks": 1})
		t.Run("the sell's receipt is negative shares and a payout", func(t *testing.T) {
			if s.Side != "sell_yes" || s.SharesDelta != -b.SharesDelta || s.PayoutKopecks <= 0 || s.CostKopecks != 0 || s.UserID != b.UserID {
				t.Errorf("receipt %+v", s)
			}
		})
		t.Run("the payout stays on the sub-account, not the float", func(t *testing.T) {
			st := h.partnerState(t, p.Key, "alice-ext")
			if st.BalanceKopecks != s.PayoutKopecks || len(st.Positions) != 0 || st.OpenPositionsKopecks != 0 {
				t.Errorf("state %+v after %+v", st, s)
			}
			if got := h.partner(t, p.ID).FloatKopecks; got != 100_000-b.CostKopecks {
				t.Errorf("the sell changed the float to %d", got)
			}
		})
		t.Run("a later bet is paid from the sub-account first", func(t *testing.T) {
			float := h.partner(t, p.ID).FloatKopecks
			nb := h.partnerBet(t, p.Key, map[string]any{"external_user_id": "alice-ext", "market_id": w.a2.ID, "side": "no", "amount_kopecks": s.PayoutKopecks / 2,
				"client_bet_id": "walk-3"})
			st := h.partnerState(t, p.Key, "alice-ext")
			if st.BalanceKopecks != s.PayoutKopecks-nb.CostKopecks || h.partner(t, p.ID).FloatKopecks != float {
				t.Errorf("balance %d (payout %d, cost %d), float %d → %d", st.BalanceKopecks, s.PayoutKopecks, nb.CostKopecks, float, h.partner(t, p.ID).FloatKopecks)
			}
			if len(st.Positions) != 1 || st.Positions[0].Side != "no" || st.Positions[0].MarketID != w.a2.ID {
				t.Errorf("positions %+v", st.Positions)
			}
		})
		t.Run("a disabled partner is refused until re-enabled", func(t *testing.T) {
			if got := h.setPartnerDisabled(t, p.ID, true); !got.Disabled {
				t.Fatalf("patch answered %+v", got)
			}
			expect(t, h.do(t, partnerReq(http.MethodGet, statePath("alice-ext"), p.Key, nil)), http.StatusForbidden, "FORBIDDEN")
			h.setPartnerDisabled(t, p.ID, false)
			h.partnerState(t, p.Key, "alice-ext")
		})
		t.Run("the ledger is sound", func(t *testing.T) {
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("audit: %v", problems)
			}
		})
	})
}

// TestPartnerOperatorEndpoints: the admin token, 404 when disabled, and
// the operator's own errors.
func TestPartnerOperatorEndpoints(t *testing.T) {
	h := newHarness(t, memoryStore())
	p := h.createPartner(t, "Bookie", 0)
	t.Run("with no admin token configured every partner operator endpoint is 404 not_found", func(t *testing.T) {
		off := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.AdminToken = "" }))
		for _, r := range []req{
			{method: "POST", path: "/api/v1/admin/partners", body: `{"name":"X"}`},
			{method: "GET", path: "/api/v1/admin/partners/1", token: "anything"},
			{method: "PATCH", path: "/api/v1/admin/partners/1", body: `{"disabled":true}`},
			{method: "POST", path: "/api/v1/admin/partners/1/float", body: `{"amount_kopecks":10}`},
		} {
			expect(t, off.do(t, r), http.StatusNotFound, "not_found")
		}
	})
	cases := []struct {
		name   string
		req    req
		status int
		code   string
	}{
		{"creating a partner without the admin token is 401", req{method: "POST", path: "/api/v1/admin/partners", body: `{"name":"X"}`}, 401, "unauthorized"},
		{"creating a partner with a partner key as token is 401", req{method: "POST", path: "/api/v1/admin/partners", token: p.Key, body: `{"name":"X"}`}, 401, "unauthorized"},
		{"a partner without a name is 400", req{method: "POST", path: "/api/v1/admin/partners", token: adminToken, body: `{}`}, 400, "invalid_request"},
		{"a blank partner name is 400", req{method: "POST", path: "/api/v1/admin/partners", token: adminToken, body: `{"name":"   "}`}, 400, "invalid_request"},
		{"a partner name over 100 characters is 400", req{method: "POST", path: "/api/v1/admin/partners", token: adminToken, body: fmt.Sprintf(`{"name":%q}`, strings.Repeat("n", 101))}, 400, "invalid_request"},
		{"a partner body that is not JSON is 400", req{method: "POST", path: "/api/v1/admin/partners", token: adminToken, body: `{`}, 400, "invalid_request"},
		{"reading an unknown partner is 404", req{method: "GET", path: "/api/v1/admin/partners/987654321", token: adminToken}, 404, "partner_not_found"},
		{"reading a non-integer partner id is 400", req{method: "GET", path: "/api/v1/admin/partners/abc", token: adminToken}, 400, "invalid_id"},
		{"reading a partner without the token is 401", req{method: "GET", path: fmt.Sprintf("/api/v1/admin/partners/%d", p.ID)}, 401, "unauthorized"},
		{"funding an unknown partner is 404", req{method: "POST", path: "/api/v1/admin/partners/987654321/float", token: adminToken, body: `{"amount_kopecks":10}`}, 404, "partner_not_found"},
		{"funding a non-integer partner id is 400", req{method: "POST", path: "/api/v1/admin/partners/x/float", token: adminToken, body: `{"amount_kopecks":10}`}, 400, "invalid_id"},
		{"a zero funding is 400", req{method: "POST", path: fmt.Sprintf("/api/v1/admin/partners/%d/float", p.ID), token: adminToken, body: `{"amount_kopecks":0}`}, 400, "invalid_request"},
		{"a negative funding is 400", req{method: "POST", path: fmt.Sprintf("/api/v1/admin/partners/%d/float", p.ID), token: adminToken, body: `{"amount_kopecks":-5}`}, 400, "invalid_request"},
		{"a fractional funding is 400", req{method: "POST", path: fmt.Sprintf("/api/v1/admin/partners/%d/float", p.ID), token: adminToken, body: `{"amount_kopecks":1.5}`}, 400, "invalid_request"},
		{"a funding past the limit is 400", req{method: "POST", path: fmt.Sprintf("/api/v1/admin/partners/%d/float", p.ID), token: adminToken, body: `{"amount_kopecks":10000000000001}`}, 400, "invalid_request"},
		{"a funding without the token is 401", req{method: "POST", path: fmt.Sprintf("/api/v1/admin/partners/%d/float", p.ID), body: `{"amount_kopecks":10}`}, 401, "unauthorized"},
		{"disabling an unknown partner is 404", req{method: "PATCH", path: "/api/v1/admin/partners/987654321", token: adminToken, body: `{"disabled":true}`}, 404, "partner_not_found"},
		{"a patch without disabled is 400", req{method: "PATCH", path: fmt.Sprintf("/api/v1/admin/partners/%d", p.ID), token: adminToken, body: `{}`}, 400, "invalid_request"},
		{"a patch with a string disabled is 400", req{method: "PATCH", path: fmt.Sprintf("/api/v1/admin/partners/%d", p.ID), token: adminToken, body: `{"disabled":"yes"}`}, 400, "invalid_request"},
		{"a patch of a non-integer id is 400", req{method: "PATCH", path: "/api/v1/admin/partners/x", token: adminToken, body: `{"disabled":true}`}, 400, "invalid_id"},
		{"a patch without the token is 401", req{method: "PATCH", path: fmt.Sprintf("/api/v1/admin/partners/%d", p.ID), body: `{"disabled":true}`}, 401, "unauthorized"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expect(t, h.do(t, c.req), c.status, c.code)
		})
	}
	t.Run("refused operations changed nothing", func(t *testing.T) {
		if info := h.partner(t, p.ID); info.Disabled || info.FloatKopecks != 0 || info.Name != "Bookie" {
			t.Errorf("partner %+v", info)
		}
	})
	t.Run("keys are distinct per partner and never shown again", func(t *testing.T) {
		q := h.createPartner(t, "Bookie", 0)
		if q.Key == p.Key || q.ID == p.ID {
			t.Errorf("two partners share %+v %+v", p, q)
		}
		r := h.do(t, req{method: "GET", path: fmt.Sprintf("/api/v1/admin/partners/%d", q.ID), token: adminToken})
		if strings.Contains(string(r.body), q.Key) || strings.Contains(string(r.body), "key") {
			t.Errorf("the partner's read shows its key: %s", r)
		}
	})
}
