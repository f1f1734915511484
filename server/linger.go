package server

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// A connection the server closes in the middle of a request (after a 413
// for a body over BodyLimit, a 408, a 400 for a request it cannot parse)
// may still hold, or be about to receive, the rest of that request.
// Closing a TCP socket with unread data makes the kernel answer with a
// reset, and a client that is still writing its body then sees the reset
// instead of the answer already sent to it (Python's urllib, which reads
// only once it has written everything, lost two answers in three). So
// the server closes such a connection in stages, as RFC 9112 (section
// 9.6) asks: the answer is sent, the sending side is shut down (the
// client reads the answer, then the end of the stream), and what the
// client still sends is read and thrown away until it closes its side,
// for at most LingerTimeout and LingerBytes, before the full close.
//
// fasthttp (v1.51) closes at once and has no such option, hence the
// listener wrapper below. The lingering runs in the goroutine that served
// the connection, inside its Close, so it costs no goroutine of its own;
// fasthttp has already counted the connection closed by then, so a
// graceful shutdown does not wait for it, and closing the listener cuts
// every lingering connection short.
const (
	// LingerTimeout is how long a connection closed in the middle of a
	// request is read and discarded at most.
	LingerTimeout = 5 * time.Second
	// LingerBytes is how much of the rest of the request is read and
	// discarded at most: a body a few times the limit is read whole, and
	// an endless one is cut off.
	LingerBytes = 8 << 20
	// maxLingering is how many connections linger at once at most; past
	// it, a connection is closed at once (with a reset if data is unread).
	maxLingering = 512
)

// lingerListener hands out lingerConns and keeps count of those
// lingering.
type lingerListener struct {
	net.Listener
	mu        sync.Mutex
	closed    bool
	lingering map[*lingerConn]struct{}
}

// lingerOnClose wraps ln so that the connections srv closes in the middle
// of a request linger (see LingerTimeout); it chains srv's ConnState hook
// to learn where each connection is.
func lingerOnClose(srv *fasthttp.Server, ln net.Listener) net.Listener {
	next := srv.ConnState
	srv.ConnState = func(c net.Conn, state fasthttp.ConnState) {
		if next != nil {
			next(c, state)
		}
		if lc := asLingerConn(c); lc != nil {
			switch state {
			case fasthttp.StateActive:
				lc.inRequest.Store(true)
			case fasthttp.StateIdle, fasthttp.StateHijacked:
				// A hijacked connection (a live stream) has read its
				// request whole, and its new owner closes it.
				lc.inRequest.Store(false)
			}
		}
	}
	return &lingerListener{Listener: ln, lingering: make(map[*lingerConn]struct{})}
}

// asLingerConn finds the lingerConn under c, the connection fasthttp
// sees.
func asLingerConn(c net.Conn) *lingerConn {
	if rc, ok := c.(*readingConn); ok {
		c = rc.Conn
	}
	lc, _ := c.(*lingerConn)
	return lc
}

func (l *lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lingerConn{Conn: c, l: l}, nil
}

// Close stops accepting and cuts every lingering connection short: the
// server is shutting down.
func (l *lingerListener) Close() error {
	l.mu.Lock()
	l.closed = true
	for c := range l.lingering {
		_ = c.Conn.SetReadDeadline(time.Unix(1, 0))
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

// admit counts c as lingering and sets its deadline, unless the listener
// is closed or enough connections linger already.
func (l *lingerListener) admit(c *lingerConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || len(l.lingering) >= maxLingering {
		return false
	}
	if c.Conn.SetReadDeadline(time.Now().Add(LingerTimeout)) != nil {
		return false
	}
	l.lingering[c] = struct{}{}
	return true
}

func (l *lingerListener) release(c *lingerConn) {
	l.mu.Lock()
	delete(l.lingering, c)
	l.mu.Unlock()
}

// lingerConn is a connection whose Close lingers when the server closes it
// in the middle of a request.
type lingerConn struct {
	net.Conn
	l *lingerListener
	// inRequest is set while the server reads or answers a request, from
	// its first byte until the connection goes idle again.
	inRequest atomic.Bool
	closing   atomic.Bool
}

// closeWriter is a connection whose sending side shuts down alone
// (*net.TCPConn). The server serves plain TCP; TLS, where a proxy ends it
// before the server, would sit above this wrapper and send its
// close_notify before Close reaches it.
type closeWriter interface{ CloseWrite() error }

func (c *lingerConn) Close() error {
	// Only the first Close lingers: a second one (fasthttp closing an idle
	// connection at shutdown while its worker does the same) closes.
	if c.inRequest.Load() && c.closing.CompareAndSwap(false, true) {
		if cw, ok := c.Conn.(closeWriter); ok && c.l.admit(c) {
			if cw.CloseWrite() == nil {
				// Until the client closes its side (EOF), the deadline, or
				// the byte bound; the read's error is the end either way.
				_, _ = io.CopyN(io.Discard, c.Conn, LingerBytes)
			}
			c.l.release(c)
		}
	}
	return c.Conn.Close()
}
