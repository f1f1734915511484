package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
	"github.com/predictkit/predictkit/webhook"
)

// TestWebhookSurvivesAKilledServer: a partner's settlement webhook is
// being delivered when the server is killed (SIGKILL) with the request in
// the receiver's hands and no answer recorded; a server started again on
// the same database sends it again, with the same delivery id and a valid
// signature, once the dead server's claim on it has lapsed. Delivery is
// at least once: nothing committed is lost to a crash.
func TestWebhookSurvivesAKilledServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server: not in -short")
	}
	type delivery struct {
		id, signature string
		body          []byte
	}
	var mu sync.Mutex
	var got []delivery
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, delivery{r.Header.Get("Predictkit-Delivery"), r.Header.Get("Predictkit-Signature"), body})
		first := len(got) == 1
		mu.Unlock()
		if first {
			// Hold the first delivery until the server is dead.
			held <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(receiver.Close)
	defer close(release)

	dbURL := pgtest.SchemaURL(t)
	// A short attempt timeout makes the dead server's claim (timeout +
	// 50 s) lapse within a minute.
	p := newProc(t, dbURL, "PREDICTKIT_WEBHOOK_ALLOWED_HOSTS=127.0.0.1", "PREDICTKIT_WEBHOOK_TIMEOUT=1s")
	p.start()
	fx := setup(t, p.base, 1, 1)
	var hook struct {
		URL    string `json:"url"`
		Secret string `json:"secret"`
	}
	mustCall(t, http.MethodPut, fmt.Sprintf("%s/api/v1/admin/partners/%d/webhook", p.base(), fx.partnerID), admin,
		map[string]string{"url": receiver.URL + "/hook"}, &hook, http.StatusOK)
	mustCall(t, http.MethodPost, p.base()+"/api/v1/partner/bet", map[string]string{"X-Partner-Key": fx.partnerKey},
		map[string]any{"external_user_id": "u1", "market_id": fx.markets[0], "side": "yes", "amount_kopecks": 2500, "client_bet_id": "hooked-1"},
		nil, http.StatusOK)
	mustCall(t, http.MethodPost, fmt.Sprintf("%s/api/v1/admin/markets/%d/resolve", p.base(), fx.markets[0]), admin,
		map[string]string{"won_side": "YES"}, nil, http.StatusOK)

	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("no delivery reached the receiver within 60 s of the resolution")
	}
	p.kill()
	p.start()

	deadline := time.Now().Add(120 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		var first, again delivery
		if n > 0 {
			first = got[0]
		}
		for _, d := range got[1:] {
			if d.id == first.id {
				again = d
			}
		}
		mu.Unlock()
		if again.id != "" {
			if string(again.body) != string(first.body) {
				t.Errorf("the delivery sent again differs:\n%s\n%s", first.body, again.body)
			}
			if err := webhook.Verify(hook.Secret, again.signature, again.body, time.Now(), 5*time.Minute); err != nil {
				t.Errorf("the delivery sent again is not signed with the partner's secret: %v", err)
			}
			var msg struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(again.body, &msg); err != nil || (msg.Type != "bet.settled" && msg.Type != "market.resolved") {
				t.Errorf("delivery %s: %v, %s", again.id, err, again.body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delivery held when the server was killed (%q) was not sent again within 120 s; %d requests in all", first.id, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
