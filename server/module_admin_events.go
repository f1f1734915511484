package server

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// adminEventHandlers serves the operator's event routes: create an event
// on a creator's behalf, and show or hide any event.
type adminEventHandlers struct {
	accounts *account.Service
	markets  *market.Service
}

// adminEventRoutes lists the operator's event routes, behind the admin
// token.
func adminEventRoutes(admin *AdminAuth, accounts *account.Service, markets *market.Service) RoutesOut {
	h := &adminEventHandlers{accounts: accounts, markets: markets}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/admin/users/:id/events", Errors: errsAdminCreateEvent, Handler: admin.guard(h.handleCreateEvent)},
		{Method: http.MethodPost, Path: "/api/v1/admin/events/:id/active", Errors: errsAdminEventActive, Handler: admin.guard(h.handleEventActive)},
	}}
}

// POST /admin/users/{id}/events: the operator creates an event owned by
// creator {id}, with the body of POST /events. Checks run as on every
// operator route (adminRules: 404 not_found when disabled, 401, 400
// invalid_id, 404 user_not_found), then 400 invalid_request for a body
// the creator's route would refuse or a user who is not a creator, and
// 409 creator_limit: the event counts for its owner as if they had
// created it, so the operator cannot lift a creator past the limits by
// creating for them.
var errsAdminCreateEvent = table("internal_error",
	append(slices.Clone(adminRules), on(market.ErrCreatorLimit, http.StatusConflict, "creator_limit"))...)

// handleCreateEvent creates the event through the creator's own path (the
// platform escrows the subsidy, as for any creator's event) and answers
// it (201), inactive like every new event.
func (h *adminEventHandlers) handleCreateEvent(c *fiber.Ctx) error {
	id, b, err := idAndBody[newEventBody](c, "id")
	if err != nil {
		return err
	}
	u, err := h.accounts.User(c.UserContext(), id)
	if err != nil {
		return err
	}
	if !u.IsCreator {
		// The store requires an owner, and an owner who is not a creator
		// could not activate, edit or resolve the event.
		return input.Invalid("id", fmt.Sprintf("user %d is not a creator: grant the role first (PATCH /api/v1/admin/users/%d {\"is_creator\":true})", id, id))
	}
	e, err := h.markets.CreateEvent(c.UserContext(), u, b.toDomain())
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(eventView(e, h.markets.Now()))
}

// POST /admin/events/{id}/active: the operator shows or hides any event.
// Checks run as on every operator route, then 404 event_not_found, 400
// invalid_request, 409 invalid_state (showing a proposal that is not
// approved: approve it instead).
var errsAdminEventActive = table("internal_error", append(adminRules[:len(adminRules):len(adminRules)],
	on(market.ErrEventNotFound, http.StatusNotFound, "event_not_found"),
	on(market.ErrNotApproved, http.StatusConflict, "invalid_state").saying(notApprovedDetail),
)...)

type activeBody struct {
	IsActive *bool `json:"is_active" validate:"required"`
}

// handleEventActive shows or hides an event as its creator would: the
// service's check is the creator's, so the operator acts with the
// creator's authority, read from the event itself.
func (h *adminEventHandlers) handleEventActive(c *fiber.Ctx) error {
	id, b, err := idAndBody[activeBody](c, "id")
	if err != nil {
		return err
	}
	e, err := h.markets.Event(c.UserContext(), id)
	if err != nil {
		return err
	}
	if err := h.markets.SetActive(c.UserContext(), e.CreatorID, id, b.IsActive); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "ok"})
}
