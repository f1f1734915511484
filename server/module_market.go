package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// MarketModule provides the market service and the routes of events,
// pools, markets, trading, positions, the PnL chart and the public feeds.
var MarketModule = fx.Module("market",
	fx.Provide(newTrader, newMarketService, marketRoutes),
)

// newTrader is the group commit every trade goes through, shared by the
// market and partner services so that their trades on one market batch
// together.
func newTrader(cfg Config, store market.Store, m *Metrics) market.Trader {
	b := market.NewBatcher(store, cfg.TradeBatchSize, cfg.TradeBatchWait)
	b.MaxInFlight = cfg.TradeBatchInFlight
	return instrumentTrader(b, m)
}

func newMarketService(store market.Store, accounts *account.Service, trader market.Trader) *market.Service {
	s := market.NewService(store, accounts)
	s.Trader = trader
	return s
}

type newEventBody struct {
	Name   string        `json:"name"`
	NameRu string        `json:"name_ru"`
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
	Markets      []newMarketBody `json:"markets" validate:"required,dive"`
}

type newMarketBody struct {
	Name        string   `json:"name"`
	NameRu      string   `json:"name_ru"`
	Probability *float64 `json:"probability" validate:"required"`
	YesName     string   `json:"yes_name"`
	NoName      string   `json:"no_name"`
}

func (b *newEventBody) toDomain() market.NewEvent {
	e := market.NewEvent{Name: b.Name, NameRu: b.NameRu}
	for _, p := range b.Pools {
		np := market.NewPool{Name: p.Name, NameRu: p.NameRu, Rules: p.Rules, RulesRu: p.RulesRu,
			Margin: *p.Margin, B: *p.LMSRBKopecks, LiveAt: p.LiveAt, FinishAt: p.FinishAt}
		for _, m := range p.Markets {
			np.Markets = append(np.Markets, market.NewMarket{Name: m.Name, NameRu: m.NameRu,
				Probability: *m.Probability, YesName: m.YesName, NoName: m.NoName})
		}
		e.Pools = append(e.Pools, np)
	}
	return e
}

type buyBody struct {
	Side           string `json:"side" validate:"required"`
	AmountKopecks  int64  `json:"amount_kopecks" validate:"required,gte=1,lte=100000000000"`
	UseBonus       bool   `json:"use_bonus"`
	MaxCostKopecks int64  `json:"max_cost_kopecks" validate:"gte=0"`
	MinShares      int64  `json:"min_shares" validate:"gte=0"`
}

type sellBody struct {
	Side             string `json:"side" validate:"required"`
	Shares           int64  `json:"shares" validate:"required,gte=1,lte=100000000000"`
	MinPayoutKopecks int64  `json:"min_payout_kopecks" validate:"gte=0"`
}

func parseSide(s string) (market.Side, error) {
	side, ok := market.ParseSide(s)
	if !ok {
		return 0, badRequest("side", "must be YES or NO")
	}
	return side, nil
}

func marketRoutes(markets *market.Service, auth *Auth, metrics *Metrics) RoutesOut {
	trade := func(action market.Action) fiber.Handler {
		return func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			id, err := pathID(c, "market_id")
			if err != nil {
				return err
			}
			req := market.Request{UserID: u.ID, Action: action}
			if action == market.ActionBuy {
				var b buyBody
				if err := decodeStrict(c.Body(), &b); err != nil {
					return err
				}
				if req.Side, err = parseSide(b.Side); err != nil {
					return err
				}
				req.Amount, req.UseBonus, req.MaxCost, req.MinShares = b.AmountKopecks, b.UseBonus, b.MaxCostKopecks, b.MinShares
			} else {
				var b sellBody
				if err := decodeStrict(c.Body(), &b); err != nil {
					return err
				}
				if req.Side, err = parseSide(b.Side); err != nil {
					return err
				}
				req.Shares, req.MinPayout = b.Shares, b.MinPayoutKopecks
			}
			res, err := markets.Execute(c.UserContext(), id, req)
			if err != nil {
				return err
			}
			return c.JSON(tradeView(res))
		}
	}

	return RoutesOut{Routes: []Route{
		// Contract 1.
		{Method: http.MethodGet, Path: "/api/v1/users/:id/pnl/chart", Errors: errsPnLChart, Handler: func(c *fiber.Ctx) error {
			var viewer *account.User
			var userID int64
			if c.Params("id") == "me" {
				u, err := auth.User(c)
				if err != nil {
					return err
				}
				viewer, userID = u, u.ID
			} else {
				id, err := pathID(c, "id")
				if err != nil {
					return err
				}
				if viewer, err = auth.Optional(c); err != nil {
					return err
				}
				userID = id
			}
			var viewerID int64
			if viewer != nil {
				viewerID = viewer.ID
			}
			pts, err := markets.PnLChart(c.UserContext(), viewerID, userID)
			if err != nil {
				return err
			}
			out := make([]pnlPointJSON, 0, len(pts))
			for _, p := range pts {
				out = append(out, pnlPointJSON{Timestamp: ts(p.At), PnL: float64(p.PnL) / 100})
			}
			return c.JSON(fiber.Map{"points": out})
		}},
		{Method: http.MethodGet, Path: "/api/v1/users/me/positions/closed", Errors: errsClosedPosition, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			limit, offset, err := page(c, market.ClosedInProfile, market.MaxPageSize)
			if err != nil {
				return err
			}
			p, err := markets.ClosedPositions(c.UserContext(), u.ID, limit, offset)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"positions": closedViews(p.Positions), "has_more": p.HasMore})
		}},
		// Contract 7.
		{Method: http.MethodGet, Path: "/api/v1/pools/:id", Errors: errsPool, Handler: func(c *fiber.Ctx) error {
			id, err := pathID(c, "id")
			if err != nil {
				return err
			}
			p, err := markets.Pool(c.UserContext(), id)
			if err != nil {
				return err
			}
			v := poolView(p)
			return sendJSON(c, &v)
		}},
		// Contract 8.
		{Method: http.MethodGet, Path: "/api/v1/market/trades/latest", Errors: errsLatestTrades, Handler: func(c *fiber.Ctx) error {
			ts, err := markets.LatestTrades(c.UserContext())
			if err != nil {
				return err
			}
			out := make([]simpleTradeJSON, 0, len(ts))
			for _, t := range ts {
				out = append(out, simpleTradeView(t))
			}
			return c.JSON(out)
		}},
		// Contract 13. Checks run 401, 404, 403, 400: the body is read
		// leniently and the service decides after its 404 and 403.
		{Method: http.MethodPost, Path: "/api/v1/events/:id/active", Errors: errsEventActive, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			id, err := pathID(c, "id")
			if err != nil {
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
			if err := markets.SetActive(c.UserContext(), u.ID, id, active); err != nil {
				return err
			}
			return c.JSON(fiber.Map{"status": "ok"})
		}},
		// Contract 14. Checks run 401, 404, 403, 400, 409 (the service's
		// order); the body is read leniently.
		{Method: http.MethodPost, Path: "/api/v1/events/:id/pools/:pool_id/markets/:market_id/close", Errors: errsMarketClose, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
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
			if raw, ok := lenientField(c.Body(), "won_side"); ok {
				_ = json.Unmarshal(raw, &won) // not a string: "" is refused below
			}
			start := time.Now()
			err = markets.Close(c.UserContext(), u.ID, ids[0], ids[1], ids[2], won)
			metrics.observeSettlement(time.Since(start), err)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"status": "ok"})
		}},
		// Extension API.
		{Method: http.MethodPost, Path: "/api/v1/events", Errors: errsCreateEvent, Handler: func(c *fiber.Ctx) error {
			u, err := auth.User(c)
			if err != nil {
				return err
			}
			if !u.IsCreator { // 403 before the body is read, as for the other creator operations
				return market.ErrForbidden
			}
			var b newEventBody
			if err := decodeStrict(c.Body(), &b); err != nil {
				return err
			}
			e, err := markets.CreateEvent(c.UserContext(), u, b.toDomain())
			if err != nil {
				return err
			}
			return c.Status(http.StatusCreated).JSON(eventView(e))
		}},
		{Method: http.MethodGet, Path: "/api/v1/events", Errors: errsEvents, Handler: func(c *fiber.Ctx) error {
			limit, offset, err := page(c, market.DefaultEventsLimit, market.MaxPageSize)
			if err != nil {
				return err
			}
			es, err := markets.Events(c.UserContext(), limit, offset)
			if err != nil {
				return err
			}
			out := eventsJSON{Events: make([]eventJSON, 0, len(es))}
			for _, e := range es {
				out.Events = append(out.Events, eventView(e))
			}
			return sendJSON(c, &out)
		}},
		{Method: http.MethodGet, Path: "/api/v1/events/:id", Errors: errsEvent, Handler: func(c *fiber.Ctx) error {
			id, err := pathID(c, "id")
			if err != nil {
				return err
			}
			e, err := markets.Event(c.UserContext(), id)
			if err != nil {
				return err
			}
			v := eventView(e)
			return sendJSON(c, &v)
		}},
		{Method: http.MethodGet, Path: "/api/v1/markets/:market_id", Errors: errsMarket, Handler: func(c *fiber.Ctx) error {
			id, err := pathID(c, "market_id")
			if err != nil {
				return err
			}
			m, err := markets.Market(c.UserContext(), id)
			if err != nil {
				return err
			}
			v := marketView(m)
			return sendJSON(c, &v)
		}},
		{Method: http.MethodGet, Path: "/api/v1/markets/:market_id/quote", Errors: errsQuote, Handler: func(c *fiber.Ctx) error {
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
				q, err = markets.QuoteBuy(c.UserContext(), id, side, n)
				if err != nil {
					return err
				}
			} else {
				n, err := queryInt(c, "shares", 0)
				if err != nil {
					return err
				}
				q, err = markets.QuoteSell(c.UserContext(), id, side, n)
				if err != nil {
					return err
				}
			}
			return c.JSON(quoteView(q))
		}},
		{Method: http.MethodPost, Path: "/api/v1/markets/:market_id/buy", Errors: errsTrade, Handler: trade(market.ActionBuy)},
		{Method: http.MethodPost, Path: "/api/v1/markets/:market_id/sell", Errors: errsTrade, Handler: trade(market.ActionSell)},
		{Method: http.MethodGet, Path: "/api/v1/markets/:market_id/history", Errors: errsHistory, Handler: func(c *fiber.Ctx) error {
			id, err := pathID(c, "market_id")
			if err != nil {
				return err
			}
			pts, err := markets.History(c.UserContext(), id)
			if err != nil {
				return err
			}
			out := make([]historyPointJSON, 0, len(pts))
			for _, p := range pts {
				out = append(out, historyPointJSON{Timestamp: ts(p.At), YesProbability: p.YesProbability, QYes: p.QYes, QNo: p.QNo})
			}
			return c.JSON(fiber.Map{"market_id": id, "points": out})
		}},
	}}
}
