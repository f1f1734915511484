package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// oversizeRounds is how many oversized requests each client sends: the
// connection reset these tests guard against cost Go's HTTP client about
// half of its answers, and a client that writes its whole body before it
// reads all of them, so fifty never miss it.
const oversizeRounds = 50

// oversizeBody is a login body of 2 MiB, twice the limit.
var oversizeBody = func() []byte {
	b := []byte(`{"email":"a@b.co","password":"password1","pad":"`)
	b = append(b, bytes.Repeat([]byte("x"), 2<<20-len(b)-2)...)
	return append(b, `"}`...)
}()

// tooLarge checks that an answer is the documented 413.
func tooLarge(status int, body []byte) error {
	var e struct {
		Error string `json:"error"`
	}
	if status != http.StatusRequestEntityTooLarge || json.Unmarshal(body, &e) != nil || e.Error != "request_too_large" {
		return fmt.Errorf("answered %d %q, want 413 {\"error\":\"request_too_large\"}", status, body)
	}
	return nil
}

// readAnswer reads an answer from conn and checks that it is the 413.
func readAnswer(conn net.Conn) error {
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("read the answer's body: %w", err)
	}
	return tooLarge(res.StatusCode, b)
}

// dial connects with a small send buffer: as over a real network, where
// a body of megabytes is far more than the sockets hold in flight, the
// client is still writing when the server answers and closes.
func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if err := conn.(*net.TCPConn).SetWriteBuffer(64 << 10); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func dialServer(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	return conn
}

const loginHead = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"

// TestOversizedBodies checks that a client sending a body over the limit
// reads the 413 rather than a connection reset, however it sends it, and
// that a client that never stops sending is cut off.
func TestOversizedBodies(t *testing.T) {
	h, _ := startServer(t, testConfig(memoryStore()))
	url := "http://" + h.base + "/api/v1/auth/login"
	// One request first, so that the server's pools exist before counting.
	_ = postRaw(h.base, true)
	goroutines, heap := settled()

	clients := []struct {
		name string
		send func() error
	}{
		{"Go's HTTP client sending it with a Content-Length", func() error {
			return postHTTP(url, bytes.NewReader(oversizeBody))
		}},
		{"Go's HTTP client sending it in chunks", func() error {
			return postHTTP(url, struct{ io.Reader }{bytes.NewReader(oversizeBody)})
		}},
		{"a client writing its whole body with a Content-Length before it reads", func() error {
			return postRaw(h.base, false)
		}},
		{"a client writing its whole body in chunks before it reads", func() error {
			return postRaw(h.base, true)
		}},
	}
	for _, c := range clients {
		t.Run(c.name+" reads 413 every time", func(t *testing.T) {
			failed := 0
			for i := range oversizeRounds {
				if err := c.send(); err != nil {
					failed++
					if failed <= 3 {
						t.Errorf("request %d: %v", i+1, err)
					}
				}
			}
			if failed > 0 {
				t.Errorf("%d of %d requests did not read the 413", failed, oversizeRounds)
			}
		})
	}

	t.Run("a client that never stops sending reads 413 and is cut off", func(t *testing.T) {
		for i := range oversizeRounds {
			if err := endlessSender(h.base, i%2 == 0); err != nil {
				t.Fatalf("request %d: %v", i+1, err)
			}
		}
	})

	t.Run("a client sending slowly for ever is cut off", func(t *testing.T) {
		conn := dialServer(t, h.base)
		defer conn.Close()
		stopped := slowSender(t, conn)
		if err := readAnswer(conn); err != nil {
			t.Fatal(err)
		}
		select {
		case <-stopped:
		case <-time.After(server.LingerTimeout + 20*time.Second):
			t.Fatalf("the server still reads a slow sender %v after its answer", server.LingerTimeout+20*time.Second)
		}
	})

	t.Run("the server still answers, and its goroutines and heap are back where they were", func(t *testing.T) {
		expect(t, h.do(t, req{method: "GET", path: "/healthz"}), 200, "")
		expect(t, h.do(t, req{method: "GET", path: "/readyz"}), 200, "")
		const slackGoroutines, slackHeap = 10, 16 << 20
		var g int
		var hp uint64
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			g, hp = settled()
			if g <= goroutines+slackGoroutines && hp <= heap+slackHeap {
				return
			}
		}
		t.Errorf("goroutines %d (were %d), heap %d bytes (was %d)", g, goroutines, hp, heap)
	})
}

func TestOversizedBodyAtShutdown(t *testing.T) {
	t.Run("stop cuts a lingering connection short", func(t *testing.T) {
		h, app := startServer(t, testConfig(memoryStore()))
		conn := dialServer(t, h.base)
		defer conn.Close()
		stopped := slowSender(t, conn)
		if err := readAnswer(conn); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := app.Stop(context.Background()); err != nil {
			t.Fatalf("stop: %v", err)
		}
		<-stopped
		// Far less than the bound, even on a loaded machine: the
		// connection is cut when the listener closes.
		if d := time.Since(start); d >= server.LingerTimeout {
			t.Errorf("the connection was read %v after stop began, as long as the bound (%v)", d, server.LingerTimeout)
		}
	})
}

// slowSender sends, over conn, a request declaring a body over the limit
// and then writes a little of it every 50 ms, until a write fails: the
// returned channel is closed then.
func slowSender(t *testing.T, conn net.Conn) <-chan struct{} {
	t.Helper()
	if _, err := fmt.Fprintf(conn, "%sContent-Length: %d\r\n\r\n", loginHead, server.BodyLimit+1); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if _, err := conn.Write([]byte("xxxxxxxx")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return stopped
}

// settled is the number of goroutines and the bytes of live heap after a
// collection.
func settled() (int, uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// postHTTP posts body with a new client connection, as Go's HTTP client
// does it: it writes the body and reads the answer at once.
func postHTTP(url string, body io.Reader) error {
	tr := &http.Transport{DisableKeepAlives: true, DialContext: dial}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Post(url, "application/json", body)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("read the answer's body: %w", err)
	}
	return tooLarge(res.StatusCode, b)
}

// postRaw writes the whole oversized body, then reads the answer, as
// Python's urllib and many other clients do: a reset while it writes is
// an answer lost.
func postRaw(addr string, chunked bool) error {
	conn, err := dial(context.Background(), "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	w := bufio.NewWriterSize(conn, 64<<10)
	if chunked {
		fmt.Fprintf(w, "%sTransfer-Encoding: chunked\r\n\r\n", loginHead)
		for b := oversizeBody; len(b) > 0; {
			n := min(len(b), 32<<10)
			fmt.Fprintf(w, "%x\r\n%s\r\n", n, b[:n])
			b = b[n:]
		}
		io.WriteString(w, "0\r\n\r\n")
	} else {
		fmt.Fprintf(w, "%sContent-Length: %d\r\n\r\n", loginHead, len(oversizeBody))
		w.Write(oversizeBody)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the body: %w", err)
	}
	return readAnswer(conn)
}

// endlessSender sends a request whose body never ends, from another
// goroutine, reads the answer, and checks that the server stops reading
// within its bound: the writes then fail.
func endlessSender(addr string, chunked bool) error {
	conn, err := dial(context.Background(), "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	head := loginHead + "Content-Length: 1000000000\r\n\r\n"
	chunk := strings.Repeat("x", 16<<10)
	if chunked {
		head = loginHead + "Transfer-Encoding: chunked\r\n\r\n"
		chunk = fmt.Sprintf("%x\r\n%s\r\n", len(chunk), chunk)
	}
	var sent atomic.Int64
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if _, err := io.WriteString(conn, head); err != nil {
			return
		}
		for {
			n, err := io.WriteString(conn, chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	if err := readAnswer(conn); err != nil {
		return err
	}
	// The bound plus generous slack: on a loaded machine the last writes
	// may take long, but never for ever.
	wait := server.LingerTimeout + 20*time.Second
	select {
	case <-stopped:
		return nil
	case <-time.After(wait):
		return fmt.Errorf("the server still reads an endless body %v after its answer (%d bytes sent)", wait, sent.Load())
	}
}
