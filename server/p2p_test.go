package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/p2p"
	"github.com/predictkit/predictkit/storage/storagetest"
)

// The P2P API's shapes, as the tests read them.

type apiP2POwner struct {
	ID              int64   `json:"id"`
	Name            string  `json:"name"`
	Nickname        string  `json:"nickname"`
	AvatarURL       string  `json:"avatar_url"`
	CompletedOrders int64   `json:"completed_orders"`
	P2PAvgRating    float64 `json:"p2p_avg_rating"`
}

type apiP2PAd struct {
	ID               int64       `json:"id"`
	UserID           int64       `json:"user_id"`
	Type             string      `json:"type"`
	FiatCurrency     string      `json:"fiat_currency"`
	ExchangeRate     int64       `json:"exchange_rate"`
	MinAmount        int64       `json:"min_amount"`
	MaxAmount        int64       `json:"max_amount"`
	RemainingAmount  int64       `json:"remaining_amount"`
	PaymentMethods   []string    `json:"payment_methods"`
	PaymentDuration  int64       `json:"payment_duration"`
	Instructions     string      `json:"instructions"`
	IsActive         bool        `json:"is_active"`
	ModerationStatus string      `json:"moderation_status"`
	IsPlatformAd     bool        `json:"is_platform_ad"`
	CreatedAt        string      `json:"created_at"`
	UpdatedAt        string      `json:"updated_at"`
	User             apiP2POwner `json:"user"`
	UserAvgRating    float64     `json:"user_avg_rating"`
}

// seedBoard loads the storage conformance suite's P2P fixture into the
// harness's store through the services, with the fixture's clock.
func seedBoard(t *testing.T, h *harness) *storagetest.P2PBoard {
	t.Helper()
	accounts := account.NewService(h.store)
	accounts.BcryptCost = 4
	b, err := storagetest.SeedP2PFixture(context.Background(), accounts, p2p.NewService(h.store))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (h *harness) listAds(t *testing.T, query string) ([]apiP2PAd, *response) {
	t.Helper()
	path := "/api/v1/p2p/ads"
	if query != "" {
		path += "?" + query
	}
	r := h.do(t, req{method: http.MethodGet, path: path})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Ads []apiP2PAd `json:"ads"`
	}
	r.decode(t, &out)
	return out.Ads, r
}

func labels(b *storagetest.P2PBoard, ads []apiP2PAd) []string {
	out := []string{}
	for _, ad := range ads {
		out = append(out, b.Labels[ad.ID])
	}
	return out
}

// TestP2PList runs every list case of the fixture through HTTP on every
// store, and checks that the stores answer byte for byte alike.
func TestP2PList(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string]map[string]string{} // store → query → body
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h := newHarness(t, sc.new(t))
			b := seedBoard(t, h)
			got := map[string]string{}
			for _, c := range b.Fixture.Cases {
				t.Run(c.Name, func(t *testing.T) {
					ads, r := h.listAds(t, c.Query)
					if names := labels(b, ads); !slices.Equal(names, c.Want) {
						t.Fatalf("%q: got %v, want %v", c.Query, names, c.Want)
					}
					got[c.Query] = string(r.body)
				})
			}
			mu.Lock()
			bodies[sc.name] = got
			mu.Unlock()
		})
	}
	if len(bodies) == 2 {
		t.Run("memory and PostgreSQL answer every case with the same bytes", func(t *testing.T) {
			for q, m := range bodies["memory"] {
				if pg := bodies["postgres"][q]; pg != m {
					t.Errorf("%q:\nmemory   %s\npostgres %s", q, m, pg)
				}
			}
		})
	}
}

func TestP2PAds(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		b := seedBoard(t, h)
		t.Run("an ad shows every field with its owner's record", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/p2p/ads/%d", b.Ads["s1"])})
			expect(t, r, http.StatusOK, "")
			var ad apiP2PAd
			r.decode(t, &ad)
			want := apiP2PAd{ID: b.Ads["s1"], UserID: b.Users["anna"].ID, Type: "sell", FiatCurrency: "RUB", ExchangeRate: 101,
				MinAmount: 1000, MaxAmount: 50000, RemainingAmount: 50000, PaymentDuration: 15,
				Instructions: "Pay within the time, then press Paid.", IsActive: true, ModerationStatus: "approved",
				CreatedAt: "2025-03-01T12:01:00Z", UpdatedAt: "2025-03-01T12:01:00Z",
				User:          apiP2POwner{ID: b.Users["anna"].ID, Name: "anna", Nickname: "Anna_P2P", CompletedOrders: 120, P2PAvgRating: 4.8},
				UserAvgRating: 4.8}
			methods := ad.PaymentMethods
			ad.PaymentMethods = nil
			if fmt.Sprint(ad) != fmt.Sprint(want) || !slices.Equal(methods, []string{"Sberbank", "SBP"}) {
				t.Fatalf("got  %+v\nwant %+v", ad, want)
			}
		})
		t.Run("a hidden owner is Anonymous with no nickname", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/p2p/ads/%d", b.Ads["s5"])})
			var ad apiP2PAd
			r.decode(t, &ad)
			if ad.User.Name != "Anonymous" || ad.User.Nickname != "" || ad.User.P2PAvgRating != 5 || ad.UserAvgRating != 5 {
				t.Fatalf("owner %+v", ad.User)
			}
		})
		t.Run("an inactive approved ad is shown and says so", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/p2p/ads/%d", b.Ads["x1"])})
			expect(t, r, http.StatusOK, "")
			var ad apiP2PAd
			r.decode(t, &ad)
			if ad.IsActive {
				t.Fatal("inactive ad shown as active")
			}
		})
		notFound := []struct{ name, id string }{
			{"an unknown ad is NOT_FOUND", "999999"},
			{"a pending ad is NOT_FOUND", fmt.Sprint(b.Ads["p1"])},
			{"a rejected ad is NOT_FOUND", fmt.Sprint(b.Ads["r1"])},
			{"an id that is not an integer is NOT_FOUND", "abc"},
			{"an id that overflows is NOT_FOUND", "99999999999999999999"},
			{"a zero id is NOT_FOUND", "0"},
		}
		for _, c := range notFound {
			t.Run(c.name, func(t *testing.T) {
				expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/p2p/ads/" + c.id}), http.StatusNotFound, "NOT_FOUND")
			})
		}
	})
}

func TestP2PListRefusesMalformedQueries(t *testing.T) {
	h := newHarness(t, memoryStore())
	cases := []struct{ name, query string }{
		{"an unknown type", "type=rent"},
		{"a type in upper case", "type=SELL"},
		{"an unknown sort_by", "sort_by=cheapest"},
		{"is_active that is not true or false", "is_active=maybe"},
		{"is_active=1", "is_active=1"},
		{"a negative amount", "amount=-100"},
		{"a fractional amount", "amount=10.5"},
		{"a non-integer amount", "amount=ten"},
		{"an amount that overflows int64", "amount=9223372036854775808"},
		{"a negative max_payment_duration", "max_payment_duration=-1"},
		{"a non-integer max_payment_duration", "max_payment_duration=15min"},
		{"a negative limit", "limit=-1"},
		{"a non-integer limit", "limit=1e2"},
		{"a negative offset", "offset=-20"},
		{"a non-integer offset", "offset=x"},
		{"an offset over 2^31", "offset=3000000000"},
		{"a currency that is not three letters", "fiat_currency=RUBLE"},
		{"a payment method that is not UTF-8", "payment_method=%FF%FE"},
		{"a nickname with a NUL", "author_nickname=a%00b"},
		{"a type given twice", "type=buy&type=sell"},
	}
	for _, c := range cases {
		t.Run(c.name+" is 400 INVALID_REQUEST", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodGet, path: "/api/v1/p2p/ads?" + c.query})
			expect(t, r, http.StatusBadRequest, "INVALID_REQUEST")
			if r.errorDetail(t) == "" {
				t.Error("no detail naming the parameter")
			}
		})
	}
	t.Run("an empty board is an empty list", func(t *testing.T) {
		ads, r := h.listAds(t, "")
		if len(ads) != 0 || !strings.Contains(string(r.body), `"ads":[]`) {
			t.Fatalf("got %s", r)
		}
	})
}

func TestP2PListPaging(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		u := h.register(t, "bulk")
		svc := p2p.NewService(h.store)
		for i := range 105 {
			if _, err := svc.Create(context.Background(), p2p.NewAd{UserID: u.id, Type: "buy", FiatCurrency: "RUB", ExchangeRate: int64(90 + i%5),
				MinAmount: 100, MaxAmount: 10000, PaymentMethods: []string{"SBP"}, PaymentDuration: 30}); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			query string
			want  int
		}{{"", 20}, {"limit=0", 20}, {"limit=1", 1}, {"limit=100", 100}, {"limit=101", 100}, {"limit=100000", 100},
			{"offset=100", 5}, {"offset=104&limit=10", 1}, {"offset=105", 0}, {"offset=2147483648", 0}}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%q returns %d ads", c.query, c.want), func(t *testing.T) {
				if ads, _ := h.listAds(t, c.query); len(ads) != c.want {
					t.Fatalf("got %d", len(ads))
				}
			})
		}
		t.Run("best_price on buy ads pages from the highest rate, ties by id", func(t *testing.T) {
			ads, _ := h.listAds(t, "type=buy&sort_by=best_price&limit=100")
			for i := 1; i < len(ads); i++ {
				a, b := ads[i-1], ads[i]
				if a.ExchangeRate < b.ExchangeRate || a.ExchangeRate == b.ExchangeRate && a.ID > b.ID {
					t.Fatalf("ad %d (%d) before ad %d (%d)", a.ID, a.ExchangeRate, b.ID, b.ExchangeRate)
				}
			}
		})
	})
}

func TestP2POperator(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		owner := h.register(t, "owner")
		newAd := func() map[string]any {
			return map[string]any{"user_id": owner.id, "type": "sell", "fiat_currency": "usd", "exchange_rate": 9650, "min_amount": 10000,
				"max_amount": 500000, "payment_methods": []string{"Wise", "Revolut"}, "payment_duration": 30, "instructions": "IBAN in chat."}
		}
		var id int64
		t.Run("the operator creates an ad that is approved and active", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/p2p/ads", token: adminToken, body: newAd()})
			expect(t, r, http.StatusCreated, "")
			var ad apiP2PAd
			r.decode(t, &ad)
			if !ad.IsActive || ad.ModerationStatus != "approved" || ad.FiatCurrency != "USD" || ad.RemainingAmount != 500000 || ad.User.ID != owner.id || ad.User.CompletedOrders != 0 {
				t.Fatalf("ad %+v", ad)
			}
			id = ad.ID
			if ads, _ := h.listAds(t, "fiat_currency=USD"); len(ads) != 1 || ads[0].ID != id {
				t.Fatalf("the new ad is not listed: %+v", ads)
			}
		})
		bad := []struct {
			name string
			edit func(map[string]any)
			code string
		}{
			{"an unknown type", func(b map[string]any) { b["type"] = "swap" }, "invalid_request"},
			{"max_amount under min_amount", func(b map[string]any) { b["max_amount"] = 1 }, "invalid_request"},
			{"a missing exchange rate", func(b map[string]any) { delete(b, "exchange_rate") }, "invalid_request"},
			{"a fractional exchange rate", func(b map[string]any) { b["exchange_rate"] = 96.5 }, "invalid_request"},
			{"no payment methods", func(b map[string]any) { b["payment_methods"] = []string{} }, "invalid_request"},
			{"an unknown field", func(b map[string]any) { b["colour"] = "red" }, "invalid_request"},
		}
		for _, c := range bad {
			t.Run(c.name+" is refused", func(t *testing.T) {
				b := newAd()
				c.edit(b)
				expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/p2p/ads", token: adminToken, body: b}), http.StatusBadRequest, c.code)
			})
		}
		t.Run("an ad for an unknown user is user_not_found", func(t *testing.T) {
			b := newAd()
			b["user_id"] = 999999
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/p2p/ads", token: adminToken, body: b}), http.StatusNotFound, "user_not_found")
		})
		t.Run("without the admin token it is unauthorized", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/p2p/ads", token: owner.token, body: newAd()}), http.StatusUnauthorized, "unauthorized")
		})
		t.Run("moderation deactivates, rejects and restores an ad", func(t *testing.T) {
			patch := func(body any) apiP2PAd {
				r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/p2p/ads/%d", id), token: adminToken, body: body})
				expect(t, r, http.StatusOK, "")
				var ad apiP2PAd
				r.decode(t, &ad)
				return ad
			}
			if ad := patch(map[string]any{"is_active": false}); ad.IsActive {
				t.Fatal("still active")
			}
			if ads, _ := h.listAds(t, "is_active=false"); len(ads) != 1 {
				t.Fatalf("inactive list %v", ads)
			}
			if ad := patch(map[string]any{"moderation_status": "rejected", "is_active": true}); ad.ModerationStatus != "rejected" || !ad.IsActive {
				t.Fatalf("ad %+v", ad)
			}
			expect(t, h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/p2p/ads/%d", id)}), http.StatusNotFound, "NOT_FOUND")
			if ads, _ := h.listAds(t, ""); len(ads) != 0 {
				t.Fatalf("a rejected ad is listed: %v", ads)
			}
			if ad := patch(map[string]any{"moderation_status": "approved"}); ad.ModerationStatus != "approved" {
				t.Fatalf("ad %+v", ad)
			}
			if ad := patch(map[string]any{}); ad.ID != id {
				t.Fatalf("ad %+v", ad)
			}
			expect(t, h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/p2p/ads/%d", id), token: adminToken,
				body: map[string]any{"moderation_status": "banned"}}), http.StatusBadRequest, "invalid_request")
			expect(t, h.do(t, req{method: http.MethodPatch, path: "/api/v1/admin/p2p/ads/999999", token: adminToken,
				body: map[string]any{"is_active": true}}), http.StatusNotFound, "ad_not_found")
			expect(t, h.do(t, req{method: http.MethodPatch, path: "/api/v1/admin/p2p/ads/x", token: adminToken,
				body: map[string]any{"is_active": true}}), http.StatusBadRequest, "invalid_id")
		})
		t.Run("the owner's record set by the operator shows on the ad", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPut, path: fmt.Sprintf("/api/v1/admin/p2p/users/%d/stats", owner.id), token: adminToken,
				body: map[string]any{"completed_orders": 10, "rating_count": 4, "rating_sum": 18}})
			expect(t, r, http.StatusOK, "")
			var st struct {
				UserID          int64   `json:"user_id"`
				CompletedOrders int64   `json:"completed_orders"`
				P2PAvgRating    float64 `json:"p2p_avg_rating"`
			}
			r.decode(t, &st)
			if st.UserID != owner.id || st.CompletedOrders != 10 || st.P2PAvgRating != 4.5 {
				t.Fatalf("stats %+v", st)
			}
			r = h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/p2p/ads/%d", id)})
			var ad apiP2PAd
			r.decode(t, &ad)
			if ad.User.CompletedOrders != 10 || ad.User.P2PAvgRating != 4.5 || ad.UserAvgRating != 4.5 {
				t.Fatalf("owner %+v, %v", ad.User, ad.UserAvgRating)
			}
			expect(t, h.do(t, req{method: http.MethodPut, path: fmt.Sprintf("/api/v1/admin/p2p/users/%d/stats", owner.id), token: adminToken,
				body: map[string]any{"completed_orders": 1, "rating_count": 1, "rating_sum": 6}}), http.StatusBadRequest, "invalid_request")
			expect(t, h.do(t, req{method: http.MethodPut, path: "/api/v1/admin/p2p/users/999999/stats", token: adminToken,
				body: map[string]any{"completed_orders": 1}}), http.StatusNotFound, "user_not_found")
			expect(t, h.do(t, req{method: http.MethodPut, path: fmt.Sprintf("/api/v1/admin/p2p/users/%d/stats", owner.id), token: adminToken,
				body: map[string]any{"rating_count": 1}}), http.StatusBadRequest, "invalid_request")
		})
	})
}

// TestP2PDemoData: the demo seeds a few ads with their owners' records.
func TestP2PDemoData(t *testing.T) {
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.Demo = true
	h, _ := startServer(t, cfg)
	ads, _ := h.listAds(t, "")
	if len(ads) < 4 {
		t.Fatalf("the demo lists %d ads", len(ads))
	}
	var rated bool
	for _, ad := range ads {
		if ad.User.CompletedOrders > 0 && ad.User.P2PAvgRating > 0 {
			rated = true
		}
	}
	if !rated {
		t.Fatalf("no demo ad shows an owner's record: %+v", ads)
	}
	for _, typ := range []string{"buy", "sell"} {
		if got, _ := h.listAds(t, url.Values{"type": {typ}, "sort_by": {"best_price"}}.Encode()); len(got) == 0 {
			t.Errorf("no demo %s ads", typ)
		}
	}
}
