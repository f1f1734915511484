package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/stream"
)

// StreamModule provides the live stream: one stream.Hub that follows the
// store's change log for the whole process, GET /api/v1/stream
// (text/event-stream) and POST /api/v1/stream/tickets. (ChangesModule
// keeps the log: it prunes it and, on PostgreSQL, runs the LISTEN that
// wakes every server's hub when any server commits.)
var StreamModule = fx.Module("stream",
	fx.Provide(newStreamFeed, newStreamHub, streamRoutes, streamPasswordHook),
	fx.Invoke(keepHijackedConns),
)

// streamPasswordHook ends the streams of a user's me topic on this
// server when the password is changed or reset: they were opened with a
// token or a ticket that no longer works.
func streamPasswordHook(in struct {
	fx.In
	Hub *stream.Hub `optional:"true"`
}) passwordHookOut {
	return passwordHookOut{Hook: func(_ context.Context, u *account.User, _ bool) {
		if in.Hub != nil {
			in.Hub.EndUser(u.ID)
		}
	}}
}

// keepHijackedConns: a stream takes its connection over from fasthttp
// (see handleStream), and closes it itself when it ends.
func keepHijackedConns(app *fiber.App) { app.Server().KeepHijackedConns = true }

// StreamFeed is the feed the hub follows: the store's ChangeFeed. A
// deployment that carries the log over another transport (a NATS
// JetStream relay) replaces it with fx.Decorate; the hub reads the
// backlogs of resuming clients from the store either way.
type StreamFeed struct{ changelog.Feed }

// streamStore is what the stream reads of a store besides its change log
// (ChangeLog): resolutions' settlement notifications, several users'
// balances, and tickets. storage/memory and storage/postgres have both;
// without them (a custom store) the stream's routes answer 404.
type streamStore interface {
	SettlementNotifications(ctx context.Context, eventID int64, at time.Time, users []int64) ([]*social.Notification, error)
	BalancesOf(ctx context.Context, users []int64) (map[int64]account.Balances, error)
	CreateStreamTicket(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error
	UseStreamTicket(ctx context.Context, hash []byte, now time.Time) (int64, bool, error)
}

func newStreamFeed(lc fx.Lifecycle, cfg Config, store Store, log *slog.Logger) (StreamFeed, error) {
	l, ok := store.(ChangeLog)
	if !ok {
		return StreamFeed{}, nil
	}
	if cfg.StreamNATSURL == "" {
		return StreamFeed{l.ChangeFeed()}, nil
	}
	return natsFeed(lc, cfg, l, log)
}

type streamOut struct {
	fx.Out
	Hub   *stream.Hub
	Drain Drain `group:"drains"`
}

// streamPing is how often a silent stream is pinged: the setting, or
// more often when the write timeout is short, since every write moves the
// connection's write deadline (see chunkWriter).
// streamCoalesce is the least time between two writes to one stream: a
// busy market's messages go out a few at a time rather than one write and
// flush each, which is what lets one server feed a thousand subscribers of
// a market trading a hundred times a second; a message after a quiet
// spell goes out at once.
const streamCoalesce = 20 * time.Millisecond

// streamIdle is how long the hub goes on reading the change log after the
// last stream closed. A server that streams to no one then stops reading
// back every commit's entries (a hot market trades about a twentieth
// faster); a browser that reconnects within it finds the hub running.
const streamIdle = 30 * time.Second

func streamPing(cfg Config) time.Duration {
	return min(cfg.StreamPing, cfg.WriteTimeout/2)
}

// newStreamHub builds the hub; it starts with the server (after the
// store's migrations) and closes at shutdown, before the listener waits
// for connections (its Drain), so that no stream holds the shutdown up.
func newStreamHub(lc fx.Lifecycle, cfg Config, store Store, feed StreamFeed, metrics *Metrics, log *slog.Logger) streamOut {
	cfg = cfg.withDefaults()
	l, ok := store.(ChangeLog)
	st, ok2 := store.(streamStore)
	if !ok || !ok2 || feed.Feed == nil {
		log.Info("stream: off (the store keeps no change log)")
		return streamOut{Drain: func(context.Context) error { return nil }}
	}
	hub := stream.New(stream.Options{
		Feed:        feed.Feed,
		Log:         l,
		Events:      eventStatus{store},
		Settlements: settlementSource{markets: store, store: st},
		Ping:        streamPing(cfg),
		Coalesce:    streamCoalesce,
		Idle:        streamIdle,
		Logger:      log,
	})
	metrics.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "predictkit_stream_connections",
			Help: "Live-stream connections open now.",
		}, func() float64 { return float64(hub.Len()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "predictkit_stream_slow_disconnects_total",
			Help: "Live-stream connections ended because the client fell too far behind (it resumes from the log).",
		}, func() float64 { return float64(hub.Slow()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "predictkit_stream_dropped_total",
			Help: "Live-stream connections ended because the server could not hand them every event (it resumes from the log).",
		}, func() float64 { return float64(hub.Dropped()) }),
	)
	lc.Append(fx.Hook{
		OnStart: hub.Start,
		OnStop:  hub.Close,
	})
	return streamOut{Hub: hub, Drain: hub.Close}
}

// eventStatus reads events' active flags for the hub's trades topic.
type eventStatus struct{ markets market.Store }

func (s eventStatus) EventActive(ctx context.Context, id int64) (bool, error) {
	e, err := s.markets.Event(ctx, id)
	if errors.Is(err, market.ErrEventNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return e.IsActive, nil
}

// settlementSource tells the hub what a resolution means for its holders:
// the settlement wrote each holder a market_resolved notification at the
// resolution's time, which is what the holder's me topic shows, with the
// holder's balances now.
type settlementSource struct {
	markets market.Store
	store   streamStore
}

// resolvedFields are the fields of a market_resolved entry's data the
// settlement's notifications are found by.
type resolvedFields struct {
	MarketID       int64  `json:"market_id"`
	EventID        int64  `json:"event_id"`
	WinningOutcome string `json:"winning_outcome"`
	ResolvedAt     string `json:"resolved_at"`
}

func (s settlementSource) Settlement(ctx context.Context, e changelog.Entry, users []int64) (map[int64]json.RawMessage, error) {
	var d resolvedFields
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return nil, fmt.Errorf("entry %d: %w", e.Seq, err)
	}
	at, err := time.Parse(time.RFC3339Nano, d.ResolvedAt)
	if err != nil {
		return nil, fmt.Errorf("entry %d: resolved_at: %w", e.Seq, err)
	}
	m, err := s.markets.Market(ctx, d.MarketID)
	if err != nil {
		return nil, err
	}
	ns, err := s.store.SettlementNotifications(ctx, d.EventID, at, users)
	if err != nil {
		return nil, err
	}
	// The notifications of a resolution name the market by name: an
	// exclusive pool's resolution writes one per market, all at once.
	mine := map[int64]*social.Notification{}
	for _, n := range ns {
		if n.Data.MarketName == m.Name && n.Data.Won == d.WinningOutcome && mine[n.UserID] == nil {
			mine[n.UserID] = n
		}
	}
	if len(mine) == 0 {
		return nil, nil
	}
	holders := make([]int64, 0, len(mine))
	for u := range mine {
		holders = append(holders, u)
	}
	bals, err := s.store.BalancesOf(ctx, holders)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]json.RawMessage, len(mine))
	for u, n := range mine {
		data := social.NotificationChange(n).Data
		b := bals[u]
		bj, err := json.Marshal(balancesJSON{Balance: b.Balance, BonusBalance: b.Bonus, TotalBalance: b.Total()})
		if err != nil {
			return nil, err
		}
		withBalances := make([]byte, 0, len(data)+len(bj)+16)
		withBalances = append(withBalances, data[:len(data)-1]...)
		withBalances = append(withBalances, `,"balances":`...)
		withBalances = append(withBalances, bj...)
		out[u] = append(withBalances, '}')
	}
	return out, nil
}

type balancesJSON struct {
	Balance      int64 `json:"balance"`
	BonusBalance int64 `json:"bonus_balance"`
	TotalBalance int64 `json:"total_balance"`
}

// streamTicketTTL is how long a stream ticket may wait to be used.
const streamTicketTTL = time.Minute

// The stream's own errors.
var (
	// errTopicID: a topic's id is not a positive integer.
	errTopicID = errors.New("server: invalid topic id")
	// errMeAnonymous: the me topic without a token or a ticket.
	errMeAnonymous = errors.New("server: the me topic needs authentication")
	// errTicket: a ticket that is unknown, used or expired.
	errTicket = errors.New("server: invalid stream ticket")
	// errTooManyStreams: a connection limit is reached.
	errTooManyStreams = errors.New("server: too many streams")
	// errStreamOff: the stream is not running (a store without a change
	// log, or shutting down).
	errStreamOff = errors.New("server: the stream is not running")
	// errStreamDisabled: the store keeps no change log.
	errStreamDisabled = errors.New("server: no stream on this store")
)

// detailed is err, matching target too, with detail for the client.
func detailed(target error, field, reason string) error {
	return fmt.Errorf("%w: %w", target, &requestError{detail: field + ": " + reason})
}

// GET /stream answers, in this order: 404 not_found (a store without a
// change log); 400 invalid_request (topics missing, unknown or too many)
// or invalid_id (a topic's id); 400 invalid_request (a last event id that
// is not a non-negative integer); for the me topic, 401 unauthorized (no
// token and no ticket, a bad token, or a ticket unknown, used or
// expired); 429 too_many_streams (a connection limit); 400
// invalid_request (a last event id after the log's last); 503
// stream_unavailable (shutting down) or database_unavailable.
var errsStream = table("internal_error",
	on(errStreamDisabled, http.StatusNotFound, "not_found"),
	on(errTopicID, http.StatusBadRequest, "invalid_id"),
	on(errMeAnonymous, http.StatusUnauthorized, "unauthorized").saying("topics: me needs an Authorization: Bearer token or a ?ticket= (POST /api/v1/stream/tickets)"),
	on(errTicket, http.StatusUnauthorized, "unauthorized").saying("ticket: unknown, used or expired; a ticket opens one stream within a minute"),
	unauthorized,
	on(errTooManyStreams, http.StatusTooManyRequests, "too_many_streams"),
	on(errStreamOff, http.StatusServiceUnavailable, "stream_unavailable"),
)

// POST /stream/tickets: 401 unauthorized without a valid Bearer token.
var errsStreamTicket = table("internal_error",
	on(errStreamDisabled, http.StatusNotFound, "not_found"),
	unauthorized,
)

// streamHandlers serves the stream's routes.
type streamHandlers struct {
	hub      *stream.Hub
	store    streamStore
	auth     *Auth
	accounts *account.Service
	limits   *streamLimits
	client   func(*fiber.Ctx) string
	// timeout is the write deadline each write of a stream moves forward.
	timeout time.Duration
	log     *slog.Logger
}

type streamRoutesIn struct {
	fx.In
	Config   Config
	Hub      *stream.Hub `optional:"true"`
	Store    Store
	Auth     *Auth
	Accounts *account.Service
	Log      *slog.Logger
}

func streamRoutes(in streamRoutesIn) RoutesOut {
	cfg := in.Config.withDefaults()
	trusted, _ := parseProxies(cfg.TrustedProxies) // Validate reports errors
	st, _ := in.Store.(streamStore)
	h := &streamHandlers{hub: in.Hub, store: st, auth: in.Auth, accounts: in.Accounts,
		limits:  newStreamLimits(cfg.StreamMaxConnections, cfg.StreamMaxPerAddress, cfg.StreamMaxPerUser),
		client:  func(c *fiber.Ctx) string { return clientGroup(trusted.clientIP(c)) },
		timeout: cfg.WriteTimeout, log: in.Log}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/stream", Errors: errsStream, Handler: h.handleStream},
		{Method: http.MethodPost, Path: "/api/v1/stream/tickets", Errors: errsStreamTicket, Handler: h.handleTicket},
	}}
}

// handleStream opens a stream: every check that can refuse it runs
// before the first byte, so that a refusal is an ordinary error answer;
// then the stream takes the connection over and writes until the client
// leaves or the server stops.
func (h *streamHandlers) handleStream(c *fiber.Ctx) error {
	if h.hub == nil {
		return errStreamDisabled
	}
	topics, err := stream.ParseTopics(c.Query("topics"))
	if err != nil {
		var te *stream.TopicError
		if errors.As(err, &te) && te.BadID {
			return fmt.Errorf("%w: %w", errTopicID, &requestError{detail: te.Error()})
		}
		return &requestError{detail: err.Error()}
	}
	// A reconnecting EventSource sends Last-Event-ID and the URL it first
	// opened, whose last_event_id is older: the header wins.
	field, raw := "Last-Event-ID", c.Get("Last-Event-ID")
	if raw == "" {
		field, raw = "last_event_id", c.Query("last_event_id")
	}
	after, resume, err := stream.ParseLastID(raw)
	if err != nil {
		return badRequest(field, "must be a non-negative integer, the id of the last event received")
	}
	req := stream.Request{Topics: topics, Resume: resume, After: after}
	for _, t := range topics {
		if t.Kind == stream.Me {
			if req.UserID, err = h.caller(c); err != nil {
				return err
			}
		}
	}
	release, err := h.limits.acquire(h.client(c), req.UserID)
	if err != nil {
		c.Set(fiber.HeaderRetryAfter, "5")
		return err
	}
	sub, err := h.hub.Open(c.UserContext(), req)
	if err != nil {
		release()
		var fe *stream.FutureError
		switch {
		case errors.As(err, &fe):
			return badRequest(field, fmt.Sprintf("%d is after the last event, %d", fe.After, fe.Last))
		case errors.Is(err, stream.ErrClosed):
			return errStreamOff
		}
		return err
	}
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	// Proxies that buffer answers (nginx) would hold the messages back.
	c.Set("X-Accel-Buffering", "no")
	// The stream leaves fasthttp's connection loop: the connection is
	// hijacked once the middleware has finished the answer's headers (so
	// the access log, the security headers and the request id are as for
	// any answer), which frees the connection's 16 KiB read buffer, its
	// write buffer and its request context; one goroutine of the stream's
	// own writes the headers and then the messages, straight to the
	// socket, in chunks. An idle stream costs a few kilobytes and that
	// goroutine.
	rctx := c.Context()
	rctx.Response.Header.SetContentLength(-1) // chunked
	rctx.Response.Header.SetConnectionClose() // the stream ends with its connection
	rctx.HijackSetNoResponse(true)
	timeout, log, id := h.timeout, h.log, requestID(c)
	rctx.Hijack(func(hijacked net.Conn) {
		// The headers as fasthttp would write them, copied: rctx is
		// released, and reused, once this returns.
		head := append([]byte(nil), rctx.Response.Header.Header()...)
		conn := rctx.Conn()
		go func() {
			defer release()
			w := newChunkWriter(conn, timeout, head)
			err := sub.Serve(w)
			w.end(err)
			_ = conn.Close()
			log.Debug("stream ended", slog.String("request_id", id), slog.String("reason", err.Error()))
		}()
	})
	return nil
}

// caller is the user of the me topic: a ticket's (used up here), or the
// Bearer token's, or the web app's session cookie's (an EventSource
// sends the page's cookies to its own origin).
func (h *streamHandlers) caller(c *fiber.Ctx) (int64, error) {
	if t := c.Query("ticket"); t != "" {
		id, ok, err := h.store.UseStreamTicket(c.UserContext(), account.HashToken(t), time.Now())
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, errTicket
		}
		if _, err := h.accounts.User(c.UserContext(), id); err != nil {
			if errors.Is(err, account.ErrUserNotFound) {
				return 0, errTicket
			}
			return 0, err
		}
		c.Locals(localUserID, id)
		return id, nil
	}
	if tok, _ := credentialToken(c); tok == "" {
		return 0, errMeAnonymous
	}
	u, err := h.auth.User(c)
	if err != nil {
		return 0, err
	}
	return u.ID, nil
}

type ticketJSON struct {
	Ticket    string `json:"ticket"`
	ExpiresAt string `json:"expires_at"`
}

// POST /stream/tickets: a ticket that opens one stream with the me topic
// within a minute, for a browser, whose EventSource cannot send an
// Authorization header. Only its hash is kept.
func (h *streamHandlers) handleTicket(c *fiber.Ctx) error {
	if h.hub == nil {
		return errStreamDisabled
	}
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret := base64.RawURLEncoding.EncodeToString(b[:])
	exp := time.Now().Add(streamTicketTTL)
	if err := h.store.CreateStreamTicket(c.UserContext(), account.HashToken(secret), u.ID, exp); err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(ticketJSON{Ticket: secret, ExpiresAt: ts(exp)})
}

// chunkWriter writes a stream to its hijacked connection: the answer's
// headers first, then each flush as one chunk of the chunked encoding,
// the messages handed over as they are (they are shared by every stream
// that gets them) and written with one writev.
//
// fasthttp's write timeout no longer applies to the connection; each
// flush sets its own deadline, WriteTimeout ahead, and the pings
// (streamPing) keep a silent stream flushing: a client that stops reading
// fails the flush WriteTimeout later, and the stream ends.
type chunkWriter struct {
	conn    net.Conn
	timeout time.Duration
	head    []byte // the answer's headers, until the first flush
	bufs    net.Buffers
	size    int
	out     net.Buffers // what a flush writes, kept for the next
	sizeBuf [20]byte
	// deadline is the connection's write deadline; a flush moves it only
	// once half of the timeout has passed, which saves a system call per
	// flush on a busy stream and still leaves every write at least half
	// the timeout.
	deadline time.Time
}

func newChunkWriter(conn net.Conn, timeout time.Duration, head []byte) *chunkWriter {
	// A writev needs the TCP connection itself, not the wrapper that
	// times requests.
	if rc, ok := conn.(*readingConn); ok {
		conn = rc.Conn
	}
	return &chunkWriter{conn: conn, timeout: timeout, head: head}
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.bufs = append(w.bufs, p)
		w.size += len(p)
	}
	return len(p), nil
}

var crlf = []byte("\r\n")

func (w *chunkWriter) Flush() error {
	if w.size == 0 && w.head == nil {
		return nil
	}
	out := w.out[:0]
	if w.head != nil {
		out = append(out, w.head)
		w.head = nil
	}
	if w.size > 0 {
		size := append(strconv.AppendInt(w.sizeBuf[:0], int64(w.size), 16), crlf...)
		out = append(out, size)
		out = append(out, w.bufs...)
		out = append(out, crlf)
	}
	clear(w.bufs)
	w.bufs, w.size = w.bufs[:0], 0
	if now := time.Now(); w.deadline.Sub(now) < w.timeout/2 {
		w.deadline = now.Add(w.timeout)
		_ = w.conn.SetWriteDeadline(w.deadline)
	}
	w.out = out
	_, err := out.WriteTo(w.conn) // consumes out, not w.out
	clear(w.out[:cap(w.out)])
	if cap(w.bufs) > 64 {
		w.bufs, w.out = nil, nil // a burst is over: give its memory back
	}
	return err
}

// end finishes the answer with the last chunk, unless the connection
// failed (err is then the write's error, not one of the stream's ends).
func (w *chunkWriter) end(err error) {
	switch {
	case errors.Is(err, stream.ErrClosed), errors.Is(err, stream.ErrSlow), errors.Is(err, stream.ErrDropped):
	default:
		return
	}
	clear(w.bufs)
	w.bufs, w.size = w.bufs[:0], 0
	if w.Flush() != nil {
		return
	}
	_ = w.conn.SetWriteDeadline(time.Now().Add(w.timeout))
	_, _ = w.conn.Write([]byte("0\r\n\r\n"))
}

// streamLimits counts the open streams: in all, per client address and
// per user.
type streamLimits struct {
	total, perAddress, perUser int

	mu     sync.Mutex
	n      int
	byAddr map[string]int
	byUser map[int64]int
}

func newStreamLimits(total, perAddress, perUser int) *streamLimits {
	return &streamLimits{total: total, perAddress: perAddress, perUser: perUser,
		byAddr: map[string]int{}, byUser: map[int64]int{}}
}

// acquire counts a stream from addr for user (0: none), or refuses it
// with errTooManyStreams; release uncounts it (once).
func (l *streamLimits) acquire(addr string, user int64) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.n >= l.total:
		return nil, detailed(errTooManyStreams, "stream", "the server has "+strconv.Itoa(l.total)+" streams open, its most; try again later")
	case l.byAddr[addr] >= l.perAddress:
		return nil, detailed(errTooManyStreams, "stream", strconv.Itoa(l.perAddress)+" streams are open from your address, the most; close one first")
	case user != 0 && l.byUser[user] >= l.perUser:
		return nil, detailed(errTooManyStreams, "stream", strconv.Itoa(l.perUser)+" streams of yours are open, the most; close one first")
	}
	l.n++
	l.byAddr[addr]++
	if user != 0 {
		l.byUser[user]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.n--
			if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
				delete(l.byAddr, addr)
			}
			if user != 0 {
				if l.byUser[user]--; l.byUser[user] <= 0 {
					delete(l.byUser, user)
				}
			}
		})
	}, nil
}
