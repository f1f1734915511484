package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
)

// api is an HTTP client of one predictkit server.
type api struct {
	base    string
	admin   string // "Bearer <admin token>"
	timeout time.Duration
	// fast sends the requests, unless the caller gave a Transport: a
	// fasthttp client costs the load generator about half the CPU time
	// of net/http's per request, which on a machine shared with the
	// server under test is the server's.
	fast   *fasthttp.Client
	client *http.Client
	own    *http.Transport // the tuned transport, when api made it
}

// newAPI returns a client of cfg.URL whose transport keeps a warm
// connection per client: keep-alive on, cfg.Clients idle connections per
// host (the default of 2 would close and reopen connections under load),
// no compression.
func newAPI(cfg Config) *api {
	a := &api{base: cfg.URL, admin: "Bearer " + cfg.AdminToken, timeout: cfg.Timeout}
	rt := cfg.Transport
	if rt == nil {
		a.fast = &fasthttp.Client{
			MaxConnsPerHost:          cfg.Clients + 16, // the setup's few extra requests too
			MaxIdleConnDuration:      90 * time.Second,
			ReadTimeout:              cfg.Timeout,
			WriteTimeout:             cfg.Timeout,
			NoDefaultUserAgentHeader: true,
			DisablePathNormalizing:   true,
			// A benchmark waits for a connection rather than fail when
			// every one is busy (the setup runs beside the clients).
			MaxConnWaitTimeout: cfg.Timeout,
		}
	}
	if rt == nil {
		a.own = &http.Transport{
			Proxy: nil, // a benchmark talks to the server directly
			DialContext: (&net.Dialer{
				Timeout:   10 * time.Second,
				KeepAlive: 30 * time.Second,
			}).DialContext,
			MaxIdleConns:          cfg.Clients + 16,
			MaxIdleConnsPerHost:   cfg.Clients + 16, // the setup's few extra requests too
			IdleConnTimeout:       90 * time.Second,
			DisableCompression:    true,
			ExpectContinueTimeout: time.Second,
			ResponseHeaderTimeout: cfg.Timeout,
		}
		rt = a.own
	}
	a.client = &http.Client{Transport: rt, Timeout: cfg.Timeout}
	return a
}

func (a *api) close() {
	if a.own != nil {
		a.own.CloseIdleConnections()
	}
}

// A request is one HTTP request of a step or of the setup.
type request struct {
	method, path string
	auth         string // the Authorization header, if any
	partnerKey   string // the X-Partner-Key header, if any
	body         []byte // JSON, if any
}

// send performs r and returns its status, its body and its
// Idempotent-Replayed header. The body is read in full, so the
// connection is reused.
func (a *api) send(ctx context.Context, r request) (status int, body []byte, replayed string, err error) {
	if a.fast != nil {
		return a.sendFast(ctx, r)
	}
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, a.base+r.path, rd)
	if err != nil {
		return 0, nil, "", err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	if r.partnerKey != "" {
		req.Header.Set("X-Partner-Key", r.partnerKey)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, "", err
	}
	return resp.StatusCode, body, resp.Header.Get("Idempotent-Replayed"), nil
}

// sendFast is send on the fasthttp client. A request cannot be cancelled
// once sent: it ends with its answer, at ctx's deadline or after the
// timeout, whichever is first.
func (a *api) sendFast(ctx context.Context, r request) (status int, body []byte, replayed string, err error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, "", err
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(a.base + r.path)
	req.Header.SetMethod(r.method)
	if r.body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(r.body)
	}
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	if r.partnerKey != "" {
		req.Header.Set("X-Partner-Key", r.partnerKey)
	}
	deadline := time.Now().Add(a.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := a.fast.DoDeadline(req, resp, deadline); err != nil {
		return 0, nil, "", err
	}
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), string(resp.Header.Peek("Idempotent-Replayed")), nil
}

// call sends in (when not nil) as JSON and decodes the answer into out
// (when not nil); an answer other than want is an error that quotes it.
func (a *api) call(ctx context.Context, method, path, auth string, in, out any, want int) error {
	r := request{method: method, path: path, auth: auth}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		r.body = b
	}
	status, body, _, err := a.send(ctx, r)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if status != want {
		if len(body) > 300 {
			body = append(body[:300:300], "…"...)
		}
		return fmt.Errorf("%s %s: %d %s", method, path, status, bytes.TrimSpace(body))
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
		}
	}
	return nil
}
