package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A subscriber is one client of the stream: one connection at a time
// (reconnecting with Last-Event-ID when it drops), one goroutine and two
// small buffers, so that the bench can hold ten thousand of them. It does
// not use net/http's client, whose connection costs two goroutines and
// two 4 KiB buffers more: it writes the request itself and reads the
// answer with http.ReadResponse, which undoes the chunked encoding.

const (
	// subscriberBuffer is the size of each of a subscriber's two buffers
	// (the connection's and the event parser's); a longer line still
	// parses, in an extra buffer.
	subscriberBuffer = 2048
	// reconnectDelay is the pause before a reconnection.
	reconnectDelay = 50 * time.Millisecond
)

// streamTarget is the stream request every subscriber of a run sends.
type streamTarget struct {
	addr   string // host:port to dial
	host   string // the Host header
	name   string // the host's name, for TLS
	tls    bool
	path   string // path and query
	header string // extra header lines, each ending in CRLF
}

// newStreamTarget returns the target of GET /api/v1/stream?topics=topics
// on the server at base.
func newStreamTarget(base, topics string) (*streamTarget, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	t := &streamTarget{host: u.Host, name: u.Hostname(), tls: u.Scheme == "https", addr: u.Host}
	if u.Port() == "" {
		port := "80"
		if t.tls {
			port = "443"
		}
		t.addr = net.JoinHostPort(u.Hostname(), port)
	}
	t.path = u.Path + "/api/v1/stream?topics=" + url.QueryEscape(topics)
	return t, nil
}

// connect opens a connection and sends the stream request, resuming
// after lastID when it is positive, and reads the answer's header. On
// success the returned reader yields the events.
func (t *streamTarget) connect(ctx context.Context, lastID int64, timeout time.Duration) (net.Conn, *sseReader, error) {
	d := net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, nil, err
	}
	if t.tls {
		conn = tls.Client(conn, &tls.Config{ServerName: t.name})
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	req := "GET " + t.path + " HTTP/1.1\r\nHost: " + t.host + "\r\nAccept: text/event-stream\r\nUser-Agent: predictkit-bench\r\n" + t.header
	if lastID > 0 {
		req += "Last-Event-ID: " + strconv.FormatInt(lastID, 10) + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		conn.Close()
		return nil, nil, err
	}
	br := bufio.NewReaderSize(conn, subscriberBuffer)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		conn.Close()
		return nil, nil, &statusError{status: resp.StatusCode, body: string(body)}
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, newSSEReader(resp.Body, subscriberBuffer), nil
}

// statusError is an answer other than 200 to the stream request.
type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("%d %s", e.status, e.body) }

// kindOf names an error for the report's counts: the status, or
// "transport".
func kindOf(err error) string {
	var se *statusError
	if errors.As(err, &se) {
		return strconv.Itoa(se.status)
	}
	return "transport"
}

// A handler receives a subscriber's events, on the subscriber's goroutine.
type handler interface {
	// event handles one event received at at. The event's Data is valid
	// only during the call.
	event(sub *subscriber, ev sseEvent, at time.Time)
}

// subscriber is one stream client. Its fields are its goroutine's while
// it runs, except where noted.
type subscriber struct {
	index int
	t     tally
	// connected says the first connection was answered 200.
	connected bool
	// from is the Last-Event-ID of the first connection (0: none, live
	// from the moment of connecting); reconnections resume after the last
	// id received.
	from int64

	// distinct is the number of trades delivered, read by the runner
	// while the subscriber runs.
	distinct atomic.Int64
	// comments counts comment lines (pings) over every connection.
	comments int64
	// reconnects counts the connections after the first; failures the
	// connection attempts that failed, by kind.
	reconnects int64
	failures   map[string]int64
	firstErr   string
	// inWindow counts the trade messages received in the measured window.
	inWindow int64
	// pending holds the first deliveries of trades whose answer the
	// trader had not recorded when they arrived.
	pending []delivery

	mu      sync.Mutex
	conn    net.Conn
	stopped bool
}

// delivery is a trade received before its answer was recorded.
type delivery struct {
	trade     int64
	at        time.Time
	createdAt time.Time
}

// stop ends the subscriber: its connection is closed and it does not
// reconnect. Safe to call from any goroutine, more than once.
func (s *subscriber) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.conn != nil {
		s.conn.Close()
	}
}

// setConn records the live connection, or reports that the subscriber
// was stopped (and closes conn).
func (s *subscriber) setConn(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		conn.Close()
		return false
	}
	s.conn = conn
	return true
}

func (s *subscriber) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *subscriber) fail(err error) {
	if s.failures == nil {
		s.failures = map[string]int64{}
	}
	s.failures[kindOf(err)]++
	if s.firstErr == "" {
		s.firstErr = err.Error()
	}
}

// run connects and reads events into h until stop is called or ctx ends.
// It calls ready once, with the outcome of the first connection: a
// subscriber whose first connection fails does not retry; one that loses
// its connection later reconnects, with Last-Event-ID, until stopped.
func (s *subscriber) run(ctx context.Context, target *streamTarget, timeout time.Duration, h handler, ready func(error)) {
	first := true
	for ctx.Err() == nil && !s.isStopped() {
		from := s.from
		if s.t.lastID > 0 {
			from = s.t.lastID
		}
		conn, events, err := target.connect(ctx, from, timeout)
		if first {
			s.connected = err == nil
			ready(err)
		}
		if err != nil {
			if s.isStopped() || ctx.Err() != nil {
				return
			}
			s.fail(err)
			if first {
				return
			}
			sleep(ctx, reconnectDelay)
			continue
		}
		if !first {
			s.reconnects++
		}
		first = false
		if !s.setConn(conn) {
			return
		}
		for {
			ev, err := events.next()
			if err != nil {
				break
			}
			h.event(s, ev, time.Now())
		}
		s.comments += events.comments
		conn.Close()
		if s.isStopped() || ctx.Err() != nil {
			return
		}
		sleep(ctx, reconnectDelay)
	}
}
