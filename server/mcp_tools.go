package server

// The tools of the MCP endpoint (module_mcp.go). Each is a thin handler
// like the HTTP routes': it checks the key's scope, calls the same
// market.Service method as its HTTP twin, and answers the same view
// (views.go) as structured content. A refusal is a tool error whose text
// is the HTTP API's error body ({"error": "...", "detail": "..."}), found
// in the twin route's error table, so that an agent reads the codes the
// API documents (insufficient_funds, market_not_found, ...).

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// mcpTools serves the tools.
type mcpTools struct {
	markets  *market.Service
	accounts *account.Service
	finder   eventFinder
	log      *slog.Logger
}

// The tools' names, with the scope each needs.
var mcpToolScopes = map[string]account.Scope{
	"search_events":  account.ScopeRead,
	"get_market":     account.ScopeRead,
	"quote":          account.ScopeRead,
	"list_positions": account.ScopeRead,
	"buy":            account.ScopeTrade,
	"sell":           account.ScopeTrade,
}

// mcpInstructions tell an agent what the server is and what its units are.
const mcpInstructions = `predictkit is a prediction market. An event holds pools (questions); a pool holds markets (answers), each traded as YES or NO shares against an automated market maker (LMSR).
Units: money is integer kopecks (100 kopecks = 1 RUB); one share pays 1 kopeck if its side wins, so 100 shares pay 1 RUB; yes_probability is the price of YES as a fraction 0..1; avg_price_bps is basis points per 100 shares (10000 = 1 RUB).
Find markets with search_events, read one with get_market, price a trade with quote before buy or sell, and read holdings with list_positions. Tools need the API key's scope: read for search_events, get_market, quote and list_positions; trade for buy and sell.
Errors come back as tool errors whose text is {"error": code, "detail": text}, with the codes of the HTTP API (insufficient_funds, market_not_found, market_closed, insufficient_shares, price_moved, insufficient_scope, invalid_request).`

// newMCPServer is the MCP server with every tool.
func newMCPServer(t *mcpTools, log *slog.Logger) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "predictkit", Title: "predictkit prediction market", Version: ReadBuild().Version},
		&mcp.ServerOptions{Instructions: mcpInstructions, Logger: log})
	read := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	trade := &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}
	mcp.AddTool(s, &mcp.Tool{Name: "search_events", Title: "Search events", Annotations: read,
		Description: "Lists the public events (each with its pools and markets, prices and tags), a page at a time. " +
			"Filter with q (words matched in names, rules and answers, English or Russian), tag (a tag slug) and status " +
			"(open, the default; resolved; all). sort asks for trending (the default), new, closing or volume; the answer's sort " +
			"says which order it is in. Pass next_cursor back as cursor for the next page (null on the last). Needs the read scope."},
		guarded(t, "search_events", t.searchEvents))
	mcp.AddTool(s, &mcp.Tool{Name: "get_market", Title: "Read a market", Annotations: read,
		Description: "Reads one market by id: its YES probability, volume, LMSR state and whether it trades, with its pool " +
			"(rules, margin, trading window, every market of the pool) and its event (name, tags). Needs the read scope."},
		guarded(t, "get_market", t.getMarket))
	mcp.AddTool(s, &mcp.Tool{Name: "quote", Title: "Price a trade", Annotations: read,
		Description: "Prices a trade without making it: a buy of side YES or NO for amount_kopecks (the budget, fee included), " +
			"or a sell of shares; give exactly one of the two. Answers the shares, cost_kopecks (buy) or payout_kopecks (sell), " +
			"fee_kopecks, avg_price_bps and the YES probability before and after. Needs the read scope."},
		guarded(t, "quote", t.quote))
	mcp.AddTool(s, &mcp.Tool{Name: "buy", Title: "Buy shares", Annotations: trade,
		Description: "Buys shares of side YES or NO of a market for amount_kopecks, fee included, paid from the balance " +
			"(or the bonus balance with use_bonus). Optional guards refuse the trade (price_moved) when the price moved: " +
			"max_cost_kopecks and min_shares. Answers the trade and the balances after it. Spends real money: quote first. Needs the trade scope."},
		guarded(t, "buy", t.buy))
	mcp.AddTool(s, &mcp.Tool{Name: "sell", Title: "Sell shares", Annotations: trade,
		Description: "Sells shares of side YES or NO of a market that the user holds. The optional guard min_payout_kopecks " +
			"refuses the trade (price_moved) when it would pay less. Answers the trade and the balances after it. Needs the trade scope."},
		guarded(t, "sell", t.sell))
	mcp.AddTool(s, &mcp.Tool{Name: "list_positions", Title: "List positions", Annotations: read,
		Description: "Lists the user's open positions (shares held per market and side, their cost, what selling them now " +
			"would pay, and the unrealized profit or loss) with the user's balances. Needs the read scope."},
		guarded(t, "list_positions", t.listPositions))
	s.AddReceivingMiddleware(argumentErrors)
	return s
}

// argumentErrors gives the SDK's own refusals of a tool call (arguments
// that do not match the tool's input schema) the shape of every other
// tool error: {"error": "invalid_request", "detail": "..."}.
func argumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError || len(r.Content) != 1 {
			return res, err
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); ok && !strings.HasPrefix(tc.Text, "{") {
			tc.Text = (&mcpToolError{body: errorBody{Error: "invalid_request", Detail: tc.Text}}).Error()
		}
		return res, err
	}
}

// mcpToolError is a refused tool call: its text is the HTTP API's error
// body.
type mcpToolError struct{ body errorBody }

func (e *mcpToolError) Error() string {
	b, _ := json.Marshal(e.body)
	return string(b)
}

// mcpCaller is the user a tool call acts for and the scopes of its key.
type mcpCaller struct {
	userID int64
	scopes []string
}

// guarded wraps tool name's handler: the call must come with the scope
// the tool needs (insufficient_scope otherwise, before anything is
// read), its errors become tool errors through table, and a panic is a
// logged internal_error, never a crash.
func guarded[In, Out any](t *mcpTools, name string, h func(context.Context, mcpCaller, In) (Out, *errorTable, error)) mcp.ToolHandlerFor[In, Out] {
	need := mcpToolScopes[name]
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (_ *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if v := recover(); v != nil {
				t.log.LogAttrs(ctx, slog.LevelError, "panic", slog.String("mcp_tool", name),
					slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
				err = &mcpToolError{body: errorBody{Error: "internal_error"}}
			}
		}()
		var c mcpCaller
		if ti := req.GetExtra().TokenInfo; ti != nil {
			c.userID, _ = ti.Extra[mcpUserID].(int64)
			c.scopes = ti.Scopes
		}
		if c.userID == 0 || !slices.Contains(c.scopes, string(need)) {
			return nil, out, &mcpToolError{body: errorBody{Error: "insufficient_scope",
				Detail: "the API key lacks the " + string(need) + " scope that " + name + " needs"}}
		}
		out, tbl, err := h(ctx, c, in)
		if err != nil {
			return nil, out, t.refusal(ctx, name, tbl, err)
		}
		return nil, out, nil
	}
}

// refusal is err as the tool error of a route with table tbl: the same
// code and detail as the HTTP answer; a 5xx is logged and shows nothing.
func (t *mcpTools) refusal(ctx context.Context, tool string, tbl *errorTable, err error) error {
	r := tbl.match(err)
	body := errorBody{Error: r.code}
	if r.status < http.StatusInternalServerError {
		body.Detail = r.detail
		if body.Detail == "" {
			body.Detail = detail(err)
		}
	} else {
		t.log.LogAttrs(ctx, slog.LevelError, "mcp tool failed", slog.String("mcp_tool", tool), slog.String("error", err.Error()))
	}
	return &mcpToolError{body: body}
}

// search_events.

type searchEventsIn struct {
	Q      string `json:"q,omitempty" jsonschema:"words to find in event names, rules and answers (English or Russian); empty matches every event"`
	Tag    string `json:"tag,omitempty" jsonschema:"a tag slug, such as football; empty is every tag"`
	Sort   string `json:"sort,omitempty" jsonschema:"trending (the default: 24 h volume), new, closing (closing soonest) or volume"`
	Status string `json:"status,omitempty" jsonschema:"open (the default), resolved or all"`
	Limit  int    `json:"limit,omitempty" jsonschema:"events per page, 1 to 100 (default 20)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page; omit for the first page"`
}

type searchEventsOut struct {
	Events     []eventJSON `json:"events"`
	NextCursor *string     `json:"next_cursor" jsonschema:"the cursor of the next page; null on the last page"`
	Sort       string      `json:"sort" jsonschema:"the order of this page"`
}

func (t *mcpTools) searchEvents(ctx context.Context, _ mcpCaller, in searchEventsIn) (searchEventsOut, *errorTable, error) {
	q := eventQuery{Q: in.Q, Tag: in.Tag, Sort: in.Sort, Status: in.Status, Limit: in.Limit, Cursor: in.Cursor}
	if err := checkEventQuery(&q); err != nil {
		return searchEventsOut{}, errsEvents, err
	}
	p, err := t.finder.FindEvents(ctx, q)
	if err != nil {
		return searchEventsOut{}, errsEvents, err
	}
	now := t.markets.Now()
	out := searchEventsOut{Events: make([]eventJSON, 0, len(p.Events)), Sort: p.Sort}
	for _, e := range p.Events {
		out.Events = append(out.Events, eventView(e, now))
	}
	if p.Next != "" {
		out.NextCursor = &p.Next
	}
	return out, nil, nil
}

// get_market.

type getMarketIn struct {
	MarketID int64 `json:"market_id" jsonschema:"the market's id"`
}

// mcpEventJSON is what get_market tells of a market's event.
type mcpEventJSON struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	NameRu   string   `json:"name_ru"`
	Tags     []string `json:"tags"`
	IsActive bool     `json:"is_active"`
}

type getMarketOut struct {
	Market marketJSON   `json:"market"`
	Pool   poolJSON     `json:"pool"`
	Event  mcpEventJSON `json:"event"`
}

func (t *mcpTools) getMarket(ctx context.Context, _ mcpCaller, in getMarketIn) (getMarketOut, *errorTable, error) {
	m, err := t.markets.Market(ctx, in.MarketID)
	if err != nil {
		return getMarketOut{}, errsMarket, err
	}
	p, err := t.markets.Pool(ctx, m.PoolID)
	if err != nil {
		return getMarketOut{}, errsMarket, err
	}
	e, err := t.markets.Event(ctx, m.EventID)
	if err != nil {
		return getMarketOut{}, errsMarket, err
	}
	now := t.markets.Now()
	out := getMarketOut{Pool: poolView(p, now), Event: mcpEventJSON{ID: e.ID, Name: e.Name, NameRu: e.NameRu, Tags: e.Tags, IsActive: e.IsActive}}
	if out.Event.Tags == nil {
		out.Event.Tags = []string{}
	}
	if err := withResolutions(ctx, t.markets, out.Pool.Markets, p.Markets); err != nil {
		return getMarketOut{}, errsMarket, err
	}
	out.Market = marketView(m, now)
	for _, pm := range out.Pool.Markets {
		if pm.ID == m.ID {
			out.Market = pm
		}
	}
	return out, nil, nil
}

// quote.

type quoteIn struct {
	MarketID      int64  `json:"market_id" jsonschema:"the market's id"`
	Side          string `json:"side" jsonschema:"YES or NO"`
	AmountKopecks int64  `json:"amount_kopecks,omitempty" jsonschema:"price a buy with this budget in kopecks, fee included"`
	Shares        int64  `json:"shares,omitempty" jsonschema:"price a sell of this many shares"`
}

func (t *mcpTools) quote(ctx context.Context, _ mcpCaller, in quoteIn) (quoteJSON, *errorTable, error) {
	side, err := parseSide(in.Side)
	if err != nil {
		return quoteJSON{}, errsQuote, err
	}
	if (in.AmountKopecks != 0) == (in.Shares != 0) {
		return quoteJSON{}, errsQuote, badRequest("amount_kopecks", "give exactly one of amount_kopecks (buy) or shares (sell)")
	}
	var q *market.Quote
	if in.AmountKopecks != 0 {
		q, err = t.markets.QuoteBuy(ctx, in.MarketID, side, in.AmountKopecks)
	} else {
		q, err = t.markets.QuoteSell(ctx, in.MarketID, side, in.Shares)
	}
	if err != nil {
		return quoteJSON{}, errsQuote, err
	}
	return quoteView(q), nil, nil
}

// buy and sell.

type buyIn struct {
	MarketID       int64  `json:"market_id" jsonschema:"the market's id"`
	Side           string `json:"side" jsonschema:"YES or NO"`
	AmountKopecks  int64  `json:"amount_kopecks" jsonschema:"what to spend in kopecks, fee included"`
	UseBonus       bool   `json:"use_bonus,omitempty" jsonschema:"pay from the bonus balance instead of the balance; a sale or a void returns bonus money to the bonus balance"`
	MaxCostKopecks int64  `json:"max_cost_kopecks,omitempty" jsonschema:"refuse the trade if it would cost more (0: no guard)"`
	MinShares      int64  `json:"min_shares,omitempty" jsonschema:"refuse the trade if it would buy fewer shares (0: no guard)"`
}

type sellIn struct {
	MarketID         int64  `json:"market_id" jsonschema:"the market's id"`
	Side             string `json:"side" jsonschema:"YES or NO"`
	Shares           int64  `json:"shares" jsonschema:"how many shares to sell"`
	MinPayoutKopecks int64  `json:"min_payout_kopecks,omitempty" jsonschema:"refuse the trade if it would pay less (0: no guard)"`
}

func (t *mcpTools) buy(ctx context.Context, c mcpCaller, in buyIn) (tradeJSON, *errorTable, error) {
	side, err := parseSide(in.Side)
	if err != nil {
		return tradeJSON{}, errsTrade, err
	}
	return t.execute(ctx, in.MarketID, market.Request{UserID: c.userID, Action: market.ActionBuy, Side: side,
		Amount: in.AmountKopecks, UseBonus: in.UseBonus, MaxCost: in.MaxCostKopecks, MinShares: in.MinShares})
}

func (t *mcpTools) sell(ctx context.Context, c mcpCaller, in sellIn) (tradeJSON, *errorTable, error) {
	side, err := parseSide(in.Side)
	if err != nil {
		return tradeJSON{}, errsTrade, err
	}
	return t.execute(ctx, in.MarketID, market.Request{UserID: c.userID, Action: market.ActionSell, Side: side,
		Shares: in.Shares, MinPayout: in.MinPayoutKopecks})
}

// execute runs a trade as POST /markets/{id}/buy and /sell do.
func (t *mcpTools) execute(ctx context.Context, marketID int64, req market.Request) (tradeJSON, *errorTable, error) {
	res, err := t.markets.Execute(ctx, marketID, req)
	if err != nil {
		return tradeJSON{}, errsTrade, err
	}
	return tradeView(res), nil, nil
}

// list_positions.

type listPositionsIn struct{}

type listPositionsOut struct {
	Positions    []positionJSON `json:"positions"`
	Balance      int64          `json:"balance" jsonschema:"kopecks"`
	BonusBalance int64          `json:"bonus_balance" jsonschema:"kopecks"`
	TotalBalance int64          `json:"total_balance" jsonschema:"kopecks"`
}

// errsPositions: the user's open positions (as in GET /auth/me).
var errsPositions = table("internal_error", goneUser)

func (t *mcpTools) listPositions(ctx context.Context, c mcpCaller, _ listPositionsIn) (listPositionsOut, *errorTable, error) {
	ps, err := t.markets.OpenPositions(ctx, c.userID)
	if err != nil {
		return listPositionsOut{}, errsPositions, err
	}
	b, err := t.accounts.Balances(ctx, c.userID)
	if err != nil {
		return listPositionsOut{}, errsPositions, err
	}
	out := listPositionsOut{Positions: make([]positionJSON, 0, len(ps)), Balance: b.Balance, BonusBalance: b.Bonus, TotalBalance: b.Total()}
	for _, p := range ps {
		out.Positions = append(out.Positions, positionView(p))
	}
	return out, nil, nil
}
