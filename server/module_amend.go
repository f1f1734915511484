package server

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// amendHandlers serves an event creator's edits before the first trade
// and amendments (market/amend.go).
type amendHandlers struct {
	markets *market.Service
	auth    *Auth
}

// amendRoutes lists the routes of edits and amendments.
func amendRoutes(markets *market.Service, auth *Auth) RoutesOut {
	h := &amendHandlers{markets: markets, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPatch, Path: "/api/v1/events/:id", Errors: errsEditEvent, Handler: h.handleEditEvent},
		{Method: http.MethodPost, Path: "/api/v1/events/:id/amendments", Errors: errsAmendEvent, Handler: h.handleAmend},
	}}
}

// editEventBody is the body of PATCH /events/{id}: POST /events' fields,
// each optional; a field given replaces the event's (pools: the whole
// list, its markets opened afresh).
type editEventBody struct {
	Name   *string        `json:"name"`
	NameRu *string        `json:"name_ru"`
	Tags   *[]string      `json:"tags"`
	Pools  *[]newPoolBody `json:"pools" validate:"omitempty,dive"`
}

func (b *editEventBody) toDomain() market.EventPatch {
	p := market.EventPatch{Name: b.Name, NameRu: b.NameRu, Tags: b.Tags}
	if b.Tags != nil && *b.Tags == nil { // "tags": [] clears them
		p.Tags = &[]string{}
	}
	if b.Pools != nil {
		pools := (&newEventBody{Pools: *b.Pools}).toDomain().Pools
		if pools == nil {
			pools = []market.NewPool{} // "pools": [] is refused, not ignored
		}
		p.Pools = &pools
	}
	return p
}

// PATCH /events/{id}: the event's creator edits it before its first
// trade. Checks run 401, 400 invalid_id, 400 invalid_request (the body's
// shape), 404 event_not_found, 403 forbidden, 400 invalid_request (a
// field's rule, a patch that changes nothing), 409 event_traded (any
// trade on any of its markets), 409 event_resolved (a market of it
// resolved or voided, or its resolution proposed), 409 invalid_state (a
// proposal the operator has not approved), 400 invalid_request (a tag the operator has not
// made), 409 creator_limit (the new pools' subsidy).
var errsEditEvent = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
	on(market.ErrEventNotFound, http.StatusNotFound, "event_not_found"),
	on(market.ErrForbidden, http.StatusForbidden, "forbidden"),
	on(market.ErrEventTraded, http.StatusConflict, "event_traded").
		saying("the event has had a trade: names and rules never change after it (add an amendment instead)"),
	on(market.ErrEventResolved, http.StatusConflict, "event_resolved").
		saying("a market of the event is resolved, or its resolution proposed: the event can no longer be edited (add an amendment instead)"),
	on(market.ErrNotApproved, http.StatusConflict, "invalid_state").saying(notApprovedDetail),
	on(market.ErrCreatorLimit, http.StatusConflict, "creator_limit"),
)

// handleEditEvent answers the event as edited (200).
func (h *amendHandlers) handleEditEvent(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, b, err := idAndBody[editEventBody](c, "id")
	if err != nil {
		return err
	}
	e, err := h.markets.EditEvent(c.UserContext(), u.ID, id, b.toDomain())
	if err != nil {
		return err
	}
	v := eventView(e, h.markets.Now())
	return sendJSON(c, &v)
}

// amendmentJSON is an Amendment.
type amendmentJSON struct {
	ID        int64  `json:"id"`
	EventID   int64  `json:"event_id"`
	Text      string `json:"text"`
	TextRu    string `json:"text_ru"`
	CreatedAt string `json:"created_at"`
}

func amendmentView(a *market.Amendment) amendmentJSON {
	return amendmentJSON{ID: a.ID, EventID: a.EventID, Text: a.Text, TextRu: a.TextRu, CreatedAt: ts(a.CreatedAt)}
}

// amendBody is the body of POST /events/{id}/amendments.
type amendBody struct {
	Text   string `json:"text"`
	TextRu string `json:"text_ru"`
}

// POST /events/{id}/amendments: the event's creator adds an amendment,
// before or after the first trade. Checks run 401, 400 invalid_id, 400
// invalid_request (the body's shape), 404 event_not_found, 403
// forbidden, 400 invalid_request (text empty or too long, text_ru too
// long, a control character).
var errsAmendEvent = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
	on(market.ErrEventNotFound, http.StatusNotFound, "event_not_found"),
	on(market.ErrForbidden, http.StatusForbidden, "forbidden"),
)

// handleAmend answers the amendment (201).
func (h *amendHandlers) handleAmend(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, b, err := idAndBody[amendBody](c, "id")
	if err != nil {
		return err
	}
	a, err := h.markets.AddAmendment(c.UserContext(), u.ID, id, b.Text, b.TextRu)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(amendmentView(a))
}
