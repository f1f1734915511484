package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"
)

// Route is one endpoint a module contributes. Modules provide []Route
// values into the "routes" value group (see RoutesOut); the server
// registers all of them.
type Route struct {
	Method string
	// Path is the Fiber pattern, e.g. "/api/v1/pools/:id".
	Path    string
	Handler fiber.Handler
	// Errors maps the handler's errors to HTTP; nil uses only the common
	// rules.
	Errors *errorTable
}

// RoutesOut is how a module's constructor returns its routes:
//
//	func newThingRoutes(...) server.RoutesOut { return server.RoutesOut{Routes: []server.Route{...}} }
type RoutesOut struct {
	fx.Out
	Routes []Route `group:"routes,flatten"`
}

// Locals keys.
const (
	localTable     = "predictkit.errors"
	localRoute     = "predictkit.route"
	localRequestID = "predictkit.request_id"
	// The authenticated caller, for the access log: the user's id
	// (int64), the partner's id (int64), or true for the operator.
	localUserID    = "predictkit.user_id"
	localPartnerID = "predictkit.partner_id"
	localOperator  = "predictkit.operator"
)

// AppParams is what NewApp needs.
type AppParams struct {
	fx.In
	Config  Config
	Logger  *slog.Logger
	Routes  []Route `group:"routes"`
	Metrics *Metrics
	// Users and Partners identify callers for the rate limits (a
	// composition without them limits only by client IP).
	Users    *Auth        `optional:"true"`
	Partners *PartnerAuth `optional:"true"`
}

// NewApp builds the Fiber application with every route, without
// listening: tests drive it with app.Test.
func NewApp(p AppParams) *fiber.App {
	cfg := p.Config.withDefaults()
	headers := headerPolicy{hsts: cfg.CookieSecure}
	trusted, _ := parseProxies(cfg.TrustedProxies) // Validate reports errors
	limits := newRateLimits(cfg, p.Users, p.Partners, trusted.clientIP)
	app := fiber.New(fiber.Config{
		AppName:                 "predictkit",
		BodyLimit:               BodyLimit,
		Immutable:               true,
		CaseSensitive:           true,
		ReadTimeout:             cfg.ReadTimeout,
		WriteTimeout:            cfg.WriteTimeout,
		IdleTimeout:             cfg.IdleTimeout,
		DisableStartupMessage:   true,
		ErrorHandler:            headers.errorHandler(errorHandler(p.Logger)),
		JSONEncoder:             json.Marshal,
		JSONDecoder:             json.Unmarshal,
		EnableTrustedProxyCheck: len(cfg.TrustedProxies) > 0,
		TrustedProxies:          cfg.TrustedProxies,
		ProxyHeader:             proxyHeader(cfg.TrustedProxies),
		ReadBufferSize:          16 << 10,
	})
	app.Use(recoverer(p.Logger))
	app.Use(requestIDs)
	app.Use(headers.middleware)
	app.Use(accessLog(p.Logger, p.Metrics))
	if h := newCORS(cfg.CORSOrigins); h != nil {
		app.Use(h)
	}
	app.Use(refuseContentEncoding)
	app.Use(deadline(cfg.WriteTimeout))

	routes := slices.Clone(p.Routes)
	// Literal segments before parameters, so that /users/me/... wins over
	// /users/:id/... whatever order the modules came in.
	slices.SortStableFunc(routes, func(a, b Route) int { return comparePaths(a.Path, b.Path) })
	for _, r := range routes {
		r := r
		h := limits.guard(r.Method+" "+r.Path, r.Handler)
		app.Add(r.Method, r.Path, func(c *fiber.Ctx) error {
			c.Locals(localTable, r.Errors)
			c.Locals(localRoute, r.Path)
			return h(c)
		})
	}
	return app
}

func proxyHeader(trusted []string) string {
	if len(trusted) == 0 {
		return ""
	}
	return fiber.HeaderXForwardedFor
}

// comparePaths orders literal segments before parameters, segment by
// segment; otherwise paths compare as strings.
func comparePaths(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		ap, bp := strings.HasPrefix(as[i], ":"), strings.HasPrefix(bs[i], ":")
		if ap != bp {
			if ap {
				return 1
			}
			return -1
		}
	}
	return strings.Compare(a, b)
}

// recoverer turns a panic anywhere below it into a 500 (the panic value is
// logged with the stack, never shown).
func recoverer(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if v := recover(); v != nil {
				log.LogAttrs(context.Background(), slog.LevelError, "panic",
					slog.String("request_id", requestID(c)),
					slog.String("method", c.Method()),
					slog.String("route", routeTemplate(c)),
					slog.String("panic", fmt.Sprint(v)),
					slog.String("stack", string(debug.Stack())),
				)
				err = errPanic
			}
		}()
		return c.Next()
	}
}

var errPanic = fmt.Errorf("server: handler panicked")

// requestIDs takes the client's X-Request-ID when it is a short token of
// safe characters, or makes one, and echoes it in the response.
func requestIDs(c *fiber.Ctx) error {
	setRequestID(c)
	return c.Next()
}

func setRequestID(c *fiber.Ctx) {
	id := c.Get(fiber.HeaderXRequestID)
	if !validRequestID(id) {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			return false
		}
	}
	return true
}

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

func routeTemplate(c *fiber.Ctx) string {
	if r, ok := c.Locals(localRoute).(string); ok {
		return r
	}
	return "unmatched"
}

// accessLog writes one line per request (method, route template, status,
// duration, request id, and the caller: user_id, partner_id or
// operator=true once authenticated; never headers or bodies, so never
// tokens, keys or passwords) and counts it. Successful probes and scrapes
// (/healthz, /readyz, /metrics) log at DEBUG, server errors at WARN,
// everything else at INFO. Errors are answered here through the app's
// ErrorHandler so that the line has the final status.
func accessLog(log *slog.Logger, m *Metrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		m.inFlight(1)
		defer m.inFlight(-1)
		if err := c.Next(); err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		d := time.Since(start)
		status := c.Response().StatusCode()
		route := routeTemplate(c)
		m.observeRequest(c, route, status, d)
		lvl := slog.LevelInfo
		switch {
		case status >= 500:
			lvl = slog.LevelWarn
		case status < 400 && (route == "/healthz" || route == "/readyz" || route == "/metrics"):
			lvl = slog.LevelDebug
		}
		if !log.Enabled(c.UserContext(), lvl) {
			return nil
		}
		attrs := make([]slog.Attr, 0, 8)
		attrs = append(attrs,
			slog.String("method", c.Method()),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Duration("duration", d),
			slog.String("request_id", requestID(c)),
		)
		if id, ok := c.Locals(localUserID).(int64); ok {
			attrs = append(attrs, slog.Int64("user_id", id))
		}
		if id, ok := c.Locals(localPartnerID).(int64); ok {
			attrs = append(attrs, slog.Int64("partner_id", id))
		}
		if op, _ := c.Locals(localOperator).(bool); op {
			attrs = append(attrs, slog.Bool("operator", true))
		}
		log.LogAttrs(c.UserContext(), lvl, "request", attrs...)
		return nil
	}
}

// refuseContentEncoding: Fiber v2 would decompress a body with no size
// limit, so any Content-Encoding is refused (415).
func refuseContentEncoding(c *fiber.Ctx) error {
	if len(c.Request().Header.Peek(fiber.HeaderContentEncoding)) > 0 {
		return errContentEncoding
	}
	return c.Next()
}

// deadline bounds the work of one request: the services get a context
// that ends when the answer could no longer be written anyway.
func deadline(d time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), d)
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	}
}

// lifecycleParams is what the listener hooks need.
type lifecycleParams struct {
	fx.In
	LC     fx.Lifecycle
	App    *fiber.App
	Config Config
	Logger *slog.Logger
}

// Listening tells where the server listens once started (useful when
// Addr ends in :0).
type Listening struct {
	mu   sync.Mutex
	addr string
}

// Addr is the bound address, or "" before start.
func (l *Listening) Addr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addr
}

func newListening() *Listening { return &Listening{} }

// listen binds the address synchronously at start (a bind error fails
// start-up), serves in the background, and shuts down gracefully at stop.
func listen(p lifecycleParams, where *Listening) {
	cfg := p.Config.withDefaults()
	p.LC.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			var lc net.ListenConfig
			ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
			}
			where.mu.Lock()
			where.addr = ln.Addr().String()
			where.mu.Unlock()
			p.Logger.Info("listening", slog.String("addr", ln.Addr().String()))
			go func() {
				if err := p.App.Listener(ln); err != nil {
					p.Logger.Error("server stopped", slog.String("error", err.Error()))
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, cfg.ShutdownTimeout)
			defer cancel()
			if err := p.App.ShutdownWithContext(ctx); err != nil {
				return fmt.Errorf("shut down HTTP server: %w", err)
			}
			p.Logger.Info("stopped")
			return nil
		},
	})
}
