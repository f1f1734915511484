package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/predictkit/predictkit/server"
)

// scrape reads /metrics through the harness (so the answer is checked
// against the OpenAPI document) and parses the text format.
func (h *harness) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/metrics"})
	expect(t, r, http.StatusOK, "")
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("/metrics content type %q", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v\n%s", err, r.body)
	}
	return fams
}

// metricValue is the value of the series of family name whose labels
// include want (a counter's or gauge's value, a histogram's count); ok is
// false when there is no such series.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, x := range want {
			if have[k] != x {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func mustMetric(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := metricValue(fams, name, labels)
	if !ok {
		var names []string
		for n := range fams {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Fatalf("/metrics has no %s%v; families: %v", name, labels, names)
	}
	return v
}

func histogramSum(fams map[string]*dto.MetricFamily, name string) float64 {
	if f := fams[name]; f != nil && len(f.GetMetric()) > 0 && f.GetMetric()[0].Histogram != nil {
		return f.GetMetric()[0].Histogram.GetSampleSum()
	}
	return 0
}

func TestMetricsMoveWithTheDomain(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		userBuy := map[string]string{"market_type": "lmsr", "side": "yes", "action": "buy", "channel": "user"}
		before := h.scrape(t)
		trades0 := mustMetric(t, before, "predictkit_trades_total", userBuy)
		volume0 := mustMetric(t, before, "predictkit_trade_volume_kopecks_total", userBuy)
		batches0 := mustMetric(t, before, "predictkit_trade_batch_size", nil)
		batchSum0 := histogramSum(before, "predictkit_trade_batch_size")
		commits0 := mustMetric(t, before, "predictkit_trade_batch_commit_seconds", nil)

		trade := h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
		after := h.scrape(t)

		t.Run("a buy counts one trade of its market type, side, action and channel", func(t *testing.T) {
			if got := mustMetric(t, after, "predictkit_trades_total", userBuy); got != trades0+1 {
				t.Errorf("predictkit_trades_total%v = %v, want %v", userBuy, got, trades0+1)
			}
			m := h.market(t, w.a1.ID)
			if got := mustMetric(t, after, "predictkit_trade_volume_kopecks_total", userBuy); got != volume0+float64(m.Volume) {
				t.Errorf("volume %v, want %v + the market's volume %d", got, volume0, m.Volume)
			}
			if got := mustMetric(t, after, "predictkit_trade_fees_kopecks_total", userBuy); got <= 0 {
				t.Errorf("fees %v after a buy with a margin (trade %+v)", got, trade)
			}
		})
		t.Run("the batch histogram observes the trade's group commit", func(t *testing.T) {
			if got := mustMetric(t, after, "predictkit_trade_batch_size", nil); got != batches0+1 {
				t.Errorf("predictkit_trade_batch_size count %v, want %v", got, batches0+1)
			}
			if got := histogramSum(after, "predictkit_trade_batch_size"); got != batchSum0+1 {
				t.Errorf("predictkit_trade_batch_size sum %v, want %v (a batch of one)", got, batchSum0+1)
			}
			if got := mustMetric(t, after, "predictkit_trade_batch_commit_seconds", nil); got != commits0+1 {
				t.Errorf("predictkit_trade_batch_commit_seconds count %v, want %v", got, commits0+1)
			}
		})
		t.Run("a refused trade is counted by reason, not as a trade", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/sell", w.a1.ID), token: w.bob.token,
				body: map[string]any{"side": "YES", "shares": 5}})
			expect(t, r, http.StatusBadRequest, "insufficient_shares")
			m := h.scrape(t)
			if got := mustMetric(t, m, "predictkit_trade_refusals_total", map[string]string{"reason": "no_position"}); got != 1 {
				t.Errorf("refusals{no_position} = %v, want 1", got)
			}
			if got := mustMetric(t, m, "predictkit_trades_total", userBuy); got != trades0+1 {
				t.Errorf("a refused trade moved predictkit_trades_total to %v", got)
			}
		})
		t.Run("requests are labelled by route template, never by raw path", func(t *testing.T) {
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/pools/987654"}), http.StatusNotFound, "pool_not_found")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/no/such/path/123456"}), http.StatusNotFound, "not_found")
			m := h.scrape(t)
			if got := mustMetric(t, m, "predictkit_http_requests_total", map[string]string{"method": "GET", "route": "/api/v1/pools/:id", "status": "404"}); got != 1 {
				t.Errorf("requests{/api/v1/pools/:id, 404} = %v, want 1", got)
			}
			if got := mustMetric(t, m, "predictkit_http_request_duration_seconds", map[string]string{"method": "POST", "route": "/api/v1/markets/:market_id/buy"}); got < 1 {
				t.Errorf("duration histogram of the buy route has %v samples", got)
			}
			mustMetric(t, m, "predictkit_http_requests_total", map[string]string{"route": "unmatched", "status": "404"})
			for _, f := range m {
				for _, s := range f.GetMetric() {
					for _, l := range s.GetLabel() {
						if strings.Contains(l.GetValue(), "987654") || strings.Contains(l.GetValue(), "123456") {
							t.Errorf("%s has a raw path in label %s=%q", f.GetName(), l.GetName(), l.GetValue())
						}
					}
				}
			}
			if got := mustMetric(t, m, "predictkit_http_requests_in_flight", nil); got < 1 {
				t.Errorf("in flight during the scrape: %v, want at least the scrape itself", got)
			}
		})
		t.Run("a partner's repeated request counts as a replay, once", func(t *testing.T) {
			p := h.createPartner(t, "Metrics bookie", 1_000_000)
			bet := map[string]any{"external_user_id": "m-1", "market_id": w.a1.ID, "side": "no", "amount_kopecks": 5_000, "client_bet_id": "metrics-1"}
			h.partnerBet(t, p.Key, bet)
			h.partnerBet(t, p.Key, bet)
			m := h.scrape(t)
			if got := mustMetric(t, m, "predictkit_partner_idempotent_replays_total", map[string]string{"operation": "bet"}); got != 1 {
				t.Errorf("replays{bet} = %v, want 1", got)
			}
			partnerBuy := map[string]string{"market_type": "lmsr", "side": "no", "action": "buy", "channel": "partner"}
			if got := mustMetric(t, m, "predictkit_trades_total", partnerBuy); got != 1 {
				t.Errorf("partner trades %v, want 1 (the replay runs nothing)", got)
			}
		})
		t.Run("a settlement is counted and timed; a second one is refused", func(t *testing.T) {
			path := w.closePath(w.event.ID, w.poolA.ID, w.a1.ID)
			expect(t, h.do(t, req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"won_side": "YES"}}), http.StatusOK, "")
			expect(t, h.do(t, req{method: http.MethodPost, path: path, token: w.creator.token, body: map[string]any{"won_side": "YES"}}), http.StatusConflict, "")
			m := h.scrape(t)
			if got := mustMetric(t, m, "predictkit_settlements_total", map[string]string{"result": "ok"}); got != 1 {
				t.Errorf("settlements{ok} = %v, want 1", got)
			}
			if got := mustMetric(t, m, "predictkit_settlements_total", map[string]string{"result": "refused"}); got != 1 {
				t.Errorf("settlements{refused} = %v, want 1", got)
			}
			if got := mustMetric(t, m, "predictkit_settlement_duration_seconds", nil); got != 1 {
				t.Errorf("settlement durations observed: %v, want 1", got)
			}
		})
		t.Run("the audit gauges follow the operator's audit", func(t *testing.T) {
			if got := mustMetric(t, h.scrape(t), "predictkit_audit_ok", nil); got != -1 {
				t.Errorf("predictkit_audit_ok before any audit = %v, want -1", got)
			}
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("audit: %v", problems)
			}
			m := h.scrape(t)
			if got := mustMetric(t, m, "predictkit_audit_ok", nil); got != 1 {
				t.Errorf("predictkit_audit_ok = %v, want 1", got)
			}
			if got := mustMetric(t, m, "predictkit_audit_runs_total", map[string]string{"result": "ok"}); got != 1 {
				t.Errorf("audit runs{ok} = %v, want 1", got)
			}
			if got := mustMetric(t, m, "predictkit_audit_last_run_timestamp_seconds", nil); got <= 0 {
				t.Errorf("last audit time %v", got)
			}
		})
		t.Run("the runtime, the process and the build are exported", func(t *testing.T) {
			m := h.scrape(t)
			for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "predictkit_build_info"} {
				mustMetric(t, m, name, nil)
			}
		})
		t.Run("the PostgreSQL pool's statistics are exported on PostgreSQL only", func(t *testing.T) {
			m := h.scrape(t)
			v, ok := metricValue(m, "predictkit_db_pool_max_connections", nil)
			if pool := strings.Contains(t.Name(), "postgres"); pool != ok {
				t.Errorf("pool metrics present: %v on %s", ok, t.Name())
			} else if ok && v < 1 {
				t.Errorf("predictkit_db_pool_max_connections = %v", v)
			}
			if ok {
				if got := mustMetric(t, m, "predictkit_db_pool_acquires_total", nil); got < 1 {
					t.Errorf("predictkit_db_pool_acquires_total = %v after trades", got)
				}
			}
		})
	})
}

func TestMetricsWithoutBatching(t *testing.T) {
	h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) { c.TradeBatchSize = 1 }))
	w := newWorld(t, h)
	h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
	m := h.scrape(t)
	if got := mustMetric(t, m, "predictkit_trade_batch_size", nil); got != 1 {
		t.Errorf("with batching off each trade is a batch of one: %v batches, want 1", got)
	}
}

func TestPeriodicAudit(t *testing.T) {
	cfg := testConfig(memoryStore())
	cfg.AuditInterval = time.Second
	h, app := startServer(t, cfg)
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := h.scrape(t)
		if runs := mustMetric(t, m, "predictkit_audit_runs_total", map[string]string{"result": "ok"}); runs >= 1 {
			if ok := mustMetric(t, m, "predictkit_audit_ok", nil); ok != 1 {
				t.Errorf("predictkit_audit_ok = %v after a sound audit", ok)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no background audit ran within 20s at an interval of 1s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- app.Stop(context.Background()) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("stop: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the audit loop kept the server from stopping")
	}
}
