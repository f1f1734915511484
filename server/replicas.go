package server

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/predictkit/predictkit/storage/postgres"
)

// replicaStore is a store that sends the reads that may lag to read
// replicas (storage/postgres with PREDICTKIT_DATABASE_REPLICA_URLS).
type replicaStore interface {
	Replicas() ([]postgres.ReplicaStatus, uint64)
	AfterWrite(ctx context.Context, userID int64)
}

// Replicas are the store's read replicas, as /readyz and /metrics report
// them; nil when the store has none.
type Replicas struct{ store replicaStore }

func replicasOf(s Store) *Replicas {
	rs, ok := s.(replicaStore)
	if !ok {
		return nil
	}
	if st, _ := rs.Replicas(); len(st) == 0 {
		return nil
	}
	return &Replicas{store: rs}
}

// Statuses returns each replica's state.
func (r *Replicas) Statuses() []postgres.ReplicaStatus {
	st, _ := r.store.Replicas()
	return st
}

// afterWrites tells the store, after each request of a signed-in user
// that may have written (any method but GET, HEAD and OPTIONS), to
// remember the primary's WAL position for that user, so that the user's
// next reads see what the request wrote even when a replica serves them;
// a partner's requests likewise, under partnerCaller. Reads find the
// caller in their context (Auth.Credential and PartnerAuth.Partner put
// it there).
func (r *Replicas) afterWrites(c *fiber.Ctx) error {
	err := c.Next()
	if !unsafeMethod(c.Method()) {
		return err
	}
	id, ok := c.Locals(localUserID).(int64)
	if p, isPartner := c.Locals(localPartnerID).(int64); isPartner {
		id, ok = partnerCaller(p), true
	}
	if ok {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), 2*time.Second)
		r.store.AfterWrite(ctx, id)
		cancel()
	}
	return err
}

// partnerCaller is the caller id of a partner's requests for
// read-your-writes: its id negated, apart from the users' ids. A partner
// acts for many users, so its reads wait for all its writes.
func partnerCaller(partnerID int64) int64 { return -partnerID }

// replicaCollector exports each replica's state at every scrape.
type replicaCollector struct{ r *Replicas }

var replicaDescs = struct {
	up, lag, reads *prometheus.Desc
}{
	up:    prometheus.NewDesc("predictkit_replica_up", "1 while the read replica serves reads (up, and within PREDICTKIT_REPLICA_MAX_LAG), 0 while it is skipped.", []string{"replica"}, nil),
	lag:   prometheus.NewDesc("predictkit_replica_lag_seconds", "How far the read replica's replay was behind the primary at its last check.", []string{"replica"}, nil),
	reads: prometheus.NewDesc("predictkit_replica_reads_total", "Reads that may lag, by where they went: a replica's host:port, or primary.", []string{"target"}, nil),
}

func (c replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- replicaDescs.up
	ch <- replicaDescs.lag
	ch <- replicaDescs.reads
}

func (c replicaCollector) Collect(ch chan<- prometheus.Metric) {
	st, primary := c.r.store.Replicas()
	for _, s := range st {
		up := 0.0
		if s.OK {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(replicaDescs.up, prometheus.GaugeValue, up, s.Name)
		ch <- prometheus.MustNewConstMetric(replicaDescs.lag, prometheus.GaugeValue, s.LagSeconds, s.Name)
		ch <- prometheus.MustNewConstMetric(replicaDescs.reads, prometheus.CounterValue, float64(s.Reads), s.Name)
	}
	ch <- prometheus.MustNewConstMetric(replicaDescs.reads, prometheus.CounterValue, float64(primary), "primary")
}
