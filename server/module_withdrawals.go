package server

import (
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/wallet"
	"github.com/predictkit/predictkit/withdrawal"
)

// WithdrawalModule provides the withdrawal service and its routes
// (docs/withdrawals.md): a signed-in user's requests, list and
// cancellations, and the operator's queue, approvals (with the payout's
// transaction hash) and rejections.
var WithdrawalModule = fx.Module("withdrawals",
	fx.Provide(newWithdrawalService, withdrawalRoutes),
)

func newWithdrawalService(cfg Config, store Store, accounts *account.Service) *withdrawal.Service {
	s := withdrawal.NewService(store, store)
	s.DailyLimit = cfg.WithdrawalDailyLimitKopecks
	s.Now = func() time.Time { return accounts.Now() } // the accounts' clock, which the demo and tests set
	return s
}

// nextCursor is a page's next_cursor: null on the last page.
func nextCursor(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}

// withdrawalHandlers serve the withdrawal routes.
type withdrawalHandlers struct {
	withdrawals *withdrawal.Service
	accounts    *account.Service
	auth        *Auth
}

// withdrawalRoutes lists the withdrawal routes. Each handler below follows
// its error table, which says what the route answers and in which order.
func withdrawalRoutes(withdrawals *withdrawal.Service, accounts *account.Service, auth *Auth, admin *AdminAuth) RoutesOut {
	h := &withdrawalHandlers{withdrawals: withdrawals, accounts: accounts, auth: auth}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/users/me/withdrawals", Errors: errsRequestWithdrawal, Handler: h.handleRequest},
		{Method: http.MethodGet, Path: "/api/v1/users/me/withdrawals", Errors: errsUserWithdrawals, Handler: h.handleList},
		{Method: http.MethodDelete, Path: "/api/v1/users/me/withdrawals/:id", Errors: errsCancelWithdrawal, Handler: h.handleCancel},
		{Method: http.MethodGet, Path: "/api/v1/admin/withdrawals", Errors: errsAdminWithdrawals, Handler: admin.guard(h.handleQueue)},
		{Method: http.MethodPost, Path: "/api/v1/admin/withdrawals/:id/approve", Errors: errsDecideWithdrawal, Handler: admin.guard(h.handleApprove)},
		{Method: http.MethodPost, Path: "/api/v1/admin/withdrawals/:id/reject", Errors: errsDecideWithdrawal, Handler: admin.guard(h.handleReject)},
	}}
}

// The refusals every withdrawal route shares.
var (
	withdrawalNotFound = on(withdrawal.ErrNotFound, http.StatusNotFound, "withdrawal_not_found")
	withdrawalState    = on(withdrawal.ErrInvalidState, http.StatusConflict, "invalid_state").
				saying("the withdrawal is not pending: it was paid, rejected or cancelled already")
)

// POST /users/me/withdrawals {chain, address, amount_kopecks}: checks run
// 401, 400 invalid_request (a malformed body, a chain predictkit does
// not know, an amount outside 1 to account.MaxCredit), 400
// invalid_address (malformed, failing its checksum or another chain's),
// then under the user's ledger lock 400 insufficient_funds (more than the
// balance; the bonus balance never counts) and 409 withdrawal_limit.
var errsRequestWithdrawal = table("internal_error",
	unauthorized,
	on(account.ErrUserNotFound, http.StatusUnauthorized, "unauthorized"),
	on(withdrawal.ErrInvalidAddress, http.StatusBadRequest, "invalid_address"),
	on(account.ErrInsufficientFunds, http.StatusBadRequest, "insufficient_funds").
		saying("the amount is more than your balance (bonus money cannot be withdrawn)"),
	on(withdrawal.ErrLimit, http.StatusConflict, "withdrawal_limit").
		saying("the amount would take your withdrawals of the last 24 hours past the daily limit"),
)

type withdrawalBody struct {
	Chain         string `json:"chain"`
	Address       string `json:"address"`
	AmountKopecks int64  `json:"amount_kopecks"`
}

func (h *withdrawalHandlers) handleRequest(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	var b withdrawalBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	w, err := h.withdrawals.Request(c.UserContext(), withdrawal.Request{UserID: u.ID, Chain: b.Chain, Address: b.Address, Amount: b.AmountKopecks})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(w.View())
}

// GET /users/me/withdrawals?limit=&cursor=: the caller's withdrawals,
// newest first, with what they may ask now. Checks run 401, 400
// invalid_request (limit not 1 to 100, a cursor no earlier page gave).
var errsUserWithdrawals = table("internal_error", unauthorized)

// userWithdrawalsJSON is the answer of GET /users/me/withdrawals.
type userWithdrawalsJSON struct {
	Withdrawals []withdrawal.JSON `json:"withdrawals"`
	NextCursor  *string           `json:"next_cursor"`
	DailyLimit  int64             `json:"daily_limit_kopecks"`
	Withdrawn   int64             `json:"withdrawn_24h_kopecks"`
	Available   int64             `json:"available_kopecks"`
	Chains      []string          `json:"chains"`
}

func (h *withdrawalHandlers) handleList(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	limit, err := queryInt(c, "limit", withdrawal.DefaultPageSize)
	if err != nil || limit < 1 || limit > withdrawal.MaxPageSize {
		return badRequest("limit", "must be an integer from 1 to 100")
	}
	p, err := h.withdrawals.List(c.UserContext(), u.ID, int(limit), c.Query("cursor"))
	if err != nil {
		return err
	}
	sum, err := h.withdrawals.Summary(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	out := userWithdrawalsJSON{Withdrawals: make([]withdrawal.JSON, 0, len(p.Withdrawals)), NextCursor: nextCursor(p.Next),
		DailyLimit: sum.DailyLimit, Withdrawn: sum.Withdrawn, Available: sum.Available, Chains: slices.Clone(wallet.Chains)}
	for _, w := range p.Withdrawals {
		out.Withdrawals = append(out.Withdrawals, w.View())
	}
	return c.JSON(out)
}

// DELETE /users/me/withdrawals/{id}: the caller cancels a pending
// withdrawal, which is refunded. Checks run 401, 400 invalid_id, 404
// withdrawal_not_found (unknown, or another user's), 409 invalid_state
// (paid, rejected or cancelled already).
var errsCancelWithdrawal = table("internal_error", unauthorized, withdrawalNotFound, withdrawalState)

func (h *withdrawalHandlers) handleCancel(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	w, err := h.withdrawals.Cancel(c.UserContext(), u.ID, id)
	if err != nil {
		return err
	}
	return c.JSON(w.View())
}

// GET /admin/withdrawals?status=&limit=&cursor=: the operator's list,
// each withdrawal with its user. status is pending (the default; oldest
// first: the queue), paid, rejected, cancelled or all (newest first).
// Checks run as on every operator route, then 400 invalid_request (a
// bad status or paging).
var errsAdminWithdrawals = table("internal_error", adminRules...)

// queuedWithdrawalJSON is a withdrawal in the operator's list.
type queuedWithdrawalJSON struct {
	withdrawal.JSON
	User withdrawalUserJSON `json:"user"`
}

type withdrawalUserJSON struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

func (h *withdrawalHandlers) handleQueue(c *fiber.Ctx) error {
	limit, err := queryInt(c, "limit", withdrawal.DefaultPageSize)
	if err != nil || limit < 1 || limit > withdrawal.MaxPageSize {
		return badRequest("limit", "must be an integer from 1 to 100")
	}
	p, err := h.withdrawals.AdminList(c.UserContext(), c.Query("status"), int(limit), c.Query("cursor"))
	if err != nil {
		return err
	}
	out := make([]queuedWithdrawalJSON, 0, len(p.Withdrawals))
	users := map[int64]withdrawalUserJSON{}
	for _, w := range p.Withdrawals {
		u, ok := users[w.UserID]
		if !ok {
			a, err := h.accounts.User(c.UserContext(), w.UserID)
			if err != nil {
				return err
			}
			u = withdrawalUserJSON{ID: a.ID, Name: a.Name, Email: a.Email}
			users[w.UserID] = u
		}
		out = append(out, queuedWithdrawalJSON{JSON: w.View(), User: u})
	}
	return c.JSON(fiber.Map{"withdrawals": out, "next_cursor": nextCursor(p.Next)})
}

// POST /admin/withdrawals/{id}/approve {"tx_hash"} and .../reject
// {"reason"}: the operator's decision. Checks run as on every operator
// route (a malformed body, a tx_hash not of the chain's form or a reason
// not 1 to 500 characters: 400 invalid_request), then 404
// withdrawal_not_found, 409 invalid_state (decided already: approving
// twice, or a cancelled or rejected one).
var errsDecideWithdrawal = table("internal_error", slices.Concat(adminRules, []rule{withdrawalNotFound, withdrawalState,
	on(withdrawal.ErrTxHashUsed, http.StatusConflict, "tx_hash_used").
		saying("that transaction is recorded as the payout of another withdrawal on this chain")})...)

type approveBody struct {
	TxHash string `json:"tx_hash" validate:"required"`
}

func (h *withdrawalHandlers) handleApprove(c *fiber.Ctx) error {
	id, b, err := idAndBody[approveBody](c, "id")
	if err != nil {
		return err
	}
	w, err := h.withdrawals.Approve(c.UserContext(), id, b.TxHash)
	if err != nil {
		return err
	}
	return c.JSON(w.View())
}

type rejectWithdrawalBody struct {
	Reason string `json:"reason" validate:"required"`
}

func (h *withdrawalHandlers) handleReject(c *fiber.Ctx) error {
	id, b, err := idAndBody[rejectWithdrawalBody](c, "id")
	if err != nil {
		return err
	}
	w, err := h.withdrawals.Reject(c.UserContext(), id, b.Reason)
	if err != nil {
		return err
	}
	return c.JSON(w.View())
}
