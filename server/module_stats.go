package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/stats"
)

// StatsModule provides GET /api/v1/stats/daily and /overview
// (docs/statistics.md) and, on a store whose aggregates follow the change
// log (storage/postgres), runs the consumer that applies them.
var StatsModule = fx.Module("stats",
	fx.Provide(newStatsService, statsRoutes),
	fx.Invoke(runStats),
)

func newStatsService(store Store) *stats.Service { return stats.NewService(store) }

// statsGap and statsBatch pace the consumer as the leaderboard's are
// paced (module_leaderboard.go): the statistics may be a second late on
// a busy server, so that one apply takes many commits' entries.
const (
	statsGap   = time.Second
	statsBatch = 20000
)

// runStats runs the statistics' consumer from start to stop. Several
// servers on one database may all run it: each apply locks the cursor.
func runStats(lc fx.Lifecycle, store Store, log *slog.Logger) {
	ap, ok := store.(stats.Applier)
	if !ok {
		return
	}
	runConsumer(lc, store, &changelog.Consumer{Name: "stats", Apply: ap.ApplyStats, Log: log, Gap: statsGap, Batch: statsBatch}, nil)
}

type statsHandlers struct {
	stats *stats.Service
	auth  *Auth
	admin *AdminAuth
}

func statsRoutes(svc *stats.Service, auth *Auth, admin *AdminAuth) RoutesOut {
	h := &statsHandlers{stats: svc, auth: auth, admin: admin}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/stats/daily", Errors: errsStats, Handler: h.handleDaily},
		{Method: http.MethodGet, Path: "/api/v1/stats/overview", Errors: errsStats, Handler: h.handleOverview},
	}}
}

// GET /stats/daily and /stats/overview: 401 unauthorized (no credential,
// or one that is neither a user's nor the admin token), 403 forbidden
// (a user who is not a stats viewer), then 400 invalid_request (the
// range; the detail names the field).
var errsStats = table("internal_error",
	unauthorized,
	on(stats.ErrForbidden, http.StatusForbidden, "forbidden"),
)

// allowed lets in the operator (the admin token, when one is configured)
// and the users who are stats viewers.
func (h *statsHandlers) allowed(c *fiber.Ctx) error {
	if h.admin.Carries(c) {
		return nil
	}
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	if !u.IsStatsViewer {
		return stats.ErrForbidden
	}
	return nil
}

// statsDayJSON is one day's figures.
type statsDayJSON struct {
	Date         string `json:"date"`
	Volume       int64  `json:"volume_kopecks"`
	Fees         int64  `json:"fees_kopecks"`
	Trades       int64  `json:"trades"`
	Active       int64  `json:"active_traders"`
	NewUsers     int64  `json:"new_users"`
	Deposits     int64  `json:"deposits_kopecks"`
	Withdrawals  int64  `json:"withdrawals_kopecks"`
	OpenInterest int64  `json:"open_interest_kopecks"`
}

func statsDayView(d stats.Day) statsDayJSON {
	return statsDayJSON{Date: d.Date.Format(stats.DateLayout), Volume: d.Volume, Fees: d.Fees, Trades: d.Trades,
		Active: d.ActiveTraders, NewUsers: d.NewUsers, Deposits: d.Deposits, Withdrawals: d.Withdrawals,
		OpenInterest: d.OpenInterest}
}

type statsTotalsJSON struct {
	Volume       int64 `json:"volume_kopecks"`
	Fees         int64 `json:"fees_kopecks"`
	Trades       int64 `json:"trades"`
	Traders      int64 `json:"traders"`
	Users        int64 `json:"users"`
	Deposits     int64 `json:"deposits_kopecks"`
	Withdrawals  int64 `json:"withdrawals_kopecks"`
	OpenInterest int64 `json:"open_interest_kopecks"`
}

type statsMarketJSON struct {
	MarketID   int64  `json:"market_id"`
	EventID    int64  `json:"event_id"`
	EventName  string `json:"event_name"`
	MarketName string `json:"market_name"`
	Volume     int64  `json:"volume_kopecks"`
	Trades     int64  `json:"trades"`
}

func (h *statsHandlers) handleDaily(c *fiber.Ctx) error {
	if err := h.allowed(c); err != nil {
		return err
	}
	days, err := h.stats.Daily(c.UserContext(), c.Query("from"), c.Query("to"))
	if err != nil {
		return err
	}
	out := make([]statsDayJSON, len(days))
	for i, d := range days {
		out[i] = statsDayView(d)
	}
	return c.JSON(fiber.Map{"days": out})
}

func (h *statsHandlers) handleOverview(c *fiber.Ctx) error {
	if err := h.allowed(c); err != nil {
		return err
	}
	o, err := h.stats.Overview(c.UserContext())
	if err != nil {
		return err
	}
	t := o.Totals
	top := make([]statsMarketJSON, len(o.TopMarkets))
	for i, m := range o.TopMarkets {
		top[i] = statsMarketJSON{MarketID: m.MarketID, EventID: m.EventID, EventName: m.EventName,
			MarketName: m.MarketName, Volume: m.Volume, Trades: m.Trades}
	}
	return c.JSON(fiber.Map{
		"as_of": o.AsOf.Format(time.RFC3339),
		"totals": statsTotalsJSON{Volume: t.Volume, Fees: t.Fees, Trades: t.Trades, Traders: t.Traders, Users: t.Users,
			Deposits: t.Deposits, Withdrawals: t.Withdrawals, OpenInterest: t.OpenInterest},
		"today":       statsDayView(o.Today),
		"top_markets": top,
	})
}
