package server

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// Metrics is the server's Prometheus registry and instruments, served in
// the Prometheus text format at GET /metrics. Every server has its own
// registry (nothing goes to prometheus.DefaultRegisterer), so several
// servers in one process never share counts. The "Metrics" section
// of docs/operator-guide.md lists every name and label.
//
// Routes are labelled by their template ("/api/v1/pools/:id"), never by
// the raw path, and requests that match no route by "unmatched", so the
// number of series is bounded by the number of routes.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	httpInFlight prometheus.Gauge

	trades         *prometheus.CounterVec
	volume         *prometheus.CounterVec
	fees           *prometheus.CounterVec
	refusals       *prometheus.CounterVec
	batchSize      prometheus.Histogram
	batchCommit    prometheus.Histogram
	batchFailures  prometheus.Counter
	replays        *prometheus.CounterVec
	settlements    *prometheus.CounterVec
	settleDuration prometheus.Histogram

	auditRuns     *prometheus.CounterVec
	auditOK       prometheus.Gauge
	auditProblems prometheus.Gauge
	auditLast     prometheus.Gauge
	auditDuration prometheus.Gauge

	authCacheOn prometheus.Gauge

	readViews *prometheus.CounterVec
}

// NewMetrics returns a fresh registry with every instrument of the
// server, the Go runtime and process collectors, and predictkit_build_info.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{reg: reg}

	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_http_requests_total",
		Help: "HTTP requests answered, by method, route template and status.",
	}, []string{"method", "route", "status"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "predictkit_http_request_duration_seconds",
		Help:    "Time from reading a request to having its answer, by method and route template.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"method", "route"})
	m.httpInFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "predictkit_http_requests_in_flight",
		Help: "HTTP requests being answered now.",
	})

	tradeLabels := []string{"market_type", "side", "action", "channel"}
	m.trades = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_trades_total",
		Help: "Executed trades, by market type, side (yes, no), action (buy, sell) and channel (user, partner). Replays of a partner's repeated request are not counted.",
	}, tradeLabels)
	m.volume = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_trade_volume_kopecks_total",
		Help: "LMSR cost of buys and refund of sales, fees excluded (the markets' volume), kopecks.",
	}, tradeLabels)
	m.fees = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_trade_fees_kopecks_total",
		Help: "Fees charged on trades, kopecks.",
	}, tradeLabels)
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_trade_refusals_total",
		Help: "Trade requests refused by the market, by reason.",
	}, []string{"reason"})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "predictkit_trade_batch_size",
		Help:    "Trades committed together in one group-commit transaction (PREDICTKIT_TRADE_BATCH_SIZE bounds it).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
	})
	m.batchCommit = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "predictkit_trade_batch_commit_seconds",
		Help:    "Time to execute and commit one batch of trades (lock, decide, write, commit).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})
	m.batchFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "predictkit_trade_batch_failures_total",
		Help: "Batches whose execution failed as a whole (a store error; a trade on an unknown market fails alone).",
	})
	m.replays = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_partner_idempotent_replays_total",
		Help: "Partner requests answered with the stored receipt of an earlier identical request (Idempotent-Replayed: true), by operation.",
	}, []string{"operation"})
	m.settlements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_settlements_total",
		Help: "Market resolutions, by result: ok, refused (already resolved, forbidden, unknown), error.",
	}, []string{"result"})
	m.settleDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "predictkit_settlement_duration_seconds",
		Help:    "Time to resolve a market and settle every position on it (successful settlements).",
		Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60, 300},
	})

	m.auditRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_audit_runs_total",
		Help: "Ledger audits run (operator request or PREDICTKIT_AUDIT_INTERVAL), by result: ok, problems, error.",
	}, []string{"result"})
	m.auditOK = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "predictkit_audit_ok",
		Help: "1 when the last completed audit found the ledger sound, 0 when it found problems; -1 before any audit completed.",
	})
	m.auditOK.Set(-1)
	m.auditProblems = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "predictkit_audit_problems",
		Help: "Problems the last completed audit found.",
	})
	m.auditLast = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "predictkit_audit_last_run_timestamp_seconds",
		Help: "Unix time of the last completed audit; 0 before any.",
	})
	m.auditDuration = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "predictkit_audit_duration_seconds",
		Help: "How long the last completed audit took.",
	})

	m.readViews = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "predictkit_read_views_total",
		Help: "Public reads kept in memory, by route template and outcome: hit (served from memory), miss (not in memory, or stale), render (a miss that ran the handler: concurrent misses of one answer share a render), not_modified (answered 304).",
	}, []string{"route", "outcome"})
	m.authCacheOn = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "predictkit_auth_cache_on",
		Help: "1 while looked-up access tokens are trusted from memory (PREDICTKIT_AUTH_CACHE); 0 when the cache is off by configuration or because announcements of token and user changes cannot be received.",
	})

	for _, c := range []prometheus.Collector{
		m.httpRequests, m.httpDuration, m.httpInFlight,
		m.trades, m.volume, m.fees, m.refusals, m.batchSize, m.batchCommit, m.batchFailures,
		m.replays, m.settlements, m.settleDuration,
		m.auditRuns, m.auditOK, m.auditProblems, m.auditLast, m.auditDuration,
		m.authCacheOn,
		m.readViews,
	} {
		f(c)
	}
	// Every label combination that is known in advance starts at 0, so
	// that rate() works from the first event.
	for _, side := range []string{"yes", "no"} {
		for _, action := range []string{"buy", "sell"} {
			for _, ch := range []string{"user", "partner"} {
				m.trades.WithLabelValues(market.MarketTypeLMSR, side, action, ch)
				m.volume.WithLabelValues(market.MarketTypeLMSR, side, action, ch)
				m.fees.WithLabelValues(market.MarketTypeLMSR, side, action, ch)
			}
		}
	}
	for _, op := range []string{"bet", "sell"} {
		m.replays.WithLabelValues(op)
	}
	for _, r := range []string{"ok", "refused", "error"} {
		m.settlements.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "problems", "error"} {
		m.auditRuns.WithLabelValues(r)
	}

	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f(buildInfo())
	return m
}

// Registry is where the metrics are registered; library users may add
// their own collectors to it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// buildInfo is predictkit_build_info: 1, labelled with the build
// (see ReadBuild).
func buildInfo() prometheus.Collector {
	b := ReadBuild()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "predictkit_build_info",
		Help: "Always 1; the labels name the running build.",
		ConstLabels: prometheus.Labels{
			"version":   b.Version,
			"revision":  b.Revision,
			"modified":  b.ModifiedLabel(),
			"goversion": b.GoVersion,
		},
	})
	g.Set(1)
	return g
}

// provideMetrics is the fx constructor: NewMetrics plus the connection
// pool's statistics when the store is PostgreSQL.
func provideMetrics(caps Capabilities) *Metrics {
	m := NewMetrics()
	if caps.Pool != nil {
		m.reg.MustRegister(poolCollector{caps.Pool})
	}
	return m
}

// observeRequest counts one answered request; method is the label (see
// readMethod for the answers made outside the middleware).
func (m *Metrics) observeRequest(c *fiber.Ctx, method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(method, route).Observe(d.Seconds())
	if status == fiber.StatusOK && string(c.Response().Header.Peek(HeaderIdempotentReplayed)) == "true" {
		switch route {
		case "/api/v1/partner/bet":
			m.replays.WithLabelValues("bet").Inc()
		case "/api/v1/partner/sell":
			m.replays.WithLabelValues("sell").Inc()
		}
	}
}

func (m *Metrics) inFlight(delta float64) {
	if m != nil {
		m.httpInFlight.Add(delta)
	}
}

// handler serves the registry (text format, or whatever the scraper
// negotiates).
func (m *Metrics) handler() fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Registry:          m.reg,
		EnableOpenMetrics: false,
	}))
}

// observeBatch is market.Batcher.Observe: one group commit.
func (m *Metrics) observeBatch(size int, took time.Duration, err error) {
	m.batchSize.Observe(float64(size))
	m.batchCommit.Observe(took.Seconds())
	if err != nil {
		m.batchFailures.Inc()
	}
}

// observeTrade counts one trade request's outcome.
func (m *Metrics) observeTrade(r market.Request, res market.Result, err error) {
	switch {
	case err != nil:
		m.refusals.WithLabelValues(refusalReason(err)).Inc()
	case res.Err != nil:
		m.refusals.WithLabelValues(refusalReason(res.Err)).Inc()
	case res.Replayed || res.Trade == nil:
	default:
		t := res.Trade
		side := "yes"
		if t.Side == market.No {
			side = "no"
		}
		channel := "user"
		if r.Partner != nil || t.PartnerID != 0 {
			channel = "partner"
		}
		action := string(t.Action)
		m.trades.WithLabelValues(market.MarketTypeLMSR, side, action, channel).Inc()
		m.volume.WithLabelValues(market.MarketTypeLMSR, side, action, channel).Add(float64(max(t.Cost, 0)))
		m.fees.WithLabelValues(market.MarketTypeLMSR, side, action, channel).Add(float64(max(t.Fee, 0)))
	}
}

// refusalReason is a short, bounded label for a refused trade.
func refusalReason(err error) string {
	for _, r := range []struct {
		target error
		reason string
	}{
		{account.ErrInsufficientFunds, "insufficient_funds"},
		{market.ErrInsufficientShares, "insufficient_shares"},
		{market.ErrNoPosition, "no_position"},
		{market.ErrPriceMoved, "price_moved"},
		{market.ErrPoolChanged, "price_moved"},
		{market.ErrClosed, "market_closed"},
		{market.ErrResolved, "market_closed"},
		{market.ErrMarketNotFound, "market_not_found"},
		{market.ErrTradeRefused, "trade_refused"},
		{market.ErrDuplicateKey, "duplicate_key"},
		{input.ErrInvalid, "invalid"},
		{context.Canceled, "canceled"},
		{context.DeadlineExceeded, "timeout"},
	} {
		if errors.Is(err, r.target) {
			return r.reason
		}
	}
	return "error"
}

// observeSettlement counts one call of market.Service.Close or Resolve.
func (m *Metrics) observeSettlement(took time.Duration, err error) {
	if m == nil {
		return
	}
	switch {
	case err == nil:
		m.settlements.WithLabelValues("ok").Inc()
		m.settleDuration.Observe(took.Seconds())
	case errsMarketClose.match(err).status < 500:
		m.settlements.WithLabelValues("refused").Inc()
	default:
		m.settlements.WithLabelValues("error").Inc()
	}
}

// observeAudit records a completed (or failed) audit.
func (m *Metrics) observeAudit(problems int, at time.Time, took time.Duration, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.auditRuns.WithLabelValues("error").Inc()
		return
	}
	if problems == 0 {
		m.auditRuns.WithLabelValues("ok").Inc()
		m.auditOK.Set(1)
	} else {
		m.auditRuns.WithLabelValues("problems").Inc()
		m.auditOK.Set(0)
	}
	m.auditProblems.Set(float64(problems))
	m.auditLast.Set(float64(at.UnixNano()) / 1e9)
	m.auditDuration.Set(took.Seconds())
}

// observedTrader counts the outcome of every trade that goes through the
// group commit, whoever sent it (users and partners share one Trader).
type observedTrader struct {
	next market.Trader
	m    *Metrics
	// direct: batching is off (batch size 1), so the Batcher reports no
	// batches; each trade is then observed as a batch of one here.
	direct bool
}

func (t observedTrader) Trade(ctx context.Context, marketID int64, r market.Request) (market.Result, error) {
	start := time.Now()
	res, err := t.next.Trade(ctx, marketID, r)
	if t.direct {
		t.m.observeBatch(1, time.Since(start), err)
	}
	t.m.observeTrade(r, res, err)
	return res, err
}

// instrumentTrader wires the metrics into the group commit: the
// Batcher's Observe hook gives batch sizes and commit times, the wrapper
// the trades themselves.
func instrumentTrader(b *market.Batcher, m *Metrics) market.Trader {
	if m == nil {
		return b
	}
	b.Observe = m.observeBatch
	return observedTrader{next: b, m: m, direct: b.MaxBatch <= 1}
}

// poolCollector exports pgxpool.Stat at every scrape.
type poolCollector struct{ pool *pgxpool.Pool }

var (
	poolDescs = struct {
		acquired, idle, total, max, constructing                            *prometheus.Desc
		acquires, acquireSeconds, emptyAcquires, canceledAcquires, newConns *prometheus.Desc
		lifetimeDestroys, idleDestroys                                      *prometheus.Desc
	}{
		acquired:         prometheus.NewDesc("predictkit_db_pool_acquired_connections", "PostgreSQL connections in use now.", nil, nil),
		idle:             prometheus.NewDesc("predictkit_db_pool_idle_connections", "PostgreSQL connections idle in the pool now.", nil, nil),
		total:            prometheus.NewDesc("predictkit_db_pool_total_connections", "PostgreSQL connections open now (acquired, idle and being opened).", nil, nil),
		max:              prometheus.NewDesc("predictkit_db_pool_max_connections", "Most connections the pool opens.", nil, nil),
		constructing:     prometheus.NewDesc("predictkit_db_pool_constructing_connections", "PostgreSQL connections being opened now.", nil, nil),
		acquires:         prometheus.NewDesc("predictkit_db_pool_acquires_total", "Successful connection acquisitions from the pool.", nil, nil),
		acquireSeconds:   prometheus.NewDesc("predictkit_db_pool_acquire_duration_seconds_total", "Total time spent acquiring connections.", nil, nil),
		emptyAcquires:    prometheus.NewDesc("predictkit_db_pool_empty_acquires_total", "Acquisitions that had to wait for a connection (none was idle).", nil, nil),
		canceledAcquires: prometheus.NewDesc("predictkit_db_pool_canceled_acquires_total", "Acquisitions given up because their context ended.", nil, nil),
		newConns:         prometheus.NewDesc("predictkit_db_pool_new_connections_total", "Connections opened.", nil, nil),
		lifetimeDestroys: prometheus.NewDesc("predictkit_db_pool_max_lifetime_destroys_total", "Connections closed for reaching their maximum lifetime.", nil, nil),
		idleDestroys:     prometheus.NewDesc("predictkit_db_pool_max_idle_destroys_total", "Connections closed for idling too long.", nil, nil),
	}
)

func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	d := poolDescs
	for _, x := range []*prometheus.Desc{d.acquired, d.idle, d.total, d.max, d.constructing, d.acquires,
		d.acquireSeconds, d.emptyAcquires, d.canceledAcquires, d.newConns, d.lifetimeDestroys, d.idleDestroys} {
		ch <- x
	}
}

func (p poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := p.pool.Stat()
	d := poolDescs
	g := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v)
	}
	c := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v)
	}
	g(d.acquired, float64(s.AcquiredConns()))
	g(d.idle, float64(s.IdleConns()))
	g(d.total, float64(s.TotalConns()))
	g(d.max, float64(s.MaxConns()))
	g(d.constructing, float64(s.ConstructingConns()))
	c(d.acquires, float64(s.AcquireCount()))
	c(d.acquireSeconds, s.AcquireDuration().Seconds())
	c(d.emptyAcquires, float64(s.EmptyAcquireCount()))
	c(d.canceledAcquires, float64(s.CanceledAcquireCount()))
	c(d.newConns, float64(s.NewConnsCount()))
	c(d.lifetimeDestroys, float64(s.MaxLifetimeDestroyCount()))
	c(d.idleDestroys, float64(s.MaxIdleDestroyCount()))
}
