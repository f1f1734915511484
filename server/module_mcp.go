package server

// The MCP endpoint (docs/mcp.md): POST /mcp speaks the Model Context
// Protocol over its streamable HTTP transport, served by the official Go
// SDK, so that an AI agent can search events, read a market, quote,
// trade and list its positions with a personal API key. The tools
// (mcp_tools.go) call the same market.Service methods as the HTTP
// handlers, so every trade takes the same money path and ledger.
//
// The SDK handler is stateless and answers JSON (no sessions, no event
// streams): every request carries its key and stands alone, so any
// instance of a fleet can answer any request, and nothing is kept
// between requests. The route is a Fiber route like the others: the body
// limit, the strict Content-Type, the security headers, the access log
// and the metrics apply before the SDK sees a byte.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// MCPModule serves the MCP endpoint for agents.
var MCPModule = fx.Module("mcp", fx.Provide(mcpRoutes))

// MCPPath is where the MCP endpoint listens.
const MCPPath = "/mcp"

// mcpParams is what the MCP endpoint needs. Finder, when a module
// provides one, answers search_events (the events listing's search);
// without it the tool scans the public feed (feedFinder).
type mcpParams struct {
	fx.In
	Markets  *market.Service
	Accounts *account.Service
	Auth     *Auth
	Logger   *slog.Logger
	Finder   eventFinder `optional:"true"`
}

// mcpHandlers bridges Fiber to the SDK's net/http handler.
type mcpHandlers struct {
	auth *Auth
	sdk  http.Handler
}

func mcpRoutes(p mcpParams) RoutesOut {
	finder := p.Finder
	if finder == nil {
		finder = feedFinder{markets: p.Markets}
	}
	srv := newMCPServer(&mcpTools{markets: p.Markets, accounts: p.Accounts, finder: finder, log: p.Logger}, p.Logger)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: p.Logger})
	// The caller was authenticated before the SDK runs (handle); this
	// hands its TokenInfo to the SDK, which gives it to every tool in
	// the request's Extra.
	verified := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if ti, ok := ctx.Value(mcpCallerKey{}).(*auth.TokenInfo); ok {
			return ti, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	h := &mcpHandlers{auth: p.Auth, sdk: verified(sdk)}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: MCPPath, Errors: errsMCP, Handler: h.handle},
		// Stateless: no session to delete and no stream to open. Without
		// these the web app's page would answer a GET.
		{Method: http.MethodGet, Path: MCPPath, Errors: errsMCP, Handler: onlyPost},
		{Method: http.MethodDelete, Path: MCPPath, Errors: errsMCP, Handler: onlyPost},
	}}
}

// onlyPost answers 405 method_not_allowed, naming POST in Allow.
func onlyPost(c *fiber.Ctx) error {
	c.Set(fiber.HeaderAllow, http.MethodPost)
	return fiber.ErrMethodNotAllowed
}

// mcpCallerKey is the context key of the caller's *auth.TokenInfo.
type mcpCallerKey struct{}

// errMCPCredential: a request to /mcp without a personal API key in the
// Authorization header (none, a session token, only the cookie).
var errMCPCredential = errors.New("server: the MCP endpoint takes a personal API key")

// POST /mcp: one JSON-RPC message of the Model Context Protocol. Checks
// run 401 (no personal API key in Authorization, or one that is unknown
// or revoked: with WWW-Authenticate), 415 (not application/json), 429
// (a buy or sell past the key's user's trade budget); everything past
// authentication is answered in JSON-RPC: a malformed message is a
// JSON-RPC error (status 400), a refused tool call a tool error result.
var errsMCP = table("internal_error",
	on(errMCPCredential, http.StatusUnauthorized, "unauthorized").
		saying("Authorization: send Bearer with a personal API key (pak_…); session tokens and cookies are not accepted here"),
	unauthorized,
	goneUser,
)

// mcpChallenge is the WWW-Authenticate of a refused request.
const mcpChallenge = `Bearer realm="predictkit", error="invalid_token", error_description="a personal API key is required"`

// handle authenticates the caller by its API key, then lets the SDK
// answer the message.
func (h *mcpHandlers) handle(c *fiber.Ctx) error {
	if !account.IsAPIKey(bearer(c)) {
		c.Set(fiber.HeaderWWWAuthenticate, mcpChallenge)
		return errMCPCredential
	}
	cr, err := h.auth.Credential(c)
	if err != nil {
		if errors.Is(err, account.ErrUnauthorized) || errors.Is(err, account.ErrUserNotFound) {
			c.Set(fiber.HeaderWWWAuthenticate, mcpChallenge)
		}
		return err
	}
	if cr.Key == nil { // cannot be: the secret has a key's prefix
		c.Set(fiber.HeaderWWWAuthenticate, mcpChallenge)
		return errMCPCredential
	}
	if err := requireJSON(c); err != nil {
		return err
	}
	if code, msg := mcpCheckMessage(c.Body()); code != 0 {
		return sendJSONRPCError(c, http.StatusBadRequest, code, msg)
	}
	if tools := mcpToolCalls(c.Body()); len(tools) > 0 {
		c.Locals(localMCPTool, strings.Join(tools, ","))
	}
	r, err := adaptor.ConvertRequest(c, true)
	if err != nil {
		return badRequest("url", "cannot be read")
	}
	scopes := make([]string, len(cr.Key.Scopes))
	for i, s := range cr.Key.Scopes {
		scopes[i] = string(s)
	}
	ti := &auth.TokenInfo{UserID: strconv.FormatInt(cr.User.ID, 10), Scopes: scopes,
		Extra: map[string]any{mcpUserID: cr.User.ID}}
	r = r.WithContext(context.WithValue(c.UserContext(), mcpCallerKey{}, ti))
	var w bufferedResponse
	h.sdk.ServeHTTP(&w, r)
	return w.send(c)
}

// mcpUserID is the TokenInfo.Extra key of the caller's user id (int64).
const mcpUserID = "user_id"

// bufferedResponse is the SDK's answer, held until it is whole: in JSON
// mode the SDK writes one body and no stream.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}

func (w *bufferedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferedResponse) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// Flush is a no-op: the answer is sent whole.
func (w *bufferedResponse) Flush() {}

// send copies the answer to c. The SDK refuses what it cannot read
// (not JSON, not JSON-RPC, a batch, a wrong Accept) with a plain-text
// 4xx; that becomes a JSON-RPC error with the same status, so that a
// client only ever reads JSON.
func (w *bufferedResponse) send(c *fiber.Ctx) error {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	ct := w.header.Get(fiber.HeaderContentType)
	if status >= 400 && !strings.HasPrefix(ct, fiber.MIMEApplicationJSON) {
		code := jsonrpcInvalidRequest
		if !json.Valid(c.Body()) {
			code = jsonrpcParseError
		}
		msg := strings.TrimSpace(w.body.String())
		switch {
		case status >= 500:
			code = jsonrpcInternalError
		case strings.Contains(msg, "not handled"): // the SDK's jsonrpc2.ErrNotHandled
			code = jsonrpcMethodNotFound
		}
		return sendJSONRPCError(c, status, code, msg)
	}
	for k, vs := range w.header {
		if strings.EqualFold(k, fiber.HeaderContentLength) {
			continue
		}
		for _, v := range vs {
			c.Set(k, v)
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(status).Send(w.body.Bytes())
}

// sendJSONRPCError answers a JSON-RPC error with a null id.
func sendJSONRPCError(c *fiber.Ctx, status, code int, msg string) error {
	body, err := json.Marshal(jsonrpcErrorBody{JSONRPC: "2.0", Error: jsonrpcError{Code: code, Message: msg}})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(status).Send(body)
}

// mcpCheckMessage checks what the SDK would take without a word: body
// must be JSON, and each message a JSON-RPC 2.0 request, notification
// or response (a method, or an id with a result or an error). It answers
// the JSON-RPC error code and message of a body that is not, or 0.
func mcpCheckMessage(body []byte) (code int, msg string) {
	if !json.Valid(body) {
		return jsonrpcParseError, "parse error: the body is not JSON"
	}
	type message struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  *string         `json:"method"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	var msgs []message
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &msgs) != nil || len(msgs) == 0 {
			return jsonrpcInvalidRequest, "invalid request: a batch must be a non-empty array of JSON-RPC messages"
		}
	} else {
		var m message
		if json.Unmarshal(b, &m) != nil {
			return jsonrpcInvalidRequest, "invalid request: the body must be a JSON-RPC 2.0 message (an object)"
		}
		msgs = []message{m}
	}
	for _, m := range msgs {
		switch {
		case m.JSONRPC != "2.0":
			return jsonrpcInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
		case m.Method != nil && *m.Method == "":
			return jsonrpcInvalidRequest, `invalid request: "method" must not be empty`
		case m.Method == nil && (len(m.ID) == 0 || len(m.Result) == 0 && len(m.Error) == 0):
			return jsonrpcInvalidRequest, `invalid request: a message needs a "method", or an "id" with a "result" or an "error"`
		}
	}
	return 0, ""
}

// JSON-RPC 2.0 error codes.
const (
	jsonrpcParseError     = -32700
	jsonrpcInvalidRequest = -32600
	jsonrpcMethodNotFound = -32601
	jsonrpcInternalError  = -32603
)

// jsonrpcErrorBody is a JSON-RPC error answer to a message whose id could
// not be read (null).
type jsonrpcErrorBody struct {
	JSONRPC string       `json:"jsonrpc"`
	ID      *int64       `json:"id"`
	Error   jsonrpcError `json:"error"`
}

type jsonrpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// mcpTradeCall reports whether body is a call of the buy or sell tool
// (a JSON-RPC tools/call; a batch when any of its messages is one), for
// the trade budget (rateLimits.byMCPTrade).
func mcpTradeCall(body []byte) bool {
	for _, name := range mcpToolCalls(body) {
		if mcpToolScopes[name] == account.ScopeTrade {
			return true
		}
	}
	return false
}

// mcpToolCalls are the names of the tools body calls, known tools only
// (so that no client's text reaches the access log).
func mcpToolCalls(body []byte) []string {
	type call struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var msgs []call
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &msgs) != nil {
			return nil
		}
	} else {
		var one call
		if json.Unmarshal(b, &one) != nil {
			return nil
		}
		msgs = []call{one}
	}
	var names []string
	for _, m := range msgs {
		if _, known := mcpToolScopes[m.Params.Name]; known && m.Method == "tools/call" {
			names = append(names, m.Params.Name)
		}
	}
	return names
}
