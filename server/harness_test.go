package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/memory"
)

const adminToken = "test-admin-token-0123456789"

// storeCase is a store the server tests run on.
type storeCase struct {
	name string
	new  func(t *testing.T) server.Store
}

// postgresStore is set by postgres_test.go when the PostgreSQL test helper
// is available.
var postgresStore func(t *testing.T) server.Store

// postgresURL, likewise, returns the URL of a fresh empty schema.
var postgresURL func(t *testing.T) string

// stores are the stores the money tests run on: memory, and PostgreSQL
// (skipped without PREDICTKIT_TEST_DATABASE_URL, unless required).
func stores() []storeCase {
	cs := []storeCase{{"memory", func(*testing.T) server.Store { return memory.New() }}}
	if postgresStore != nil {
		cs = append(cs, storeCase{"postgres", postgresStore})
	}
	return cs
}

// eachStore runs f once per store, as a subtest named after it.
func eachStore(t *testing.T, f func(t *testing.T, h *harness)) {
	t.Helper()
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			f(t, newHarness(t, sc.new(t)))
		})
	}
}

// The OpenAPI document, loaded once, and which of its operations the
// tests have seen answered.
var (
	docOnce   sync.Once
	doc       *openapi3.T
	docRouter routers.Router
	docErr    error

	seenMu sync.Mutex
	seen   = map[string]bool{} // "METHOD path" of operations answered
)

func openAPI(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	docOnce.Do(func() {
		doc, docErr = server.OpenAPIDocument()
		if docErr == nil {
			docRouter, docErr = gorillamux.NewRouter(doc)
		}
	})
	if docErr != nil {
		t.Fatalf("the OpenAPI document does not load: %v", docErr)
	}
	return doc, docRouter
}

// harness drives one Fiber app (never listening) and validates every
// response against the OpenAPI document.
type harness struct {
	app    *fiber.App
	store  server.Store
	router routers.Router
	// base, when set, is the address of a started server: requests go
	// over the network instead of through app.Test.
	base string
}

type harnessOption func(*server.Config, *[]fx.Option)

func withConfig(f func(*server.Config)) harnessOption {
	return func(c *server.Config, _ *[]fx.Option) { f(c) }
}

func withFx(o fx.Option) harnessOption {
	return func(_ *server.Config, opts *[]fx.Option) { *opts = append(*opts, o) }
}

func testConfig(store server.Store) server.Config {
	cfg := server.DefaultConfig()
	cfg.Store = store
	cfg.Demo = false
	cfg.AdminToken = adminToken
	cfg.BcryptCost = 4
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

func newHarness(t *testing.T, store server.Store, opts ...harnessOption) *harness {
	t.Helper()
	_, router := openAPI(t)
	cfg := testConfig(store)
	var fxOpts []fx.Option
	for _, o := range opts {
		o(&cfg, &fxOpts)
	}
	app, err := server.Build(cfg, fxOpts...)
	if err != nil {
		t.Fatalf("build the server: %v", err)
	}
	return &harness{app: app, store: store, router: router}
}

// response is an answer of the app.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// errorCode is the "error" of an error body.
func (r *response) errorCode() string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error
}

func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// req describes one request.
type req struct {
	method, path string
	token        string
	// body is sent as is when a string or []byte, as JSON otherwise.
	body   any
	header map[string]string
}

// do sends r and checks the answer against the OpenAPI document: the
// status must be documented for the operation and the body must match.
// A path the document does not know must be answered 404 not_found or 405
// method_not_allowed.
func (h *harness) do(t *testing.T, r req) *response {
	t.Helper()
	var body io.Reader = http.NoBody
	var raw []byte
	switch b := r.body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatalf("encode body: %v", err)
		}
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	hr := httptest.NewRequest(r.method, r.path, body)
	if raw != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	var res *http.Response
	var err error
	if h.base != "" {
		hr.RequestURI = ""
		hr.URL.Scheme, hr.URL.Host, hr.Host = "http", h.base, h.base
		res, err = http.DefaultClient.Do(hr)
	} else {
		res, err = h.app.Test(hr, -1)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	resp := &response{status: res.StatusCode, header: res.Header, body: out}
	h.validate(t, r, hr, resp)
	return resp
}

func (h *harness) validate(t *testing.T, r req, hr *http.Request, resp *response) {
	t.Helper()
	if resp.header.Get("X-Request-ID") == "" {
		t.Errorf("%s %s: no X-Request-ID in the answer", r.method, r.path)
	}
	route, params, err := h.router.FindRoute(hr)
	if err != nil {
		code := resp.errorCode()
		ok := resp.status == http.StatusNotFound && code == "not_found" ||
			resp.status == http.StatusMethodNotAllowed && code == "method_not_allowed"
		if !ok {
			t.Errorf("%s %s is not in the OpenAPI document (%v) but was answered %s", r.method, r.path, err, resp)
		}
		return
	}
	seenMu.Lock()
	seen[route.Method+" "+route.Path] = true
	seenMu.Unlock()
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route},
		Status:                 resp.status,
		Header:                 resp.header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	in.SetBodyBytes(resp.body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s answered %s, which the OpenAPI document does not allow: %v", r.method, r.path, resp, err)
	}
}

// expect checks the status and, when code is not empty, the error code.
func expect(t *testing.T, r *response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("got %s, want status %d %s", r, status, code)
	}
	if code != "" && r.errorCode() != code {
		t.Fatalf("got %s, want error %q", r, code)
	}
}

// TestMain checks, after a full run, that the tests answered every
// operation of the OpenAPI document at least once, so that the document
// cannot hold an operation nobody checks.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && doc != nil {
		var missing []string
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				if !seen[method+" "+path] {
					missing = append(missing, method+" "+path)
				}
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: operations of the OpenAPI document no test called:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// TestEveryRouteIsDocumented checks that the app's routes and the
// document's operations are the same set.
func TestEveryRouteIsDocumented(t *testing.T) {
	h := newHarness(t, memory.New())
	d, _ := openAPI(t)
	documented := map[string]bool{}
	for path, item := range d.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, r := range h.app.GetRoutes(true) {
		if r.Method == http.MethodHead {
			continue
		}
		segs := strings.Split(r.Path, "/")
		for i, s := range segs {
			switch {
			case strings.HasPrefix(s, ":"):
				// A parameter with a suffix (/og/events/:id.png) is
				// {id}.png in the document.
				name, ext, _ := strings.Cut(s[1:], ".")
				segs[i] = "{" + name + "}"
				if ext != "" {
					segs[i] += "." + ext
				}
			case s == "*": // the web app's assets: /assets/{file}, which may span segments
				segs[i] = "{file}"
			}
		}
		p := strings.Join(segs, "/")
		served[r.Method+" "+p] = true
		if p == "/api/v1/users/{id}/pnl/chart" {
			served[r.Method+" /api/v1/users/me/pnl/chart"] = true
		}
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("route %s is served but not in the OpenAPI document", k)
		}
	}
	var keys []string
	for k := range documented {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !served[k] {
			t.Errorf("operation %s is documented but not served", k)
		}
	}
}

func memoryStore() server.Store { return memory.New() }
