package server

import (
	"net/http"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
)

// Answers added later: an exclusive pool's creator, or the operator, adds
// an answer that takes part of the pool's Other answer's probability
// (market.Service.AddAnswer; docs/answer-split.md).

// answerBody is the body of POST /pools/{id}/answers and its operator
// twin.
type answerBody struct {
	Name        string   `json:"name"`
	NameRu      string   `json:"name_ru"`
	Probability *float64 `json:"probability" validate:"required"`
}

func (b *answerBody) toDomain() market.NewAnswer {
	return market.NewAnswer{Name: b.Name, NameRu: b.NameRu, Probability: *b.Probability}
}

// errNoNewAnswer is the 409 of a pool that takes no new answer: it has no
// Other answer, or it is resolved or paused (a creator's proposed
// resolution pauses it).
var errNoNewAnswer = on(market.ErrNoNewAnswer, http.StatusConflict, "invalid_state").
	saying("the pool takes no new answer: it has no Other answer, or it is resolved or paused")

// errAnswerSubsidy is the 400 of a split whose escrow top-up the treasury
// cannot make (its subsidies would pass their bound).
var errAnswerSubsidy = on(account.ErrBalanceLimit, http.StatusBadRequest, "invalid_request").
	saying("the platform's treasury cannot top the pool's escrow up for this answer: choose a larger probability")

// POST /pools/{id}/answers: the event's creator adds an answer. Checks
// run 401, 400 invalid_pool_id, 400 invalid_request (the body), 404
// pool_not_found, 403 forbidden, 400 invalid_request (name, probability),
// 409 invalid_state (also a proposal the operator has not approved), 400
// invalid_request (probability not below Other's).
var errsAddAnswer = table("internal_error",
	unauthorized,
	on(errInvalidID, http.StatusBadRequest, "invalid_pool_id"),
	on(market.ErrPoolNotFound, http.StatusNotFound, "pool_not_found"),
	on(market.ErrEventNotFound, http.StatusNotFound, "pool_not_found"),
	on(market.ErrForbidden, http.StatusForbidden, "forbidden"),
	errNoNewAnswer,
	on(market.ErrNotApproved, http.StatusConflict, "invalid_state").saying(notApprovedDetail),
	errAnswerSubsidy,
	// The caller's account vanished under a valid token.
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
)

// handleAddAnswer adds an answer for the event's creator and answers 201
// with the new market.
func (h *marketHandlers) handleAddAnswer(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, b, err := idAndBody[answerBody](c, "id")
	if err != nil {
		return err
	}
	m, err := h.markets.AddAnswer(c.UserContext(), u.ID, false, id, b.toDomain())
	if err != nil {
		return err
	}
	v := marketView(m, h.markets.Now())
	return sendJSON(c.Status(http.StatusCreated), &v)
}

// POST /admin/pools/{id}/answers: the operator adds an answer to any
// pool. Checks run as on every operator route (adminRules), then 404
// pool_not_found, 400 invalid_request, 409 invalid_state.
var errsAdminAddAnswer = table("internal_error", slices.Concat(adminRules, []rule{
	on(market.ErrPoolNotFound, http.StatusNotFound, "pool_not_found"),
	errNoNewAnswer,
	on(market.ErrNotApproved, http.StatusConflict, "invalid_state").saying(notApprovedDetail),
	errAnswerSubsidy,
})...)

// handleAdminAddAnswer adds an answer for the operator.
func (h *marketHandlers) handleAdminAddAnswer(c *fiber.Ctx) error {
	id, b, err := idAndBody[answerBody](c, "id")
	if err != nil {
		return err
	}
	m, err := h.markets.AddAnswer(c.UserContext(), 0, true, id, b.toDomain())
	if err != nil {
		return err
	}
	v := marketView(m, h.markets.Now())
	return sendJSON(c.Status(http.StatusCreated), &v)
}
