package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/predictkit/predictkit/server"
)

// appTransport sends the MCP client's requests to the harness's app
// (app.Test), so the SDK's own client drives the real route.
type appTransport struct{ h *harness }

func (a appTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return a.h.app.Test(r, -1)
}

// mcpConnect opens an MCP session over streamable HTTP with key.
func (h *harness) mcpConnect(t *testing.T, key string) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: bearerTransport{key: key, next: appTransport{h}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "predictkit-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://predictkit.test" + server.MCPPath, HTTPClient: hc, MaxRetries: -1}, nil)
}

func (h *harness) mcpSession(t *testing.T, key string) *mcp.ClientSession {
	t.Helper()
	s, err := h.mcpConnect(t, key)
	if err != nil {
		t.Fatalf("connect to the MCP endpoint: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

type bearerTransport struct {
	key  string
	next http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return b.next.RoundTrip(r)
}

// callTool calls a tool and decodes its structured result into out; it
// answers the tool error's text, "" when the call succeeded.
func callTool(t *testing.T, s *mcp.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError {
		if len(res.Content) != 1 {
			t.Fatalf("%s: a tool error with %d contents", name, len(res.Content))
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if out != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s answered %s: %v", name, raw, err)
		}
	}
	return ""
}

// toolError is the HTTP error body a tool error carries.
func toolError(t *testing.T, text string) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &e); err != nil || e.Error == "" {
		t.Fatalf("the tool error %q is not an error body", text)
	}
	return e.Error
}

// mcpPost sends one raw message to POST /mcp.
func (h *harness) mcpPost(t *testing.T, token string, body any) *response {
	t.Helper()
	return h.do(t, req{method: http.MethodPost, path: server.MCPPath, token: token, body: body,
		header: map[string]string{"Accept": "application/json, text/event-stream"}})
}

func TestMCP(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		w := newWorld(t, h)
		both := h.createKey(t, w.alice.token, "Agent", "read", "trade")
		reader := h.createKey(t, w.alice.token, "Reader", "read")
		trader := h.createKey(t, w.alice.token, "Trader", "trade")
		s := h.mcpSession(t, both.Key)

		t.Run("the server introduces itself and lists its six tools with their schemas", func(t *testing.T) {
			if init := s.InitializeResult(); init.ServerInfo.Name != "predictkit" || init.Instructions == "" {
				t.Fatalf("initialize answered %+v", init)
			}
			res, err := s.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
					t.Errorf("tool %s lacks a description or a schema", tool.Name)
				}
			}
			slices.Sort(names)
			if want := []string{"buy", "get_market", "list_positions", "quote", "search_events", "sell"}; !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
		})

		t.Run("search_events finds the event by its words and tag, and pages with a cursor", func(t *testing.T) {
			var out struct {
				Events []struct {
					ID    int64     `json:"id"`
					Name  string    `json:"name"`
					Pools []apiPool `json:"pools"`
				} `json:"events"`
				NextCursor *string `json:"next_cursor"`
				Sort       string  `json:"sort"`
			}
			if e := callTool(t, s, "search_events", map[string]any{"q": "world CUP"}, &out); e != "" {
				t.Fatal(e)
			}
			if len(out.Events) != 1 || out.Events[0].ID != w.event.ID || out.NextCursor != nil || out.Sort == "" {
				t.Fatalf("search answered %+v", out)
			}
			if got := out.Events[0].Pools[0].Markets[0]; got.ID != w.a1.ID || got.YesProbability <= 0 {
				t.Fatalf("the event's first market %+v", got)
			}
			if e := callTool(t, s, "search_events", map[string]any{"q": "no such words"}, &out); e != "" || len(out.Events) != 0 {
				t.Fatalf("a search for nothing answered %v %s", out.Events, e)
			}
			if e := callTool(t, s, "search_events", map[string]any{"tag": "no-such-tag"}, &out); e != "" || len(out.Events) != 0 {
				t.Fatalf("an unknown tag answered %v %s", out.Events, e)
			}
			second := h.createEvent(t, w.creator.token, twoPoolEvent("Second cup"))
			h.activate(t, w.creator.token, second.ID, true)
			if e := callTool(t, s, "search_events", map[string]any{"limit": 1, "sort": "new"}, &out); e != "" {
				t.Fatal(e)
			}
			if len(out.Events) != 1 || out.Events[0].ID != second.ID || out.NextCursor == nil {
				t.Fatalf("the first page %+v", out)
			}
			if e := callTool(t, s, "search_events", map[string]any{"limit": 1, "sort": "new", "cursor": *out.NextCursor}, &out); e != "" {
				t.Fatal(e)
			}
			if len(out.Events) != 1 || out.Events[0].ID != w.event.ID || out.NextCursor != nil {
				t.Fatalf("the second page %+v", out)
			}
			done := h.createEvent(t, w.creator.token, twoPoolEvent("Finished cup"))
			h.activate(t, w.creator.token, done.ID, true)
			for _, p := range done.Pools {
				for _, m := range p.Markets {
					r := h.do(t, req{method: http.MethodPost, path: w.closePath(done.ID, p.ID, m.ID), token: w.creator.token, body: map[string]any{"won_side": "NO"}})
					expect(t, r, http.StatusOK, "")
				}
			}
			ids := func(args map[string]any) []int64 {
				t.Helper()
				if e := callTool(t, s, "search_events", args, &out); e != "" {
					t.Fatal(e)
				}
				var got []int64
				for _, e := range out.Events {
					got = append(got, e.ID)
				}
				return got
			}
			if got := ids(map[string]any{"status": "resolved"}); !slices.Equal(got, []int64{done.ID}) {
				t.Fatalf("status resolved: %v, want %d", got, done.ID)
			}
			if got := ids(map[string]any{"q": "cup"}); !slices.Equal(got, []int64{second.ID, w.event.ID}) {
				t.Fatalf("the open events: %v", got)
			}
			if got := ids(map[string]any{"q": "cup", "status": "all"}); !slices.Equal(got, []int64{done.ID, second.ID, w.event.ID}) {
				t.Fatalf("all events: %v", got)
			}
			if got := ids(map[string]any{"q": "RULES b1"}); len(got) != 2 {
				t.Fatalf("words of a pool's rules and of an answer: %v", got)
			}
			if got := ids(map[string]any{"q": "rules b2"}); len(got) != 0 {
				t.Fatalf("a word no event holds matched: %v", got)
			}
			for _, bad := range []map[string]any{{"sort": "random"}, {"status": "closed"}, {"limit": 500}, {"cursor": "nonsense"}} {
				if code := toolError(t, callTool(t, s, "search_events", bad, nil)); code != "invalid_request" {
					t.Errorf("search %v: %s, want invalid_request", bad, code)
				}
			}
		})

		t.Run("get_market reads the market with its pool and event", func(t *testing.T) {
			var out struct {
				Market apiMarket `json:"market"`
				Pool   apiPool   `json:"pool"`
				Event  struct {
					ID   int64    `json:"id"`
					Name string   `json:"name"`
					Tags []string `json:"tags"`
				} `json:"event"`
			}
			if e := callTool(t, s, "get_market", map[string]any{"market_id": w.a1.ID}, &out); e != "" {
				t.Fatal(e)
			}
			if out.Market != h.market(t, w.a1.ID) || out.Pool.ID != w.poolA.ID || len(out.Pool.Markets) != len(w.poolA.Markets) || out.Event.ID != w.event.ID || out.Event.Name != "World cup" {
				t.Fatalf("get_market answered %+v", out)
			}
			if code := toolError(t, callTool(t, s, "get_market", map[string]any{"market_id": 987654321}, nil)); code != "market_not_found" {
				t.Fatalf("an unknown market: %s", code)
			}
		})

		var bought apiTrade
		t.Run("quote prices a buy as the HTTP quote does, and buy takes exactly the cost from the balance", func(t *testing.T) {
			var q map[string]any
			if e := callTool(t, s, "quote", map[string]any{"market_id": w.a1.ID, "side": "YES", "amount_kopecks": 10000}, &q); e != "" {
				t.Fatal(e)
			}
			r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d/quote?side=YES&amount_kopecks=10000", w.a1.ID)})
			var httpQ map[string]any
			r.decode(t, &httpQ)
			if fmt.Sprint(q) != fmt.Sprint(httpQ) {
				t.Fatalf("the tool quoted %v, HTTP %v", q, httpQ)
			}
			before := h.me(t, w.alice.token)
			if e := callTool(t, s, "buy", map[string]any{"market_id": w.a1.ID, "side": "YES", "amount_kopecks": 10000, "max_cost_kopecks": 10000}, &bought); e != "" {
				t.Fatal(e)
			}
			after := h.me(t, w.alice.token)
			if bought.CostKopecks <= 0 || bought.CostKopecks > 10000 || bought.Shares != int64(q["shares"].(float64)) || float64(bought.CostKopecks) != q["cost_kopecks"].(float64) {
				t.Fatalf("bought %+v after the quote %v", bought, q)
			}
			if after.Balance != before.Balance-bought.CostKopecks || bought.Balance != after.Balance {
				t.Fatalf("balance %d → %d, the trade cost %d and says %d", before.Balance, after.Balance, bought.CostKopecks, bought.Balance)
			}
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("the ledger does not balance: %v", problems)
			}
		})

		t.Run("sell pays the proceeds into the balance and list_positions shows what is left", func(t *testing.T) {
			before := h.me(t, w.alice.token)
			var sold apiTrade
			if e := callTool(t, s, "sell", map[string]any{"market_id": w.a1.ID, "side": "YES", "shares": 1000}, &sold); e != "" {
				t.Fatal(e)
			}
			if sold.PayoutKopecks <= 0 || h.me(t, w.alice.token).Balance != before.Balance+sold.PayoutKopecks {
				t.Fatalf("sold %+v; balance before %d", sold, before.Balance)
			}
			var out struct {
				Positions []apiPosition `json:"positions"`
				Balance   int64         `json:"balance"`
			}
			if e := callTool(t, s, "list_positions", nil, &out); e != "" {
				t.Fatal(e)
			}
			if len(out.Positions) != 1 || out.Positions[0].MarketID != w.a1.ID || out.Positions[0].Side != "YES" ||
				out.Positions[0].Amount != bought.Shares-1000 || out.Balance != h.me(t, w.alice.token).Balance {
				t.Fatalf("positions %+v", out)
			}
			if ok, _, problems := h.audit(t); !ok {
				t.Fatalf("the ledger does not balance: %v", problems)
			}
		})

		t.Run("the market's refusals come back with the HTTP API's codes and change nothing", func(t *testing.T) {
			before := h.me(t, w.alice.token)
			cases := []struct {
				tool string
				args map[string]any
				code string
			}{
				{"buy", map[string]any{"market_id": w.a1.ID, "side": "YES", "amount_kopecks": 50_000_000}, "insufficient_funds"},
				{"buy", map[string]any{"market_id": w.a1.ID, "side": "MAYBE", "amount_kopecks": 100}, "invalid_request"},
				{"buy", map[string]any{"market_id": 987654321, "side": "YES", "amount_kopecks": 100}, "market_not_found"},
				{"sell", map[string]any{"market_id": w.b1.ID, "side": "NO", "shares": 10}, "insufficient_shares"},
				{"buy", map[string]any{"market_id": w.a1.ID, "side": "YES", "amount_kopecks": 10000, "min_shares": 1_000_000}, "price_moved"},
				{"quote", map[string]any{"market_id": w.a1.ID, "side": "YES"}, "invalid_request"},
				{"get_market", map[string]any{"market_id": "one"}, "invalid_request"},
				{"buy", map[string]any{"market_id": w.a1.ID, "side": "YES"}, "invalid_request"},
			}
			for _, c := range cases {
				if code := toolError(t, callTool(t, s, c.tool, c.args, nil)); code != c.code {
					t.Errorf("%s %v: %s, want %s", c.tool, c.args, code, c.code)
				}
			}
			if after := h.me(t, w.alice.token); after.Balance != before.Balance || len(after.Positions) != len(before.Positions) {
				t.Fatalf("a refused call changed the account: %+v → %+v", before, after)
			}
		})

		t.Run("a key without the trade scope cannot buy, and one without read cannot read", func(t *testing.T) {
			before := h.me(t, w.alice.token)
			rs := h.mcpSession(t, reader.Key)
			if code := toolError(t, callTool(t, rs, "buy", map[string]any{"market_id": w.a1.ID, "side": "YES", "amount_kopecks": 1000}, nil)); code != "insufficient_scope" {
				t.Fatalf("a read key's buy: %s", code)
			}
			if code := toolError(t, callTool(t, rs, "sell", map[string]any{"market_id": w.a1.ID, "side": "YES", "shares": 10}, nil)); code != "insufficient_scope" {
				t.Fatalf("a read key's sell: %s", code)
			}
			if after := h.me(t, w.alice.token); after.Balance != before.Balance || after.Positions[0].Amount != before.Positions[0].Amount {
				t.Fatalf("a refused buy changed the account: %+v → %+v", before, after)
			}
			if e := callTool(t, rs, "get_market", map[string]any{"market_id": w.a1.ID}, nil); e != "" {
				t.Fatalf("a read key cannot read: %s", e)
			}
			ts := h.mcpSession(t, trader.Key)
			if code := toolError(t, callTool(t, ts, "list_positions", nil, nil)); code != "insufficient_scope" {
				t.Fatalf("a trade key's list_positions: %s", code)
			}
		})

		t.Run("without a valid personal API key the endpoint answers 401 with a challenge", func(t *testing.T) {
			initialize := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
				"params": map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "curl", "version": "1"}}}
			for name, token := range map[string]string{"no key": "", "an unknown key": "pak_" + strings.Repeat("x", 43), "a session token": w.alice.token} {
				r := h.mcpPost(t, token, initialize)
				expect(t, r, http.StatusUnauthorized, "unauthorized")
				if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer ") {
					t.Errorf("%s: WWW-Authenticate %q", name, r.header.Get("WWW-Authenticate"))
				}
			}
			if _, err := h.mcpConnect(t, ""); err == nil {
				t.Fatal("the SDK's client connected without a key")
			}
			r := h.do(t, req{method: http.MethodPost, path: server.MCPPath, body: "{}", header: map[string]string{
				"Content-Type": "text/plain", "Authorization": "Bearer " + both.Key}})
			expect(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
		})

		t.Run("a malformed message is a JSON-RPC error, never a 500", func(t *testing.T) {
			for _, body := range []string{"{not json", `{"jsonrpc":"2.0","id":1}`, `[1,2]`, `"text"`} {
				r := h.mcpPost(t, both.Key, body)
				var e struct {
					JSONRPC string `json:"jsonrpc"`
					Error   struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				r.decode(t, &e)
				if r.status != http.StatusBadRequest || e.JSONRPC != "2.0" || e.Error.Code >= 0 || e.Error.Message == "" {
					t.Errorf("%s answered %s", body, r)
				}
			}
			r := h.mcpPost(t, both.Key, "{not json")
			var e struct {
				Error struct{ Code int } `json:"error"`
			}
			r.decode(t, &e)
			if e.Error.Code != -32700 {
				t.Fatalf("not JSON: code %d, want -32700", e.Error.Code)
			}
			r = h.do(t, req{method: http.MethodPost, path: server.MCPPath, token: both.Key, body: map[string]any{"jsonrpc": "2.0", "id": 6, "method": "ping"}})
			r.decode(t, &e)
			if r.status != http.StatusBadRequest || e.Error.Code != -32600 {
				t.Fatalf("without the transport's Accept header: %s", r)
			}
			r = h.mcpPost(t, both.Key, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "no/such/method"})
			r.decode(t, &e)
			if r.status >= 500 || e.Error.Code != -32601 {
				t.Fatalf("an unknown method answered %s, want the code -32601", r)
			}
		})

		t.Run("GET and DELETE are 405: the endpoint keeps no sessions and opens no streams", func(t *testing.T) {
			for _, m := range []string{http.MethodGet, http.MethodDelete} {
				r := h.do(t, req{method: m, path: server.MCPPath, token: both.Key})
				expect(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
				if r.header.Get("Allow") != http.MethodPost {
					t.Errorf("%s: Allow %q", m, r.header.Get("Allow"))
				}
			}
		})

		t.Run("a revoked key stops working at once", func(t *testing.T) {
			k := h.createKey(t, w.alice.token, "Short-lived", "read")
			ks := h.mcpSession(t, k.Key)
			if e := callTool(t, ks, "list_positions", nil, nil); e != "" {
				t.Fatal(e)
			}
			r := h.do(t, req{method: http.MethodDelete, path: fmt.Sprintf("/api/v1/auth/api-keys/%d", k.ID), token: w.alice.token})
			expect(t, r, http.StatusNoContent, "")
			if _, err := ks.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_positions", Arguments: map[string]any{}}); err == nil {
				t.Fatal("a revoked key still calls tools")
			}
			if _, err := h.mcpConnect(t, k.Key); err == nil {
				t.Fatal("a revoked key still connects")
			}
		})
	})
}

func TestMCPTradesSpendTheTradeBudget(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store", func(t *testing.T) {
			h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.RateTrade = server.Rate{N: 2, Per: time.Hour} }))
			w := newWorld(t, h)
			k := h.createKey(t, w.alice.token, "Agent", "read", "trade")
			s := h.mcpSession(t, k.Key)
			buy := map[string]any{"market_id": w.a1.ID, "side": "YES", "amount_kopecks": 1000}
			for range 5 { // reads are not counted
				if e := callTool(t, s, "get_market", map[string]any{"market_id": w.a1.ID}, nil); e != "" {
					t.Fatal(e)
				}
			}
			if e := callTool(t, s, "buy", buy, nil); e != "" {
				t.Fatal(e)
			}
			h.buy(t, w.alice.token, w.a1.ID, "YES", 1000) // the same user's budget, over HTTP
			r := h.mcpPost(t, k.Key, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": map[string]any{"name": "buy", "arguments": buy}})
			expect(t, r, http.StatusTooManyRequests, "rate_limited")
			if r.header.Get("Retry-After") == "" {
				t.Fatal("no Retry-After")
			}
		})
	}
}

// FuzzMCP sends any body to POST /mcp with a valid key: the answer is
// never a 5xx and always JSON (or an empty 202 for a notification).
//
//	go test -run '^$' -fuzz '^FuzzMCP$' -fuzztime 1m ./server/
func FuzzMCP(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quote","arguments":{"market_id":1,"side":"YES","amount_kopecks":100}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"buy","arguments":{"market_id":1,"side":"YES","amount_kopecks":-5}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sell","arguments":{"market_id":1e400}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"q":"\u0000","cursor":"Zjk5OTk5OTk5OTk5OTk5OTk5OTk5"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `[]`, `{}`, `null`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	var (
		once sync.Once
		h    *harness
		key  string
	)
	f.Fuzz(func(t *testing.T, body []byte) {
		once.Do(func() { // the harness's helpers take a *testing.T
			h = newHarness(t, memoryStore())
			w := newWorld(t, h)
			key = h.createKey(t, w.alice.token, "Fuzz", "read", "trade").Key
		})
		if h == nil || len(body) == 0 {
			t.Skip()
		}
		hr, err := http.NewRequest(http.MethodPost, server.MCPPath, strings.NewReader(string(body)))
		if err != nil {
			t.Skip()
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		hr.Header.Set("Authorization", "Bearer "+key)
		res, err := h.app.Test(hr, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var v any
		if res.StatusCode >= 500 || res.StatusCode != http.StatusAccepted && json.NewDecoder(res.Body).Decode(&v) != nil {
			t.Fatalf("%q answered %d, not JSON or a server error", body, res.StatusCode)
		}
	})
}

func TestMCPAccessLog(t *testing.T) {
	var logs syncBuffer
	h := newHarness(t, memoryStore(), withConfig(func(c *server.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.LogLevel = "debug"
	}))
	w := newWorld(t, h)
	k := h.createKey(t, w.alice.token, "Agent", "read", "trade")
	s := h.mcpSession(t, k.Key)
	if e := callTool(t, s, "buy", map[string]any{"market_id": w.a1.ID, "side": "NO", "amount_kopecks": 2000}, nil); e != "" {
		t.Fatal(e)
	}
	t.Run("the request's line names the user, the key and the tool", func(t *testing.T) {
		var found bool
		for _, l := range logLines(t, logs.String()) {
			if l["msg"] == "request" && l["route"] == server.MCPPath && l["mcp_tool"] == "buy" {
				found = true
				if l["status"] != float64(http.StatusOK) || l["user_id"] != float64(w.alice.id) || l["api_key_id"] != float64(k.ID) {
					t.Errorf("the buy's line is %v", l)
				}
			}
		}
		if !found {
			t.Fatalf("no access log line for the buy:\n%s", logs.String())
		}
	})
	t.Run("no line holds the key", func(t *testing.T) {
		if strings.Contains(logs.String(), k.Key) || strings.Contains(logs.String(), k.Key[4:]) {
			t.Fatal("the API key was logged")
		}
	})
}
