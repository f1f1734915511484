package server_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/server"
)

// The answers Fiber and fasthttp make before any handler runs (a body or
// headers too large, a request that cannot be parsed, a read that timed
// out, an unknown method, a panic's 500) are logged and counted like
// every other answer.

// loggedServer starts a server whose INFO log lines are captured.
func loggedServer(t *testing.T, readTimeout time.Duration) (*harness, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg := testConfig(memoryStore())
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if readTimeout > 0 {
		cfg.ReadTimeout = readTimeout
	}
	h, _ := startServer(t, cfg)
	return h, logs
}

// requestLines are the access-log lines among the captured ones.
func requestLines(t *testing.T, logs *syncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range logLines(t, logs.String()) {
		if l["msg"] == "request" {
			out = append(out, l)
		}
	}
	return out
}

// rawExchange writes raw bytes on a new connection (from another
// goroutine: the server may answer before it has read them all) and reads
// one answer.
func rawExchange(t *testing.T, h *harness, raw string) *response {
	t.Helper()
	conn, err := net.Dial("tcp", h.base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	go func() { _, _ = io.WriteString(conn, raw) }()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer to %.40q: %v", raw, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &response{status: res.StatusCode, header: res.Header, body: b}
}

// checkLine checks one access-log line against the answer it logs.
func checkLine(t *testing.T, l map[string]any, method, route string, status int, r *response) {
	t.Helper()
	if l["method"] != method || l["route"] != route || l["status"] != float64(status) {
		t.Errorf("logged %v %v %v, want %s %s %d: %v", l["method"], l["route"], l["status"], method, route, status, l)
	}
	if d, ok := l["duration"].(float64); !ok || d < 0 {
		t.Errorf("the line has no duration: %v", l)
	}
	id, _ := l["request_id"].(string)
	if id == "" {
		t.Errorf("the line has no request id: %v", l)
	}
	if r != nil && r.header.Get(fiber.HeaderXRequestID) != id {
		t.Errorf("logged request id %q, the answer says %q", id, r.header.Get(fiber.HeaderXRequestID))
	}
}

func TestAnswersBeforeTheHandlersAreLoggedAndCounted(t *testing.T) {
	h, logs := loggedServer(t, 0)
	pad := strings.Repeat("a", 20<<10) // over the 16 KiB read buffer
	cases := []struct {
		name   string
		raw    string
		status int
		code   string
		method string // as logged and counted
	}{
		{"a body declared over 1 MiB is 413 request_too_large",
			"POST /api/v1/auth/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(server.BodyLimit+1) + "\r\n\r\n{",
			413, "request_too_large", "POST"},
		{"headers over 16 KiB are 431 request_headers_too_large",
			"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + pad + "\r\n\r\n",
			431, "request_headers_too_large", "unknown"},
		{"a malformed request line is 400 invalid_request",
			"GARBAGE\r\n\r\n",
			400, "invalid_request", "unknown"},
		{"a malformed header line is 400 invalid_request",
			"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n",
			400, "invalid_request", "unknown"},
		{"a malformed chunked body is 400 invalid_request",
			"POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
			400, "invalid_request", "unknown"}, // fasthttp clears a request whose body it cannot read
		{"a method the server does not know is 400 invalid_request",
			"FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
			400, "invalid_request", "unknown"},
	}
	want := map[[2]string]float64{} // {method, status} → count
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(requestLines(t, logs))
			r := rawExchange(t, h, c.raw)
			expect(t, r, c.status, c.code)
			t.Run("the answer carries the security headers and a request id", func(t *testing.T) {
				for _, k := range []string{fiber.HeaderXContentTypeOptions, fiber.HeaderContentSecurityPolicy, fiber.HeaderXRequestID} {
					if r.header.Get(k) == "" {
						t.Errorf("no %s: %v", k, r.header)
					}
				}
			})
			t.Run("exactly one access-log line says so", func(t *testing.T) {
				lines := requestLines(t, logs)[before:]
				if len(lines) != 1 {
					t.Fatalf("%d access-log lines, want 1: %v", len(lines), lines)
				}
				checkLine(t, lines[0], c.method, "unmatched", c.status, r)
			})
		})
		want[[2]string{c.method, fmt.Sprint(c.status)}]++
	}
	t.Run("each is counted in predictkit_http_requests_total", func(t *testing.T) {
		m := h.scrape(t)
		for k, n := range want {
			labels := map[string]string{"method": k[0], "route": "unmatched", "status": k[1]}
			if got, _ := metricValue(m, "predictkit_http_requests_total", labels); got != n {
				t.Errorf("predictkit_http_requests_total%v = %v, want %v", labels, got, n)
			}
		}
	})
	t.Run("nothing else was logged", func(t *testing.T) {
		if n := len(requestLines(t, logs)); n != len(cases) {
			t.Errorf("%d access-log lines for %d requests", n, len(cases))
		}
	})
}

// TestResetConnectionsAreNotServerErrors: a client that resets its
// connection in the middle of a request left; the server did not fail.
func TestResetConnectionsAreNotServerErrors(t *testing.T) {
	h, logs := loggedServer(t, 0)
	conn, err := net.Dial("tcp", h.base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "GET /heal"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the server read the bytes first
	_ = conn.(*net.TCPConn).SetLinger(0)
	conn.Close() // RST
	var lines []map[string]any
	for wait := time.Now().Add(10 * time.Second); time.Now().Before(wait); time.Sleep(20 * time.Millisecond) {
		if lines = requestLines(t, logs); len(lines) > 0 {
			break
		}
	}
	t.Run("the broken request is logged once as a client error", func(t *testing.T) {
		if len(lines) != 1 {
			t.Fatalf("%d access-log lines, want 1:\n%s", len(lines), logs.String())
		}
		checkLine(t, lines[0], "unknown", "unmatched", 400, nil)
	})
	t.Run("nothing is logged as an error", func(t *testing.T) {
		for _, l := range logLines(t, logs.String()) {
			if l["level"] == "ERROR" || l["level"] == "WARN" {
				t.Errorf("a reset connection logged %v", l)
			}
		}
	})
	t.Run("no 5xx is counted", func(t *testing.T) {
		m := h.scrape(t)
		for _, s := range []string{"500", "502", "503"} {
			if got, _ := metricValue(m, "predictkit_http_requests_total", map[string]string{"route": "unmatched", "status": s}); got != 0 {
				t.Errorf("%v answers %s counted", got, s)
			}
		}
	})
}

// TestPanicsAreLoggedOnce: the recoverer's 500 reaches the access log and
// the metrics with the route it panicked on.
func TestPanicsAreLoggedOnce(t *testing.T) {
	var logs syncBuffer
	boom := fx.Provide(fx.Annotate(func() []server.Route {
		return []server.Route{{Method: "GET", Path: "/boom", Handler: func(*fiber.Ctx) error { panic("kaboom") }}}
	}, fx.ResultTags(`group:"routes,flatten"`)))
	h := newHarness(t, memoryStore(), withFx(boom), withConfig(func(c *server.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}))
	res, err := h.app.Test(mustRequest(t, "GET", "/boom"), -1)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	r := &response{status: res.StatusCode, header: res.Header}
	t.Run("the panic answers 500", func(t *testing.T) {
		if r.status != 500 {
			t.Fatalf("status %d", r.status)
		}
	})
	t.Run("exactly one access-log line says so, with the route", func(t *testing.T) {
		lines := requestLines(t, &logs)
		if len(lines) != 1 {
			t.Fatalf("%d access-log lines, want 1:\n%s", len(lines), logs.String())
		}
		checkLine(t, lines[0], "GET", "/boom", 500, r)
		if lines[0]["level"] != "WARN" {
			t.Errorf("a 500 logged at %v, want WARN", lines[0]["level"])
		}
	})
	t.Run("it is counted", func(t *testing.T) {
		m := h.scrape(t)
		if got, _ := metricValue(m, "predictkit_http_requests_total", map[string]string{"method": "GET", "route": "/boom", "status": "500"}); got != 1 {
			t.Errorf("predictkit_http_requests_total{GET /boom 500} = %v, want 1", got)
		}
	})
}

// slowClient sends first (a whole request) and reads its answer, then
// sends head at once and rest one byte every gap, and reports when the
// server closed the connection and what it answered to the slow request.
func slowClient(t *testing.T, h *harness, first, head, rest string, gap, limit time.Duration) (took time.Duration, answer []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", h.base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(limit))
	br := bufio.NewReader(conn)
	if first != "" {
		if _, err := io.WriteString(conn, first); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("the first request: %v", err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("the first request answered %d", res.StatusCode)
		}
	}
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; i < len(rest); i++ {
			if _, err := conn.Write([]byte{rest[i]}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(gap):
			}
		}
	}()
	answer, err = io.ReadAll(br) // until the server closes (EOF, or a reset)
	took = time.Since(start)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection was still open after %v", limit)
	}
	return took, answer
}

// TestSlowRequestsAreCutAtTheReadTimeout: the read timeout bounds reading
// a whole request, headers and body: fasthttp sets the connection's read
// deadline once per request (when a new connection is served, or at the
// first byte of the next request on a kept-alive one) and never extends
// it, so a client that trickles bytes cannot hold a connection open.
func TestSlowRequestsAreCutAtTheReadTimeout(t *testing.T) {
	const readTimeout = time.Second
	h, logs := loggedServer(t, readTimeout)
	headers := "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 200) + "\r\n\r\n"
	body := `{"email":"slow@example.com","password":"password1"}`
	cases := []struct {
		name, first, head, rest string
		method                  string // as logged
	}{
		{"a connection that sends nothing", "", "", "", "unknown"},
		{"headers sent a byte at a time", "", "", headers, "unknown"},
		{"headers sent a byte at a time on a kept-alive connection", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", "", headers, "unknown"},
		{"a body sent a byte at a time after its headers", "",
			"POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n",
			body, "unknown"}, // fasthttp clears a request whose body it cannot read
	}
	cut := 0
	for _, c := range cases {
		t.Run(c.name+": the connection is closed within 3 times the read timeout", func(t *testing.T) {
			before := len(requestLines(t, logs))
			took, answer := slowClient(t, h, c.first, c.head, c.rest, 100*time.Millisecond, 3*readTimeout)
			if took >= 3*readTimeout {
				t.Fatalf("closed after %v with a read timeout of %v", took, readTimeout)
			}
			t.Logf("closed after %v", took)
			t.Run("the answer, when it arrives before the close, is 408 request_timeout", func(t *testing.T) {
				if len(answer) == 0 {
					t.Skip("the close overtook the answer (a reset)")
				}
				res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(answer))), nil)
				if err != nil {
					t.Fatalf("not an HTTP answer: %q", answer)
				}
				b, _ := io.ReadAll(res.Body)
				expect(t, &response{status: res.StatusCode, header: res.Header, body: b}, 408, "request_timeout")
			})
			t.Run("one access-log line says 408, with how long the server waited", func(t *testing.T) {
				lines := requestLines(t, logs)[before:] // (a first request's 200 logs at DEBUG)
				if len(lines) != 1 {
					t.Fatalf("%d access-log lines, want 1: %v", len(lines), lines)
				}
				checkLine(t, lines[0], c.method, "unmatched", 408, nil)
				if d, _ := lines[0]["duration"].(float64); time.Duration(d) < readTimeout {
					t.Errorf("logged duration %v, under the read timeout %v", time.Duration(d), readTimeout)
				}
			})
			cut++
		})
	}
	t.Run("each cut request is counted as a 408", func(t *testing.T) {
		m := h.scrape(t)
		got, _ := metricValue(m, "predictkit_http_requests_total", map[string]string{"method": "unknown", "route": "unmatched", "status": "408"})
		if got != float64(cut) {
			t.Errorf("%v requests counted as 408, want %d", got, cut)
		}
	})
}
