package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// MarketModule provides the market service and the routes of events,
// pools, markets, trading, positions, the PnL chart, the public feeds,
// the trades export (market_export.go) and tags (module_tags.go).
var MarketModule = fx.Module("market",
	fx.Provide(newTrader, newMarketService, marketRoutes, exportRoutes, tagRoutes, amendRoutes, challengeRoutes),
	fx.Invoke(runChallengeWorker),
)

// newTrader is the group commit every trade goes through, shared by the
// market and partner services so that their trades on one market batch
// together.
func newTrader(cfg Config, store market.Store, m *Metrics) market.Trader {
	b := market.NewBatcher(store, cfg.TradeBatchSize, cfg.TradeBatchWait)
	b.MaxInFlight = cfg.TradeBatchInFlight
	return instrumentTrader(b, m)
}

func newMarketService(cfg Config, store market.Store, accounts *account.Service, trader market.Trader) *market.Service {
	s := market.NewService(store, accounts)
	s.Trader = trader
	s.Creators = market.CreatorRules{
		MaxOpenEvents:     int64(cfg.CreatorMaxOpenEvents),
		MaxSubsidyKopecks: cfg.CreatorMaxSubsidyKopecks,
		NoOwnTrades:       !cfg.CreatorsMayTradeOwn,
	}
	s.Challenge, s.DisputeBond = cfg.ResolutionChallenge, cfg.DisputeBondKopecks
	s.Proposals = market.ProposalRules{On: cfg.Proposals, AnteKopecks: cfg.ProposalAnteKopecks}
	return s
}

// marketHandlers serves the market routes: events, pools, markets,
// quotes, trades, positions, the PnL chart and the public feeds.
type marketHandlers struct {
	markets *market.Service
	auth    *Auth
	metrics *Metrics
}

// marketRoutes lists the market routes. Each handler below follows its
// error table, which says what the route answers and in which order.
func marketRoutes(markets *market.Service, auth *Auth, admin *AdminAuth, metrics *Metrics) RoutesOut {
	h := &marketHandlers{markets: markets, auth: auth, metrics: metrics}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/users/:id/pnl/chart", Errors: errsPnLChart, Handler: h.handlePnLChart},
		{Method: http.MethodGet, Path: "/api/v1/users/me/positions/closed", Errors: errsClosedPosition, Handler: h.handleClosedPositions},
		{Method: http.MethodGet, Path: "/api/v1/users/me/trades", Errors: errsUserTrades, Handler: h.handleUserTrades},
		{Method: http.MethodGet, Path: "/api/v1/pools/:id", Errors: errsPool, Handler: h.handlePool},
		{Method: http.MethodPatch, Path: "/api/v1/pools/:id", Errors: errsMoveFinish, Handler: h.handleMoveFinish},
		{Method: http.MethodPatch, Path: "/api/v1/admin/pools/:id", Errors: errsAdminMoveFinish, Handler: admin.guard(h.handleAdminMoveFinish)},
		{Method: http.MethodPost, Path: "/api/v1/pools/:id/answers", Errors: errsAddAnswer, Handler: h.handleAddAnswer},
		{Method: http.MethodPost, Path: "/api/v1/admin/pools/:id/answers", Errors: errsAdminAddAnswer, Handler: admin.guard(h.handleAdminAddAnswer)},
		{Method: http.MethodGet, Path: "/api/v1/market/trades/latest", Errors: errsLatestTrades, Handler: h.handleLatestTrades},
		{Method: http.MethodPost, Path: "/api/v1/events/:id/active", Errors: errsEventActive, Handler: h.handleEventActive},
		{Method: http.MethodPost, Path: "/api/v1/events/:id/pools/:pool_id/markets/:market_id/close", Errors: errsMarketClose, Handler: h.handleMarketClose},
		{Method: http.MethodPost, Path: "/api/v1/events", Errors: errsCreateEvent, Handler: h.handleCreateEvent},
		{Method: http.MethodGet, Path: "/api/v1/events", Errors: errsEvents, Handler: h.handleEvents},
		{Method: http.MethodGet, Path: "/api/v1/events/:id", Errors: errsEvent, Handler: h.handleEvent},
		{Method: http.MethodGet, Path: "/api/v1/markets/:market_id", Errors: errsMarket, Handler: h.handleMarket},
		{Method: http.MethodGet, Path: "/api/v1/markets/:market_id/quote", Errors: errsQuote, Handler: h.handleQuote},
		{Method: http.MethodPost, Path: "/api/v1/markets/:market_id/buy", Errors: errsTrade, Handler: h.handleBuy},
		{Method: http.MethodPost, Path: "/api/v1/markets/:market_id/sell", Errors: errsTrade, Handler: h.handleSell},
		{Method: http.MethodGet, Path: "/api/v1/markets/:market_id/history", Errors: errsHistory, Handler: h.handleHistory},
		{Method: http.MethodGet, Path: "/api/v1/markets/:market_id/candles", Errors: errsCandles, Handler: h.handleCandles},
	}}
}

// GET /pools/{id}: one pool with its markets and metadata. Checks run 400
// invalid_pool_id, 404 pool_not_found.
var errsPool = table("internal_error",
	on(errInvalidID, http.StatusBadRequest, "invalid_pool_id"),
	on(market.ErrPoolNotFound, http.StatusNotFound, "pool_not_found"),
)

// handlePool answers one pool.
func (h *marketHandlers) handlePool(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	p, err := h.markets.Pool(c.UserContext(), id)
	if err != nil {
		return err
	}
	v := poolView(p, h.markets.Now())
	if err := withResolutions(c.UserContext(), h.markets, v.Markets, p.Markets); err != nil {
		return err
	}
	return sendJSON(c, &v)
}

// finishBody is the body of PATCH /pools/{id} and /admin/pools/{id}: the
// new end of the pool's trading window.
type finishBody struct {
	FinishAt *time.Time `json:"finish_at" validate:"required"`
}

// errResolvedWindow is the 409 of a move on a pool whose market is
// resolved.
var errResolvedWindow = on(market.ErrResolved, http.StatusConflict, "market_resolved").
	saying("a market of the pool is resolved: its trading window is over")

// PATCH /pools/{id}: the event's creator moves the end of the pool's
// trading window (finish_at), earlier or later. Checks run 401, 400
// invalid_pool_id, 400 invalid_request (the body), 404 pool_not_found,
// 403 forbidden, 400 invalid_request (finish_at not in the future, or not
// after live_at), 409 market_resolved.
var errsMoveFinish = table("internal_error",
	unauthorized,
	on(errInvalidID, http.StatusBadRequest, "invalid_pool_id"),
	on(market.ErrPoolNotFound, http.StatusNotFound, "pool_not_found"),
	on(market.ErrForbidden, http.StatusForbidden, "forbidden"),
	errResolvedWindow,
	// The caller's account vanished under a valid token.
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
)

// handleMoveFinish moves a pool's finish_at for its event's creator and
// answers the pool.
func (h *marketHandlers) handleMoveFinish(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, b, err := idAndBody[finishBody](c, "id")
	if err != nil {
		return err
	}
	p, err := h.markets.MoveFinish(c.UserContext(), u.ID, id, *b.FinishAt)
	if err != nil {
		return err
	}
	v := poolView(p, h.markets.Now())
	return sendJSON(c, &v)
}

// PATCH /admin/pools/{id}: the operator moves any pool's finish_at.
// Checks run as on every operator route (adminRules), then 404
// pool_not_found, 400 invalid_request (finish_at), 409 market_resolved.
var errsAdminMoveFinish = table("internal_error", slices.Concat(adminRules, []rule{
	on(market.ErrPoolNotFound, http.StatusNotFound, "pool_not_found"),
	errResolvedWindow,
})...)

// handleAdminMoveFinish moves a pool's finish_at for the operator and
// answers the pool.
func (h *marketHandlers) handleAdminMoveFinish(c *fiber.Ctx) error {
	id, b, err := idAndBody[finishBody](c, "id")
	if err != nil {
		return err
	}
	p, err := h.markets.OperatorMoveFinish(c.UserContext(), id, *b.FinishAt)
	if err != nil {
		return err
	}
	v := poolView(p, h.markets.Now())
	return sendJSON(c, &v)
}

// GET /market/trades/latest: the public feed of the latest trades. It
// refuses nothing; a failure is 500 INTERNAL_ERROR (upper case).
var errsLatestTrades = table("INTERNAL_ERROR")

// handleLatestTrades answers the feed of the latest trades.
func (h *marketHandlers) handleLatestTrades(c *fiber.Ctx) error {
	ts, err := h.markets.LatestTrades(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]simpleTradeJSON, 0, len(ts))
	for _, t := range ts {
		out = append(out, simpleTradeView(t))
	}
	return c.JSON(out)
}

// POST /events/{id}/active: the event's creator shows or hides it. Checks
// run 401, 404, 403, 400 ("event not found", "invalid request": the
// codes are phrases here), 409 invalid_state (showing a proposal the
// operator has not approved).
var errsEventActive = table("internal_error",
	unauthorized,
	on(errInvalidID, http.StatusNotFound, "event not found"),
	on(market.ErrEventNotFound, http.StatusNotFound, "event not found"),
	on(market.ErrForbidden, http.StatusForbidden, "forbidden"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid request"),
	on(errBadRequest, http.StatusBadRequest, "invalid request"),
	on(market.ErrNotApproved, http.StatusConflict, "invalid_state").saying(notApprovedDetail),
)

// handleEventActive shows or hides an event. The body is read leniently
// and the service decides after its 404 and 403: an is_active that is
// missing or not a boolean is its 400.
func (h *marketHandlers) handleEventActive(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := requireJSON(c); err != nil {
		return err
	}
	var active *bool
	if raw, ok := lenientField(c.Body(), "is_active"); ok {
		switch string(bytes.TrimSpace(raw)) {
		case "true":
			t := true
			active = &t
		case "false":
			f := false
			active = &f
		}
	}
	if err := h.markets.SetActive(c.UserContext(), u.ID, id, active); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// POST /events/{id}/pools/{pool_id}/markets/{market_id}/close: the
// event's creator resolves a market with its winning side. Checks run
// 401, 404, 403, 400, 409 (the service's order); any id that names
// nothing, or a market outside that pool and event, is "market not
// found".
var errsMarketClose = table("internal_error",
	unauthorized,
	on(errInvalidID, http.StatusNotFound, "market not found"),
	on(market.ErrMarketNotFound, http.StatusNotFound, "market not found"),
	on(market.ErrPoolNotFound, http.StatusNotFound, "market not found"),
	on(market.ErrEventNotFound, http.StatusNotFound, "market not found"),
	on(market.ErrForbidden, http.StatusForbidden, "forbidden"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid request"),
	on(errBadRequest, http.StatusBadRequest, "invalid request"),
	on(market.ErrResolved, http.StatusConflict, "market already resolved"),
	on(market.ErrNotApproved, http.StatusConflict, "invalid_state").saying(notApprovedDetail),
)

// handleMarketClose resolves a market and counts the settlement. The
// body is read leniently: a won_side that is missing or not a string is
// the service's 400.
func (h *marketHandlers) handleMarketClose(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	var ids [3]int64
	for i, name := range []string{"id", "pool_id", "market_id"} {
		if ids[i], err = pathID(c, name); err != nil {
			return err
		}
	}
	var won string
	if err := requireJSON(c); err != nil {
		return err
	}
	if raw, ok := lenientField(c.Body(), "won_side"); ok {
		_ = json.Unmarshal(raw, &won) // not a string: "" is refused below
	}
	start := time.Now()
	err = h.markets.Close(c.UserContext(), u.ID, ids[0], ids[1], ids[2], won)
	h.metrics.observeSettlement(time.Since(start), err)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// newEventBody is the body of POST /events.
type newEventBody struct {
	Name   string        `json:"name"`
	NameRu string        `json:"name_ru"`
	Tags   []string      `json:"tags"`
	Pools  []newPoolBody `json:"pools" validate:"required,dive"`
}

type newPoolBody struct {
	Name         string          `json:"name"`
	NameRu       string          `json:"name_ru"`
	Rules        string          `json:"rules"`
	RulesRu      string          `json:"rules_ru"`
	Margin       *float64        `json:"margin" validate:"required"`
	LMSRBKopecks *int64          `json:"lmsr_b_kopecks" validate:"required"`
	LiveAt       *time.Time      `json:"live_at"`
	FinishAt     *time.Time      `json:"finish_at"`
	Exclusive    bool            `json:"exclusive"`
	Markets      []newMarketBody `json:"markets" validate:"required,dive"`
}

type newMarketBody struct {
	Name        string   `json:"name"`
	NameRu      string   `json:"name_ru"`
	Probability *float64 `json:"probability" validate:"required"`
	YesName     string   `json:"yes_name"`
	NoName      string   `json:"no_name"`
	// Other marks the Other answer of an exclusive pool.
	Other bool `json:"other"`
}

func (b *newEventBody) toDomain() market.NewEvent {
	e := market.NewEvent{Name: b.Name, NameRu: b.NameRu, Tags: b.Tags}
	for _, p := range b.Pools {
		np := market.NewPool{Name: p.Name, NameRu: p.NameRu, Rules: p.Rules, RulesRu: p.RulesRu,
			Margin: *p.Margin, B: *p.LMSRBKopecks, LiveAt: p.LiveAt, FinishAt: p.FinishAt, Exclusive: p.Exclusive}
		for _, m := range p.Markets {
			np.Markets = append(np.Markets, market.NewMarket{Name: m.Name, NameRu: m.NameRu,
				Probability: *m.Probability, YesName: m.YesName, NoName: m.NoName, Other: m.Other})
		}
		e.Pools = append(e.Pools, np)
	}
	return e
}

// POST /events: a creator creates an event with its pools and markets;
// with proposals on, any other user proposes one (docs/proposals.md).
// Checks run 401, 403 (not a creator, proposals off: before the body is
// read), 400 (invalid_request also for a tag the operator has not made;
// insufficient_funds for a proposer whose balance is below the ante),
// 409 creator_limit (the creator's open events or their subsidy at the
// limit: the detail says which, with the figures).
var errsCreateEvent = table("internal_error",
	unauthorized,
	on(market.ErrForbidden, http.StatusForbidden, "forbidden"),
	on(market.ErrCreatorLimit, http.StatusConflict, "creator_limit"),
	on(account.ErrInsufficientFunds, http.StatusBadRequest, "insufficient_funds").saying("the proposal's ante is more than your balance (the bonus balance does not count)"),
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
)

// handleCreateEvent creates an event, or a proposal, and answers it (201).
func (h *marketHandlers) handleCreateEvent(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	if !u.IsCreator && !h.markets.Proposals.On { // 403 before the body is read, as for the other creator operations
		return market.ErrForbidden
	}
	var b newEventBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	e, err := h.markets.CreateEvent(c.UserContext(), u, b.toDomain())
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(eventView(e, h.markets.Now()))
}

// GET /events: the public feed, a page at a time: search (q), tag,
// sort, status and keyset paging (cursor), or the old limit and offset
// (docs/feed-and-search.md). Checks run 400 invalid_request for a bad
// parameter (each named in the message), nothing else.
var errsEvents = table("internal_error")

// handleEvents answers a page of the feed.
func (h *marketHandlers) handleEvents(c *fiber.Ctx) error {
	limit, offset, err := page(c, market.DefaultEventsLimit, market.MaxPageSize)
	if err != nil {
		return err
	}
	p, err := h.markets.Feed(c.UserContext(), market.FeedRequest{
		Text: c.Query("q"), Tag: c.Query("tag"), Sort: c.Query("sort"), Status: c.Query("status"),
		Cursor: c.Query("cursor"), Limit: limit, Offset: offset,
	})
	if err != nil {
		return err
	}
	now := h.markets.Now()
	out := eventsJSON{Events: make([]eventJSON, 0, len(p.Events))}
	for _, e := range p.Events {
		out.Events = append(out.Events, eventView(e, now))
	}
	if p.Next != "" {
		out.NextCursor = &p.Next
	}
	return sendJSON(c, &out)
}

// GET /events/{id}: one event with its pools and markets. Checks run 400
// invalid_id (common), 404 event_not_found.
var errsEvent = table("internal_error",
	on(market.ErrEventNotFound, http.StatusNotFound, "event_not_found"),
)

// handleEvent answers one event.
func (h *marketHandlers) handleEvent(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	e, err := h.markets.Event(c.UserContext(), id)
	if err != nil {
		return err
	}
	v := eventView(e, h.markets.Now())
	if err := eventResolutions(c.UserContext(), h.markets, &v, e); err != nil {
		return err
	}
	return sendJSON(c, &v)
}

// GET /markets/{market_id}: one market. Checks run 400 invalid_id
// (common), 404 market_not_found.
var errsMarket = table("internal_error",
	on(market.ErrMarketNotFound, http.StatusNotFound, "market_not_found"),
)

// handleMarket answers one market.
func (h *marketHandlers) handleMarket(c *fiber.Ctx) error {
	id, err := pathID(c, "market_id")
	if err != nil {
		return err
	}
	m, err := h.markets.Market(c.UserContext(), id)
	if err != nil {
		return err
	}
	v := []marketJSON{marketView(m, h.markets.Now())}
	if err := withResolutions(c.UserContext(), h.markets, v, []*market.Market{m}); err != nil {
		return err
	}
	return sendJSON(c, &v[0])
}

// parseSide reads the side of a quote, a buy or a sell.
func parseSide(s string) (market.Side, error) {
	side, ok := market.ParseSide(s)
	if !ok {
		return 0, badRequest("side", "must be YES or NO")
	}
	return side, nil
}

// tradeRules are the fixed codes of a trade and of its quote: 401, 400
// invalid_id, 404 market_not_found, 409 market_closed or price_moved, 400
// for what the trader cannot do or sent wrong.
var tradeRules = []rule{
	unauthorized,
	// Only a creator's trade on their own event, when the operator
	// forbids those.
	on(market.ErrForbidden, http.StatusForbidden, "forbidden").saying("a creator may not trade on their own event"),
	on(errInvalidID, http.StatusBadRequest, "invalid_id"),
	on(market.ErrMarketNotFound, http.StatusNotFound, "market_not_found"),
	on(market.ErrClosed, http.StatusConflict, "market_closed"),
	on(market.ErrResolved, http.StatusConflict, "market_closed"),
	on(market.ErrPriceMoved, http.StatusConflict, "price_moved"),
	// An answer was added to the pool twice while the trade ran (the
	// service runs it again once): the prices moved.
	on(market.ErrPoolChanged, http.StatusConflict, "price_moved").saying("an answer was added to the pool: send the trade again"),
	on(account.ErrInsufficientFunds, http.StatusBadRequest, "insufficient_funds"),
	on(market.ErrNoPosition, http.StatusBadRequest, "insufficient_shares"),
	on(market.ErrInsufficientShares, http.StatusBadRequest, "insufficient_shares"),
	on(market.ErrTradeRefused, http.StatusBadRequest, "trade_refused"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(account.ErrInvalidAmount, http.StatusBadRequest, "invalid_request"),
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
	// The trader's account vanished under a valid token.
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
}

// GET /markets/{market_id}/quote: the price of a buy (amount_kopecks) or
// a sell (shares), public. Checks run 400 (id, side, amount or shares),
// then the trade's refusals (tradeRules).
var errsQuote = table("internal_error", tradeRules...)

// handleQuote answers a quote for a buy or a sell: exactly one of
// amount_kopecks and shares.
func (h *marketHandlers) handleQuote(c *fiber.Ctx) error {
	id, err := pathID(c, "market_id")
	if err != nil {
		return err
	}
	side, err := parseSide(c.Query("side"))
	if err != nil {
		return err
	}
	hasAmount, hasShares := c.Query("amount_kopecks") != "", c.Query("shares") != ""
	if hasAmount == hasShares {
		return badRequest("amount_kopecks", "give exactly one of amount_kopecks (buy) or shares (sell)")
	}
	var q *market.Quote
	if hasAmount {
		n, err := queryInt(c, "amount_kopecks", 0)
		if err != nil {
			return err
		}
		q, err = h.markets.QuoteBuy(c.UserContext(), id, side, n)
		if err != nil {
			return err
		}
	} else {
		n, err := queryInt(c, "shares", 0)
		if err != nil {
			return err
		}
		q, err = h.markets.QuoteSell(c.UserContext(), id, side, n)
		if err != nil {
			return err
		}
	}
	return c.JSON(quoteView(q))
}

type buyBody struct {
	Side           string `json:"side" validate:"required"`
	AmountKopecks  int64  `json:"amount_kopecks" validate:"required"`
	UseBonus       bool   `json:"use_bonus"`
	MaxCostKopecks int64  `json:"max_cost_kopecks"`
	MinShares      int64  `json:"min_shares"`
}

type sellBody struct {
	Side             string `json:"side" validate:"required"`
	Shares           int64  `json:"shares" validate:"required"`
	MinPayoutKopecks int64  `json:"min_payout_kopecks"`
}

// POST /markets/{market_id}/buy and /sell: the caller trades. Checks run
// 401, 400 (id, body, side), then the trade's refusals (tradeRules).
var errsTrade = table("internal_error", tradeRules...)

// handleBuy buys shares of a side for amount_kopecks.
func (h *marketHandlers) handleBuy(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "market_id")
	if err != nil {
		return err
	}
	var b buyBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	req := market.Request{UserID: u.ID, Action: market.ActionBuy}
	if req.Side, err = parseSide(b.Side); err != nil {
		return err
	}
	req.Amount, req.UseBonus, req.MaxCost, req.MinShares = b.AmountKopecks, b.UseBonus, b.MaxCostKopecks, b.MinShares
	return h.execute(c, id, req)
}

// handleSell sells shares of a side.
func (h *marketHandlers) handleSell(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "market_id")
	if err != nil {
		return err
	}
	var b sellBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	req := market.Request{UserID: u.ID, Action: market.ActionSell}
	if req.Side, err = parseSide(b.Side); err != nil {
		return err
	}
	req.Shares, req.MinPayout = b.Shares, b.MinPayoutKopecks
	return h.execute(c, id, req)
}

// execute runs a buy or a sell and answers the trade.
func (h *marketHandlers) execute(c *fiber.Ctx, marketID int64, req market.Request) error {
	res, err := h.markets.Execute(c.UserContext(), marketID, req)
	if err != nil {
		return err
	}
	return c.JSON(tradeView(res))
}

// GET /markets/{market_id}/history: a market's price history. Checks run
// 400 invalid_id (common), 404 market_not_found.
var errsHistory = table("internal_error",
	on(market.ErrMarketNotFound, http.StatusNotFound, "market_not_found"),
)

// handleHistory answers a market's price history.
func (h *marketHandlers) handleHistory(c *fiber.Ctx) error {
	id, err := pathID(c, "market_id")
	if err != nil {
		return err
	}
	pts, err := h.markets.History(c.UserContext(), id)
	if err != nil {
		return err
	}
	out := make([]historyPointJSON, 0, len(pts))
	for _, p := range pts {
		out = append(out, historyPointJSON{Timestamp: ts(p.At), YesProbability: p.YesProbability, QYes: p.QYes, QNo: p.QNo})
	}
	return c.JSON(fiber.Map{"market_id": id, "points": out})
}
