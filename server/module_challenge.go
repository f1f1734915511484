package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
)

// The challenge window (docs/challenge-window.md): holders dispute a
// creator's proposed outcome, the operator's queue of disputed
// proposals, and the worker that settles undisputed proposals at their
// deadline.

// challengeLease is how long a worker's claim on a due proposal keeps
// other workers off it: past it, a claim whose worker died is taken
// again. Settling even a large market takes seconds.
const challengeLease = time.Minute

// challengeEvery is how often the worker looks for due proposals: often
// while the window is on, so that a proposal settles within about a
// second of its deadline; rarely when it is off, to finish what was
// proposed before it was turned off.
func challengeEvery(cfg Config) time.Duration {
	if cfg.ResolutionChallenge > 0 {
		return time.Second
	}
	return 30 * time.Second
}

// runChallengeWorker settles due proposals while the server runs, on
// every instance: the store's claims keep two instances off one proposal,
// and the settlement itself refuses a market resolved already, so a
// proposal settles once however many run.
func runChallengeWorker(lc fx.Lifecycle, cfg Config, markets *market.Service, log *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	every := challengeEvery(cfg)
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			wg.Go(func() {
				t := time.NewTicker(every)
				defer t.Stop()
				for {
					for {
						n, err := markets.SettleDue(ctx, challengeLease, 20)
						if err != nil && ctx.Err() == nil {
							log.Error("settling due proposals", "err", err)
						}
						if n < 20 || err != nil {
							break
						}
					}
					select {
					case <-ctx.Done():
						return
					case <-t.C:
					}
				}
			})
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			wg.Wait()
			return nil
		},
	})
}

// challengeHandlers serves the challenge window's routes.
type challengeHandlers struct {
	markets *market.Service
	auth    *Auth
}

func challengeRoutes(markets *market.Service, auth *Auth, admin *AdminAuth) RoutesOut {
	h := &challengeHandlers{markets: markets, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/markets/:market_id/disputes", Errors: errsDispute, Handler: h.handleDispute},
		{Method: http.MethodGet, Path: "/api/v1/admin/disputes", Errors: errsAdminDisputes, Handler: admin.guard(h.handleAdminDisputes)},
	}}
}

// POST /markets/{market_id}/disputes: a holder disputes the proposed
// outcome of the market (or its exclusive pool), paying the bond.
// Checks run 401, 400 invalid_id, 400 invalid_request (the body, the
// reason), 404 market_not_found, 409 invalid_state (no proposal open,
// or its window is over), 403 forbidden (no open position), 409
// already_disputed, 400 insufficient_funds (the bond).
var errsDispute = table("internal_error",
	unauthorized,
	on(errInvalidID, http.StatusBadRequest, "invalid_id"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
	on(market.ErrMarketNotFound, http.StatusNotFound, "market_not_found"),
	on(market.ErrNoProposal, http.StatusConflict, "invalid_state").saying("the market has no proposed outcome open to disputes"),
	on(market.ErrChallengeOver, http.StatusConflict, "invalid_state").saying("the proposal's challenge window is over"),
	on(market.ErrNotHolder, http.StatusForbidden, "forbidden").saying("only a holder of an open position in the market (or its exclusive pool) may dispute"),
	on(market.ErrAlreadyDisputed, http.StatusConflict, "already_disputed"),
	on(account.ErrInsufficientFunds, http.StatusBadRequest, "insufficient_funds").saying("the dispute's bond is more than your balance"),
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
)

// disputeBody is the body of POST /markets/{market_id}/disputes.
type disputeBody struct {
	Reason string `json:"reason" validate:"required"`
}

// disputeJSON is a Dispute.
type disputeJSON struct {
	MarketID    int64  `json:"market_id"`
	UserID      int64  `json:"user_id"`
	Reason      string `json:"reason"`
	BondKopecks int64  `json:"bond_kopecks"`
	CreatedAt   string `json:"created_at"`
}

func disputeView(d *market.Dispute) disputeJSON {
	return disputeJSON{MarketID: d.MarketID, UserID: d.UserID, Reason: d.Reason, BondKopecks: d.Bond, CreatedAt: ts(d.CreatedAt)}
}

func (h *challengeHandlers) handleDispute(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, b, err := idAndBody[disputeBody](c, "market_id")
	if err != nil {
		return err
	}
	d, err := h.markets.Dispute(c.UserContext(), u.ID, id, b.Reason)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(disputeView(d))
}

// GET /admin/disputes: the operator's queue of disputed proposals.
// Checks run 404 not_found (no admin token configured), 401.
var errsAdminDisputes = table("internal_error",
	on(errAdminDisabled, http.StatusNotFound, "not_found"),
	unauthorized,
)

// proposalJSON is a disputed proposal in the operator's queue.
type proposalJSON struct {
	MarketID       int64         `json:"market_id"`
	PoolID         int64         `json:"pool_id"`
	EventID        int64         `json:"event_id"`
	MarketName     string        `json:"market_name"`
	Exclusive      bool          `json:"exclusive"`
	Proposed       string        `json:"proposed"`
	By             int64         `json:"by"`
	ChallengeUntil string        `json:"challenge_until"`
	Disputes       []disputeJSON `json:"disputes"`
}

func (h *challengeHandlers) handleAdminDisputes(c *fiber.Ctx) error {
	ps, err := h.markets.DisputedProposals(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]proposalJSON, 0, len(ps))
	for _, p := range ps {
		v := proposalJSON{MarketID: p.MarketID, PoolID: p.PoolID, EventID: p.EventID, MarketName: p.MarketName, Exclusive: p.Exclusive,
			Proposed: p.Outcome, By: p.By, ChallengeUntil: ts(p.ChallengeUntil), Disputes: []disputeJSON{}}
		for i := range p.Disputes {
			v.Disputes = append(v.Disputes, disputeView(&p.Disputes[i]))
		}
		out = append(out, v)
	}
	return c.JSON(fiber.Map{"proposals": out})
}

// withResolutions sets the resolution of every market view of vs whose
// market ms (same order) waits on a proposal: only a proposal pauses a
// market, so only paused, unresolved markets are looked up, once per
// exclusive pool.
func withResolutions(ctx context.Context, markets *market.Service, vs []marketJSON, ms []*market.Market) error {
	seen := map[int64]*market.Proposal{}
	for i, m := range ms {
		if !m.Paused || m.Resolved {
			continue
		}
		p, ok := seen[m.PoolID]
		if !ok || !m.Exclusive {
			var err error
			if p, err = markets.ProposalOf(ctx, m.ID); err != nil {
				return err
			}
			if m.Exclusive {
				seen[m.PoolID] = p
			}
		}
		vs[i].Resolution = resolutionView(p, m)
	}
	return nil
}

// eventResolutions sets the resolutions of the market views of event
// view v of event e (withResolutions).
func eventResolutions(ctx context.Context, markets *market.Service, v *eventJSON, e *market.Event) error {
	for i, p := range e.Pools {
		if err := withResolutions(ctx, markets, v.Pools[i].Markets, p.Markets); err != nil {
			return err
		}
	}
	return nil
}
