package server

import (
	"net/http"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// proposalHandlers serve event proposals (docs/proposals.md): the preview
// of an event's subsidies that the web app's form shows, and the
// operator's queue, approval and rejection.
type proposalHandlers struct {
	accounts *account.Service
	markets  *market.Service
	auth     *Auth
}

// proposalRoutes lists the routes of proposals.
func proposalRoutes(accounts *account.Service, markets *market.Service, auth *Auth, admin *AdminAuth) RoutesOut {
	h := &proposalHandlers{accounts: accounts, markets: markets, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/events/preview", Errors: errsPreviewEvent, Handler: h.handlePreview},
		{Method: http.MethodGet, Path: "/api/v1/admin/events", Errors: errsAdminEvents, Handler: admin.guard(h.handleQueue)},
		{Method: http.MethodPost, Path: "/api/v1/admin/events/:id/approve", Errors: errsApprove, Handler: admin.guard(h.handleApprove)},
		{Method: http.MethodPost, Path: "/api/v1/admin/events/:id/reject", Errors: errsReject, Handler: admin.guard(h.handleReject)},
	}}
}

// POST /events/preview: the body of POST /events, checked exactly as
// the creation checks it (the same 401, 403 and 400 in the same order),
// answered with the subsidies the creation would post, writing nothing.
// The creator's limits and the treasury's bound are the creation's to
// check, under its lock.
var errsPreviewEvent = table("internal_error",
	unauthorized,
	on(market.ErrForbidden, http.StatusForbidden, "forbidden"),
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
)

// previewJSON is the answer of POST /events/preview.
type previewJSON struct {
	// Status is what the creation would make: approved for a creator's
	// event, proposed for a proposal, which holds AnteKopecks.
	Status         string            `json:"status"`
	AnteKopecks    int64             `json:"ante_kopecks"`
	SubsidyKopecks int64             `json:"subsidy_kopecks"`
	Pools          []previewPoolJSON `json:"pools"`
}

type previewPoolJSON struct {
	SubsidyKopecks int64               `json:"subsidy_kopecks"`
	Markets        []previewMarketJSON `json:"markets"`
}

type previewMarketJSON struct {
	SubsidyKopecks int64   `json:"subsidy_kopecks"`
	YesProbability float64 `json:"yes_probability"`
}

// handlePreview answers the subsidies of an event as the creation would
// post them: one per market in order, an exclusive pool's on its first
// market.
func (h *proposalHandlers) handlePreview(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	if !u.IsCreator && !h.markets.Proposals.On { // as POST /events, before the body is read
		return market.ErrForbidden
	}
	var b newEventBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	e, subsidies, total, err := h.markets.Preview(c.UserContext(), u, b.toDomain())
	if err != nil {
		return err
	}
	v := previewJSON{Status: e.Status, SubsidyKopecks: total, Pools: make([]previewPoolJSON, 0, len(e.Pools))}
	if e.Status == market.StatusProposed {
		v.AnteKopecks = h.markets.Proposals.AnteKopecks
	}
	i := 0
	for _, p := range e.Pools {
		market.PricePool(p)
		pv := previewPoolJSON{Markets: make([]previewMarketJSON, 0, len(p.Markets))}
		for _, m := range p.Markets {
			pv.Markets = append(pv.Markets, previewMarketJSON{SubsidyKopecks: subsidies[i], YesProbability: m.YesProbability()})
			pv.SubsidyKopecks += subsidies[i]
			i++
		}
		v.Pools = append(v.Pools, pv)
	}
	return c.JSON(v)
}

// GET /admin/events?status=proposed: the operator's queue, oldest first,
// each event with its proposer. status defaults to proposed; approved
// and rejected list those. Checks run as on every operator route (400
// invalid_request for a bad status or paging).
var errsAdminEvents = table("internal_error", adminRules...)

// queuedEventJSON is an event of the operator's queue.
type queuedEventJSON struct {
	eventJSON
	// Proposer is the event's creator: the proposer of a proposal.
	Proposer    proposerJSON `json:"proposer"`
	AnteKopecks int64        `json:"ante_kopecks"`
}

type proposerJSON struct {
	ID       int64   `json:"id"`
	Name     string  `json:"name"`
	Nickname *string `json:"nickname"`
	Email    string  `json:"email"`
}

func (h *proposalHandlers) handleQueue(c *fiber.Ctx) error {
	status := c.Query("status", market.StatusProposed)
	if !market.ValidStatus(status) {
		return input.Invalid("status", "must be proposed, approved or rejected")
	}
	limit, offset, err := page(c, market.DefaultEventsLimit, market.MaxPageSize)
	if err != nil {
		return err
	}
	es, err := h.markets.EventsByStatus(c.UserContext(), status, limit, offset)
	if err != nil {
		return err
	}
	now := h.markets.Now()
	out := make([]queuedEventJSON, 0, len(es))
	users := map[int64]proposerJSON{}
	for _, e := range es {
		p, ok := users[e.CreatorID]
		if !ok {
			u, err := h.accounts.User(c.UserContext(), e.CreatorID)
			if err != nil {
				return err
			}
			p = proposerJSON{ID: u.ID, Name: u.Name, Nickname: nonEmpty(u.Nickname), Email: u.Email}
			users[e.CreatorID] = p
		}
		q := queuedEventJSON{eventJSON: eventView(e, now), Proposer: p}
		if e.Proposal != nil {
			q.AnteKopecks = e.Proposal.Ante
		}
		out = append(out, q)
	}
	return c.JSON(fiber.Map{"events": out})
}

// notApprovedDetail is the detail of 409 invalid_state for what only an
// approved event may do.
const notApprovedDetail = "the event is a proposal the operator has not approved (awaiting a decision, or rejected)"

// decisionRules are the refusals of a decision on a proposal, after the
// operator routes' own: 404 event_not_found, 409 invalid_state (not a
// proposal awaiting a decision: approved or rejected already, or a
// creator's event).
var decisionRules = slices.Concat(adminRules, []rule{
	on(market.ErrEventNotFound, http.StatusNotFound, "event_not_found"),
	on(market.ErrNotProposed, http.StatusConflict, "invalid_state").saying("the event is not a proposal awaiting a decision: it was approved or rejected already, or a creator made it"),
})

// POST /admin/events/{id}/approve: the operator approves a proposal. The
// decision's refusals (decisionRules), then 409 creator_limit (the
// approved event would take its proposer past the creators' limits) and
// 400 invalid_request (the treasury cannot escrow the subsidy).
var errsApprove = table("internal_error", slices.Concat(decisionRules, []rule{
	on(market.ErrCreatorLimit, http.StatusConflict, "creator_limit"),
})...)

func (h *proposalHandlers) handleApprove(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	e, err := h.markets.Approve(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(eventView(e, h.markets.Now()))
}

// POST /admin/events/{id}/reject {"reason", "refund"}: the operator
// rejects a proposal, giving its ante back (refund) or to the platform.
// Both fields are required: 400 invalid_request without them, then the
// decision's refusals (decisionRules).
var errsReject = table("internal_error", decisionRules...)

type rejectBody struct {
	Reason string `json:"reason" validate:"required"`
	Refund *bool  `json:"refund" validate:"required"`
}

func (h *proposalHandlers) handleReject(c *fiber.Ctx) error {
	id, b, err := idAndBody[rejectBody](c, "id")
	if err != nil {
		return err
	}
	e, err := h.markets.Reject(c.UserContext(), id, b.Reason, *b.Refund)
	if err != nil {
		return err
	}
	return c.JSON(eventView(e, h.markets.Now()))
}
