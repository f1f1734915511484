package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/server"
)

// startServer starts the fx application for real on a free local port and
// returns a harness that talks to it over the network; it is stopped when
// the test ends.
func startServer(t *testing.T, cfg server.Config) (*harness, *fx.App) {
	t.Helper()
	_, router := openAPI(t)
	cfg.Addr = "127.0.0.1:0"
	var where *server.Listening
	app := server.New(cfg, fx.Populate(&where))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = app.Stop(context.Background()) }) // a second Stop is harmless
	return &harness{base: where.Addr(), router: router, store: cfg.Store}, app
}

// rawPost sends a POST with the given extra header lines over a raw
// connection, writing the body from another goroutine (the server may
// answer and stop reading before it is all sent), and checks the answer
// against the OpenAPI document.
func rawPost(t *testing.T, h *harness, path, head string, body func(io.Writer)) *response {
	t.Helper()
	conn, err := net.Dial("tcp", h.base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s\r\n", path, h.base, head); err != nil {
		t.Fatal(err)
	}
	go body(conn)
	hr, _ := http.NewRequest(http.MethodPost, "http://"+h.base+path, nil)
	res, err := http.ReadResponse(bufio.NewReader(conn), hr)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	resp := &response{status: res.StatusCode, header: res.Header, body: b}
	h.validate(t, req{method: http.MethodPost, path: path}, hr, resp)
	return resp
}

func TestServerLifecycle(t *testing.T) {
	t.Run("start binds the address, serves, and stop shuts the listener down", func(t *testing.T) {
		h, app := startServer(t, testConfig(memoryStore()))
		expect(t, h.do(t, req{method: "GET", path: "/healthz"}), 200, "")
		u := h.register(t, "live")
		h.me(t, u.token)
		if err := app.Stop(context.Background()); err != nil {
			t.Fatalf("stop: %v", err)
		}
		if _, err := http.Get("http://" + h.base + "/healthz"); err == nil {
			t.Error("the server still answers after stop")
		}
	})
	t.Run("a body over 1 MiB is 413 request_too_large and nothing is read of it", func(t *testing.T) {
		h, _ := startServer(t, testConfig(memoryStore()))
		u := h.register(t, "before")
		for _, c := range []struct {
			name, head string
			body       func(w io.Writer)
		}{
			{"declared by Content-Length", "Content-Length: " + fmt.Sprint(server.BodyLimit+1) + "\r\n", func(w io.Writer) {
				_, _ = io.WriteString(w, `{"email":"a@b.co","password":"password1","name":"`)
			}},
			{"sent in chunks", "Transfer-Encoding: chunked\r\n", func(w io.Writer) {
				chunk := strings.Repeat("x", 64<<10)
				for range server.BodyLimit/len(chunk) + 2 {
					if _, err := fmt.Fprintf(w, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
						return
					}
				}
				_, _ = io.WriteString(w, "0\r\n\r\n")
			}},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := rawPost(t, h, "/api/v1/auth/register", c.head, c.body)
				expect(t, r, 413, "request_too_large")
			})
		}
		h.me(t, u.token) // still serving
	})
	t.Run("a bind error fails start-up", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		cfg := testConfig(memoryStore())
		cfg.Addr = ln.Addr().String()
		app := server.New(cfg)
		err = app.Start(context.Background())
		if err == nil {
			_ = app.Stop(context.Background())
			t.Fatal("start succeeded on a busy address")
		}
		if !strings.Contains(err.Error(), "listen") {
			t.Errorf("start error %q does not say it could not listen", err)
		}
	})
	t.Run("an invalid configuration fails construction", func(t *testing.T) {
		for _, mod := range []func(*server.Config){
			func(c *server.Config) { c.BcryptCost = 99 },
			func(c *server.Config) { c.LogLevel = "loud" },
			func(c *server.Config) { c.LogFormat = "xml" },
			func(c *server.Config) { c.AdminToken = "short" },
		} {
			cfg := testConfig(memoryStore())
			mod(&cfg)
			if err := server.New(cfg).Err(); err == nil {
				t.Errorf("config %+v was accepted", cfg)
			}
		}
	})
}

// TestDemoData starts the server on its own in-memory store with demo
// data and uses it as a client would.
func TestDemoData(t *testing.T) {
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.Demo = true
	h, _ := startServer(t, cfg)
	login := func(email string) string {
		r := h.do(t, req{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": server.DemoPassword}})
		expect(t, r, 200, "")
		var out struct {
			AccessToken string `json:"access_token"`
		}
		r.decode(t, &out)
		return out.AccessToken
	}
	t.Run("the demo creator logs in and is a creator", func(t *testing.T) {
		if p := h.me(t, login(server.DemoCreatorEmail)); !p.IsCreator {
			t.Errorf("the demo creator is not a creator: %+v", p)
		}
	})
	t.Run("the demo event, the first, has two pools of two markets (TestDemoPlatform checks the events after it)", func(t *testing.T) {
		r := h.do(t, req{method: "GET", path: "/api/v1/events/1"})
		var e apiEvent
		r.decode(t, &e)
		if len(e.Pools) != 2 || len(e.Pools[0].Markets) != 2 || len(e.Pools[1].Markets) != 2 {
			t.Fatalf("event 1: %s", r)
		}
	})
	t.Run("the traders hold positions and the feed shows their trades", func(t *testing.T) {
		alice := h.me(t, login(server.DemoAliceEmail))
		bob := h.me(t, login(server.DemoBobEmail))
		if len(alice.Positions) != 2 || len(bob.Positions) != 2 || alice.Balance <= 0 || bob.Balance <= 0 {
			t.Errorf("alice %+v, bob %+v", alice.Positions, bob.Positions)
		}
		r := h.do(t, req{method: "GET", path: "/api/v1/market/trades/latest"})
		var feed []map[string]any
		r.decode(t, &feed)
		if len(feed) != 50 { // the latest 50 of the demo's history
			t.Errorf("feed has %d trades, want 50", len(feed))
		}
	})
	t.Run("the ledger is sound", func(t *testing.T) {
		if ok, _, problems := h.audit(t); !ok {
			t.Errorf("audit: %v", problems)
		}
	})
}

func TestPostgresByURL(t *testing.T) {
	if postgresURL == nil {
		t.Skip("no PostgreSQL test helper")
	}
	cfg := testConfig(nil)
	cfg.Store = nil
	cfg.Demo = true // ignored on PostgreSQL
	cfg.DatabaseURL = postgresURL(t)
	h, app := startServer(t, cfg)
	t.Run("start migrates the database and the server serves from it", func(t *testing.T) {
		expect(t, h.do(t, req{method: "GET", path: "/readyz"}), 200, "")
		u := h.register(t, "pg")
		h.credit(t, u.id, 12_345, false)
		if p := h.me(t, u.token); p.Balance != 12_345 {
			t.Errorf("balance %d", p.Balance)
		}
	})
	t.Run("no demo data is written to PostgreSQL", func(t *testing.T) {
		r := h.do(t, req{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": server.DemoCreatorEmail, "password": server.DemoPassword}})
		expect(t, r, 401, "invalid_credentials")
	})
	t.Run("stop closes the pool", func(t *testing.T) {
		if err := app.Stop(context.Background()); err != nil {
			t.Fatalf("stop: %v", err)
		}
	})
}
