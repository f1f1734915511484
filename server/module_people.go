package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/leaderboard"
	"github.com/predictkit/predictkit/market"
)

// PeopleModule provides the public profiles and following events
// (docs/people-and-following.md).
var PeopleModule = fx.Module("people", fx.Provide(peopleRoutes))

// publicTradesLimit is how many of a user's newest trades a public
// profile shows.
const publicTradesLimit = 10

// peopleHandlers serves public profiles and follows.
type peopleHandlers struct {
	markets  *market.Service
	accounts *account.Service
	board    *leaderboard.Service
	auth     *Auth
}

// peopleRoutes lists the routes of profiles and follows.
func peopleRoutes(markets *market.Service, accounts *account.Service, board *leaderboard.Service, auth *Auth) RoutesOut {
	h := &peopleHandlers{markets: markets, accounts: accounts, board: board, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/users/:id", Errors: errsPublicProfile, Handler: h.handleProfile},
		{Method: http.MethodPut, Path: "/api/v1/events/:id/follow", Errors: errsFollow, Handler: h.handleFollow},
		{Method: http.MethodDelete, Path: "/api/v1/events/:id/follow", Errors: errsFollow, Handler: h.handleUnfollow},
		{Method: http.MethodGet, Path: "/api/v1/users/me/following", Errors: errsFollowing, Handler: h.handleFollowing},
	}}
}

// publicProfileJSON is what anyone may see of a user: nothing private
// (no balance, e-mail, addresses or closed positions one by one).
type publicProfileJSON struct {
	ID               int64                `json:"id"`
	Name             string               `json:"name"`
	Nickname         *string              `json:"nickname"`
	AvatarURL        *string              `json:"avatar_url"`
	Level            int                  `json:"level"`
	RegisteredDate   string               `json:"registered_date"`
	TotalPredictions int64                `json:"total_predictions"`
	BiggestWin       int64                `json:"biggest_win"`
	VolumeKopecks    int64                `json:"volume_kopecks"`
	Positions        []publicPositionJSON `json:"positions"`
	RecentTrades     []publicTradeJSON    `json:"recent_trades"`
}

// publicPositionJSON is an open position as the public sees it.
type publicPositionJSON struct {
	EventID      int64  `json:"event_id"`
	EventName    string `json:"event_name"`
	PoolID       int64  `json:"pool_id"`
	PoolName     string `json:"pool_name"`
	MarketID     int64  `json:"market_id"`
	MarketName   string `json:"market_name"`
	Side         string `json:"side"`
	Shares       int64  `json:"shares"`
	ValueKopecks int64  `json:"value_kopecks"`
}

// publicTradeJSON is one of a user's trades as the public sees it.
type publicTradeJSON struct {
	TradeID        int64   `json:"trade_id"`
	EventID        int64   `json:"event_id"`
	EventName      string  `json:"event_name"`
	MarketID       int64   `json:"market_id"`
	MarketName     string  `json:"market_name"`
	Side           string  `json:"side"`
	Action         string  `json:"action"`
	Shares         int64   `json:"shares"`
	AmountKopecks  int64   `json:"amount_kopecks"`
	AvgPriceBps    int64   `json:"avg_price_bps"`
	YesProbability float64 `json:"yes_probability"`
	CreatedAt      string  `json:"created_at"`
}

// GET /users/{id}: a user's public profile. Public; a valid token names
// the viewer. Checks run 400 invalid_id (common: "me" is not an id
// here), 404 user_not_found: no such user, a partner's sub-account, or
// a hidden profile (the same answer, so that hiding tells nothing) to
// anyone but its owner.
var errsPublicProfile = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusNotFound, "user_not_found"),
)

// handleProfile answers a public profile. Positions and trades are those
// on active events only: what the public can open.
func (h *peopleHandlers) handleProfile(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	viewer, err := h.auth.Optional(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	u, err := h.accounts.User(ctx, id)
	if err != nil {
		return err
	}
	if u.PartnerID != 0 || u.ProfileHidden && (viewer == nil || viewer.ID != u.ID) {
		return account.ErrUserNotFound
	}
	st, err := h.markets.Stats(ctx, id)
	if err != nil {
		return err
	}
	totals, err := h.board.Totals(ctx, id)
	if err != nil {
		return err
	}
	open, err := h.markets.OpenPositions(ctx, id)
	if err != nil {
		return err
	}
	trades, err := h.markets.UserTrades(ctx, id, publicTradesLimit, "")
	if err != nil {
		return err
	}
	v := publicProfileJSON{ID: u.ID, Name: u.Name, Nickname: nonEmpty(u.Nickname), AvatarURL: nonEmpty(u.AvatarURL),
		Level: u.Level, RegisteredDate: u.CreatedAt.UTC().Format(time.DateOnly),
		TotalPredictions: st.TotalPredictions, BiggestWin: st.BiggestWin, VolumeKopecks: totals.Volume,
		Positions: []publicPositionJSON{}, RecentTrades: []publicTradeJSON{}}
	events := eventCache{markets: h.markets, byID: map[int64]*market.Event{}}
	for _, p := range open {
		e, err := events.get(ctx, p.EventID)
		if err != nil {
			return err
		}
		if e == nil || !e.IsActive {
			continue
		}
		v.Positions = append(v.Positions, publicPositionJSON{EventID: p.EventID, EventName: p.EventName, PoolID: p.PoolID,
			PoolName: p.PoolName, MarketID: p.MarketID, MarketName: p.MarketName, Side: p.Side.String(), Shares: p.Shares,
			ValueKopecks: p.Value})
	}
	for _, t := range trades.Trades {
		m, err := h.markets.Market(ctx, t.MarketID)
		if err != nil {
			return err
		}
		e, err := events.get(ctx, m.EventID)
		if err != nil {
			return err
		}
		if e == nil || !e.IsActive {
			continue
		}
		v.RecentTrades = append(v.RecentTrades, publicTradeJSON{TradeID: t.ID, EventID: e.ID, EventName: e.Name,
			MarketID: m.ID, MarketName: m.Name, Side: t.Side.String(), Action: string(t.Action), Shares: t.Shares,
			AmountKopecks: t.Amount, AvgPriceBps: t.AvgPriceBps(), YesProbability: t.PriceAfter, CreatedAt: ts(t.CreatedAt)})
	}
	return c.JSON(v)
}

// eventCache reads each event of a profile once.
type eventCache struct {
	markets *market.Service
	byID    map[int64]*market.Event
}

// get returns event id, nil when it is gone.
func (ec eventCache) get(ctx context.Context, id int64) (*market.Event, error) {
	if e, ok := ec.byID[id]; ok {
		return e, nil
	}
	e, err := ec.markets.Event(ctx, id)
	if errors.Is(err, market.ErrEventNotFound) {
		e, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	ec.byID[id] = e
	return e, nil
}

// PUT and DELETE /events/{id}/follow: follow an event, or stop; both
// idempotent (204 whatever the state before). Checks run 401, 400
// invalid_id (common), 404 event_not_found.
var errsFollow = table("internal_error",
	unauthorized,
	on(market.ErrEventNotFound, http.StatusNotFound, "event_not_found"),
)

func (h *peopleHandlers) handleFollow(c *fiber.Ctx) error {
	return h.setFollow(c, true)
}

func (h *peopleHandlers) handleUnfollow(c *fiber.Ctx) error {
	return h.setFollow(c, false)
}

func (h *peopleHandlers) setFollow(c *fiber.Ctx, on bool) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if on {
		err = h.markets.Follow(c.UserContext(), u.ID, id)
	} else {
		err = h.markets.Unfollow(c.UserContext(), u.ID, id)
	}
	if err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// GET /users/me/following: the events the caller follows, newest follow
// first, each as GET /events/{id} shows it, a keyset page at a time. Checks run 401, 400 invalid_request (limit not an
// integer from 1 to 50, a cursor no earlier page gave).
var errsFollowing = table("internal_error", unauthorized)

func (h *peopleHandlers) handleFollowing(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", market.DefaultFollowingLimit)
	if err != nil || limit < 1 || limit > market.MaxFollowingLimit {
		return badRequest("limit", "must be an integer from 1 to "+strconv.Itoa(market.MaxFollowingLimit))
	}
	ctx := c.UserContext()
	p, err := h.markets.Following(ctx, u.ID, int(limit), c.Query("cursor"))
	if err != nil {
		return err
	}
	now := h.markets.Now()
	out := make([]eventJSON, 0, len(p.Events))
	for _, e := range p.Events {
		v := eventView(e, now)
		if err := eventResolutions(ctx, h.markets, &v, e); err != nil {
			return err
		}
		out = append(out, v)
	}
	var next *string
	if p.Next != "" {
		next = &p.Next
	}
	return c.JSON(fiber.Map{"events": out, "next_cursor": next})
}
