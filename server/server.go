// Package server composes the predictkit domains into one HTTP API under
// /api/v1: a Fiber application wired with fx, one fx module per domain.
//
// Each domain module provides its service and contributes its routes to
// the "routes" value group (see Route and RoutesOut): a short list of
// method, path, error table and handler, then each handler beside the
// table that turns its errors into HTTP answers (the machinery is in
// errors.go). A new domain adds a module here and its Store to the Store
// interface.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
)

// New returns the server as an fx application: Start binds the listen
// address (and migrates or seeds the store first), Stop shuts down
// gracefully and closes the store. opts are added to the application (for
// example fx.Populate, or fx.Decorate to replace a service).
func New(cfg Config, opts ...fx.Option) *fx.App {
	return fx.New(Options(cfg, opts...))
}

// Options is every option New uses, for callers that compose their own
// fx application.
func Options(cfg Config, opts ...fx.Option) fx.Option {
	if err := cfg.Validate(); err != nil {
		return fx.Error(err)
	}
	cfg = cfg.withDefaults()
	log := newLogger(cfg)
	fxLog := fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger })
	if lvl, _ := parseLevel(cfg.LogLevel); lvl <= slog.LevelDebug {
		fxLog = fx.WithLogger(func() fxevent.Logger { return &fxevent.SlogLogger{Logger: log} })
	}
	return fx.Options(
		fxLog,
		fx.StartTimeout(cfg.StartTimeout),
		fx.StopTimeout(cfg.ShutdownTimeout+5*time.Second),
		fx.Supply(cfg, log),
		StorageModule,
		RateLimitModule,
		AccountModule,
		PasswordModule,
		MarketModule,
		AdminModule,
		PartnerModule,
		WebhookModule,
		SocialModule,
		P2PModule,
		WithdrawalModule,
		ChatModule,
		StreamModule,
		MetricsModule,
		ChangesModule,
		LeaderboardModule,
		TelegramModule,
		StatsModule,
		GrowthModule,
		DepositsModule,
		PeopleModule,
		MCPModule,
		WebModule,
		ShareModule,
		ReadViewsModule,
		HTTPModule,
		// Start order: the store (migrations) comes up as a dependency,
		// then the demo data, then the listener.
		fx.Invoke(seedDemo),
		// After the demo data (a module's invokes run before these), so
		// that the growth consumer first runs on the demo's history and
		// counts it silently, as any history before it: the demo
		// traders' levels are set without a level_up each.
		fx.Invoke(runGrowth),
		// After the demo data too, so that the warmed views show it.
		fx.Invoke(runReadViews),
		fx.Invoke(listen),
		fx.Options(opts...),
	)
}

// Build runs the constructors without starting anything and returns the
// Fiber application, for tests that drive it with app.Test: nothing
// listens, no start hook runs (no migrations, no demo data).
func Build(cfg Config, opts ...fx.Option) (*fiber.App, error) {
	var app *fiber.App
	fxApp := fx.New(Options(cfg, append(opts, fx.Populate(&app))...))
	if err := fxApp.Err(); err != nil {
		return nil, err
	}
	return app, nil
}

// HTTPModule builds the Fiber application from the routes group and adds
// the service's own routes: health, readiness, metrics, the API document
// and its reference page (/docs).
var HTTPModule = fx.Module("http",
	fx.Provide(NewApp, newListening, metaRoutes, docsRoutes),
)

// metaHandlers serves the service's own routes.
type metaHandlers struct {
	health   Health
	deposits *DepositWatchers
	replicas *Replicas
	redis    *RedisLimits
	log      *slog.Logger
}

// metaRoutes lists the service's own routes: health, readiness, metrics
// and the API document (the reference page is docsRoutes').
func metaRoutes(health Health, metrics *Metrics, deposits *DepositWatchers, replicas *Replicas, redis *RedisLimits, log *slog.Logger) RoutesOut {
	h := &metaHandlers{health: health, deposits: deposits, replicas: replicas, redis: redis, log: log}
	if replicas != nil && metrics != nil {
		metrics.reg.MustRegister(replicaCollector{replicas})
	}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/healthz", Errors: errsMeta, Handler: h.handleHealthz},
		{Method: http.MethodGet, Path: "/readyz", Errors: errsMeta, Handler: h.handleReadyz},
		{Method: http.MethodGet, Path: "/metrics", Errors: errsMeta, Handler: metrics.handler()},
		{Method: http.MethodGet, Path: "/api/v1/openapi.json", Errors: errsMeta, Handler: handleOpenAPI},
	}}
}

// The service's own routes (these and the /docs routes of docs.go) map
// nothing of their own: only the common rules apply, so a store that
// does not answer /readyz's ping is 503 database_unavailable.
var errsMeta = table("internal_error")

// handleHealthz answers 200 while the process serves.
func (h *metaHandlers) handleHealthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// handleReadyz pings the store, for at most 2 seconds, and reports the
// deposit watchers, when chains are watched, the read replicas, when
// there are, and the rate limits' Redis, when one is configured: a
// chain's node or a replica that is down is reported ("ok": false, with
// its error) but leaves the server ready, since trading does not depend
// on it (the primary serves the replica's reads); so is a Redis that does
// not answer ("degraded": each instance counts its own budgets).
func (h *metaHandlers) handleReadyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if err := h.health(ctx); err != nil {
		h.log.Warn("not ready: the store does not answer", slog.String("request_id", requestID(c)), slog.String("error", err.Error()))
		return errUnavailable
	}
	answer := fiber.Map{"status": "ok"}
	if h.deposits != nil && len(h.deposits.watchers) > 0 {
		answer["deposits"] = h.deposits.Statuses()
	}
	if h.replicas != nil {
		answer["replicas"] = h.replicas.Statuses()
	}
	if h.redis != nil {
		answer["redis"] = h.redis.Status(ctx)
	}
	return c.JSON(answer)
}

// handleOpenAPI answers the OpenAPI document as JSON.
func handleOpenAPI(c *fiber.Ctx) error {
	doc, err := OpenAPIJSON()
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(doc)
}
