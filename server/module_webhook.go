package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/webhook"
)

// WebhookModule provides partner webhooks: the operator's routes (set,
// read and remove a partner's webhook, its delivery log, redeliver) and
// the background Sender that queues deliveries from the change log and
// sends them, with its metrics.
var WebhookModule = fx.Module("webhook",
	fx.Provide(newWebhookGuard, newWebhookSender, newWebhookService, webhookRoutes),
	fx.Invoke(runWebhooks),
)

// newWebhookGuard allows PREDICTKIT_WEBHOOK_ALLOWED_HOSTS besides public
// addresses and refuses the address the server listens on.
func newWebhookGuard(cfg Config) (*webhook.Guard, error) {
	var own []netip.Addr
	if host, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			own = append(own, a)
		}
	}
	return webhook.NewGuard(cfg.WebhookAllowedHosts, own...)
}

func newWebhookSender(cfg Config, store Store, guard *webhook.Guard, metrics *Metrics, log *slog.Logger) *webhook.Sender {
	s := webhook.NewSender(store, guard)
	s.Timeout = cfg.WebhookTimeout
	s.Lease = cfg.WebhookTimeout + 50*time.Second
	s.PerPartner = cfg.WebhookConcurrency
	s.Log = log
	s.Observe = metrics.webhooks(store, s.Now).observe
	return s
}

func newWebhookService(store Store, guard *webhook.Guard, sender *webhook.Sender) *webhook.Service {
	svc := webhook.NewService(store, store, guard)
	svc.Woken = sender.Wake
	return svc
}

// runWebhooks runs the Sender while the server runs. Stopping cancels
// the attempts in flight without recording them: their leases bring them
// back, to this server or another, so nothing is lost.
func runWebhooks(lc fx.Lifecycle, sender *webhook.Sender) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Go(func() { sender.Run(ctx) })
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			return nil
		},
	})
}

// webhookMetrics are the Sender's metrics.
type webhookMetrics struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
}

// webhooks registers the webhook metrics: attempts by outcome, their
// latency, and the queue (read from store at each scrape).
func (m *Metrics) webhooks(store webhook.Store, now func() time.Time) *webhookMetrics {
	w := &webhookMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "predictkit_webhook_attempts_total",
			Help: "Partner webhook delivery attempts by outcome: delivered (answered 2xx), pending (failed, retried later), failed (failed, no retry left).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "predictkit_webhook_attempt_duration_seconds",
			Help:    "How long partner webhook delivery attempts took, from the request to the answer's status or the failure.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
	}
	for _, o := range []string{webhook.Delivered, webhook.Pending, webhook.Failed} {
		w.attempts.WithLabelValues(o)
	}
	m.reg.MustRegister(w.attempts, w.latency, webhookQueueCollector{store: store, now: now})
	return w
}

func (w *webhookMetrics) observe(outcome string, took time.Duration) {
	w.attempts.WithLabelValues(outcome).Inc()
	w.latency.Observe(took.Seconds())
}

var (
	descWebhookPending = prometheus.NewDesc("predictkit_webhook_queue_pending",
		"Partner webhook deliveries not yet delivered nor failed.", nil, nil)
	descWebhookDue = prometheus.NewDesc("predictkit_webhook_queue_due",
		"Partner webhook deliveries whose next attempt has come.", nil, nil)
	descWebhookOldest = prometheus.NewDesc("predictkit_webhook_queue_oldest_due_seconds",
		"How long the oldest due partner webhook delivery has waited for its attempt (0 when none is due).", nil, nil)
)

// webhookQueueCollector reads the queue at each scrape, for at most a
// second: a store that does not answer leaves the metrics out.
type webhookQueueCollector struct {
	store webhook.Store
	now   func() time.Time
}

func (c webhookQueueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descWebhookPending
	ch <- descWebhookDue
	ch <- descWebhookOldest
}

func (c webhookQueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	now := c.now()
	q, err := c.store.WebhookQueue(ctx, now)
	if err != nil {
		return
	}
	oldest := 0.0
	if !q.OldestDue.IsZero() {
		oldest = max(now.Sub(q.OldestDue).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(descWebhookPending, prometheus.GaugeValue, float64(q.Pending))
	ch <- prometheus.MustNewConstMetric(descWebhookDue, prometheus.GaugeValue, float64(q.Due))
	ch <- prometheus.MustNewConstMetric(descWebhookOldest, prometheus.GaugeValue, oldest)
}

// webhookHandlers serves the operator's webhook routes and the key
// rotation.
type webhookHandlers struct {
	webhooks *webhook.Service
	partners *partner.Service
}

// webhookRoutes lists the operator's webhook routes, behind the admin
// token.
func webhookRoutes(admin *AdminAuth, webhooks *webhook.Service, partners *partner.Service) RoutesOut {
	h := &webhookHandlers{webhooks: webhooks, partners: partners}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPut, Path: "/api/v1/admin/partners/:id/webhook", Errors: errsAdminWebhook, Handler: admin.guard(h.handleSetWebhook)},
		{Method: http.MethodGet, Path: "/api/v1/admin/partners/:id/webhook", Errors: errsAdminWebhook, Handler: admin.guard(h.handleWebhook)},
		{Method: http.MethodDelete, Path: "/api/v1/admin/partners/:id/webhook", Errors: errsAdminWebhook, Handler: admin.guard(h.handleDeleteWebhook)},
		{Method: http.MethodGet, Path: "/api/v1/admin/partners/:id/deliveries", Errors: errsAdminWebhook, Handler: admin.guard(h.handleDeliveries)},
		{Method: http.MethodPost, Path: "/api/v1/admin/partners/:id/deliveries/:delivery_id/redeliver", Errors: errsAdminRedeliver, Handler: admin.guard(h.handleRedeliver)},
		{Method: http.MethodPost, Path: "/api/v1/admin/partners/:id/rotate-key", Errors: errsAdminPartner, Handler: admin.guard(h.handleRotateKey)},
	}}
}

// PUT, GET and DELETE /admin/partners/{id}/webhook and GET
// /admin/partners/{id}/deliveries. Checks run as adminRules (404 when
// disabled, 401, 400 invalid_id, 400 invalid_request: the body, a URL
// that is not http(s), malformed, or names a destination not allowed;
// the query), then 404 partner_not_found, 404 webhook_not_found.
var errsAdminWebhook = table("internal_error", slices.Concat(adminRules, []rule{
	on(partner.ErrNotFound, http.StatusNotFound, "partner_not_found"),
	on(webhook.ErrNoWebhook, http.StatusNotFound, "webhook_not_found"),
})...)

// POST /admin/partners/{id}/deliveries/{delivery_id}/redeliver: as
// errsAdminWebhook, and 400 unknown_delivery for a delivery id the
// partner has no delivery with (an id the client got wrong, like any
// other bad parameter, rather than a missing resource).
var errsAdminRedeliver = table("internal_error", slices.Concat(adminRules, []rule{
	on(partner.ErrNotFound, http.StatusNotFound, "partner_not_found"),
	on(webhook.ErrDeliveryNotFound, http.StatusBadRequest, "unknown_delivery"),
})...)

type webhookBody struct {
	URL string `json:"url" validate:"required"`
}

// handleSetWebhook sets a partner's webhook and answers its URL and its
// new signing secret, the only time the secret is shown (no-store).
func (h *webhookHandlers) handleSetWebhook(c *fiber.Ctx) error {
	id, b, err := idAndBody[webhookBody](c, "id")
	if err != nil {
		return err
	}
	hook, err := h.webhooks.SetWebhook(c.UserContext(), id, b.URL)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"url": hook.URL, "secret": hook.Secret})
}

// handleWebhook answers a partner's webhook, never its secret.
func (h *webhookHandlers) handleWebhook(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	hook, err := h.webhooks.Webhook(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"url": hook.URL, "created_at": hook.CreatedAt})
}

// handleDeleteWebhook removes a partner's webhook (204).
func (h *webhookHandlers) handleDeleteWebhook(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.webhooks.DeleteWebhook(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// deliveryJSON is a delivery in the log: what was sent (payload, the
// body byte for byte but for the signature's time) and how sending went.
type deliveryJSON struct {
	ID             int64           `json:"id"`
	Type           string          `json:"type"`
	Status         string          `json:"status"`
	Attempts       int             `json:"attempts"`
	CreatedAt      time.Time       `json:"created_at"`
	NextAttemptAt  *time.Time      `json:"next_attempt_at"`
	ExpiresAt      time.Time       `json:"expires_at"`
	LastAttemptAt  *time.Time      `json:"last_attempt_at"`
	LastStatusCode *int            `json:"last_status_code"`
	LastError      *string         `json:"last_error"`
	LastLatencyMs  *int64          `json:"last_latency_ms"`
	DeliveredAt    *time.Time      `json:"delivered_at"`
	Payload        json.RawMessage `json:"payload"`
}

func deliveryView(d *webhook.Delivery) deliveryJSON {
	v := deliveryJSON{ID: d.ID, Type: d.Type, Status: d.Status, Attempts: d.Attempts, CreatedAt: d.CreatedAt,
		ExpiresAt: d.ExpiresAt, LastAttemptAt: d.LastAttemptAt, DeliveredAt: d.DeliveredAt, Payload: webhook.Body(d)}
	if d.Status == webhook.Pending {
		next := d.NextAttemptAt
		v.NextAttemptAt = &next
	}
	if d.LastAttemptAt != nil {
		ms := d.LastLatency.Milliseconds()
		v.LastLatencyMs = &ms
	}
	if d.LastStatusCode != 0 {
		code := d.LastStatusCode
		v.LastStatusCode = &code
	}
	if d.LastError != "" {
		e := d.LastError
		v.LastError = &e
	}
	return v
}

// handleDeliveries answers a page of a partner's delivery log, newest
// first, and the cursor of the next page (null on the last).
func (h *webhookHandlers) handleDeliveries(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", 0)
	if err != nil {
		return err
	}
	if c.Query("limit") != "" && (limit < 1 || limit > webhook.MaxPageLimit) {
		return input.InRange("limit", limit, 1, webhook.MaxPageLimit)
	}
	page, err := h.webhooks.Deliveries(c.UserContext(), id, int(limit), c.Query("cursor"))
	if err != nil {
		return err
	}
	out := struct {
		Deliveries []deliveryJSON `json:"deliveries"`
		NextCursor *string        `json:"next_cursor"`
	}{Deliveries: make([]deliveryJSON, 0, len(page.Deliveries))}
	for _, d := range page.Deliveries {
		out.Deliveries = append(out.Deliveries, deliveryView(d))
	}
	if page.Next != 0 {
		n := strconv.FormatInt(page.Next, 10)
		out.NextCursor = &n
	}
	return c.JSON(out)
}

// handleRedeliver makes a delivery due now (202): the Sender sends it
// again, whatever its status.
func (h *webhookHandlers) handleRedeliver(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	did, err := pathID(c, "delivery_id")
	if err != nil {
		return err
	}
	if err := h.webhooks.Redeliver(c.UserContext(), id, did); err != nil {
		return err
	}
	return c.Status(http.StatusAccepted).JSON(fiber.Map{"status": "queued", "delivery_id": did})
}

type rotateBody struct {
	GraceSeconds *int64 `json:"grace_seconds"`
}

// handleRotateKey gives a partner a new key (shown this once, no-store);
// the old one works for grace_seconds (default a day).
func (h *webhookHandlers) handleRotateKey(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var b rotateBody
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := decodeBody(c, &b); err != nil {
			return err
		}
	}
	grace := partner.DefaultKeyGrace
	if b.GraceSeconds != nil {
		most := int64(partner.MaxKeyGrace / time.Second)
		if *b.GraceSeconds < 0 || *b.GraceSeconds > most {
			return input.InRange("grace_seconds", *b.GraceSeconds, 0, most)
		}
		grace = time.Duration(*b.GraceSeconds) * time.Second
	}
	key, err := h.partners.RotateKey(c.UserContext(), id, grace)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"key": key})
}
