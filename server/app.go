package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
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
	// The personal API key the caller used: its id (int64), for the
	// access log.
	localAPIKeyID = "predictkit.api_key_id"
	localOperator = "predictkit.operator"
	// The MCP tool a POST /mcp called (a name of mcpToolScopes), for
	// the access log.
	localMCPTool = "predictkit.mcp_tool"
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
	// Logins counts failed passwords per account (AccountModule's).
	Logins *loginFailures `optional:"true"`
	// Redis shares the rate limits' budgets among the instances
	// (RateLimitModule's; nil: each counts its own).
	Redis *RedisLimits `optional:"true"`
	// Fallback, when set, runs after every route for what none matched
	// (the web app's client routes: see WebModule).
	Fallback Fallback `optional:"true"`
	// Replicas, when the store has read replicas, learns of each user's
	// writes (read-your-writes).
	Replicas *Replicas `optional:"true"`
	// Written are told of every request with an unsafe method once its
	// route's handler returned, before the answer leaves.
	Written []writeHook `group:"write_hooks"`
	// Views keeps the public reads in memory and marks them stale after
	// every write (readviews.go).
	Views *readViews `optional:"true"`
}

// A writeHook is told of a request with an unsafe method (a write) once
// its route's handler returned err, before the answer is sent: what it
// drops from a cache is gone before the writer can read again.
type writeHook func(c *fiber.Ctx, err error)

// NewApp builds the Fiber application with every route, without
// listening: tests drive it with app.Test.
func NewApp(p AppParams) *fiber.App {
	cfg := p.Config.withDefaults()
	headers := headerPolicy{hsts: cfg.CookieSecure}
	trusted, _ := parseProxies(cfg.TrustedProxies) // Validate reports errors
	limits := newRateLimits(cfg, p.Logins, p.Users, p.Partners, trusted.clientIP, p.Redis)
	scopes := keyScopes{users: p.Users}
	// answer writes an error answer; requests logs and counts every
	// answer: those of the middleware chain (its middleware) and those
	// Fiber and fasthttp make outside it (the app's ErrorHandler).
	answer := headers.errorHandler(errorHandler(p.Logger))
	requests := requestLog{log: p.Logger, metrics: p.Metrics}
	app := fiber.New(fiber.Config{
		AppName:                 "predictkit",
		BodyLimit:               BodyLimit,
		Immutable:               true,
		CaseSensitive:           true,
		ReadTimeout:             cfg.ReadTimeout,
		WriteTimeout:            cfg.WriteTimeout,
		IdleTimeout:             cfg.IdleTimeout,
		DisableStartupMessage:   true,
		ErrorHandler:            requests.errorHandler(answer),
		JSONEncoder:             json.Marshal,
		JSONDecoder:             json.Unmarshal,
		EnableTrustedProxyCheck: len(cfg.TrustedProxies) > 0,
		TrustedProxies:          cfg.TrustedProxies,
		ProxyHeader:             proxyHeader(cfg.TrustedProxies),
		ReadBufferSize:          16 << 10,
	})
	answerUnknownMethods(app)
	app.Server().ConnState = markReading
	app.Use(recoverer(p.Logger))
	app.Use(requestIDs)
	app.Use(headers.middleware)
	app.Use(requests.middleware(answer))
	if h := newCORS(cfg.CORSOrigins); h != nil {
		app.Use(h)
	}
	app.Use(cookieOrigins{policy: newOriginPolicy(cfg), listed: exactOrigins(cfg.CORSOrigins)}.middleware)
	app.Use(refuseContentEncoding)
	app.Use(refuseOtherBodies)
	app.Use(deadline(cfg.WriteTimeout))
	if p.Replicas != nil {
		app.Use(p.Replicas.afterWrites)
	}

	routes := slices.Clone(p.Routes)
	// Literal segments before parameters, so that /users/me/... wins over
	// /users/:id/... whatever order the modules came in.
	slices.SortStableFunc(routes, func(a, b Route) int { return comparePaths(a.Path, b.Path) })
	for _, r := range routes {
		r := r
		h := r.Handler
		if p.Views != nil {
			h = p.Views.wrap(r.Method, r.Path, h)
		}
		h = scopes.guard(r.Method, r.Path, limits.guard(r.Method+" "+r.Path, h))
		written := p.Written
		if !unsafeMethod(r.Method) {
			written = nil
		}
		app.Add(r.Method, r.Path, func(c *fiber.Ctx) error {
			c.Locals(localTable, r.Errors)
			c.Locals(localRoute, r.Path)
			err := h(c)
			for _, w := range written {
				w(c, err)
			}
			return err
		})
	}
	if p.Fallback != nil {
		app.Use(fiber.Handler(p.Fallback))
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

// requestLog writes one access-log line per answer (method, route
// template, status, duration, request id, and the caller: user_id,
// partner_id or operator=true once authenticated; never headers or
// bodies, so never tokens, keys or passwords) and counts it. Successful
// probes and scrapes (/healthz, /readyz, /metrics) log at DEBUG, server
// errors at WARN, everything else at INFO.
//
// Most answers pass its middleware. The others Fiber hands to the app's
// ErrorHandler, which is requestLog's errorHandler: what fasthttp refuses
// while reading a request (400 unparsable, 408 read timeout, 413 body too
// large, 431 headers too large), a method Fiber does not know
// (answerUnknownMethods), and the recoverer's 500, which comes back past
// the middleware. The middleware answers errors itself, never through the
// app's ErrorHandler, so no answer is logged twice.
type requestLog struct {
	log     *slog.Logger
	metrics *Metrics
}

// middleware logs the answers of the middleware chain; errors are
// answered here (with answer) so that the line has the final status.
func (rl requestLog) middleware(answer fiber.ErrorHandler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		rl.metrics.inFlight(1)
		defer rl.metrics.inFlight(-1)
		if err := c.Next(); err != nil {
			if herr := answer(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		rl.record(c, c.Method(), time.Since(start))
		return nil
	}
}

// errorHandler is the app's ErrorHandler: it answers err, then logs and
// counts the answer, timed from when the server began reading the
// request.
func (rl requestLog) errorHandler(answer fiber.ErrorHandler) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		if errors.Is(err, fiber.ErrBadGateway) {
			// Fiber's name for a read that failed but did not time out:
			// the client reset its connection. It left; nothing failed
			// here, so it is no 5xx.
			err = fiber.ErrBadRequest
		}
		if herr := answer(c, err); herr != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
		rl.record(c, readMethod(c), readingFor(c))
		return nil
	}
}

// record logs and counts one answer, unless the server made the request
// itself (warmingUp).
func (rl requestLog) record(c *fiber.Ctx, method string, d time.Duration) {
	if c.Context().UserValue(warmingUp{}) != nil {
		return
	}
	status := c.Response().StatusCode()
	route := routeTemplate(c)
	rl.metrics.observeRequest(c, method, route, status, d)
	lvl := slog.LevelInfo
	switch {
	case status >= 500:
		lvl = slog.LevelWarn
	case status < 400 && (route == "/healthz" || route == "/readyz" || route == "/metrics"):
		lvl = slog.LevelDebug
	}
	if !rl.log.Enabled(c.UserContext(), lvl) {
		return
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("method", method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.String("request_id", requestID(c)),
	)
	if id, ok := c.Locals(localUserID).(int64); ok {
		attrs = append(attrs, slog.Int64("user_id", id))
	}
	if id, ok := c.Locals(localAPIKeyID).(int64); ok {
		attrs = append(attrs, slog.Int64("api_key_id", id))
	}
	if id, ok := c.Locals(localPartnerID).(int64); ok {
		attrs = append(attrs, slog.Int64("partner_id", id))
	}
	if op, _ := c.Locals(localOperator).(bool); op {
		attrs = append(attrs, slog.Bool("operator", true))
	}
	if tool, ok := c.Locals(localMCPTool).(string); ok {
		attrs = append(attrs, slog.String("mcp_tool", tool))
	}
	rl.log.LogAttrs(c.UserContext(), lvl, "request", attrs...)
}

// unknownMethod is what an answer made outside the middleware logs and
// counts as its method when the request line was never read whole, or
// named a method Fiber does not know: the client's bytes never become a
// label, so the series stay bounded.
const unknownMethod = "unknown"

// readMethod is the method of a request answered outside the middleware.
// When fasthttp fails to read a request it clears it, headers included
// (all but a body declared too large: 413 keeps them), and the method
// would read as GET: no raw headers means the request is gone.
func readMethod(c *fiber.Ctx) string {
	if len(c.Request().Header.RawHeaders()) == 0 {
		return unknownMethod
	}
	m := c.Request().Header.Method()
	for _, known := range fiber.DefaultMethods {
		if string(m) == known {
			return known
		}
	}
	return unknownMethod
}

// errUnknownMethod: the request's method is not one Fiber routes.
var errUnknownMethod error = &requestError{detail: "method: unknown"}

// answerUnknownMethods: Fiber answers a method it does not route (not one
// of fiber.DefaultMethods) with a plain-text 400 of its own, which no
// middleware sees. The app's ErrorHandler answers it instead, as JSON
// with the security headers and a request id, and logs it.
func answerUnknownMethods(app *fiber.App) {
	srv := app.Server()
	next := srv.Handler
	srv.Handler = func(rctx *fasthttp.RequestCtx) {
		m := rctx.Method()
		for _, known := range fiber.DefaultMethods {
			if string(m) == known {
				next(rctx)
				return
			}
		}
		c := app.AcquireCtx(rctx)
		defer app.ReleaseCtx(c)
		if err := app.ErrorHandler(c, errUnknownMethod); err != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
	}
}

// readingConn is a connection the server accepted (listen wraps them):
// it holds when the server began reading the current request, so that an
// answer made outside the middleware can say how long it took.
type readingConn struct {
	net.Conn
	since atomic.Int64 // monotonic nanoseconds after clockZero
}

var clockZero = time.Now()

// readingListener hands the server readingConns.
type readingListener struct{ net.Listener }

func (l readingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &readingConn{Conn: c}, nil
}

// markReading is fasthttp's ConnState hook: a connection turns active
// when the server begins reading a request (at once on a new
// connection, at the first byte of the next request on a kept-alive one).
func markReading(c net.Conn, state fasthttp.ConnState) {
	if state != fasthttp.StateActive {
		return
	}
	if rc, ok := c.(*readingConn); ok {
		rc.since.Store(int64(time.Since(clockZero)))
	}
}

// readingFor is how long ago the server began reading c's request: on a
// connection listen accepted, from markReading; otherwise (app.Test) from
// when the connection began to be served.
func readingFor(c *fiber.Ctx) time.Duration {
	if rc, ok := c.Context().Conn().(*readingConn); ok {
		if since := rc.since.Load(); since != 0 {
			return time.Since(clockZero) - time.Duration(since)
		}
	}
	return time.Since(c.Context().ConnTime())
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
	// Drains end, before the listener waits for its connections to
	// finish, what would keep a connection busy for ever (live streams):
	// see Drain.
	Drains []Drain `group:"drains"`
}

// Drain ends the long-lived answers of a module at shutdown; a module
// adds one to the group "drains" (see DrainOut). The listener's stop calls
// every drain, then shuts down, within the shutdown timeout.
type Drain func(ctx context.Context) error

// DrainOut is how a module's constructor contributes a Drain.
type DrainOut struct {
	fx.Out
	Drain Drain `group:"drains"`
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
			b := ReadBuild()
			p.Logger.Info("listening", slog.String("addr", ln.Addr().String()),
				slog.String("version", b.Version), slog.String("revision", b.Revision),
				slog.Bool("modified", b.Modified), slog.String("go", b.GoVersion))
			go func() {
				if err := p.App.Listener(readingListener{lingerOnClose(p.App.Server(), ln)}); err != nil {
					p.Logger.Error("server stopped", slog.String("error", err.Error()))
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, cfg.ShutdownTimeout)
			defer cancel()
			for _, drain := range p.Drains {
				if err := drain(ctx); err != nil {
					p.Logger.Warn("shutdown: a drain did not finish", slog.String("error", err.Error()))
				}
			}
			if err := p.App.ShutdownWithContext(ctx); err != nil {
				return fmt.Errorf("shut down HTTP server: %w", err)
			}
			p.Logger.Info("stopped")
			return nil
		},
	})
}
