package server

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Metrics counts requests per method, route template and status, with
// their total duration, and serves them in the Prometheus text format at
// GET /metrics.
type Metrics struct {
	mu    sync.Mutex
	start time.Time
	by    map[metricKey]*metricValue
}

type metricKey struct {
	method, route string
	status        int
}

type metricValue struct {
	count   int64
	seconds float64
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics {
	return &Metrics{start: time.Now(), by: map[metricKey]*metricValue{}}
}

func (m *Metrics) observe(method, route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	k := metricKey{method, route, status}
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.by[k]
	if v == nil {
		v = &metricValue{}
		m.by[k] = v
	}
	v.count++
	v.seconds += d.Seconds()
}

// WriteTo writes the metrics in the Prometheus text exposition format.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	m.mu.Lock()
	keys := make([]metricKey, 0, len(m.by))
	vals := map[metricKey]metricValue{}
	for k, v := range m.by {
		keys = append(keys, k)
		vals[k] = *v
	}
	m.mu.Unlock()
	slices.SortFunc(keys, func(a, b metricKey) int {
		if a.route != b.route {
			if a.route < b.route {
				return -1
			}
			return 1
		}
		if a.method != b.method {
			if a.method < b.method {
				return -1
			}
			return 1
		}
		return a.status - b.status
	})
	var n int64
	p := func(format string, args ...any) error {
		k, err := fmt.Fprintf(w, format, args...)
		n += int64(k)
		return err
	}
	if err := p("# HELP predictkit_uptime_seconds Seconds since the server started.\n# TYPE predictkit_uptime_seconds gauge\npredictkit_uptime_seconds %g\n", time.Since(m.start).Seconds()); err != nil {
		return n, err
	}
	if err := p("# HELP predictkit_http_requests_total HTTP requests answered.\n# TYPE predictkit_http_requests_total counter\n"); err != nil {
		return n, err
	}
	for _, k := range keys {
		if err := p("predictkit_http_requests_total{method=%q,route=%q,status=\"%d\"} %d\n", k.method, k.route, k.status, vals[k].count); err != nil {
			return n, err
		}
	}
	if err := p("# HELP predictkit_http_request_duration_seconds_sum Total time spent answering, seconds.\n# TYPE predictkit_http_request_duration_seconds_sum counter\n"); err != nil {
		return n, err
	}
	for _, k := range keys {
		if err := p("predictkit_http_request_duration_seconds_sum{method=%q,route=%q,status=\"%d\"} %s\n", k.method, k.route, k.status, strconv.FormatFloat(vals[k].seconds, 'g', -1, 64)); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (m *Metrics) handler(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "text/plain; version=0.0.4; charset=utf-8")
	c.Status(http.StatusOK)
	_, err := m.WriteTo(c.Response().BodyWriter())
	return err
}
