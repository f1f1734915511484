package server_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
)

// The API's shapes, as the tests read them.

type apiMarket struct {
	ID             int64   `json:"id"`
	PoolID         int64   `json:"pool_id"`
	EventID        int64   `json:"event_id"`
	Name           string  `json:"name"`
	YesProbability float64 `json:"yes_probability"`
	MarketType     string  `json:"market_type"`
	Volume         int64   `json:"volume"`
	B              int64   `json:"b"`
	QYes           int64   `json:"q_yes"`
	QNo            int64   `json:"q_no"`
	Paused         bool    `json:"paused"`
	TradingOpen    bool    `json:"trading_open"`
	Resolved       bool    `json:"resolved"`
	WinningOutcome *string `json:"winning_outcome"`
	OutcomeIndex   int     `json:"outcome_index"`
	ResolvedAt     *string `json:"resolved_at"`
	ResolvedBy     *string `json:"resolved_by"`
}

type apiPool struct {
	ID       int64   `json:"id"`
	Name     string  `json:"name"`
	WonSide  *int    `json:"won_side"`
	Margin   float64 `json:"margin"`
	LiveAt   string  `json:"live_at"`
	FinishAt string  `json:"finish_at"`
	// Exclusive is a pointer so that a view without the field fails.
	Exclusive *bool       `json:"exclusive"`
	Markets   []apiMarket `json:"markets"`
	Metadata  struct {
		MarketNames         []string  `json:"market_names"`
		MarketProbabilities []float64 `json:"market_probabilities"`
		LMSRBKopecks        int64     `json:"lmsr_b_kopecks"`
	} `json:"metadata"`
}

type apiEvent struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	CreatorID int64     `json:"creator_id"`
	IsActive  bool      `json:"is_active"`
	Pools     []apiPool `json:"pools"`
}

type apiPosition struct {
	ID            int64  `json:"id"`
	UserID        int64  `json:"user_id"`
	MarketID      int64  `json:"market_id"`
	TokenType     string `json:"token_type"`
	Amount        int64  `json:"amount"`
	AvgPrice      int64  `json:"avg_price"`
	UseBonus      bool   `json:"use_bonus"`
	EventID       int64  `json:"event_id"`
	EventName     string `json:"event_name"`
	PoolID        int64  `json:"pool_id"`
	PoolName      string `json:"pool_name"`
	MarketName    string `json:"market_name"`
	Side          string `json:"side"`
	SideRu        string `json:"side_ru"`
	UnrealizedPnL int64  `json:"unrealized_pnl"`
	PnL           int64  `json:"pnl"`
	WonSide       int    `json:"won_side"`
	ClosedAt      string `json:"closed_at"`
}

type apiProfile struct {
	ID                     int64         `json:"id"`
	Name                   string        `json:"name"`
	Nickname               *string       `json:"nickname"`
	AvatarURL              *string       `json:"avatar_url"`
	ProfileHidden          bool          `json:"profile_hidden"`
	Balance                int64         `json:"balance"`
	BonusBalance           int64         `json:"bonus_balance"`
	Level                  int           `json:"level"`
	TotalBalance           int64         `json:"total_balance"`
	IsCreator              bool          `json:"is_creator"`
	Positions              []apiPosition `json:"positions"`
	ClosedPositions        []apiPosition `json:"closed_positions"`
	ClosedPositionsHasMore bool          `json:"closed_positions_has_more"`
	TotalPredictions       int64         `json:"total_predictions"`
	BiggestWin             int64         `json:"biggest_win"`
	RegisteredDate         string        `json:"registered_date"`
}

type apiTrade struct {
	TradeID       int64     `json:"trade_id"`
	MarketID      int64     `json:"market_id"`
	Side          string    `json:"side"`
	Shares        int64     `json:"shares"`
	CostKopecks   int64     `json:"cost_kopecks"`
	PayoutKopecks int64     `json:"payout_kopecks"`
	FeeKopecks    int64     `json:"fee_kopecks"`
	AvgPriceBps   int64     `json:"avg_price_bps"`
	Balance       int64     `json:"balance"`
	BonusBalance  int64     `json:"bonus_balance"`
	Market        apiMarket `json:"market"`
}

type apiChart struct {
	Points []struct {
		Timestamp string  `json:"timestamp"`
		PnL       float64 `json:"pnl"`
	} `json:"points"`
}

type apiUser struct {
	id    int64
	token string
	email string
	name  string
}

var emailSeq atomic.Int64

// register signs a new user up through the API.
func (h *harness) register(t *testing.T, name string) apiUser {
	t.Helper()
	email := fmt.Sprintf("%s-%d@test.predictkit", name, emailSeq.Add(1))
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/register",
		body: map[string]any{"email": email, "password": "password-" + name, "name": name}})
	expect(t, r, http.StatusCreated, "")
	var out struct {
		User        apiProfile `json:"user"`
		AccessToken string     `json:"access_token"`
	}
	r.decode(t, &out)
	if out.AccessToken == "" || out.User.ID == 0 {
		t.Fatalf("register answered %s", r)
	}
	return apiUser{id: out.User.ID, token: out.AccessToken, email: email, name: name}
}

func (h *harness) credit(t *testing.T, id, amount int64, bonus bool) {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/users/%d/credit", id), token: adminToken,
		body: map[string]any{"amount_kopecks": amount, "bonus": bonus}})
	expect(t, r, http.StatusOK, "")
}

func (h *harness) makeCreator(t *testing.T, id int64) {
	t.Helper()
	r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/users/%d", id), token: adminToken,
		body: map[string]any{"is_creator": true}})
	expect(t, r, http.StatusOK, "")
}

// makeStatsViewer lets user id read the statistics, as the operator does.
func (h *harness) makeStatsViewer(t *testing.T, id int64) {
	t.Helper()
	r := h.do(t, req{method: http.MethodPatch, path: fmt.Sprintf("/api/v1/admin/users/%d", id), token: adminToken,
		body: map[string]any{"is_stats_viewer": true}})
	expect(t, r, http.StatusOK, "")
}

// twoPoolEvent is an event body: pool A (margin 3%, b 1,000,000) with
// markets A1 (p .5) and A2 (p .3); pool B (margin 0, b 200,000) with
// market B1 (p .6).
func twoPoolEvent(name string) map[string]any {
	return map[string]any{
		"name": name, "name_ru": name + " (ru)",
		"pools": []any{
			map[string]any{"name": "Pool A", "margin": 0.03, "lmsr_b_kopecks": 1_000_000, "rules": "rules A",
				"markets": []any{
					map[string]any{"name": "A1", "probability": 0.5},
					map[string]any{"name": "A2", "probability": 0.3, "yes_name": "Happens", "no_name": "Does not"},
				}},
			map[string]any{"name": "Pool B", "margin": 0, "lmsr_b_kopecks": 200_000,
				"markets": []any{map[string]any{"name": "B1", "probability": 0.6}}},
		},
	}
}

func (h *harness) createEvent(t *testing.T, token string, body any) apiEvent {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/events", token: token, body: body})
	expect(t, r, http.StatusCreated, "")
	var e apiEvent
	r.decode(t, &e)
	return e
}

func (h *harness) activate(t *testing.T, token string, eventID int64, active bool) {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/active", eventID), token: token,
		body: map[string]any{"is_active": active}})
	expect(t, r, http.StatusOK, "")
}

func (h *harness) buy(t *testing.T, token string, marketID int64, side string, amount int64, extra ...map[string]any) apiTrade {
	t.Helper()
	body := map[string]any{"side": side, "amount_kopecks": amount}
	for _, e := range extra {
		for k, v := range e {
			body[k] = v
		}
	}
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/buy", marketID), token: token, body: body})
	expect(t, r, http.StatusOK, "")
	var tr apiTrade
	r.decode(t, &tr)
	return tr
}

func (h *harness) sell(t *testing.T, token string, marketID int64, side string, shares int64) apiTrade {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/sell", marketID), token: token,
		body: map[string]any{"side": side, "shares": shares}})
	expect(t, r, http.StatusOK, "")
	var tr apiTrade
	r.decode(t, &tr)
	return tr
}

func (h *harness) me(t *testing.T, token string) apiProfile {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: token})
	expect(t, r, http.StatusOK, "")
	var out struct {
		User apiProfile `json:"user"`
	}
	r.decode(t, &out)
	return out.User
}

func (h *harness) market(t *testing.T, id int64) apiMarket {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/markets/%d", id)})
	expect(t, r, http.StatusOK, "")
	var m apiMarket
	r.decode(t, &m)
	return m
}

func (h *harness) audit(t *testing.T) (ok bool, postings int64, problems []string) {
	t.Helper()
	r := h.do(t, req{method: http.MethodGet, path: "/api/v1/admin/audit", token: adminToken})
	expect(t, r, http.StatusOK, "")
	var a struct {
		OK       bool     `json:"ok"`
		Sum      int64    `json:"sum"`
		Postings int64    `json:"postings"`
		Problems []string `json:"problems"`
	}
	r.decode(t, &a)
	return a.OK && a.Sum == 0, a.Postings, a.Problems
}

// world is a creator with an active two-pool event and two credited
// traders.
type world struct {
	creator, alice, bob apiUser
	event               apiEvent
	// a1, a2, b1 are the markets of twoPoolEvent; poolA, poolB the pools.
	a1, a2, b1   apiMarket
	poolA, poolB apiPool
}

func newWorld(t *testing.T, h *harness) *world {
	t.Helper()
	w := &world{creator: h.register(t, "creator"), alice: h.register(t, "alice"), bob: h.register(t, "bob")}
	h.makeCreator(t, w.creator.id)
	h.credit(t, w.alice.id, 1_000_000, false)
	h.credit(t, w.bob.id, 500_000, false)
	h.credit(t, w.bob.id, 100_000, true)
	w.event = h.createEvent(t, w.creator.token, twoPoolEvent("World cup"))
	h.activate(t, w.creator.token, w.event.ID, true)
	w.poolA, w.poolB = w.event.Pools[0], w.event.Pools[1]
	w.a1, w.a2, w.b1 = w.poolA.Markets[0], w.poolA.Markets[1], w.poolB.Markets[0]
	return w
}

func (w *world) closePath(eventID, poolID, marketID int64) string {
	return fmt.Sprintf("/api/v1/events/%d/pools/%d/markets/%d/close", eventID, poolID, marketID)
}
