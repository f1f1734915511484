package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/webhook"
)

// TestVerifyAcceptsWhatTheServerSigns signs deliveries as the server
// does (webhook.Sign over webhook.Body) and checks them with this
// example's code.
func TestVerifyAcceptsWhatTheServerSigns(t *testing.T) {
	body := webhook.Body(&webhook.Delivery{ID: 7, Type: webhook.BetSettled, MarketID: 3, ExternalUserID: "u-1", Side: market.No,
		Shares: 250, PayoutKopecks: 250, WonSide: market.WonSideNo, CreatedAt: time.Now()})
	at := time.Now()
	header := webhook.Sign("whsec_k", at, body)
	for _, tc := range []struct {
		name   string
		secret string
		header string
		body   []byte
		now    time.Time
		ok     bool
	}{
		{"the signed delivery verifies", "whsec_k", header, body, at, true},
		{"a minute later it verifies", "whsec_k", header, body, at.Add(time.Minute), true},
		{"ten minutes later it is refused (a replay)", "whsec_k", header, body, at.Add(10 * time.Minute), false},
		{"another secret is refused", "whsec_x", header, body, at, false},
		{"a changed body is refused", "whsec_k", header, bytes.Replace(body, []byte("250"), []byte("999"), 1), at, false},
		{"a header without a signature is refused", "whsec_k", strings.Split(header, ",")[0], body, at, false},
		{"an empty header is refused", "whsec_k", "", body, at, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := verify(tc.secret, tc.header, tc.body, tc.now, 5*time.Minute); got != tc.ok {
				t.Fatalf("verify = %v, want %v", got, tc.ok)
			}
		})
	}
}

func TestTheReceiverAcceptsEachDeliveryOnceAndRefusesForgeries(t *testing.T) {
	var out bytes.Buffer
	srv := httptest.NewServer(&receiver{secret: "whsec_k", out: &out, seen: map[string]bool{}})
	defer srv.Close()
	body := []byte(`{"id":1,"type":"market.resolved","created_at":"2027-01-15T08:00:00Z","data":{"market_id":3,"event_id":1,"won_side":"yes"}}`)
	send := func(secret string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		req.Header.Set("Predictkit-Signature", webhook.Sign(secret, time.Now(), body))
		req.Header.Set("Predictkit-Delivery", "1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for i, tc := range []struct {
		secret string
		status int
	}{{"whsec_k", 204}, {"whsec_k", 204}, {"whsec_forged", 400}} {
		if got := send(tc.secret); got != tc.status {
			t.Errorf("request %d answered %d, want %d", i+1, got, tc.status)
		}
	}
	if got := strings.Count(out.String(), "delivery 1:"); got != 1 {
		t.Errorf("the delivery was handled %d times, want once:\n%s", got, out.String())
	}
}
