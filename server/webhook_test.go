package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/server"
	hooks "github.com/predictkit/predictkit/webhook"
)

// received is one request a receiver got.
type received struct {
	id, event, signature string
	body                 []byte
}

// receiver is a partner's webhook endpoint: a real HTTP server whose
// answers a test scripts by the attempt number of each delivery.
type receiver struct {
	srv *httptest.Server
	// answer returns the status to answer the n-th request (from 1) of
	// delivery id, or 0 to hang until the sender gives up.
	answer func(id string, n int) int

	mu     sync.Mutex
	got    []received
	counts map[string]int
	// inFlight counts requests not answered yet.
	inFlight int
}

func newReceiver(t *testing.T, answer func(id string, n int) int) *receiver {
	t.Helper()
	rc := &receiver{answer: answer, counts: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get(hooks.HeaderDelivery)
		rc.mu.Lock()
		rc.got = append(rc.got, received{id: id, event: r.Header.Get(hooks.HeaderEvent), signature: r.Header.Get(hooks.HeaderSignature), body: body})
		rc.counts[id]++
		n := rc.counts[id]
		rc.inFlight++
		rc.mu.Unlock()
		defer func() {
			rc.mu.Lock()
			rc.inFlight--
			rc.mu.Unlock()
		}()
		if status := rc.answer(id, n); status != 0 {
			w.WriteHeader(status)
			return
		}
		<-r.Context().Done()
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) snapshot() ([]received, map[string]int, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	counts := map[string]int{}
	for k, v := range rc.counts {
		counts[k] = v
	}
	return append([]received(nil), rc.got...), counts, rc.inFlight
}

// webhookHarness is a harness whose webhooks may reach 127.0.0.1 (the
// receivers), with the Sender and Guard it built; the Sender does not run
// until runSender.
func webhookHarness(t *testing.T, store server.Store, timeout time.Duration) (*harness, *hooks.Sender, *hooks.Guard) {
	t.Helper()
	var s *hooks.Sender
	var g *hooks.Guard
	h := newHarness(t, store, withConfig(func(c *server.Config) {
		c.WebhookAllowedHosts = "127.0.0.1"
		c.WebhookTimeout = timeout
	}), withFx(fx.Populate(&s, &g)))
	fast(s)
	return h, s, g
}

// fast makes s retry at once and poll often: the tests wait for
// progress, never for time.
func fast(s *hooks.Sender) {
	s.BaseDelay, s.MaxDelay, s.Poll = time.Millisecond, 5*time.Millisecond, 10*time.Millisecond
}

// runSender runs s until the test ends or stop is called; stop returns
// once s has stopped.
func runSender(t *testing.T, s *hooks.Sender) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

// waitFor polls cond until it holds; the bound only keeps a broken test
// from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) setWebhook(t *testing.T, partnerID int64, url string) string {
	t.Helper()
	r := h.do(t, req{method: http.MethodPut, path: fmt.Sprintf("/api/v1/admin/partners/%d/webhook", partnerID), token: adminToken,
		body: map[string]any{"url": url}})
	expect(t, r, http.StatusOK, "")
	var out struct{ URL, Secret string }
	r.decode(t, &out)
	if out.URL != url || !strings.HasPrefix(out.Secret, hooks.SecretPrefix) || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("set webhook answered %s", r)
	}
	return out.Secret
}

type apiDelivery struct {
	ID             int64           `json:"id"`
	Type           string          `json:"type"`
	Status         string          `json:"status"`
	Attempts       int             `json:"attempts"`
	NextAttemptAt  *time.Time      `json:"next_attempt_at"`
	LastAttemptAt  *time.Time      `json:"last_attempt_at"`
	LastStatusCode *int            `json:"last_status_code"`
	LastError      *string         `json:"last_error"`
	DeliveredAt    *time.Time      `json:"delivered_at"`
	Payload        json.RawMessage `json:"payload"`
}

func (h *harness) deliveries(t *testing.T, partnerID int64) []apiDelivery {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/admin/partners/%d/deliveries?limit=100", partnerID), token: adminToken})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Deliveries []apiDelivery `json:"deliveries"`
	}
	r.decode(t, &out)
	return out.Deliveries
}

func allDelivered(ds []apiDelivery, n int) bool {
	if len(ds) != n {
		return false
	}
	for _, d := range ds {
		if d.Status != hooks.Delivered {
			return false
		}
	}
	return true
}

// settledWorld: partner bookie, with a webhook at rc, whose user
// "ext-alice" holds YES on market B1, which the operator resolves YES:
// two deliveries (market.resolved, bet.settled).
func settledWorld(t *testing.T, h *harness, rc *receiver) (apiNewPartner, string, *world) {
	t.Helper()
	w := newWorld(t, h)
	p := h.createPartner(t, "Bookie", 10_000_000)
	secret := h.setWebhook(t, p.ID, rc.srv.URL+"/predictkit")
	h.partnerBet(t, p.Key, map[string]any{"external_user_id": "ext-alice", "market_id": w.b1.ID, "side": "yes", "amount_kopecks": 20_000, "client_bet_id": "b-1"})
	expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/markets/%d/resolve", w.b1.ID), token: adminToken,
		body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
	return p, secret, w
}

func TestAWebhookThatFailsTimesOutAndRecoversGetsEveryDelivery(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h, sender, _ := webhookHarness(t, sc.new(t), 300*time.Millisecond)
			rc := newReceiver(t, func(_ string, n int) int {
				switch n {
				case 1:
					return http.StatusInternalServerError
				case 2:
					return 0 // times out
				}
				return http.StatusNoContent
			})
			p, secret, w := settledWorld(t, h, rc)
			runSender(t, sender)
			waitFor(t, "both deliveries delivered", func() bool { return allDelivered(h.deliveries(t, p.ID), 2) })

			ds := h.deliveries(t, p.ID)
			if ds[0].Type != hooks.BetSettled || ds[1].Type != hooks.MarketResolved {
				t.Fatalf("log %+v: want the bet.settled, then (older) the market.resolved", ds)
			}
			got, counts, _ := rc.snapshot()
			for _, d := range ds {
				id := fmt.Sprint(d.ID)
				if d.Attempts != 3 || counts[id] != 3 || d.LastStatusCode == nil || *d.LastStatusCode != 204 || d.DeliveredAt == nil || d.NextAttemptAt != nil {
					t.Errorf("delivery %d: %+v, received %d times; want 3 attempts, the last answered 204", d.ID, d, counts[id])
				}
			}
			first := map[string][]byte{}
			for _, r := range got {
				if err := hooks.Verify(secret, r.signature, r.body, time.Now(), 5*time.Minute); err != nil {
					t.Errorf("delivery %s: signature %q does not verify: %v", r.id, r.signature, err)
				}
				if b, ok := first[r.id]; ok && string(b) != string(r.body) {
					t.Errorf("delivery %s changed between attempts: %s, then %s", r.id, b, r.body)
				}
				first[r.id] = r.body
			}
			var msg struct {
				ID   int64  `json:"id"`
				Type string `json:"type"`
				Data struct {
					ExternalUserID string `json:"external_user_id"`
					MarketID       int64  `json:"market_id"`
					Side           string `json:"side"`
					Shares         int64  `json:"shares"`
					PayoutKopecks  int64  `json:"payout_kopecks"`
					WonSide        string `json:"won_side"`
				} `json:"data"`
			}
			if err := json.Unmarshal(first[fmt.Sprint(ds[0].ID)], &msg); err != nil {
				t.Fatal(err)
			}
			if msg.ID != ds[0].ID || msg.Type != hooks.BetSettled || msg.Data.ExternalUserID != "ext-alice" || msg.Data.MarketID != w.b1.ID ||
				msg.Data.Side != "yes" || msg.Data.WonSide != "yes" || msg.Data.Shares <= 0 || msg.Data.PayoutKopecks != msg.Data.Shares {
				t.Errorf("bet.settled body %+v", msg)
			}
			if string(ds[0].Payload) != string(first[fmt.Sprint(ds[0].ID)]) {
				t.Errorf("the log's payload %s is not what was sent", ds[0].Payload)
			}
			metrics := string(h.do(t, req{method: http.MethodGet, path: "/metrics"}).body)
			for _, line := range []string{`predictkit_webhook_attempts_total{outcome="delivered"} 2`, `predictkit_webhook_attempts_total{outcome="pending"} 4`, "predictkit_webhook_queue_pending 0"} {
				if !strings.Contains(metrics, line+"\n") {
					t.Errorf("/metrics lacks %q", line)
				}
			}
		})
	}
}

func TestASenderStoppedMidDeliverySendsItAgainOnceRestarted(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h, sender, guard := webhookHarness(t, sc.new(t), 10*time.Second)
			sender.PerPartner = 1
			reached := make(chan string, 1)
			var once sync.Once
			rc := newReceiver(t, func(id string, n int) int {
				hang := false
				once.Do(func() { hang = true; reached <- id })
				if hang {
					return 0
				}
				return http.StatusOK
			})
			p, _, _ := settledWorld(t, h, rc)
			stop := runSender(t, sender)
			var inFlight string
			select {
			case inFlight = <-reached:
			case <-time.After(60 * time.Second):
				t.Fatal("no delivery reached the receiver")
			}
			stop() // the process dies: the receiver has the request, no outcome is recorded
			for _, d := range h.deliveries(t, p.ID) {
				if fmt.Sprint(d.ID) == inFlight && (d.Status != hooks.Pending || d.Attempts != 1 || d.LastAttemptAt != nil) {
					t.Fatalf("the interrupted delivery: %+v; want pending, one attempt, nothing recorded", d)
				}
			}
			// Another instance starts once the lease is over.
			again := hooks.NewSender(h.store, guard)
			fast(again)
			again.Now = func() time.Time { return time.Now().Add(sender.Lease + time.Second) }
			runSender(t, again)
			waitFor(t, "every delivery delivered", func() bool { return allDelivered(h.deliveries(t, p.ID), 2) })
			_, counts, _ := rc.snapshot()
			if counts[inFlight] != 2 {
				t.Errorf("the interrupted delivery reached the receiver %d times, want 2 (at least once)", counts[inFlight])
			}
			if len(counts) != 2 {
				t.Errorf("the receiver got deliveries %v, want 2 distinct", counts)
			}
		})
	}
}

func TestASlowPartnerDoesNotDelayAnother(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h, sender, _ := webhookHarness(t, sc.new(t), 60*time.Second)
			sender.PerPartner = 1
			release := make(chan struct{})
			slow := newReceiver(t, func(string, int) int {
				<-release
				return http.StatusOK
			})
			fastRc := newReceiver(t, func(string, int) int { return http.StatusOK })
			w := newWorld(t, h)
			ps := []apiNewPartner{h.createPartner(t, "Slow", 10_000_000), h.createPartner(t, "Fast", 10_000_000)}
			h.setWebhook(t, ps[0].ID, slow.srv.URL+"/")
			h.setWebhook(t, ps[1].ID, fastRc.srv.URL+"/")
			for i, p := range ps {
				for j := range 3 {
					h.partnerBet(t, p.Key, map[string]any{"external_user_id": fmt.Sprintf("u%d", j), "market_id": w.b1.ID, "side": "no",
						"amount_kopecks": 5_000, "client_bet_id": fmt.Sprintf("b%d-%d", i, j)})
				}
			}
			expect(t, h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/markets/%d/resolve", w.b1.ID), token: adminToken,
				body: map[string]any{"won_side": "NO"}}), http.StatusOK, "")
			runSender(t, sender)
			waitFor(t, "the fast partner's 4 deliveries", func() bool { return allDelivered(h.deliveries(t, ps[1].ID), 4) })
			_, counts, inFlight := slow.snapshot()
			if inFlight != 1 || len(counts) != 1 {
				t.Errorf("the slow endpoint holds %d requests (%v); want its one worker stuck on one", inFlight, counts)
			}
			for _, d := range h.deliveries(t, ps[0].ID) {
				if d.Status != hooks.Pending {
					t.Errorf("the slow partner's delivery %d is %s while its endpoint hangs", d.ID, d.Status)
				}
			}
			close(release)
			waitFor(t, "the slow partner's deliveries once it answers", func() bool { return allDelivered(h.deliveries(t, ps[0].ID), 4) })
		})
	}
}

func TestWebhookRoutes(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		p := h.createPartner(t, "Bookie", 0)
		base := fmt.Sprintf("/api/v1/admin/partners/%d", p.ID)
		put := func(body any) *response {
			return h.do(t, req{method: http.MethodPut, path: base + "/webhook", token: adminToken, body: body})
		}
		expect(t, h.do(t, req{method: http.MethodGet, path: base + "/webhook", token: adminToken}), http.StatusNotFound, "webhook_not_found")
		for _, tc := range []struct {
			name   string
			body   any
			detail string
		}{
			{"a body without url", map[string]any{}, "url"},
			{"a URL of another scheme", map[string]any{"url": "ftp://93.184.216.34/"}, "http or https"},
			{"a malformed URL", map[string]any{"url": "http://[::1"}, "malformed"},
			{"a URL without a host", map[string]any{"url": "https:///x"}, "host"},
			{"loopback", map[string]any{"url": "http://127.0.0.1:8080/hook"}, "loopback"},
			{"IPv6 loopback", map[string]any{"url": "http://[::1]:8080/hook"}, "loopback"},
			{"a private address", map[string]any{"url": "http://192.168.1.20/hook"}, "private"},
			{"the cloud metadata service", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}, "link-local"},
			{"the unspecified address", map[string]any{"url": "http://0.0.0.0:8080/"}, "unspecified"},
			{"a multicast address", map[string]any{"url": "http://224.0.0.1/"}, "multicast"},
			{"credentials in the URL", map[string]any{"url": "https://u:p@93.184.216.34/"}, "user name"},
		} {
			t.Run("refuses "+tc.name, func(t *testing.T) {
				r := put(tc.body)
				expect(t, r, http.StatusBadRequest, "invalid_request")
				if d := r.errorDetail(t); !strings.Contains(d, tc.detail) {
					t.Errorf("detail %q, want it to mention %q", d, tc.detail)
				}
			})
		}
		expect(t, h.do(t, req{method: http.MethodPut, path: "/api/v1/admin/partners/987654/webhook", token: adminToken,
			body: map[string]any{"url": "https://93.184.216.34/"}}), http.StatusNotFound, "partner_not_found")
		expect(t, h.do(t, req{method: http.MethodPut, path: "/api/v1/admin/partners/x/webhook", token: adminToken,
			body: map[string]any{"url": "https://93.184.216.34/"}}), http.StatusBadRequest, "invalid_id")
		expect(t, h.do(t, req{method: http.MethodPut, path: base + "/webhook", token: "wrong-token-0123456789",
			body: map[string]any{"url": "https://93.184.216.34/"}}), http.StatusUnauthorized, "unauthorized")

		first := h.setWebhook(t, p.ID, "https://93.184.216.34/predictkit")
		second := h.setWebhook(t, p.ID, "https://93.184.216.34:8443/v2")
		if first == second {
			t.Error("replacing the webhook kept its secret")
		}
		r := h.do(t, req{method: http.MethodGet, path: base + "/webhook", token: adminToken})
		expect(t, r, http.StatusOK, "")
		if strings.Contains(string(r.body), "whsec_") || !strings.Contains(string(r.body), `"url":"https://93.184.216.34:8443/v2"`) {
			t.Errorf("read back %s: want the URL and no secret", r)
		}

		r = h.do(t, req{method: http.MethodGet, path: base + "/deliveries", token: adminToken})
		expect(t, r, http.StatusOK, "")
		if string(r.body) != `{"deliveries":[],"next_cursor":null}` {
			t.Errorf("an empty log: %s", r)
		}
		for _, q := range []string{"?limit=0", "?limit=101", "?limit=x", "?cursor=abc", "?cursor=-5"} {
			expect(t, h.do(t, req{method: http.MethodGet, path: base + "/deliveries" + q, token: adminToken}), http.StatusBadRequest, "invalid_request")
		}
		expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/partners/987654/deliveries", token: adminToken}), http.StatusNotFound, "partner_not_found")
		expect(t, h.do(t, req{method: http.MethodPost, path: base + "/deliveries/424242/redeliver", token: adminToken}), http.StatusBadRequest, "unknown_delivery")
		expect(t, h.do(t, req{method: http.MethodPost, path: base + "/deliveries/x/redeliver", token: adminToken}), http.StatusBadRequest, "invalid_id")
		expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/partners/987654/deliveries/1/redeliver", token: adminToken}), http.StatusNotFound, "partner_not_found")

		expect(t, h.do(t, req{method: http.MethodDelete, path: base + "/webhook", token: adminToken}), http.StatusNoContent, "")
		expect(t, h.do(t, req{method: http.MethodDelete, path: base + "/webhook", token: adminToken}), http.StatusNotFound, "webhook_not_found")
		expect(t, h.do(t, req{method: http.MethodGet, path: base + "/webhook", token: adminToken}), http.StatusNotFound, "webhook_not_found")
	})
}

func TestTheOperatorRedeliversADelivery(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h, sender, _ := webhookHarness(t, sc.new(t), 10*time.Second)
			rc := newReceiver(t, func(string, int) int { return http.StatusOK })
			p, _, _ := settledWorld(t, h, rc)
			runSender(t, sender)
			waitFor(t, "both deliveries", func() bool { return allDelivered(h.deliveries(t, p.ID), 2) })
			d := h.deliveries(t, p.ID)[0]
			r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/partners/%d/deliveries/%d/redeliver", p.ID, d.ID), token: adminToken})
			expect(t, r, http.StatusAccepted, "")
			waitFor(t, "the redelivery", func() bool {
				_, counts, _ := rc.snapshot()
				return counts[fmt.Sprint(d.ID)] == 2 && allDelivered(h.deliveries(t, p.ID), 2)
			})
			r = h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/admin/partners/%d/deliveries?limit=1", p.ID), token: adminToken})
			expect(t, r, http.StatusOK, "")
			var page struct {
				Deliveries []apiDelivery `json:"deliveries"`
				NextCursor *string       `json:"next_cursor"`
			}
			r.decode(t, &page)
			if len(page.Deliveries) != 1 || page.NextCursor == nil || page.Deliveries[0].Attempts != 2 {
				t.Fatalf("first page %s", r)
			}
			r = h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/admin/partners/%d/deliveries?limit=1&cursor=%s", p.ID, *page.NextCursor), token: adminToken})
			r.decode(t, &page)
			if len(page.Deliveries) != 1 || page.NextCursor != nil || page.Deliveries[0].Type != hooks.MarketResolved {
				t.Fatalf("second page %s", r)
			}
		})
	}
}

func TestPartnerKeyRotation(t *testing.T) {
	eachStoreWith(t, func(t *testing.T, h *harness, partners *partner.Service) {
		clock := time.Now().UTC().Truncate(time.Microsecond)
		partners.Now = func() time.Time { return clock }
		p := h.createPartner(t, "Rotating", 1_000_000)
		state := func(key string) *response {
			return h.do(t, partnerReq(http.MethodGet, statePath("u1"), key, nil))
		}
		rotate := func(body any) *response {
			return h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/partners/%d/rotate-key", p.ID), token: adminToken, body: body})
		}
		newKey := func(r *response) string {
			t.Helper()
			expect(t, r, http.StatusOK, "")
			var out struct{ Key string }
			r.decode(t, &out)
			if !strings.HasPrefix(out.Key, "pk_") || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("rotate answered %s", r)
			}
			return out.Key
		}
		k1 := newKey(rotate(map[string]any{"grace_seconds": 3600}))
		expect(t, state(p.Key), http.StatusOK, "")
		expect(t, state(k1), http.StatusOK, "")
		clock = clock.Add(3599 * time.Second)
		expect(t, state(p.Key), http.StatusOK, "")
		clock = clock.Add(time.Second)
		expect(t, state(p.Key), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, state(k1), http.StatusOK, "")

		k2 := newKey(rotate(nil)) // the default grace: a day
		clock = clock.Add(86399 * time.Second)
		expect(t, state(k1), http.StatusOK, "")
		k3 := newKey(rotate(map[string]any{"grace_seconds": 0})) // ends k2 at once; k1 went with the previous rotation
		for _, k := range []string{k1, k2} {
			expect(t, state(k), http.StatusUnauthorized, "UNAUTHORIZED")
		}
		expect(t, state(k3), http.StatusOK, "")

		for _, body := range []any{map[string]any{"grace_seconds": -1}, map[string]any{"grace_seconds": 2592001},
			map[string]any{"grace_seconds": "soon"}, map[string]any{"grace": 5}, "[]"} {
			expect(t, rotate(body), http.StatusBadRequest, "invalid_request")
		}
		expect(t, state(k3), http.StatusOK, "")
		expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/admin/partners/987654/rotate-key", token: adminToken}), http.StatusNotFound, "partner_not_found")
	})
}

// eachStoreWith is eachStore with the app's partner service, whose
// clock a test may set.
func eachStoreWith(t *testing.T, f func(t *testing.T, h *harness, partners *partner.Service)) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			var ps *partner.Service
			h := newHarness(t, sc.new(t), withFx(fx.Populate(&ps)))
			f(t, h, ps)
		})
	}
}
