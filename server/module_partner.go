package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
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
		c.Locals(localPartnerID, p.ID) // for the access log
		c.Locals(localPartner, p)
	}
	return p, err
}

// Request bodies of the partner API. Required numbers are pointers so
// that a missing field ("is required") is told from a zero one.
type partnerBetBody struct {
	ExternalUserID string `json:"external_user_id" validate:"required"`
	MarketID       *int64 `json:"market_id" validate:"required,gte=1"`
	Side           string `json:"side" validate:"required"`
	AmountKopecks  *int64 `json:"amount_kopecks" validate:"required,gte=1,lte=100000000000"`
	ClientBetID    string `json:"client_bet_id" validate:"required"`
	MaxCostKopecks int64  `json:"max_cost_kopecks" validate:"gte=0"`
}

type partnerSellBody struct {
	ExternalUserID   string `json:"external_user_id" validate:"required"`
	MarketID         *int64 `json:"market_id" validate:"required,gte=1"`
	Side             string `json:"side" validate:"required"`
	Shares           *int64 `json:"shares" validate:"required,gte=1,lte=100000000000"`
	ClientBetID      string `json:"client_bet_id" validate:"required"`
	MinPayoutKopecks int64  `json:"min_payout_kopecks" validate:"gte=0"`
}

type newPartnerBody struct {
	Name string `json:"name" validate:"required"`
}

type floatBody struct {
	AmountKopecks int64 `json:"amount_kopecks" validate:"required,gte=1,lte=10000000000000"`
}

type partnerPatchBody struct {
	Disabled *bool `json:"disabled" validate:"required"`
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

func partnerRoutes(partners *partner.Service, auth *PartnerAuth, admin *AdminAuth) RoutesOut {
	guard := func(h fiber.Handler) fiber.Handler {
		return func(c *fiber.Ctx) error {
			if err := admin.Check(c); err != nil {
				return err
			}
			return h(c)
		}
	}
	// showPartner answers partner id with its float.
	showPartner := func(c *fiber.Ctx, id int64) error {
		p, err := partners.Partner(c.UserContext(), id)
		if err != nil {
			return err
		}
		float, err := partners.Float(c.UserContext(), id)
		if err != nil {
			return err
		}
		return c.JSON(partnerView(p, float))
	}
	return RoutesOut{Routes: []Route{
		// Extension API: the bet that opens positions and creates the
		// sub-account. Checks run 401/403 (key), 400 (body), then the trade.
		{Method: http.MethodPost, Path: "/api/v1/partner/bet", Errors: errsPartnerBet, Handler: func(c *fiber.Ctx) error {
			p, err := auth.Partner(c)
			if err != nil {
				return err
			}
			var b partnerBetBody
			if err := decodeObject(c.Body(), &b); err != nil {
				return err
			}
			side, err := parsePartnerSide(b.Side)
			if err != nil {
				return err
			}
			rc, err := partners.Bet(c.UserContext(), p, partner.Bet{
				ExternalUserID: b.ExternalUserID, MarketID: *b.MarketID, Side: side, AmountKopecks: *b.AmountKopecks,
				ClientBetID: b.ClientBetID, MaxCostKopecks: b.MaxCostKopecks,
			})
			if err != nil {
				return err
			}
			return sendReceipt(c, rc, partnerBetView(rc))
		}},
		// Contract 3.
		{Method: http.MethodPost, Path: "/api/v1/partner/sell", Errors: errsPartnerSell, Handler: func(c *fiber.Ctx) error {
			p, err := auth.Partner(c)
			if err != nil {
				return err
			}
			var b partnerSellBody
			if err := decodeObject(c.Body(), &b); err != nil {
				return err
			}
			side, err := parsePartnerSide(b.Side)
			if err != nil {
				return err
			}
			rc, err := partners.Sell(c.UserContext(), p, partner.Sell{
				ExternalUserID: b.ExternalUserID, MarketID: *b.MarketID, Side: side, Shares: *b.Shares,
				ClientBetID: b.ClientBetID, MinPayoutKopecks: b.MinPayoutKopecks,
			})
			if err != nil {
				return err
			}
			return sendReceipt(c, rc, partnerSellView(rc))
		}},
		// Contract 4. Fiber gives the path parameter as sent (still
		// escaped); the id is the partner's opaque UTF-8 text once decoded.
		{Method: http.MethodGet, Path: "/api/v1/partner/users/:external_user_id", Errors: errsPartnerState, Handler: func(c *fiber.Ctx) error {
			p, err := auth.Partner(c)
			if err != nil {
				return err
			}
			id, err := url.PathUnescape(c.Params("external_user_id"))
			if err != nil {
				return badRequest("external_user_id", "invalid URL escape")
			}
			st, err := partners.State(c.UserContext(), p, id)
			if err != nil {
				return err
			}
			return c.JSON(partnerStateView(st))
		}},

		// Operator routes.
		{Method: http.MethodPost, Path: "/api/v1/admin/partners", Errors: errsAdminPartner, Handler: guard(func(c *fiber.Ctx) error {
			var b newPartnerBody
			if err := decodeStrict(c.Body(), &b); err != nil {
				return err
			}
			p, key, err := partners.CreatePartner(c.UserContext(), b.Name)
			if err != nil {
				return err
			}
			c.Set(fiber.HeaderCacheControl, "no-store")
			return c.Status(http.StatusCreated).JSON(newPartnerJSON{ID: p.ID, Name: p.Name, Key: key})
		})},
		{Method: http.MethodGet, Path: "/api/v1/admin/partners/:id", Errors: errsAdminPartner, Handler: guard(func(c *fiber.Ctx) error {
			id, err := pathID(c, "id")
			if err != nil {
				return err
			}
			return showPartner(c, id)
		})},
		{Method: http.MethodPatch, Path: "/api/v1/admin/partners/:id", Errors: errsAdminPartner, Handler: guard(func(c *fiber.Ctx) error {
			id, b, err := idAndBody[partnerPatchBody](c, "id")
			if err != nil {
				return err
			}
			if err := partners.SetDisabled(c.UserContext(), id, *b.Disabled); err != nil {
				return err
			}
			return showPartner(c, id)
		})},
		{Method: http.MethodPost, Path: "/api/v1/admin/partners/:id/float", Errors: errsAdminPartner, Handler: guard(func(c *fiber.Ctx) error {
			id, b, err := idAndBody[floatBody](c, "id")
			if err != nil {
				return err
			}
			float, err := partners.FundFloat(c.UserContext(), id, b.AmountKopecks)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"partner_id": id, "float_kopecks": float})
		})},
	}}
}
