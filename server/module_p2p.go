package server

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/p2p"
)

// P2PModule provides the P2P service and its routes: the public board
// (one ad, the filtered and sorted list) and the operator's routes
// (create and moderate ads, set a user's P2P record).
var P2PModule = fx.Module("p2p",
	fx.Provide(newP2PService, p2pRoutes),
)

func newP2PService(store Store) *p2p.Service { return p2p.NewService(store) }

// p2pOwnerJSON is an ad's embedded owner. A hidden profile shows the name
// "Anonymous" and empty nickname and avatar_url; so does a missing one.
type p2pOwnerJSON struct {
	ID              int64   `json:"id"`
	Name            string  `json:"name"`
	Nickname        string  `json:"nickname"`
	AvatarURL       string  `json:"avatar_url"`
	CompletedOrders int64   `json:"completed_orders"`
	P2PAvgRating    float64 `json:"p2p_avg_rating"`
}

// p2pAdJSON is a P2PAd.
type p2pAdJSON struct {
	ID               int64        `json:"id"`
	UserID           int64        `json:"user_id"`
	Type             string       `json:"type"`
	FiatCurrency     string       `json:"fiat_currency"`
	ExchangeRate     int64        `json:"exchange_rate"`
	MinAmount        int64        `json:"min_amount"`
	MaxAmount        int64        `json:"max_amount"`
	RemainingAmount  int64        `json:"remaining_amount"`
	PaymentMethods   []string     `json:"payment_methods"`
	PaymentDuration  int64        `json:"payment_duration"`
	Instructions     string       `json:"instructions"`
	IsActive         bool         `json:"is_active"`
	ModerationStatus string       `json:"moderation_status"`
	IsPlatformAd     bool         `json:"is_platform_ad"`
	CreatedAt        string       `json:"created_at"`
	UpdatedAt        string       `json:"updated_at"`
	User             p2pOwnerJSON `json:"user"`
	UserAvgRating    float64      `json:"user_avg_rating"`
}

func p2pAdView(ad *p2p.Ad) p2pAdJSON {
	methods := ad.PaymentMethods
	if methods == nil {
		methods = []string{}
	}
	avg := ad.Owner.Stats.AvgRating()
	return p2pAdJSON{
		ID: ad.ID, UserID: ad.UserID, Type: ad.Type, FiatCurrency: ad.FiatCurrency, ExchangeRate: ad.ExchangeRate,
		MinAmount: ad.MinAmount, MaxAmount: ad.MaxAmount, RemainingAmount: ad.RemainingAmount,
		PaymentMethods: methods, PaymentDuration: ad.PaymentDuration, Instructions: ad.Instructions,
		IsActive: ad.IsActive, ModerationStatus: ad.ModerationStatus, IsPlatformAd: ad.IsPlatformAd,
		CreatedAt: ts(ad.CreatedAt), UpdatedAt: ts(ad.UpdatedAt),
		User: p2pOwnerJSON{ID: ad.Owner.ID, Name: ad.Owner.Name, Nickname: ad.Owner.Nickname, AvatarURL: ad.Owner.AvatarURL,
			CompletedOrders: ad.Owner.Stats.CompletedOrders, P2PAvgRating: avg},
		UserAvgRating: avg,
	}
}

// p2pStatsJSON is a user's P2P record.
type p2pStatsJSON struct {
	UserID          int64   `json:"user_id"`
	CompletedOrders int64   `json:"completed_orders"`
	RatingCount     int64   `json:"rating_count"`
	RatingSum       int64   `json:"rating_sum"`
	P2PAvgRating    float64 `json:"p2p_avg_rating"`
}

// queryValues copies the request's query parameters (decoded, repeats
// kept) into url.Values.
func queryValues(c *fiber.Ctx) url.Values {
	v := url.Values{}
	c.Request().URI().QueryArgs().VisitAll(func(k, val []byte) {
		v.Add(string(k), string(val))
	})
	return v
}

// p2pHandlers serves the P2P board and the operator's P2P routes.
type p2pHandlers struct {
	ads *p2p.Service
}

// p2pRoutes lists the public P2P board and the operator's P2P routes
// (behind the admin token). Each handler below follows its error table,
// which says what the route answers and in which order.
func p2pRoutes(ads *p2p.Service, admin *AdminAuth) RoutesOut {
	h := &p2pHandlers{ads: ads}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/p2p/ads", Errors: errsP2PAds, Handler: h.handleAds},
		{Method: http.MethodGet, Path: "/api/v1/p2p/ads/:id", Errors: errsP2PAd, Handler: h.handleAd},

		{Method: http.MethodPost, Path: "/api/v1/admin/p2p/ads", Errors: errsAdminP2P, Handler: admin.guard(h.handleCreateAd)},
		{Method: http.MethodPatch, Path: "/api/v1/admin/p2p/ads/:id", Errors: errsAdminP2P, Handler: admin.guard(h.handleModerate)},
		{Method: http.MethodPut, Path: "/api/v1/admin/p2p/users/:id/stats", Errors: errsAdminP2P, Handler: admin.guard(h.handleSetStats)},
	}}
}

// GET /p2p/ads: the P2P board, filtered, sorted and paged. Checks run 400
// INVALID_REQUEST (any malformed parameter); codes are upper case here.
var errsP2PAds = table("INTERNAL_ERROR",
	on(input.ErrInvalid, http.StatusBadRequest, "INVALID_REQUEST"),
	on(errBadRequest, http.StatusBadRequest, "INVALID_REQUEST"),
)

// handleAds answers the board.
func (h *p2pHandlers) handleAds(c *fiber.Ctx) error {
	q, err := p2p.ParseQuery(queryValues(c))
	if err != nil {
		return err
	}
	list, err := h.ads.List(c.UserContext(), q)
	if err != nil {
		return err
	}
	out := make([]p2pAdJSON, 0, len(list))
	for _, ad := range list {
		out = append(out, p2pAdView(ad))
	}
	return c.JSON(fiber.Map{"ads": out})
}

// GET /p2p/ads/{id}: one ad with its owner. Checks run 404 NOT_FOUND: an
// id that is not an integer names no ad either.
var errsP2PAd = table("INTERNAL_ERROR",
	on(errInvalidID, http.StatusNotFound, "NOT_FOUND"),
	on(p2p.ErrNotFound, http.StatusNotFound, "NOT_FOUND"),
)

// handleAd answers one ad.
func (h *p2pHandlers) handleAd(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ad, err := h.ads.Ad(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(p2pAdView(ad))
}

// The operator's P2P routes: POST /admin/p2p/ads (publish an ad for a
// user), PATCH /admin/p2p/ads/{id} (moderate), PUT
// /admin/p2p/users/{id}/stats (set a user's P2P record). Checks run as
// adminRules (404 when disabled, 401, 400), then 404 ad_not_found or
// user_not_found (p2p.ErrUserNotFound is account.ErrUserNotFound).
var errsAdminP2P = table("internal_error", slices.Concat(adminRules, []rule{
	on(p2p.ErrNotFound, http.StatusNotFound, "ad_not_found"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
})...)

// Operator bodies. Required numbers are pointers so that a missing field
// is told from a zero one.
type newP2PAdBody struct {
	UserID          *int64   `json:"user_id" validate:"required"`
	Type            string   `json:"type" validate:"required"`
	FiatCurrency    string   `json:"fiat_currency" validate:"required"`
	ExchangeRate    *int64   `json:"exchange_rate" validate:"required"`
	MinAmount       *int64   `json:"min_amount" validate:"required"`
	MaxAmount       *int64   `json:"max_amount" validate:"required"`
	RemainingAmount *int64   `json:"remaining_amount"`
	PaymentMethods  []string `json:"payment_methods" validate:"required"`
	PaymentDuration *int64   `json:"payment_duration" validate:"required"`
	Instructions    string   `json:"instructions"`
	IsPlatformAd    bool     `json:"is_platform_ad"`
}

// handleCreateAd publishes an ad (approved and active at once) and
// answers it (201).
func (h *p2pHandlers) handleCreateAd(c *fiber.Ctx) error {
	var b newP2PAdBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	ad, err := h.ads.Create(c.UserContext(), p2p.NewAd{
		UserID: *b.UserID, Type: b.Type, FiatCurrency: b.FiatCurrency, ExchangeRate: *b.ExchangeRate,
		MinAmount: *b.MinAmount, MaxAmount: *b.MaxAmount, RemainingAmount: b.RemainingAmount,
		PaymentMethods: b.PaymentMethods, PaymentDuration: *b.PaymentDuration, Instructions: b.Instructions,
		IsPlatformAd: b.IsPlatformAd,
	})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(p2pAdView(ad))
}

type p2pModerationBody struct {
	IsActive         *bool   `json:"is_active"`
	ModerationStatus *string `json:"moderation_status"`
}

// handleModerate activates, deactivates, approves or rejects an ad and
// answers it.
func (h *p2pHandlers) handleModerate(c *fiber.Ctx) error {
	id, b, err := idAndBody[p2pModerationBody](c, "id")
	if err != nil {
		return err
	}
	ad, err := h.ads.Moderate(c.UserContext(), id, p2p.Moderation{IsActive: b.IsActive, ModerationStatus: b.ModerationStatus})
	if err != nil {
		return err
	}
	return c.JSON(p2pAdView(ad))
}

type p2pStatsBody struct {
	CompletedOrders *int64 `json:"completed_orders" validate:"required"`
	RatingCount     int64  `json:"rating_count"`
	RatingSum       int64  `json:"rating_sum"`
}

// handleSetStats sets a user's P2P record and answers it.
func (h *p2pHandlers) handleSetStats(c *fiber.Ctx) error {
	id, b, err := idAndBody[p2pStatsBody](c, "id")
	if err != nil {
		return err
	}
	st, err := h.ads.SetStats(c.UserContext(), p2p.UserStats{UserID: id, CompletedOrders: *b.CompletedOrders, RatingCount: b.RatingCount, RatingSum: b.RatingSum})
	if err != nil {
		return err
	}
	return c.JSON(p2pStatsJSON{UserID: st.UserID, CompletedOrders: st.CompletedOrders, RatingCount: st.RatingCount,
		RatingSum: st.RatingSum, P2PAvgRating: st.AvgRating()})
}
