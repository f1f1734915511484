package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/growth"
)

// GrowthModule provides GET /api/v1/users/me/referrals
// (docs/referrals-and-levels.md). The consumer of the change log that
// counts lifetime volumes, raises levels and pays referral rewards is
// started by runGrowth, which Options invokes after the demo data. The
// sign-up bonus and the referral code of registration are the account
// module's.
var GrowthModule = fx.Module("growth",
	fx.Provide(growthRoutes),
)

// growthGap is how late levels and rewards may be on a busy server: as
// the leaderboard's, the consumer applies at most once per gap while
// entries keep coming, so that a hot market's commits are applied many
// at a time.
const growthGap = 250 * time.Millisecond

// growthBatch is the most entries one apply takes (see leaderboardBatch).
const growthBatch = 20000

// runGrowth runs the growth consumer from start to stop. Several servers
// on one database may all run it: each apply locks the cursor, so they
// take turns and count every entry once.
func runGrowth(lc fx.Lifecycle, store Store, cfg Config, log *slog.Logger) {
	gs, ok := store.(growth.Store)
	if !ok {
		return
	}
	rules := cfg.Growth
	c := &changelog.Consumer{Name: "growth", Log: log, Gap: growthGap, Batch: growthBatch,
		Apply: func(ctx context.Context, limit int) (int, error) { return gs.ApplyGrowth(ctx, rules, limit) }}
	if w, ok := store.(appendWaker); ok {
		c.Woken = w.ChangesAppended // the memory store's consumer reads its log too
	}
	// The first apply runs before the server listens: on a store the
	// consumer never ran on, it counts the history there is, so that the
	// levels are right from the first request.
	runConsumer(lc, store, c, func(start context.Context) {
		if _, err := c.Apply(start, growthBatch); err != nil {
			log.Warn("growth: the first apply failed; retrying", "err", err)
		}
	})
}

type growthHandlers struct {
	store growth.Store
	auth  *Auth
	cfg   Config
}

func growthRoutes(store Store, auth *Auth, cfg Config) RoutesOut {
	gs, ok := store.(growth.Store)
	if !ok {
		return RoutesOut{}
	}
	h := &growthHandlers{store: gs, auth: auth, cfg: cfg}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/users/me/referrals", Errors: errsReferrals, Handler: h.handleReferrals},
	}}
}

// GET /users/me/referrals: the caller's referral code, their invitation
// link, what their invitations brought and the rules. Checks run 401.
var errsReferrals = table("internal_error", unauthorized)

// referralsJSON is the answer of GET /users/me/referrals.
type referralsJSON struct {
	Code           string `json:"code"`
	Link           string `json:"link"`
	Referred       int64  `json:"referred"`
	Qualified      int64  `json:"qualified"`
	EarnedKopecks  int64  `json:"earned_kopecks"`
	QualifyKopecks int64  `json:"qualify_kopecks"`
	RewardKopecks  int64  `json:"reward_kopecks"`
}

func (h *growthHandlers) handleReferrals(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	sum, err := h.store.Referrals(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	return c.JSON(referralsJSON{Code: sum.Code, Link: h.inviteLink(c, sum.Code), Referred: sum.Referred, Qualified: sum.Qualified,
		EarnedKopecks: sum.EarnedKopecks, QualifyKopecks: h.cfg.Growth.QualifyKopecks, RewardKopecks: h.cfg.Growth.RewardKopecks})
}

// inviteLink is the web app's registration page with code: under
// PREDICTKIT_PUBLIC_URL when set, else on the origin the request came to.
func (h *growthHandlers) inviteLink(c *fiber.Ctx, code string) string {
	base := strings.TrimRight(h.cfg.PublicURL, "/")
	if base == "" {
		base = h.auth.origins.requestOrigin(c)
	}
	return base + "/register?ref=" + code
}

// errsRegisterReferral is the register route's answer to a code that
// names nobody who may refer.
var errsRegisterReferral = on(account.ErrInvalidReferralCode, http.StatusBadRequest, "invalid_referral_code")
