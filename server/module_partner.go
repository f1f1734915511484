package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/postgres"
)

// PartnerModule provides the partner service and the partner API: bets
// and sells for a partner's users (X-Partner-Key), their sub-account
// state, and the operator's partner routes (create, fund the float,
// disable, read), which take the admin token like every operator route.
var PartnerModule = fx.Module("partner",
	fx.Provide(newPartnerService, newPartnerAuth, partnerRoutes, partnerCache),
)

// partnerCache caches partners by key while the store announces changes,
// as tokens are (see cacheAuth).
func partnerCache(partners *partner.Service) authCacheOut {
	return authCacheOut{Cache: authCache{
		set: partners.CacheKeys,
		invalidate: func(inv account.Invalidation) {
			switch {
			case inv.All:
				partners.Invalidate(0)
			case inv.PartnerID != 0:
				partners.Invalidate(inv.PartnerID)
			}
		},
	}}
}

// newPartnerService trades through the market service, so that partner
// and user trades share its group commit.
func newPartnerService(store Store, markets *market.Service) *partner.Service {
	return partner.NewService(store, store, markets)
}

// HeaderPartnerKey carries a partner's key.
const HeaderPartnerKey = "X-Partner-Key"

// HeaderIdempotentReplayed is set to "true" on the answer to a repeat of
// an accepted partner request: the body is the original one, nothing ran.
const HeaderIdempotentReplayed = "Idempotent-Replayed"

// PartnerAuth reads the calling partner from the X-Partner-Key header.
type PartnerAuth struct{ partners *partner.Service }

func newPartnerAuth(p *partner.Service) *PartnerAuth { return &PartnerAuth{partners: p} }

// Partner is the calling partner: partner.ErrUnauthorized for a missing
// or unknown key, partner.ErrDisabled for a disabled partner.
func (a *PartnerAuth) Partner(c *fiber.Ctx) (*partner.Partner, error) {
	if p, ok := c.Locals(localPartner).(*partner.Partner); ok {
		return p, nil // the rate limit looked the partner up first
	}
	p, err := a.partners.Authenticate(c.UserContext(), c.Get(HeaderPartnerKey))
	if err == nil {
		c.Locals(localPartnerID, p.ID) // for the access log and read-your-writes
		c.Locals(localPartner, p)
		c.SetUserContext(postgres.ForUser(c.UserContext(), partnerCaller(p.ID)))
	}
	return p, err
}

// decodeObject is decodeStrict for the routes that tell a body that is
// not one JSON object (errMalformedBody: BAD_BODY) from an object with a
// missing or invalid field (BAD_PARAMS).
func decodeObject(body []byte, dst any) error {
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return malformedBody("must be a JSON object")
	case !utf8.Valid(body):
		return malformedBody("must be UTF-8")
	case !json.Valid(body):
		return malformedBody("malformed JSON")
	case trimmed[0] != '{':
		return malformedBody("must be a JSON object")
	}
	return decodeStrict(body, dst)
}

// decodePartnerBody is decodeObject for the request's body, once
// requireJSON has accepted its Content-Type.
func decodePartnerBody(c *fiber.Ctx, dst any) error {
	if err := requireJSON(c); err != nil {
		return err
	}
	return decodeObject(c.Body(), dst)
}

// parsePartnerSide reads the partner API's side: exactly "yes" or "no".
func parsePartnerSide(s string) (market.Side, error) {
	switch s {
	case "yes":
		return market.Yes, nil
	case "no":
		return market.No, nil
	}
	return 0, badRequest("side", "must be yes or no")
}

// sendReceipt answers an accepted bet or sell; a repeat carries
// Idempotent-Replayed: true and the same body.
func sendReceipt(c *fiber.Ctx, rc *partner.Receipt, body any) error {
	if rc.Replayed {
		c.Set(HeaderIdempotentReplayed, "true")
	}
	return c.JSON(body)
}

// partnerHandlers serves the partner API (a partner's key) and the
// operator's partner routes (the admin token).
type partnerHandlers struct {
	partners *partner.Service
	auth     *PartnerAuth
}

// partnerRoutes lists the partner API and the operator's partner routes.
// Each handler below follows its error table, which says what the route
// answers and in which order.
func partnerRoutes(partners *partner.Service, auth *PartnerAuth, admin *AdminAuth) RoutesOut {
	h := &partnerHandlers{partners: partners, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/partner/bet", Errors: errsPartnerBet, Handler: h.handleBet},
		{Method: http.MethodPost, Path: "/api/v1/partner/sell", Errors: errsPartnerSell, Handler: h.handleSell},
		{Method: http.MethodGet, Path: "/api/v1/partner/users/:external_user_id", Errors: errsPartnerState, Handler: h.handleState},

		{Method: http.MethodPost, Path: "/api/v1/admin/partners", Errors: errsAdminPartner, Handler: admin.guard(h.handleCreatePartner)},
		{Method: http.MethodGet, Path: "/api/v1/admin/partners", Errors: errsAdminPartners, Handler: admin.guard(h.handlePartners)},
		{Method: http.MethodGet, Path: "/api/v1/admin/partners/:id", Errors: errsAdminPartner, Handler: admin.guard(h.handlePartner)},
		{Method: http.MethodPatch, Path: "/api/v1/admin/partners/:id", Errors: errsAdminPartner, Handler: admin.guard(h.handleSetDisabled)},
		{Method: http.MethodPost, Path: "/api/v1/admin/partners/:id/float", Errors: errsAdminPartner, Handler: admin.guard(h.handleFundFloat)},
	}}
}

// The partner API's rules, in the order its checks run: the key first,
// then the body, then the trade. Its codes are upper case.
var (
	partnerAuthRules = []rule{
		on(partner.ErrUnauthorized, http.StatusUnauthorized, "UNAUTHORIZED"),
		on(partner.ErrDisabled, http.StatusForbidden, "FORBIDDEN"),
	}
	partnerParamRules = []rule{
		on(errMalformedBody, http.StatusBadRequest, "BAD_BODY"),
		on(errBadRequest, http.StatusBadRequest, "BAD_PARAMS"),
		on(input.ErrInvalid, http.StatusBadRequest, "BAD_PARAMS"),
		on(account.ErrInvalidAmount, http.StatusBadRequest, "BAD_PARAMS"),
	}
	// partnerTradeRules: the market's refusals are TRADE_FAILED with a
	// detail saying which; an unknown market is a refused trade here.
	partnerTradeRules = []rule{
		on(partner.ErrNoAccount, http.StatusNotFound, "NO_ACCOUNT"),
		// The partner service turns ErrNoPosition into ErrNoAccount.
		on(market.ErrNoPosition, http.StatusNotFound, "NO_ACCOUNT"),
		on(partner.ErrIdempotencyConflict, http.StatusConflict, "IDEMPOTENCY_CONFLICT"),
		// The service retries ErrDuplicateKey; should one get through, it
		// is a concurrent use of the same key.
		on(market.ErrDuplicateKey, http.StatusConflict, "IDEMPOTENCY_CONFLICT"),
		on(market.ErrMarketNotFound, http.StatusBadRequest, "TRADE_FAILED").saying("market not found"),
		on(market.ErrClosed, http.StatusBadRequest, "TRADE_FAILED").saying("market closed"),
		on(market.ErrResolved, http.StatusBadRequest, "TRADE_FAILED").saying("market closed"),
		on(market.ErrInsufficientShares, http.StatusBadRequest, "TRADE_FAILED").saying("insufficient shares"),
		on(account.ErrInsufficientFunds, http.StatusBadRequest, "TRADE_FAILED").saying("insufficient funds"),
		on(market.ErrTradeRefused, http.StatusBadRequest, "TRADE_FAILED").saying("trade refused: too small to buy a share, or past the price bound"),
		on(market.ErrPoolChanged, http.StatusBadRequest, "TRADE_FAILED").saying("an answer was added to the pool: send the bet again"),
	}
)

// partnerBetBody and partnerSellBody are the bodies of the partner API's
// trades. Required numbers are pointers so that a missing field ("is
// required") is told from a zero one.
type partnerBetBody struct {
	ExternalUserID string `json:"external_user_id" validate:"required"`
	MarketID       *int64 `json:"market_id" validate:"required"`
	Side           string `json:"side" validate:"required"`
	AmountKopecks  *int64 `json:"amount_kopecks" validate:"required"`
	ClientBetID    string `json:"client_bet_id" validate:"required"`
	MaxCostKopecks int64  `json:"max_cost_kopecks"`
}

// POST /partner/bet: buy shares of a side for a partner's user, opening
// the sub-account on the first bet. Checks run 401/403 (key), 400
// BAD_BODY/BAD_PARAMS (body), then the trade (partnerTradeRules; a price
// past max_cost_kopecks is TRADE_FAILED).
var errsPartnerBet = table("INTERNAL_ERROR", slices.Concat(partnerAuthRules, partnerParamRules, partnerTradeRules,
	[]rule{on(market.ErrPriceMoved, http.StatusBadRequest, "TRADE_FAILED").saying("price moved past max_cost_kopecks")})...)

// handleBet places a bet; a repeat of an accepted one answers the same
// receipt.
func (h *partnerHandlers) handleBet(c *fiber.Ctx) error {
	p, err := h.auth.Partner(c)
	if err != nil {
		return err
	}
	var b partnerBetBody
	if err := decodePartnerBody(c, &b); err != nil {
		return err
	}
	side, err := parsePartnerSide(b.Side)
	if err != nil {
		return err
	}
	rc, err := h.partners.Bet(c.UserContext(), p, partner.Bet{
		ExternalUserID: b.ExternalUserID, MarketID: *b.MarketID, Side: side, AmountKopecks: *b.AmountKopecks,
		ClientBetID: b.ClientBetID, MaxCostKopecks: b.MaxCostKopecks,
	})
	if err != nil {
		return err
	}
	return sendReceipt(c, rc, partnerBetView(rc))
}

type partnerSellBody struct {
	ExternalUserID   string `json:"external_user_id" validate:"required"`
	MarketID         *int64 `json:"market_id" validate:"required"`
	Side             string `json:"side" validate:"required"`
	Shares           *int64 `json:"shares" validate:"required"`
	ClientBetID      string `json:"client_bet_id" validate:"required"`
	MinPayoutKopecks int64  `json:"min_payout_kopecks"`
}

// POST /partner/sell: sell shares of a side for a partner's user. Checks
// run 401/403 (key), 400 BAD_BODY/BAD_PARAMS (body), then the trade
// (partnerTradeRules; a payout below min_payout_kopecks is TRADE_FAILED).
var errsPartnerSell = table("INTERNAL_ERROR", slices.Concat(partnerAuthRules, partnerParamRules, partnerTradeRules,
	[]rule{on(market.ErrPriceMoved, http.StatusBadRequest, "TRADE_FAILED").saying("price moved below min_payout_kopecks")})...)

// handleSell places a sell; a repeat of an accepted one answers the same
// receipt.
func (h *partnerHandlers) handleSell(c *fiber.Ctx) error {
	p, err := h.auth.Partner(c)
	if err != nil {
		return err
	}
	var b partnerSellBody
	if err := decodePartnerBody(c, &b); err != nil {
		return err
	}
	side, err := parsePartnerSide(b.Side)
	if err != nil {
		return err
	}
	rc, err := h.partners.Sell(c.UserContext(), p, partner.Sell{
		ExternalUserID: b.ExternalUserID, MarketID: *b.MarketID, Side: side, Shares: *b.Shares,
		ClientBetID: b.ClientBetID, MinPayoutKopecks: b.MinPayoutKopecks,
	})
	if err != nil {
		return err
	}
	return sendReceipt(c, rc, partnerSellView(rc))
}

// GET /partner/users/{external_user_id}: the state of one partner user's
// sub-account. Checks run 401/403 (key), 400 BAD_PARAMS (the id).
var errsPartnerState = table("INTERNAL_ERROR", slices.Concat(partnerAuthRules, partnerParamRules)...)

// handleState answers a sub-account. Fiber gives the path parameter as
// sent (still escaped); the id is the partner's opaque UTF-8 text once
// decoded.
func (h *partnerHandlers) handleState(c *fiber.Ctx) error {
	p, err := h.auth.Partner(c)
	if err != nil {
		return err
	}
	id, err := url.PathUnescape(c.Params("external_user_id"))
	if err != nil {
		return badRequest("external_user_id", "invalid URL escape")
	}
	st, err := h.partners.State(c.UserContext(), p, id)
	if err != nil {
		return err
	}
	return c.JSON(partnerStateView(st))
}

// The operator's partner routes: POST /admin/partners (create), GET and
// PATCH /admin/partners/{id} (read, disable or re-enable), POST
// /admin/partners/{id}/float (fund). Checks run as adminRules (404 when
// disabled, 401, 400), then 404 partner_not_found.
var errsAdminPartner = table("internal_error", slices.Concat(adminRules, []rule{
	on(partner.ErrNotFound, http.StatusNotFound, "partner_not_found"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
})...)

// GET /admin/partners: every partner, oldest first. Checks run as
// adminRules (404 when disabled, 401).
var errsAdminPartners = table("internal_error", adminRules...)

// handlePartners lists every partner (never a key).
func (h *partnerHandlers) handlePartners(c *fiber.Ctx) error {
	ps, err := h.partners.Partners(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(partnerListView(ps))
}

type newPartnerBody struct {
	Name string `json:"name" validate:"required"`
}

// handleCreatePartner creates a partner and answers it with its key, the
// only time the key is shown (201, no-store).
func (h *partnerHandlers) handleCreatePartner(c *fiber.Ctx) error {
	var b newPartnerBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	p, key, err := h.partners.CreatePartner(c.UserContext(), b.Name)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(newPartnerJSON{ID: p.ID, Name: p.Name, Key: key})
}

// handlePartner answers a partner with its float.
func (h *partnerHandlers) handlePartner(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	return h.showPartner(c, id)
}

type partnerPatchBody struct {
	Disabled *bool `json:"disabled" validate:"required"`
}

// handleSetDisabled disables or re-enables a partner and answers it.
func (h *partnerHandlers) handleSetDisabled(c *fiber.Ctx) error {
	id, b, err := idAndBody[partnerPatchBody](c, "id")
	if err != nil {
		return err
	}
	if err := h.partners.SetDisabled(c.UserContext(), id, *b.Disabled); err != nil {
		return err
	}
	return h.showPartner(c, id)
}

type floatBody struct {
	AmountKopecks int64 `json:"amount_kopecks" validate:"required"`
}

// handleFundFloat deposits money to a partner's float and answers the new
// float.
func (h *partnerHandlers) handleFundFloat(c *fiber.Ctx) error {
	id, b, err := idAndBody[floatBody](c, "id")
	if err != nil {
		return err
	}
	float, err := h.partners.FundFloat(c.UserContext(), id, b.AmountKopecks)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"partner_id": id, "float_kopecks": float})
}

// showPartner answers partner id with its float.
func (h *partnerHandlers) showPartner(c *fiber.Ctx, id int64) error {
	p, err := h.partners.Partner(c.UserContext(), id)
	if err != nil {
		return err
	}
	float, err := h.partners.Float(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(partnerView(p, float))
}
