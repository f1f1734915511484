package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
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

// raw is a JSON body written by hand (so that numbers, types and key
// order are exactly as given).
type raw = string

// TestPartnerContractErrors answers every error of the partner API with
// its exact status and code, and checks after each refused request that
// nothing changed: floats, trades, the ledger, sub-accounts, the market.
func TestPartnerContractErrors(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newPartnerWorld(t, h)
		key := w.bookie.Key
		bet := map[string]any{"external_user_id": "newcomer", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 10_000, "client_bet_id": "b-1"}
		sell := map[string]any{"external_user_id": "holder", "market_id": w.a1.ID, "side": "yes", "shares": 100, "client_bet_id": "s-1"}
		betJSON := func(fields string) raw {
			return fmt.Sprintf(`{"external_user_id":"newcomer","market_id":%d,"client_bet_id":"b-1",%s}`, w.a1.ID, fields)
		}
		sellJSON := func(fields string) raw {
			return fmt.Sprintf(`{"external_user_id":"holder","market_id":%d,"client_bet_id":"s-1",%s}`, w.a1.ID, fields)
		}
		before := w.snapshot(t, h)

		cases := []struct {
			name   string
			req    req
			status int
			code   string
			// detail, when set, must be contained in the answer's detail.
			detail string
		}{
			// Authentication, before the body, on every partner route.
			{"a bet without a key is 401 UNAUTHORIZED", betReq("", bet), 401, "UNAUTHORIZED", ""},
			{"a bet with an unknown key is 401 UNAUTHORIZED", betReq("pk_unknown", bet), 401, "UNAUTHORIZED", ""},
			{"a bet with an oversized key is 401 UNAUTHORIZED", betReq(strings.Repeat("k", 300), bet), 401, "UNAUTHORIZED", ""},
			{"a bet with an admin token as key is 401 UNAUTHORIZED", betReq(adminToken, bet), 401, "UNAUTHORIZED", ""},
			{"a bet without a key and with a broken body is 401 first", betReq("", `{`), 401, "UNAUTHORIZED", ""},
			{"a bet by a disabled partner is 403 FORBIDDEN", betReq(w.disabled.Key, with(bet, map[string]any{"client_bet_id": "d-1"})), 403, "FORBIDDEN", ""},
			{"a disabled partner with a broken body is 403 first", betReq(w.disabled.Key, `[]`), 403, "FORBIDDEN", ""},
			{"a sell without a key is 401 UNAUTHORIZED", sellReq("", sell), 401, "UNAUTHORIZED", ""},
			{"a sell with an unknown key is 401 UNAUTHORIZED", sellReq("pk_unknown", sell), 401, "UNAUTHORIZED", ""},
			{"a sell by a disabled partner is 403 FORBIDDEN", sellReq(w.disabled.Key, sell), 403, "FORBIDDEN", ""},
			{"a state read without a key is 401 UNAUTHORIZED", partnerReq("GET", statePath("holder"), "", nil), 401, "UNAUTHORIZED", ""},
			{"a state read with an unknown key is 401 UNAUTHORIZED", partnerReq("GET", statePath("holder"), "pk_unknown", nil), 401, "UNAUTHORIZED", ""},
			{"a state read by a disabled partner is 403 FORBIDDEN", partnerReq("GET", statePath("holder"), w.disabled.Key, nil), 403, "FORBIDDEN", ""},
			{"a bearer token is not a partner key", req{method: "POST", path: "/api/v1/partner/bet", token: w.alice.token, body: bet}, 401, "UNAUTHORIZED", ""},

			// Bodies that are not one JSON object.
			{"an unterminated bet body is BAD_BODY", betReq(key, `{`), 400, "BAD_BODY", ""},
			{"a bet body that is an array is BAD_BODY", betReq(key, `[]`), 400, "BAD_BODY", ""},
			{"an empty bet body is BAD_BODY", betReq(key, ``), 400, "BAD_BODY", ""},
			{"a blank bet body is BAD_BODY", betReq(key, " \n\t"), 400, "BAD_BODY", ""},
			{"a bet body of null is BAD_BODY", betReq(key, `null`), 400, "BAD_BODY", ""},
			{"a bet body that is a string is BAD_BODY", betReq(key, `"bet"`), 400, "BAD_BODY", ""},
			{"a form-encoded bet body is BAD_BODY", betReq(key, `side=yes&amount_kopecks=100`), 400, "BAD_BODY", ""},
			{"a bet body with trailing garbage is BAD_BODY", betReq(key, betJSON(`"side":"yes","amount_kopecks":100} x`)), 400, "BAD_BODY", ""},
			{"two bet bodies in a row are BAD_BODY", betReq(key, `{}{}`), 400, "BAD_BODY", ""},
			{"a truncated bet body is BAD_BODY", betReq(key, betJSON(`"side":"yes","amount_kopecks":`)), 400, "BAD_BODY", ""},
			{"a bet body of invalid UTF-8 is BAD_BODY", betReq(key, "{\"external_user_id\":\"\xff\"}"), 400, "BAD_BODY", ""},
			{"an unterminated sell body is BAD_BODY", sellReq(key, `{`), 400, "BAD_BODY", ""},
			{"a sell body that is an array is BAD_BODY", sellReq(key, `[]`), 400, "BAD_BODY", ""},
			{"an empty sell body is BAD_BODY", sellReq(key, ``), 400, "BAD_BODY", ""},

			// Missing or invalid fields of a bet.
			{"a bet without external_user_id is BAD_PARAMS", betReq(key, with(bet, map[string]any{"external_user_id": nil})), 400, "BAD_PARAMS", "external_user_id"},
			{"a bet without market_id is BAD_PARAMS", betReq(key, with(bet, map[string]any{"market_id": nil})), 400, "BAD_PARAMS", "market_id"},
			{"a bet without side is BAD_PARAMS", betReq(key, with(bet, map[string]any{"side": nil})), 400, "BAD_PARAMS", "side"},
			{"a bet without amount_kopecks is BAD_PARAMS", betReq(key, with(bet, map[string]any{"amount_kopecks": nil})), 400, "BAD_PARAMS", "amount_kopecks"},
			{"a bet without client_bet_id is BAD_PARAMS", betReq(key, with(bet, map[string]any{"client_bet_id": nil})), 400, "BAD_PARAMS", "client_bet_id"},
			{"an empty object is BAD_PARAMS", betReq(key, `{}`), 400, "BAD_PARAMS", ""},
			{"an empty external_user_id is BAD_PARAMS", betReq(key, with(bet, map[string]any{"external_user_id": ""})), 400, "BAD_PARAMS", "external_user_id"},
			{"an external_user_id over 256 bytes is BAD_PARAMS", betReq(key, with(bet, map[string]any{"external_user_id": strings.Repeat("я", 129)})), 400, "BAD_PARAMS", "external_user_id"},
			{"a numeric external_user_id is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":100,"external_user_id":42`)), 400, "BAD_PARAMS", ""},
			{"an empty client_bet_id is BAD_PARAMS", betReq(key, with(bet, map[string]any{"client_bet_id": ""})), 400, "BAD_PARAMS", "client_bet_id"},
			{"a client_bet_id with a newline is BAD_PARAMS", betReq(key, with(bet, map[string]any{"client_bet_id": "a\nb"})), 400, "BAD_PARAMS", "client_bet_id"},
			{"a client_bet_id over 128 bytes is BAD_PARAMS", betReq(key, with(bet, map[string]any{"client_bet_id": strings.Repeat("k", 129)})), 400, "BAD_PARAMS", "client_bet_id"},
			{"a zero market_id is BAD_PARAMS", betReq(key, with(bet, map[string]any{"market_id": 0})), 400, "BAD_PARAMS", "market_id"},
			{"a negative market_id is BAD_PARAMS", betReq(key, with(bet, map[string]any{"market_id": -1})), 400, "BAD_PARAMS", "market_id"},
			{"a string market_id is BAD_PARAMS", betReq(key, with(bet, map[string]any{"market_id": fmt.Sprint(w.a1.ID)})), 400, "BAD_PARAMS", "market_id"},
			{"a side of \"YES \" is BAD_PARAMS", betReq(key, with(bet, map[string]any{"side": "YES "})), 400, "BAD_PARAMS", "side"},
			{"a side of \"maybe\" is BAD_PARAMS", betReq(key, with(bet, map[string]any{"side": "maybe"})), 400, "BAD_PARAMS", "side"},
			{"an upper-case side is BAD_PARAMS", betReq(key, with(bet, map[string]any{"side": "YES"})), 400, "BAD_PARAMS", "side"},
			{"a direction as side is BAD_PARAMS", betReq(key, with(bet, map[string]any{"side": "buy_yes"})), 400, "BAD_PARAMS", "side"},
			{"an empty side is BAD_PARAMS", betReq(key, with(bet, map[string]any{"side": ""})), 400, "BAD_PARAMS", "side"},
			{"a boolean side is BAD_PARAMS", betReq(key, with(bet, map[string]any{"side": true})), 400, "BAD_PARAMS", "side"},
			{"a zero amount is BAD_PARAMS", betReq(key, with(bet, map[string]any{"amount_kopecks": 0})), 400, "BAD_PARAMS", "amount_kopecks"},
			{"a negative amount is BAD_PARAMS", betReq(key, with(bet, map[string]any{"amount_kopecks": -1})), 400, "BAD_PARAMS", "amount_kopecks"},
			{"a fractional amount is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":1.5`)), 400, "BAD_PARAMS", "amount_kopecks"},
			{"an amount in exponent form is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":1e4`)), 400, "BAD_PARAMS", "amount_kopecks"},
			{"a string amount is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":"10"`)), 400, "BAD_PARAMS", "amount_kopecks"},
			{"a null amount is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":null`)), 400, "BAD_PARAMS", "amount_kopecks"},
			{"an amount past int64 is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":9223372036854775808`)), 400, "BAD_PARAMS", "amount_kopecks"},
			{"an amount over the trade limit is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":100000000001`)), 400, "BAD_PARAMS", "amount_kopecks"},
			{"a negative max_cost_kopecks is BAD_PARAMS", betReq(key, with(bet, map[string]any{"max_cost_kopecks": -1})), 400, "BAD_PARAMS", "max_cost_kopecks"},
			{"a fractional max_cost_kopecks is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":100,"max_cost_kopecks":0.5`)), 400, "BAD_PARAMS", "max_cost_kopecks"},
			{"an unknown field on a bet is BAD_PARAMS", betReq(key, with(bet, map[string]any{"price": 1})), 400, "BAD_PARAMS", "price"},
			{"a sell's field on a bet is BAD_PARAMS", betReq(key, with(bet, map[string]any{"shares": 100})), 400, "BAD_PARAMS", "shares"},
			{"a key in another case is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","AMOUNT_KOPECKS":100`)), 400, "BAD_PARAMS", ""},
			{"a duplicated key is BAD_PARAMS", betReq(key, betJSON(`"side":"yes","amount_kopecks":100,"amount_kopecks":100000`)), 400, "BAD_PARAMS", "amount_kopecks"},

			// Missing or invalid fields of a sell.
			{"a sell without shares is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"shares": nil})), 400, "BAD_PARAMS", "shares"},
			{"a sell without external_user_id is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"external_user_id": nil})), 400, "BAD_PARAMS", "external_user_id"},
			{"a sell without market_id is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"market_id": nil})), 400, "BAD_PARAMS", "market_id"},
			{"a sell without side is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"side": nil})), 400, "BAD_PARAMS", "side"},
			{"a sell without client_bet_id is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"client_bet_id": nil})), 400, "BAD_PARAMS", "client_bet_id"},
			{"a sell of 0 shares is BAD_PARAMS", sellReq(key, sellJSON(`"side":"yes","shares":0`)), 400, "BAD_PARAMS", "shares"},
			{"a sell of 1.5 shares is BAD_PARAMS", sellReq(key, sellJSON(`"side":"yes","shares":1.5`)), 400, "BAD_PARAMS", "shares"},
			{"a sell of -1 shares is BAD_PARAMS", sellReq(key, sellJSON(`"side":"yes","shares":-1`)), 400, "BAD_PARAMS", "shares"},
			{"a sell of \"10\" shares is BAD_PARAMS", sellReq(key, sellJSON(`"side":"yes","shares":"10"`)), 400, "BAD_PARAMS", "shares"},
			{"a sell of 9223372036854775808 shares is BAD_PARAMS", sellReq(key, sellJSON(`"side":"yes","shares":9223372036854775808`)), 400, "BAD_PARAMS", "shares"},
			{"a sell over the trade limit is BAD_PARAMS", sellReq(key, sellJSON(`"side":"yes","shares":100000000001`)), 400, "BAD_PARAMS", "shares"},
			{"a sell with side \"YES \" is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"side": "YES "})), 400, "BAD_PARAMS", "side"},
			{"a sell with side \"maybe\" is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"side": "maybe"})), 400, "BAD_PARAMS", "side"},
			{"a sell with an empty external_user_id is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"external_user_id": ""})), 400, "BAD_PARAMS", "external_user_id"},
			{"a sell with an empty client_bet_id is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"client_bet_id": ""})), 400, "BAD_PARAMS", "client_bet_id"},
			{"a sell with a negative min_payout_kopecks is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"min_payout_kopecks": -1})), 400, "BAD_PARAMS", "min_payout_kopecks"},
			{"a sell with an unknown field is BAD_PARAMS", sellReq(key, with(sell, map[string]any{"amount_kopecks": 100})), 400, "BAD_PARAMS", "amount_kopecks"},

			// Trades the market refuses.
			{"a bet on a resolved market is TRADE_FAILED", betReq(key, with(bet, map[string]any{"market_id": w.closed.ID})), 400, "TRADE_FAILED", "market closed"},
			{"a sell on a resolved market is TRADE_FAILED", sellReq(key, with(sell, map[string]any{"market_id": w.closed.ID, "side": "no"})), 400, "TRADE_FAILED", "market closed"},
			{"a bet on an unknown market is TRADE_FAILED", betReq(key, with(bet, map[string]any{"market_id": 987654321})), 400, "TRADE_FAILED", "market not found"},
			{"a bet beyond the float is TRADE_FAILED", betReq(w.poor.Key, with(bet, map[string]any{"amount_kopecks": 50_000})), 400, "TRADE_FAILED", "insufficient funds"},
			{"a bet whose charge exceeds max_cost_kopecks is TRADE_FAILED", betReq(key, with(bet, map[string]any{"max_cost_kopecks": 10})), 400, "TRADE_FAILED", "max_cost_kopecks"},
			{"a bet too small to buy a share is TRADE_FAILED", betReq(key, with(bet, map[string]any{"amount_kopecks": 1})), 400, "TRADE_FAILED", "trade refused"},
			{"a sell under min_payout_kopecks is TRADE_FAILED", sellReq(key, with(sell, map[string]any{"min_payout_kopecks": 1_000_000})), 400, "TRADE_FAILED", "min_payout_kopecks"},
			{"selling more shares than held is TRADE_FAILED", sellReq(key, with(sell, map[string]any{"shares": w.held.SharesDelta + 1})), 400, "TRADE_FAILED", "insufficient shares"},

			// Nobody to sell for.
			{"a sell for an unknown user is NO_ACCOUNT", sellReq(key, with(sell, map[string]any{"external_user_id": "ghost"})), 404, "NO_ACCOUNT", ""},
			{"a sell of a side the user does not hold is NO_ACCOUNT", sellReq(key, with(sell, map[string]any{"side": "no"})), 404, "NO_ACCOUNT", ""},
			{"a sell on a market the user never bet on is NO_ACCOUNT", sellReq(key, with(sell, map[string]any{"market_id": w.b1.ID})), 404, "NO_ACCOUNT", ""},
			{"a sell for a user of another partner is NO_ACCOUNT", sellReq(w.poor.Key, sell), 404, "NO_ACCOUNT", ""},

			// Reused keys.
			{"a bet reusing a key with another amount is IDEMPOTENCY_CONFLICT", betReq(key, map[string]any{"external_user_id": "holder", "market_id": w.a1.ID, "side": "yes",
				"amount_kopecks": 20_001, "client_bet_id": "setup-1"}), 409, "IDEMPOTENCY_CONFLICT", ""},
			{"a bet reusing a key for another user is IDEMPOTENCY_CONFLICT", betReq(key, map[string]any{"external_user_id": "newcomer", "market_id": w.a1.ID, "side": "yes",
				"amount_kopecks": 20_000, "client_bet_id": "setup-1"}), 409, "IDEMPOTENCY_CONFLICT", ""},
			{"a bet reusing a key on another market is IDEMPOTENCY_CONFLICT", betReq(key, map[string]any{"external_user_id": "holder", "market_id": w.a2.ID, "side": "yes",
				"amount_kopecks": 20_000, "client_bet_id": "setup-1"}), 409, "IDEMPOTENCY_CONFLICT", ""},
			{"a bet reusing a key with a slippage guard added is IDEMPOTENCY_CONFLICT", betReq(key, map[string]any{"external_user_id": "holder", "market_id": w.a1.ID, "side": "yes",
				"amount_kopecks": 20_000, "client_bet_id": "setup-1", "max_cost_kopecks": 20_000}), 409, "IDEMPOTENCY_CONFLICT", ""},
			{"a sell reusing a bet's key is IDEMPOTENCY_CONFLICT", sellReq(key, with(sell, map[string]any{"client_bet_id": "setup-1"})), 409, "IDEMPOTENCY_CONFLICT", ""},

			// The state's path parameter.
			{"a state read of an id with a bad escape is BAD_PARAMS", partnerReq("GET", "/api/v1/partner/users/%FF", key, nil), 400, "BAD_PARAMS", "external_user_id"},
			{"a state read of an id over 256 bytes is BAD_PARAMS", partnerReq("GET", statePath(strings.Repeat("я", 129)), key, nil), 400, "BAD_PARAMS", "external_user_id"},
		}
		for _, c := range cases {
			t.Run(c.name+" and changes nothing", func(t *testing.T) {
				r := h.do(t, c.req)
				expect(t, r, c.status, c.code)
				if c.status >= 400 && c.status < 500 {
					if d := r.errorDetail(t); !strings.Contains(d, c.detail) {
						t.Errorf("detail %q does not say %q", d, c.detail)
					}
				}
				if r.header.Get("Idempotent-Replayed") != "" {
					t.Errorf("a refusal carries Idempotent-Replayed: %q", r.header.Get("Idempotent-Replayed"))
				}
				w.snapshot(t, h).same(t, before)
			})
		}
		t.Run("an invalid URL escape in the state's path is BAD_PARAMS", func(t *testing.T) {
			r := h.doRawPath(t, http.MethodGet, "/api/v1/partner/users/%ZZ", "/api/v1/partner/users/x", map[string]string{"X-Partner-Key": key})
			expect(t, r, http.StatusBadRequest, "BAD_PARAMS")
		})
		t.Run("a refused request records nothing, so the same client_bet_id succeeds once fixed", func(t *testing.T) {
			rc := h.partnerBet(t, key, with(bet, map[string]any{"amount_kopecks": 10_000}))
			if rc.ClientBetID != "b-1" || rc.ExternalUserID != "newcomer" {
				t.Errorf("receipt %+v", rc)
			}
		})
	})
}

// doRawPath sends a request whose path url.Parse would refuse (a bad
// escape) through the app, and validates the answer against the document
// as an answer of the operation at docPath.
func (h *harness) doRawPath(t *testing.T, method, rawPath, docPath string, header map[string]string) *response {
	t.Helper()
	hr := httptest.NewRequest(method, docPath, http.NoBody)
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	sent := hr.Clone(context.Background())
	sent.URL, sent.RequestURI = &url.URL{Opaque: rawPath}, rawPath
	res, err := h.app.Test(sent, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawPath, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp := &response{status: res.StatusCode, header: res.Header, body: b}
	h.validate(t, req{method: method, path: rawPath}, hr, resp)
	return resp
}

// TestPartnerRepeatsReplayTheOriginalAnswer: a repeat of an accepted bet
// or sell gets the original status and body byte for byte, with
// Idempotent-Replayed: true, and runs nothing.
func TestPartnerRepeatsReplayTheOriginalAnswer(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		p := h.createPartner(t, "Bookie", 1_000_000)
		bet := map[string]any{"external_user_id": "u-1", "market_id": w.a1.ID, "side": "no", "amount_kopecks": 30_000, "client_bet_id": "order-1"}

		first := h.do(t, betReq(p.Key, bet))
		expect(t, first, http.StatusOK, "")
		if v, ok := first.header["Idempotent-Replayed"]; ok {
			t.Errorf("the first execution carries Idempotent-Replayed: %v", v)
		}
		var rc apiReceipt
		first.decode(t, &rc)
		float := h.partner(t, p.ID).FloatKopecks
		trades := h.tradeCount(t, w.a1.ID)

		// Another trade moves the price, so a re-execution would differ.
		h.partnerBet(t, p.Key, map[string]any{"external_user_id": "u-2", "market_id": w.a1.ID, "side": "no", "amount_kopecks": 50_000, "client_bet_id": "order-2"})
		float2 := h.partner(t, p.ID).FloatKopecks

		t.Run("the repeat of a bet has the same status and bytes and the replay header", func(t *testing.T) {
			again := h.do(t, betReq(p.Key, bet))
			if again.status != first.status || !bytes.Equal(again.body, first.body) {
				t.Fatalf("first %s\nrepeat %s", first, again)
			}
			if got := again.header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("Idempotent-Replayed = %q, want true", got)
			}
		})
		t.Run("the repeat of a bet with its keys in another order is still a repeat", func(t *testing.T) {
			body := fmt.Sprintf(`{"client_bet_id":"order-1","amount_kopecks":30000,"side":"no","market_id":%d,"external_user_id":"u-1"}`, w.a1.ID)
			again := h.do(t, betReq(p.Key, body))
			if !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("first %s\nrepeat %s", first, again)
			}
		})
		t.Run("repeats ran nothing: one trade, the float moved once", func(t *testing.T) {
			if got := h.tradeCount(t, w.a1.ID); got != trades+1 {
				t.Errorf("trades %d, want %d", got, trades+1)
			}
			if got := h.partner(t, p.ID).FloatKopecks; got != float2 || float2 >= float {
				t.Errorf("float %d after the repeats, %d before them (and %d after the first bet)", got, float2, float)
			}
		})

		sell := map[string]any{"external_user_id": "u-1", "market_id": w.a1.ID, "side": "no", "shares": rc.SharesDelta / 2, "client_bet_id": "order-3"}
		sold := h.do(t, sellReq(p.Key, sell))
		expect(t, sold, http.StatusOK, "")
		st := h.partnerState(t, p.Key, "u-1")
		t.Run("the repeat of a sell has the same status and bytes and the replay header", func(t *testing.T) {
			again := h.do(t, sellReq(p.Key, sell))
			if again.status != sold.status || !bytes.Equal(again.body, sold.body) {
				t.Fatalf("first %s\nrepeat %s", sold, again)
			}
			if got := again.header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("Idempotent-Replayed = %q, want true", got)
			}
			after := h.partnerState(t, p.Key, "u-1")
			if after.BalanceKopecks != st.BalanceKopecks || after.Positions[0].Shares != st.Positions[0].Shares {
				t.Errorf("the repeat sold again: %+v → %+v", st, after)
			}
		})
		t.Run("a repeat after the partner was disabled is 403, not a replay", func(t *testing.T) {
			h.setPartnerDisabled(t, p.ID, true)
			expect(t, h.do(t, betReq(p.Key, bet)), http.StatusForbidden, "FORBIDDEN")
			h.setPartnerDisabled(t, p.ID, false)
			again := h.do(t, betReq(p.Key, bet))
			if !bytes.Equal(again.body, first.body) {
				t.Errorf("after re-enabling: %s", again)
			}
		})
		t.Run("the ledger is sound", func(t *testing.T) {
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("audit: %v", problems)
			}
		})
	})
}

// sent is one answer of a concurrent request.
type sent struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// concurrently sends r n times at once to the started server of h (app.Test
// rebuilds the router on every call, so it is not for concurrent use) and
// checks every answer against the OpenAPI document.
func concurrently(t *testing.T, h *harness, n int, r func(i int) req) []sent {
	t.Helper()
	out := make([]sent, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = send(h.base, r(i))
		}()
	}
	close(start)
	wg.Wait()
	for i, s := range out {
		if s.err != nil {
			t.Fatalf("request %d: %v", i, s.err)
		}
		rq := r(i)
		hr := httptest.NewRequest(rq.method, rq.path, nil)
		h.validate(t, rq, hr, &response{status: s.status, header: s.header, body: s.body})
	}
	return out
}

// send is h.do without a *testing.T, for goroutines.
func send(base string, r req) sent {
	var body io.Reader = http.NoBody
	switch b := r.body.(type) {
	case string:
		body = strings.NewReader(b)
	case nil:
	default:
		return sent{err: fmt.Errorf("send takes string bodies")}
	}
	hr, err := http.NewRequest(r.method, "http://"+base+r.path, body)
	if err != nil {
		return sent{err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		return sent{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return sent{status: res.StatusCode, header: res.Header, body: b, err: err}
}

// TestPartnerConcurrentRepeatsExecuteOnce sends 50 identical bets, then
// 50 identical sells, at once over the network: each executes exactly
// once and every answer has the same bytes.
func TestPartnerConcurrentRepeatsExecuteOnce(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h, _ := startServer(t, testConfig(sc.new(t)))
			w := newWorld(t, h)
			p := h.createPartner(t, "Bookie", 1_000_000)
			const n = 50
			check := func(t *testing.T, out []sent) {
				t.Helper()
				fresh := 0
				for i, s := range out {
					if s.status != http.StatusOK || !bytes.Equal(s.body, out[0].body) {
						t.Fatalf("answer %d: %d %s; answer 0: %d %s", i, s.status, s.body, out[0].status, out[0].body)
					}
					switch s.header.Get("Idempotent-Replayed") {
					case "":
						fresh++
					case "true":
					default:
						t.Errorf("Idempotent-Replayed = %q", s.header.Get("Idempotent-Replayed"))
					}
				}
				if fresh != 1 {
					t.Errorf("%d answers say they executed, want exactly 1", fresh)
				}
			}

			var rc apiReceipt
			t.Run("50 identical bets make one trade and move the float once", func(t *testing.T) {
				body := fmt.Sprintf(`{"external_user_id":"racer","market_id":%d,"side":"yes","amount_kopecks":40000,"client_bet_id":"race-bet"}`, w.a1.ID)
				out := concurrently(t, h, n, func(int) req { return betReq(p.Key, body) })
				check(t, out)
				(&response{body: out[0].body}).decode(t, &rc)
				if got := h.tradeCount(t, w.a1.ID); got != 1 {
					t.Errorf("%d trades, want 1", got)
				}
				if got := h.partner(t, p.ID).FloatKopecks; got != 1_000_000-rc.CostKopecks {
					t.Errorf("float %d, want %d", got, 1_000_000-rc.CostKopecks)
				}
				st := h.partnerState(t, p.Key, "racer")
				if len(st.Positions) != 1 || st.Positions[0].Shares != rc.SharesDelta || st.UserID != rc.UserID {
					t.Errorf("state %+v after %+v", st, rc)
				}
			})
			t.Run("50 identical sells make one trade and pay once", func(t *testing.T) {
				body := fmt.Sprintf(`{"external_user_id":"racer","market_id":%d,"side":"yes","shares":%d,"client_bet_id":"race-sell"}`, w.a1.ID, rc.SharesDelta/3)
				out := concurrently(t, h, n, func(int) req { return sellReq(p.Key, body) })
				check(t, out)
				var sr apiReceipt
				(&response{body: out[0].body}).decode(t, &sr)
				if got := h.tradeCount(t, w.a1.ID); got != 2 {
					t.Errorf("%d trades, want 2", got)
				}
				st := h.partnerState(t, p.Key, "racer")
				if st.BalanceKopecks != sr.PayoutKopecks || st.Positions[0].Shares != rc.SharesDelta+sr.SharesDelta {
					t.Errorf("state %+v after %+v", st, sr)
				}
			})
			t.Run("concurrent first bets of a new user under distinct keys share one sub-account", func(t *testing.T) {
				out := concurrently(t, h, 10, func(i int) req {
					return betReq(p.Key, fmt.Sprintf(`{"external_user_id":"crowd","market_id":%d,"side":"no","amount_kopecks":1000,"client_bet_id":"crowd-%d"}`, w.b1.ID, i))
				})
				users := map[int64]bool{}
				for i, s := range out {
					if s.status != http.StatusOK || s.header.Get("Idempotent-Replayed") != "" {
						t.Fatalf("bet %d: %d %s", i, s.status, s.body)
					}
					var r apiReceipt
					(&response{body: s.body}).decode(t, &r)
					users[r.UserID] = true
				}
				if len(users) != 1 || h.tradeCount(t, w.b1.ID) != 10 {
					t.Errorf("%d sub-accounts, %d trades; want 1 and 10", len(users), h.tradeCount(t, w.b1.ID))
				}
			})
			t.Run("the ledger is sound", func(t *testing.T) {
				if ok, _, problems := h.audit(t); !ok {
					t.Fatalf("audit: %v", problems)
				}
			})
		})
	}
}

// TestPartnersAreIsolated: one partner never sees or reaches another's
// sub-accounts, even with the same external ids and client_bet_ids.
func TestPartnersAreIsolated(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		a := h.createPartner(t, "A", 500_000)
		b := h.createPartner(t, "B", 500_000)
		bet := map[string]any{"external_user_id": "u42", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 25_000, "client_bet_id": "same-key"}
		ra := h.partnerBet(t, a.Key, bet)
		stA := h.partnerState(t, a.Key, "u42")

		t.Run("B sees A's user as not existing", func(t *testing.T) {
			st := h.partnerState(t, b.Key, "u42")
			if st.Exists || st.UserID != 0 || st.BalanceKopecks != 0 || st.OpenPositionsKopecks != 0 || len(st.Positions) != 0 || st.ExternalUserID != "u42" {
				t.Errorf("B's state of u42: %+v", st)
			}
		})
		t.Run("B cannot sell A's user's shares", func(t *testing.T) {
			r := h.do(t, sellReq(b.Key, map[string]any{"external_user_id": "u42", "market_id": w.a1.ID, "side": "yes", "shares": 10, "client_bet_id": "steal"}))
			expect(t, r, http.StatusNotFound, "NO_ACCOUNT")
		})
		t.Run("B's bet with A's client_bet_id and external id creates B's own sub-account", func(t *testing.T) {
			r := h.do(t, betReq(b.Key, bet))
			expect(t, r, http.StatusOK, "")
			if r.header.Get("Idempotent-Replayed") != "" {
				t.Error("B's bet was answered as a replay of A's")
			}
			var rb apiReceipt
			r.decode(t, &rb)
			if rb.UserID == ra.UserID || rb.UserID == 0 {
				t.Errorf("B's user %d, A's %d", rb.UserID, ra.UserID)
			}
			if h.tradeCount(t, w.a1.ID) != 2 {
				t.Errorf("%d trades, want 2", h.tradeCount(t, w.a1.ID))
			}
			if got := h.partner(t, b.ID).FloatKopecks; got != 500_000-rb.CostKopecks {
				t.Errorf("B's float %d, want %d", got, 500_000-rb.CostKopecks)
			}
			if got := h.partner(t, a.ID).FloatKopecks; got != 500_000-ra.CostKopecks {
				t.Errorf("A's float %d, want %d", got, 500_000-ra.CostKopecks)
			}
			st := h.partnerState(t, b.Key, "u42")
			if !st.Exists || st.UserID != rb.UserID || st.Positions[0].Shares != rb.SharesDelta {
				t.Errorf("B's state %+v", st)
			}
		})
		t.Run("A's user is untouched", func(t *testing.T) {
			st := h.partnerState(t, a.Key, "u42")
			if st.UserID != stA.UserID || st.Positions[0].Shares != stA.Positions[0].Shares || st.BalanceKopecks != stA.BalanceKopecks {
				t.Errorf("A's state %+v, was %+v", st, stA)
			}
		})
	})
}

// TestPartnerExternalIDsAreOpaqueText: the state's path parameter is
// URL-decoded and echoed; any UTF-8 id works.
func TestPartnerExternalIDsAreOpaqueText(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		p := h.createPartner(t, "Bookie", 1_000_000)
		ids := []struct{ name, id, path string }{
			{"a slash sent as %2F", "user/42", "user%2F42"},
			{"Cyrillic", "пользователь", url.PathEscape("пользователь")},
			{"spaces", "John Smith 7", "John%20Smith%207"},
			{"a plus, which is not a space in a path", "a+b", "a+b"},
			{"a percent sign", "50%", "50%25"},
			{"query and fragment characters", "?x=1&y=2#z", url.PathEscape("?x=1&y=2#z")},
			{"emoji", "🙂", url.PathEscape("🙂")},
		}
		for i, c := range ids {
			t.Run("an id with "+c.name+" is echoed decoded", func(t *testing.T) {
				rc := h.partnerBet(t, p.Key, map[string]any{"external_user_id": c.id, "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 1_000,
					"client_bet_id": fmt.Sprintf("id-%d", i)})
				if rc.ExternalUserID != c.id {
					t.Errorf("receipt echoes %q", rc.ExternalUserID)
				}
				r := h.do(t, partnerReq(http.MethodGet, "/api/v1/partner/users/"+c.path, p.Key, nil))
				expect(t, r, http.StatusOK, "")
				var st apiPartnerState
				r.decode(t, &st)
				if st.ExternalUserID != c.id || !st.Exists || st.UserID != rc.UserID {
					t.Errorf("state %+v, want %q of user %d", st, c.id, rc.UserID)
				}
			})
		}
		t.Run("ids that differ only once decoded are the same user", func(t *testing.T) {
			a := h.partnerState(t, p.Key, "user/42")
			r := h.do(t, partnerReq(http.MethodGet, "/api/v1/partner/users/%75ser%2f42", p.Key, nil))
			expect(t, r, http.StatusOK, "")
			var b apiPartnerState
			r.decode(t, &b)
			if b.UserID != a.UserID || b.ExternalUserID != "user/42" {
				t.Errorf("%%75ser%%2f42 is %+v, user/42 is %+v", b, a)
			}
		})
		t.Run("ids are compared exactly: case and spaces matter", func(t *testing.T) {
			for _, id := range []string{"User/42", "user/42 ", "user%2F42"} {
				if st := h.partnerState(t, p.Key, id); st.Exists {
					t.Errorf("%q is taken for user/42", id)
				}
			}
		})
	})
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
