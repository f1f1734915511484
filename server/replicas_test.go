package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// readyReplicas is /readyz's report of the replicas.
func (h *harness) readyReplicas(t *testing.T) []struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	Up   bool   `json:"up"`
} {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/readyz"})
	expect(t, r, http.StatusOK, "")
	var out struct {
		Replicas []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
			Up   bool   `json:"up"`
		} `json:"replicas"`
	}
	r.decode(t, &out)
	if len(out.Replicas) != 1 {
		t.Fatalf("/readyz reports %d replicas, want 1: %s", len(out.Replicas), r)
	}
	return out.Replicas
}

// replicaMetrics returns predictkit_replica_up and the reads /metrics counts on the replica and the primary.
func (h *harness) replicaMetrics(t *testing.T, name string) (up, replica, primary float64) {
	t.Helper()
	fams := h.scrape(t)
	up, ok1 := metricValue(fams, "predictkit_replica_up", map[string]string{"replica": name})
	replica, ok2 := metricValue(fams, "predictkit_replica_reads_total", map[string]string{"target": name})
	primary, ok3 := metricValue(fams, "predictkit_replica_reads_total", map[string]string{"target": "primary"})
	if _, ok := metricValue(fams, "predictkit_replica_lag_seconds", map[string]string{"replica": name}); !ok || !ok1 || !ok2 || !ok3 {
		t.Fatalf("/metrics lacks a replica series")
	}
	return up, replica, primary
}

func TestReplicaReadsThroughTheServer(t *testing.T) {
	rp := pgtest.NewReplica(t)
	store := rp.New(t, postgres.ReplicaConfig{MaxWait: 100 * time.Millisecond, MaxLag: time.Minute, Check: 20 * time.Millisecond})
	h := newHarness(t, store)
	w := newWorld(t, h)
	name := h.readyReplicas(t)[0].Name

	ownTrades := func(token string) []int64 {
		t.Helper()
		r := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/trades", token: token})
		expect(t, r, http.StatusOK, "")
		var out struct {
			Trades []struct {
				TradeID int64 `json:"trade_id"`
			} `json:"trades"`
		}
		r.decode(t, &out)
		ids := make([]int64, len(out.Trades))
		for i, tr := range out.Trades {
			ids[i] = tr.TradeID
		}
		return ids
	}

	t.Run("a trade shows at once in its trader's history, from the primary while the replica has not replayed it", func(t *testing.T) {
		rp.Pause(t)
		_, _, primaryBefore := h.replicaMetrics(t, name)
		tr := h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
		if ids := ownTrades(w.alice.token); len(ids) == 0 || ids[0] != tr.TradeID {
			t.Fatalf("alice's history right after her trade %d: %v", tr.TradeID, ids)
		}
		if _, _, primary := h.replicaMetrics(t, name); primary <= primaryBefore {
			t.Errorf("the read did not go to the primary (%v reads there before, %v after)", primaryBefore, primary)
		}
		if ids := ownTrades(w.bob.token); len(ids) != 0 {
			t.Errorf("bob's history: %v, want none", ids)
		}
		rp.Resume(t)
	})

	t.Run("once replayed, the trader's history comes from the replica", func(t *testing.T) {
		tr := h.buy(t, w.alice.token, w.a1.ID, "NO", 10_000)
		rp.CatchUp(t)
		_, replicaBefore, _ := h.replicaMetrics(t, name)
		if ids := ownTrades(w.alice.token); len(ids) == 0 || ids[0] != tr.TradeID {
			t.Fatalf("alice's history after her trade %d: %v", tr.TradeID, ids)
		}
		if _, replica, _ := h.replicaMetrics(t, name); replica <= replicaBefore {
			t.Errorf("the read did not go to the replica (%v reads there before, %v after)", replicaBefore, replica)
		}
	})

	t.Run("a replica that is down is reported, leaves the server ready, and is used again when it is back", func(t *testing.T) {
		rp.Stop(t)
		waitFor(t, "/readyz to report the replica down", func() bool {
			st := h.readyReplicas(t)[0]
			return !st.OK && !st.Up
		})
		if up, _, _ := h.replicaMetrics(t, name); up != 0 {
			t.Errorf("predictkit_replica_up = %v with the replica down", up)
		}
		_, _, primaryBefore := h.replicaMetrics(t, name)
		if ids := ownTrades(w.alice.token); len(ids) != 2 {
			t.Errorf("alice's history with the replica down: %v, want her 2 trades", ids)
		}
		if _, _, primary := h.replicaMetrics(t, name); primary <= primaryBefore {
			t.Errorf("with the replica down the read did not go to the primary")
		}
		rp.Start(t)
		waitFor(t, "/readyz to report the replica up again", func() bool { return h.readyReplicas(t)[0].OK })
		if up, _, _ := h.replicaMetrics(t, name); up != 1 {
			t.Errorf("predictkit_replica_up = %v with the replica back", up)
		}
		_, replicaBefore, _ := h.replicaMetrics(t, name)
		ownTrades(w.bob.token)
		if _, replica, _ := h.replicaMetrics(t, name); replica <= replicaBefore {
			t.Errorf("with the replica back the read did not go to it")
		}
	})
}
