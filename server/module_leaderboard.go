package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/leaderboard"
)

// LeaderboardModule provides GET /api/v1/leaderboard and, on a store
// whose board follows the change log (storage/postgres), runs the
// consumer that applies it while the server runs.
var LeaderboardModule = fx.Module("leaderboard",
	fx.Provide(newLeaderboardService, leaderboardRoutes),
	fx.Invoke(runLeaderboard),
)

func newLeaderboardService(store Store) *leaderboard.Service {
	return leaderboard.NewService(store)
}

// leaderboardGap is how late the board may be on a busy server: its
// consumer applies at most once per gap while entries keep coming, so the
// database does the board's work for many commits at a time rather than
// beside every one (a hot market lost a third of its trades to the
// board's applies without it).
const leaderboardGap = time.Second

// leaderboardBatch is the most entries one apply takes. A hot market
// writes about ten thousand entries a second; a batch smaller than a gap's
// worth would make the consumer apply back to back, never waiting, and
// each apply costs the database a fixed few milliseconds besides its
// entries.
const leaderboardBatch = 20000

// runLeaderboard runs the board's consumer from start to stop. Several
// servers on one database may all run it: each apply locks the cursor,
// so they take turns and count every entry once.
func runLeaderboard(lc fx.Lifecycle, store Store, log *slog.Logger) {
	ap, ok := store.(leaderboard.Applier)
	if !ok {
		return
	}
	runConsumer(lc, store, &changelog.Consumer{Name: "leaderboard", Apply: ap.ApplyLeaderboard, Log: log, Gap: leaderboardGap, Batch: leaderboardBatch}, nil)
}

type leaderboardHandlers struct {
	board *leaderboard.Service
}

func leaderboardRoutes(board *leaderboard.Service) RoutesOut {
	h := &leaderboardHandlers{board: board}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodGet, Path: "/api/v1/leaderboard", Errors: errsLeaderboard, Handler: h.handleLeaderboard},
	}}
}

// GET /leaderboard: public. A bad period, by or limit is 400
// invalid_request (the shared rule for invalid input) with the field in
// the detail.
var errsLeaderboard = table("internal_error")

// leaderboardEntryJSON is a line of the board; a hidden trader has no
// user_id and a null avatar.
type leaderboardEntryJSON struct {
	Rank      int     `json:"rank"`
	UserID    *int64  `json:"user_id,omitempty"`
	Name      string  `json:"name"`
	AvatarURL *string `json:"avatar_url"`
	Level     int     `json:"level"`
	PnL       int64   `json:"pnl"`
	Volume    int64   `json:"volume"`
	Trades    int64   `json:"trades"`
}

func (h *leaderboardHandlers) handleLeaderboard(c *fiber.Ctx) error {
	q, err := leaderboard.Parse(c.Query("period"), c.Query("by"), c.Query("limit"))
	if err != nil {
		return err
	}
	es, err := h.board.Top(c.UserContext(), q)
	if err != nil {
		return err
	}
	out := make([]leaderboardEntryJSON, len(es))
	for i, e := range es {
		j := leaderboardEntryJSON{Rank: e.Rank, Name: e.Name, AvatarURL: e.AvatarURL, Level: e.Level, PnL: e.PnL, Volume: e.Volume, Trades: e.Trades}
		if e.UserID != 0 {
			id := e.UserID
			j.UserID = &id
		}
		out[i] = j
	}
	return c.JSON(fiber.Map{"entries": out})
}
