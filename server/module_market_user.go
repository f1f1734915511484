package server

// The market routes that read one user's trading: the P&L chart, closed
// positions and the trade history (module_market.go serves the rest).

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// GET /users/{id}/pnl/chart and /users/me/pnl/chart: a user's cumulative
// realized PnL. Checks run 400 invalid_id (or 401 for me), 404
// user_not_found.
var errsPnLChart = table("internal_error",
	on(errInvalidID, http.StatusBadRequest, "invalid_id"),
	unauthorized,
	on(account.ErrUserNotFound, http.StatusNotFound, "user_not_found"),
)

// handlePnLChart answers the chart of the caller ("me", which needs a
// token) or of any user by id (public; a token, when valid, names the
// viewer).
func (h *marketHandlers) handlePnLChart(c *fiber.Ctx) error {
	var viewer *account.User
	var userID int64
	if c.Params("id") == "me" {
		u, err := h.auth.User(c)
		if err != nil {
			return err
		}
		viewer, userID = u, u.ID
	} else {
		id, err := pathID(c, "id")
		if err != nil {
			return err
		}
		if viewer, err = h.auth.Optional(c); err != nil {
			return err
		}
		userID = id
	}
	var viewerID int64
	if viewer != nil {
		viewerID = viewer.ID
	}
	pts, err := h.markets.PnLChart(c.UserContext(), viewerID, userID)
	if err != nil {
		return err
	}
	out := make([]pnlPointJSON, 0, len(pts))
	for _, p := range pts {
		out = append(out, pnlPointJSON{Timestamp: ts(p.At), PnL: float64(p.PnL) / 100})
	}
	return c.JSON(fiber.Map{"points": out})
}

// GET /users/me/positions/closed: the caller's closed positions, a page
// at a time. Checks run 401, 400 (paging).
var errsClosedPosition = table("internal_error", unauthorized)

// handleClosedPositions answers a page of the caller's closed positions.
func (h *marketHandlers) handleClosedPositions(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	limit, offset, err := page(c, market.ClosedInProfile, market.MaxPageSize)
	if err != nil {
		return err
	}
	p, err := h.markets.ClosedPositions(c.UserContext(), u.ID, limit, offset)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"positions": closedViews(p.Positions), "has_more": p.HasMore})
}

// GET /users/me/trades: the caller's own trades, newest first, a keyset
// page at a time. Checks run 401, 400 invalid_request (limit not an
// integer from 1 to 100, a cursor no earlier page gave).
var errsUserTrades = table("internal_error", unauthorized)

// handleUserTrades answers a page of the caller's trades.
func (h *marketHandlers) handleUserTrades(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", market.DefaultTradesLimit)
	if err != nil || limit < 1 || limit > market.MaxTradesLimit {
		return badRequest("limit", "must be an integer from 1 to "+strconv.Itoa(market.MaxTradesLimit))
	}
	p, err := h.markets.UserTrades(c.UserContext(), u.ID, int(limit), c.Query("cursor"))
	if err != nil {
		return err
	}
	out := make([]ownTradeJSON, 0, len(p.Trades))
	for _, t := range p.Trades {
		out = append(out, ownTradeView(t))
	}
	var next *string
	if p.Next != "" {
		next = &p.Next
	}
	return c.JSON(fiber.Map{"trades": out, "next_cursor": next})
}
