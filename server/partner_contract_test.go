package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

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
