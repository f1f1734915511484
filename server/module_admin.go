package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// AdminModule provides the operator routes: credit a user, set roles, the
// ledger audit. They take "Authorization: Bearer <admin token>" and answer
// 404 when no admin token is configured.
var AdminModule = fx.Module("admin",
	fx.Provide(newAdminAuth, adminRoutes, adminEventRoutes, proposalRoutes),
)

// AdminAuth checks the operator's token.
type AdminAuth struct {
	// hash is the SHA-256 of the admin token; nil when disabled.
	hash []byte
}

func newAdminAuth(cfg Config) *AdminAuth {
	if cfg.AdminToken == "" {
		return &AdminAuth{}
	}
	h := sha256.Sum256([]byte(cfg.AdminToken))
	return &AdminAuth{hash: h[:]}
}

// Check returns nil when the request carries the admin token,
// errAdminDisabled when there is none configured, account.ErrUnauthorized
// otherwise.
func (a *AdminAuth) Check(c *fiber.Ctx) error {
	if a.hash == nil {
		return errAdminDisabled
	}
	if !a.Carries(c) {
		return account.ErrUnauthorized
	}
	return nil
}

// Carries reports whether the request's Bearer token is the admin token
// (false when none is configured), for the routes that take it beside a
// user's credential. Comparing hashes in constant time tells nothing of
// the token's length or content.
func (a *AdminAuth) Carries(c *fiber.Ctx) bool {
	if a.hash == nil {
		return false
	}
	h := sha256.Sum256([]byte(bearer(c)))
	if subtle.ConstantTimeCompare(h[:], a.hash) != 1 {
		return false
	}
	c.Locals(localOperator, true) // for the access log
	return true
}

// guard runs h only for a request that carries the admin token: Check
// first, so every operator route answers 404 when no admin token is
// configured and 401 for a wrong one before anything else.
func (a *AdminAuth) guard(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := a.Check(c); err != nil {
			return err
		}
		return h(c)
	}
}

// adminRules are the rules of every operator route (here and in the
// partner, P2P and chat modules): 404 not_found when disabled, 401 for a
// wrong token, then 400 invalid_id, 404 user_not_found, 400
// invalid_request.
var adminRules = []rule{
	on(errAdminDisabled, http.StatusNotFound, "not_found"),
	unauthorized,
	on(errInvalidID, http.StatusBadRequest, "invalid_id"),
	on(account.ErrUserNotFound, http.StatusNotFound, "user_not_found"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(account.ErrInvalidAmount, http.StatusBadRequest, "invalid_request"),
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
}

// adminHandlers serves the operator's user routes, the audit and the
// resolution of markets.
type adminHandlers struct {
	accounts *account.Service
	markets  *market.Service
	audits   *Auditor
	profiles *profiles
	metrics  *Metrics
}

// adminRoutes lists the operator's user routes, the audit and the
// resolution of markets, all behind the admin token. The handlers below
// follow their error table.
func adminRoutes(admin *AdminAuth, accounts *account.Service, markets *market.Service, audits *Auditor, prof *profiles, metrics *Metrics) RoutesOut {
	h := &adminHandlers{accounts: accounts, markets: markets, audits: audits, profiles: prof, metrics: metrics}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/admin/users/:id/credit", Errors: errsAdmin, Handler: admin.guard(h.handleCredit)},
		{Method: http.MethodPatch, Path: "/api/v1/admin/users/:id", Errors: errsAdmin, Handler: admin.guard(h.handleSetRoles)},
		{Method: http.MethodGet, Path: "/api/v1/admin/audit", Errors: errsAdmin, Handler: admin.guard(h.handleAudit)},
		{Method: http.MethodGet, Path: "/api/v1/admin/users", Errors: errsAdminSearch, Handler: admin.guard(h.handleSearchUsers)},
		{Method: http.MethodPost, Path: "/api/v1/admin/markets/:id/resolve", Errors: errsAdminResolve, Handler: admin.guard(h.handleResolve)},
	}}
}

// POST /admin/users/{id}/credit, PATCH /admin/users/{id} and GET
// /admin/audit: credit a user, set a user's roles, check the ledger and
// the markets' escrow. Checks run 404 not_found (no admin token
// configured), 401, 400 (id, body), 404 user_not_found.
var errsAdmin = table("internal_error", adminRules...)

type creditBody struct {
	AmountKopecks int64 `json:"amount_kopecks" validate:"required"`
	Bonus         bool  `json:"bonus"`
}

// handleCredit deposits money to a user's balance (or bonus balance) and
// answers the balances.
func (h *adminHandlers) handleCredit(c *fiber.Ctx) error {
	id, b, err := idAndBody[creditBody](c, "id")
	if err != nil {
		return err
	}
	bal, err := h.accounts.Credit(c.UserContext(), id, b.AmountKopecks, b.Bonus)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"user_id": id, "balance": bal.Balance, "bonus_balance": bal.Bonus, "total_balance": bal.Total()})
}

type rolesBody struct {
	IsCreator     *bool `json:"is_creator"`
	IsStatsViewer *bool `json:"is_stats_viewer"`
}

// handleSetRoles grants or revokes a user's roles and answers the
// profile.
func (h *adminHandlers) handleSetRoles(c *fiber.Ctx) error {
	id, b, err := idAndBody[rolesBody](c, "id")
	if err != nil {
		return err
	}
	u, err := h.accounts.SetRoles(c.UserContext(), id, account.RolesPatch{IsCreator: b.IsCreator, IsStatsViewer: b.IsStatsViewer})
	if err != nil {
		return err
	}
	v, err := h.profiles.build(c.UserContext(), u)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"user": v})
}

// auditJSON is the operator's audit: the ledger check merged with the
// markets' escrow check.
type auditJSON struct {
	account.Report
	EscrowProblems []string `json:"escrow_problems"`
}

// handleAudit runs the audit.
func (h *adminHandlers) handleAudit(c *fiber.Ctx) error {
	out, err := h.audits.Run(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// GET /admin/users?query=&limit=&cursor=: the operator's user search.
// Checks run 404 not_found (no admin token configured), 401, then 400
// invalid_request (a query that breaks the text rule or is over 200
// characters, a limit outside 1..100, a cursor the server did not give).
var errsAdminSearch = table("internal_error", adminRules...)

// handleSearchUsers answers a page of the users whose e-mail, name or
// nickname contains query (or whose id it is), newest first, and the
// cursor of the next page (null on the last).
func (h *adminHandlers) handleSearchUsers(c *fiber.Ctx) error {
	limit, err := queryInt(c, "limit", 0)
	if err != nil {
		return err
	}
	if c.Query("limit") != "" && limit == 0 {
		return input.InRange("limit", 0, 1, account.MaxSearchLimit)
	}
	if limit > account.MaxSearchLimit {
		return input.InRange("limit", limit, 1, account.MaxSearchLimit)
	}
	page, err := h.accounts.SearchUsers(c.UserContext(), c.Query("query"), int(limit), c.Query("cursor"))
	if err != nil {
		return err
	}
	return c.JSON(userPageView(page))
}

// POST /admin/markets/{id}/resolve: the operator resolves or voids any
// market, as its creator would close it. It answers in market close's
// words, the same operation's. Checks run 404 not_found (no admin token
// configured), 401, 404 market not found (an id that is not an integer),
// 400 invalid request (the body, or won_side not YES, NO or VOID), 404
// market not found, 409 market already resolved.
var errsAdminResolve = table("internal_error",
	on(errAdminDisabled, http.StatusNotFound, "not_found"),
	unauthorized,
	on(errInvalidID, http.StatusNotFound, "market not found"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid request"),
	on(errBadRequest, http.StatusBadRequest, "invalid request"),
	on(market.ErrMarketNotFound, http.StatusNotFound, "market not found"),
	on(market.ErrResolved, http.StatusConflict, "market already resolved"),
	on(market.ErrNotApproved, http.StatusConflict, "invalid_state").saying(notApprovedDetail),
)

type resolveBody struct {
	WonSide string `json:"won_side" validate:"required"`
}

// handleResolve settles a market with the outcome the operator gives and
// counts the settlement as a creator's close is counted.
func (h *adminHandlers) handleResolve(c *fiber.Ctx) error {
	id, b, err := idAndBody[resolveBody](c, "id")
	if err != nil {
		return err
	}
	start := time.Now()
	err = h.markets.Resolve(c.UserContext(), id, b.WonSide)
	h.metrics.observeSettlement(time.Since(start), err)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "ok"})
}
