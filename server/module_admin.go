package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
)

// AdminModule provides the operator routes: credit a user, set roles, the
// ledger audit. They take "Authorization: Bearer <admin token>" and answer
// 404 when no admin token is configured.
var AdminModule = fx.Module("admin",
	fx.Provide(newAdminAuth, adminRoutes),
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
// otherwise. Comparing hashes in constant time tells nothing of the
// token's length or content.
func (a *AdminAuth) Check(c *fiber.Ctx) error {
	if a.hash == nil {
		return errAdminDisabled
	}
	h := sha256.Sum256([]byte(bearer(c)))
	if subtle.ConstantTimeCompare(h[:], a.hash) != 1 {
		return account.ErrUnauthorized
	}
	c.Locals(localOperator, true) // for the access log
	return nil
}

type creditBody struct {
	AmountKopecks int64 `json:"amount_kopecks" validate:"required,gte=1,lte=10000000000000"`
	Bonus         bool  `json:"bonus"`
}

type rolesBody struct {
	IsCreator     *bool `json:"is_creator"`
	IsStatsViewer *bool `json:"is_stats_viewer"`
}

// auditJSON is the operator's audit: the ledger check merged with the
// markets' escrow check.
type auditJSON struct {
	account.Report
	EscrowProblems []string `json:"escrow_problems"`
}

func adminRoutes(admin *AdminAuth, accounts *account.Service, audits *Auditor, prof *profiles) RoutesOut {
	guard := func(h fiber.Handler) fiber.Handler {
		return func(c *fiber.Ctx) error {
			if err := admin.Check(c); err != nil {
				return err
			}
			return h(c)
		}
	}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/admin/users/:id/credit", Errors: errsAdmin, Handler: guard(func(c *fiber.Ctx) error {
			id, b, err := idAndBody[creditBody](c, "id")
			if err != nil {
				return err
			}
			bal, err := accounts.Credit(c.UserContext(), id, b.AmountKopecks, b.Bonus)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"user_id": id, "balance": bal.Balance, "bonus_balance": bal.Bonus, "total_balance": bal.Total()})
		})},
		{Method: http.MethodPatch, Path: "/api/v1/admin/users/:id", Errors: errsAdmin, Handler: guard(func(c *fiber.Ctx) error {
			id, b, err := idAndBody[rolesBody](c, "id")
			if err != nil {
				return err
			}
			u, err := accounts.SetRoles(c.UserContext(), id, account.RolesPatch{IsCreator: b.IsCreator, IsStatsViewer: b.IsStatsViewer})
			if err != nil {
				return err
			}
			v, err := prof.build(c.UserContext(), u)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"user": v})
		})},
		{Method: http.MethodGet, Path: "/api/v1/admin/audit", Errors: errsAdmin, Handler: guard(func(c *fiber.Ctx) error {
			out, err := audits.Run(c.UserContext())
			if err != nil {
				return err
			}
			return c.JSON(out)
		})},
	}}
}
