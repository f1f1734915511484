package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// accessMatrix is who may do what, route by route. Every route the app
// serves must have an entry (operator routes get adminCells whatever
// their entry says).
func accessMatrix() map[string][]cell {
	trade := func(kind string, body func(w *secWorld) any) func(w *secWorld) req {
		return mxSend(http.MethodPost, func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d/%s", w.a1.ID, kind) }, body)
	}
	closePath := func(w *secWorld) string { return w.closePath(w.event.ID, w.poolB.ID, w.b1.ID) }
	activePath := func(w *secWorld) string { return fmt.Sprintf("/api/v1/events/%d/active", w.event.ID) }
	otherEventPath := func(w *secWorld) string { return fmt.Sprintf("/api/v1/events/%d", w.otherEvent.ID) }
	renameBody := func(*secWorld) any { return map[string]any{"name_ru": "Матрица"} }
	amendPath := func(w *secWorld) string { return fmt.Sprintf("/api/v1/events/%d/amendments", w.event.ID) }
	amendBody := func(*secWorld) any { return map[string]any{"text": "A note from the matrix"} }
	poolPath := func(w *secWorld) string { return fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID) }
	answersPath := func(w *secWorld) string { return fmt.Sprintf("/api/v1/pools/%d/answers", w.poolA.ID) }
	answerBody := func(*secWorld) any { return map[string]any{"name": "Matrix", "probability": 0.01} }
	finishBody := func(*secWorld) any {
		return map[string]any{"finish_at": time.Now().AddDate(1, 0, 0).UTC().Format(time.RFC3339)}
	}
	notes := func(t *testing.T, r *response) []apiNotification {
		t.Helper()
		var ns []apiNotification
		if r.body[0] == '{' {
			var out struct {
				Notifications []apiNotification `json:"notifications"`
			}
			r.decode(t, &out)
			ns = out.Notifications
		} else {
			r.decode(t, &ns)
		}
		return ns
	}
	onlyOwn := func(owner func(w *secWorld) int64) func(t *testing.T, h *harness, w *secWorld, r *response) {
		return func(t *testing.T, _ *harness, w *secWorld, r *response) {
			for _, n := range notes(t, r) {
				if n.UserID != owner(w) {
					t.Errorf("user %d was shown notification %d of user %d", owner(w), n.ID, n.UserID)
				}
			}
		}
	}
	aliceNoteUnread := func(t *testing.T, h *harness, w *secWorld, _ *response) {
		t.Helper()
		for _, n := range h.unread(t, w.alice.token) {
			if n.ID == w.aliceNote {
				return
			}
		}
		t.Errorf("Alice's notification %d was marked read by someone else", w.aliceNote)
	}
	aliceHolds := func(t *testing.T, h *harness, w *secWorld, _ *response) {
		t.Helper()
		if p := h.me(t, w.alice.token).Positions; len(p) != 1 || p[0].MarketID != w.a1.ID {
			t.Errorf("Alice's positions changed: %+v", p)
		}
	}
	partnerState := func(ext string) func(w *secWorld) req {
		return mxGet(func(*secWorld) string { return statePath(ext) })
	}
	betBody := func(id string) func(w *secWorld) any {
		return func(w *secWorld) any {
			return map[string]any{"external_user_id": "b-user", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 1_000, "client_bet_id": id}
		}
	}
	sellBody := func(ext, id string) func(w *secWorld) any {
		return func(w *secWorld) any {
			return map[string]any{"external_user_id": ext, "market_id": w.a1.ID, "side": "yes", "shares": 10, "client_bet_id": id}
		}
	}
	return map[string][]cell{
		// Probes, documents and public reads.
		"GET /healthz":                   mxPublic(mxGet(mxPath("/healthz")), 200),
		"GET /readyz":                    mxPublic(mxGet(mxPath("/readyz")), 200),
		"GET /metrics":                   mxPublic(mxGet(mxPath("/metrics")), 200),
		"GET /api/v1/openapi.json":       mxPublic(mxGet(mxPath("/api/v1/openapi.json")), 200),
		"GET /docs":                      mxPublic(mxGet(mxPath("/docs")), 200),
		"GET /docs/:file":                mxPublic(mxGet(mxPath("/docs/docs.css")), 200),
		"GET /api/v1/events":             mxPublic(mxGet(mxPath("/api/v1/events")), 200),
		"GET /api/v1/tags":               mxPublic(mxGet(mxPath("/api/v1/tags")), 200),
		"GET /api/v1/events/:id":         mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/events/%d", w.event.ID) }), 200),
		"GET /api/v1/pools/:id":          mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/pools/%d", w.poolA.ID) }), 200),
		"GET /api/v1/markets/:market_id": mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d", w.a1.ID) }), 200),
		"GET /api/v1/markets/:market_id/quote": mxPublic(mxGet(func(w *secWorld) string {
			return fmt.Sprintf("/api/v1/markets/%d/quote?side=YES&amount_kopecks=1000", w.a1.ID)
		}), 200),
		"GET /api/v1/markets/:market_id/history":    mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d/history", w.a1.ID) }), 200),
		"GET /api/v1/markets/:market_id/candles":    mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d/candles?interval=1h", w.a1.ID) }), 200),
		"GET /api/v1/markets/:market_id/trades.csv": mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/markets/%d/trades.csv", w.a1.ID) }), 200),
		"GET /api/v1/market/trades/latest":          mxPublic(mxGet(mxPath("/api/v1/market/trades/latest")), 200),
		"GET /api/v1/leaderboard":                   mxPublic(mxGet(mxPath("/api/v1/leaderboard?period=7d&by=volume")), 200),
		// The statistics: stats viewers and the operator; any other user 403.
		"GET /api/v1/stats/daily":               statsCells(mxGet(mxPath("/api/v1/stats/daily?from=2026-01-01&to=2026-01-31"))),
		"GET /api/v1/stats/overview":            statsCells(mxGet(mxPath("/api/v1/stats/overview"))),
		"GET /api/v1/p2p/ads":                   mxPublic(mxGet(mxPath("/api/v1/p2p/ads")), 200),
		"GET /api/v1/p2p/ads/:id":               mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/p2p/ads/%d", w.adID) }), 200),
		"GET /api/v1/events/:event_id/comments": mxPublic(mxGet(func(w *secWorld) string { return commentsPath(w.event.ID) }), 200),
		"GET /api/v1/comments/:id/replies": mxPublic(mxGet(func(w *secWorld) string {
			return fmt.Sprintf("/api/v1/comments/%d/replies", w.aliceComment.ID)
		}), 200),
		// The web app: its page, and an asset (one that is not there: the
		// files are the app's, which this matrix does not know).
		// Sharing: the card, the embed and oEmbed are anyone's (oEmbed's
		// 400 here is its missing url, asked by anyone alike).
		"GET /og/events/:id.png": mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/og/events/%d.png", w.event.ID) }), 200),
		"GET /embed/markets/:id": mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/embed/markets/%d", w.a1.ID) }), 200),
		"GET /api/v1/oembed":     mxPublic(mxGet(mxPath("/api/v1/oembed")), 400),
		"GET /":                  mxPublic(mxGet(mxPath("/")), 200),
		"GET /assets/*":          mxPublic(mxGet(mxPath("/assets/no-such-file.js")), 404),

		"POST /api/v1/auth/register": {{as: pAnonymous, status: 201, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/register"), func(*secWorld) any {
			return map[string]any{"email": "matrix-new@test.predictkit", "password": "password-matrix", "name": "New"}
		})}},
		"POST /api/v1/auth/login": {{as: pAnonymous, status: 200, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/login"), func(w *secWorld) any {
			return map[string]any{"email": w.bob.email, "password": "password-bob"}
		})}, {as: pAnonymous, status: 401, code: "invalid_credentials", req: mxSend(http.MethodPost, mxPath("/api/v1/auth/login"), func(w *secWorld) any {
			return map[string]any{"email": w.bob.email, "password": "password-alice"}
		})}},

		// A public profile's chart is anyone's; a hidden one only its
		// owner's; "me" needs a token.
		"GET /api/v1/users/:id/pnl/chart": mxCells(
			mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.alice.id) }), 200),
			[]cell{
				{as: pAnonymous, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.hidden.id) }), status: 404, code: "user_not_found"},
				{as: pBob, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.hidden.id) }), status: 404, code: "user_not_found"},
				{as: pHidden, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d/pnl/chart", w.hidden.id) }), status: 200},
			},
			mxUserOnly(mxGet(mxPath("/api/v1/users/me/pnl/chart")), "unauthorized", pAlice, 200, nil),
		),

		// A public profile is anyone's; a hidden one only its owner's,
		// and exactly as an unknown id to everyone else.
		"GET /api/v1/users/:id": mxCells(
			mxPublic(mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d", w.alice.id) }), 200),
			[]cell{
				{as: pAnonymous, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d", w.hidden.id) }), status: 404, code: "user_not_found"},
				{as: pBob, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d", w.hidden.id) }), status: 404, code: "user_not_found"},
				{as: pHidden, req: mxGet(func(w *secWorld) string { return fmt.Sprintf("/api/v1/users/%d", w.hidden.id) }), status: 200},
			},
		),
		// Following is the caller's own.
		"PUT /api/v1/events/:id/follow": mxUserOnly(mxSend(http.MethodPut, func(w *secWorld) string {
			return fmt.Sprintf("/api/v1/events/%d/follow", w.event.ID)
		}, nil), "unauthorized", pAlice, 204, nil),
		"DELETE /api/v1/events/:id/follow": mxUserOnly(mxSend(http.MethodDelete, func(w *secWorld) string {
			return fmt.Sprintf("/api/v1/events/%d/follow", w.event.ID)
		}, nil), "unauthorized", pAlice, 204, nil),
		"GET /api/v1/users/me/following": mxUserOnly(mxGet(mxPath("/api/v1/users/me/following")), "unauthorized", pAlice, 200, nil),
		// Deposit addresses are the caller's own (none here: no keys).
		"GET /api/v1/users/me/deposit-addresses": mxUserOnly(mxGet(mxPath("/api/v1/users/me/deposit-addresses")), "unauthorized", pAlice, 200, nil),
		// Referrals are the caller's own: the code and counts of no one else.
		"GET /api/v1/users/me/referrals": mxUserOnly(mxGet(mxPath("/api/v1/users/me/referrals")), "unauthorized", pAlice, 200,
			func(t *testing.T, _ *harness, _ *secWorld, r *response) {
				var out apiReferrals
				r.decode(t, &out)
				if len(out.Code) != 8 || !strings.HasSuffix(out.Link, "?ref="+out.Code) {
					t.Errorf("Alice's referrals: %s", r)
				}
			}),

		// The caller's own account.
		"GET /api/v1/auth/me": mxCells(
			mxUserOnly(mxGet(mxPath("/api/v1/auth/me")), "UNAUTHORIZED", pAlice, 200, func(t *testing.T, _ *harness, w *secWorld, r *response) {
				var out struct {
					User apiProfile `json:"user"`
				}
				r.decode(t, &out)
				if out.User.ID != w.alice.id {
					t.Errorf("Alice was shown user %d", out.User.ID)
				}
			}),
		),
		"PATCH /api/v1/auth/me": mxUserOnly(mxSend(http.MethodPatch, mxPath("/api/v1/auth/me"), func(*secWorld) any { return map[string]any{"name": "Alice Renamed"} }),
			"UNAUTHORIZED", pAlice, 200, func(t *testing.T, h *harness, w *secWorld, _ *response) {
				if got := h.me(t, w.bob.token).Name; got != "bob" {
					t.Errorf("Alice's profile change renamed Bob to %q", got)
				}
				if got := h.me(t, w.alice.token).Name; got != "Alice Renamed" {
					t.Errorf("Alice is named %q", got)
				}
			}),
		// The web app's cookie session: opened with a password or a
		// session token (never a key: see the scopes' tests); ended by
		// the cookie, from the app's own origin only.
		"POST /api/v1/auth/session": mxCells(
			[]cell{
				{as: pAnonymous, status: 200, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), func(w *secWorld) any {
					return map[string]any{"email": w.bob.email, "password": "password-bob"}
				}), check: sessionOf(func(w *secWorld) int64 { return w.bob.id })},
				{as: pAnonymous, status: 401, code: "invalid_credentials", req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), func(w *secWorld) any {
					return map[string]any{"email": w.bob.email, "password": "password-alice"}
				})},
			},
			[]cell{
				{as: pGarbageToken, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), nil), status: 401, code: "unauthorized"},
				{as: pRevokedToken, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), nil), status: 401, code: "unauthorized"},
				{as: pAdminAsUser, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), nil), status: 401, code: "unauthorized"},
				{as: pAlice, req: mxSend(http.MethodPost, mxPath("/api/v1/auth/session"), nil), status: 200, check: sessionOf(func(w *secWorld) int64 { return w.alice.id })},
			},
		),
		"DELETE /api/v1/auth/session": {
			{as: pAnonymous, req: mxSend(http.MethodDelete, mxPath("/api/v1/auth/session"), nil), status: 204},
			{as: sessionCookieOf("Alice's session cookie from another site", "cross-site", func(w *secWorld) string { return w.alice.token }),
				req: mxSend(http.MethodDelete, mxPath("/api/v1/auth/session"), nil), status: 403, code: "cross_origin_request",
				check: func(t *testing.T, h *harness, w *secWorld, _ *response) { h.me(t, w.alice.token) }},
			{as: sessionCookieOf("a session cookie of the hidden user's, from the app", "same-origin", func(w *secWorld) string { return w.freshToken(w.hidden) }),
				req: mxSend(http.MethodDelete, mxPath("/api/v1/auth/session"), nil), status: 204,
				check: func(t *testing.T, h *harness, w *secWorld, _ *response) {
					expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: w.freshToken(w.hidden)}), http.StatusUnauthorized, "UNAUTHORIZED")
					h.me(t, w.hidden.token) // the user's other tokens still work
				}},
		},
		"POST /api/v1/auth/logout": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/auth/logout"), nil), "unauthorized",
			bearerOf("a fresh token of Bob's", func(w *secWorld) string {
				return w.freshToken(w.bob)
			}), 200, func(t *testing.T, h *harness, w *secWorld, _ *response) {
				h.me(t, w.alice.token) // other tokens still work
				h.me(t, w.bob.token)
			}),
		// A password change needs the user's token; the rightful caller
		// here gives a wrong current password, so that no token of the
		// world is revoked. Reset requests and resets are anyone's.
		"POST /api/v1/auth/password": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/auth/password"), func(*secWorld) any {
			return map[string]any{"current_password": "not alice's", "new_password": "a new password"}
		}), "unauthorized", pAlice, 401, func(t *testing.T, h *harness, w *secWorld, r *response) {
			if r.errorCode() != "invalid_credentials" {
				t.Errorf("Alice got %s", r)
			}
			h.me(t, w.alice.token)
		}),
		"POST /api/v1/auth/password/reset-request": mxPublic(mxSend(http.MethodPost, mxPath("/api/v1/auth/password/reset-request"), func(w *secWorld) any {
			return map[string]any{"email": w.bob.email}
		}), 202),
		"POST /api/v1/auth/password/reset": {
			{as: pAnonymous, status: 400, code: "invalid_token", req: mxSend(http.MethodPost, mxPath("/api/v1/auth/password/reset"), func(*secWorld) any {
				return map[string]any{"token": "not-a-reset-token", "new_password": "a new password"}
			})},
			{as: pAlice, status: 400, code: "invalid_token", req: mxSend(http.MethodPost, mxPath("/api/v1/auth/password/reset"), func(w *secWorld) any {
				return map[string]any{"token": w.alice.token, "new_password": "a new password"} // an access token is no reset token
			})},
		},
		"GET /api/v1/users/me/positions/closed": mxCells(
			mxUserOnly(mxGet(mxPath("/api/v1/users/me/positions/closed")), "unauthorized", pAlice, 200, func(t *testing.T, _ *harness, w *secWorld, r *response) {
				var out struct {
					Positions []apiPosition `json:"positions"`
				}
				r.decode(t, &out)
				if len(out.Positions) != 1 || out.Positions[0].UserID != w.alice.id {
					t.Errorf("Alice's closed positions: %+v", out.Positions)
				}
			}),
			[]cell{{as: pBob, req: mxGet(mxPath("/api/v1/users/me/positions/closed")), status: 200, check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
				var out struct {
					Positions []apiPosition `json:"positions"`
				}
				r.decode(t, &out)
				if len(out.Positions) != 0 {
					t.Errorf("Bob was shown closed positions %+v", out.Positions)
				}
			}}},
		),

		// Personal API keys: each user's own (a key of Alice's is Bob's 404).
		"POST /api/v1/auth/api-keys": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/auth/api-keys"), func(*secWorld) any {
			return map[string]any{"name": "Alice's bot", "scopes": []string{"read"}}
		}), "unauthorized", pAlice, 201, func(t *testing.T, h *harness, w *secWorld, _ *response) {
			if ks := h.listKeys(t, w.bob.token); len(ks) != 0 {
				t.Errorf("Alice's new key is listed for Bob: %+v", ks)
			}
		}),
		"GET /api/v1/auth/api-keys": mxUserOnly(mxGet(mxPath("/api/v1/auth/api-keys")), "unauthorized", pBob, 200, func(t *testing.T, _ *harness, _ *secWorld, r *response) {
			if strings.Contains(string(r.body), "Alice") {
				t.Errorf("Bob was shown Alice's keys: %s", r.body)
			}
		}),
		"DELETE /api/v1/auth/api-keys/:id": mxCells(
			mxUserOnly(mxSend(http.MethodDelete, mxPath("/api/v1/auth/api-keys/999999"), nil), "unauthorized", pAlice, 404, nil),
			[]cell{{as: pBob, req: mxSend(http.MethodDelete, mxPath("/api/v1/auth/api-keys/1"), nil), status: 404, code: "api_key_not_found"}},
		),
		// Telegram: one's own link (this server has no bot: 503 for the
		// user, after the 401s); the webhook is the Bot API's, refused
		// to anyone without the secret (and to everyone without a bot).
		"POST /api/v1/auth/telegram/link": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/auth/telegram/link"), nil), "unauthorized", pAlice, 503,
			func(t *testing.T, _ *harness, _ *secWorld, r *response) {
				if r.errorCode() != "telegram_not_configured" {
					t.Errorf("answered %s, want telegram_not_configured", r)
				}
			}),
		"DELETE /api/v1/auth/telegram": mxUserOnly(mxSend(http.MethodDelete, mxPath("/api/v1/auth/telegram"), nil), "unauthorized", pBob, 204,
			func(t *testing.T, h *harness, w *secWorld, _ *response) {
				if got := h.me(t, w.alice.token).Name; got == "" {
					t.Error("Bob's unlink touched Alice's profile")
				}
			}),
		"POST /api/v1/telegram/webhook/:secret": mxPublic(mxSend(http.MethodPost, mxPath("/api/v1/telegram/webhook/matrix-secret-0123456789"), func(*secWorld) any {
			return map[string]any{"update_id": 1, "message": map[string]any{"text": "/start x"}}
		}), 403),
		"GET /api/v1/users/me/trades": mxUserOnly(mxGet(mxPath("/api/v1/users/me/trades")), "unauthorized", pAlice, 200, func(t *testing.T, _ *harness, w *secWorld, r *response) {
			var out struct {
				Trades []struct {
					MarketID int64 `json:"market_id"`
				} `json:"trades"`
			}
			r.decode(t, &out)
			if len(out.Trades) == 0 {
				t.Errorf("Alice's trades are missing: %s", r.body)
			}
		}),

		// Withdrawals: one's own balance only; another user's withdrawal
		// is not found, and cannot be cancelled.
		"POST /api/v1/users/me/withdrawals": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/users/me/withdrawals"), func(*secWorld) any {
			return map[string]any{"chain": "tron", "address": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "amount_kopecks": 1_000}
		}), "unauthorized", pBob, 201, func(t *testing.T, h *harness, w *secWorld, r *response) {
			var wd struct {
				ID     int64  `json:"id"`
				UserID int64  `json:"user_id"`
				Status string `json:"status"`
			}
			r.decode(t, &wd)
			if wd.UserID != w.bob.id || wd.Status != "pending" {
				t.Errorf("Bob's withdrawal is %+v", wd)
			}
			path := fmt.Sprintf("/api/v1/users/me/withdrawals/%d", wd.ID)
			expect(t, h.do(t, req{method: http.MethodDelete, path: path, token: w.alice.token}), http.StatusNotFound, "withdrawal_not_found")
			list := h.do(t, req{method: http.MethodGet, path: "/api/v1/users/me/withdrawals", token: w.alice.token})
			if strings.Contains(string(list.body), fmt.Sprintf(`"id":%d,`, wd.ID)) {
				t.Errorf("Alice was shown Bob's withdrawal: %s", list.body)
			}
			expect(t, h.do(t, req{method: http.MethodDelete, path: path, token: w.bob.token}), http.StatusOK, "")
		}),
		"GET /api/v1/users/me/withdrawals": mxUserOnly(mxGet(mxPath("/api/v1/users/me/withdrawals")), "unauthorized", pAlice, 200, nil),
		"DELETE /api/v1/users/me/withdrawals/:id": mxUserOnly(mxSend(http.MethodDelete, mxPath("/api/v1/users/me/withdrawals/999999"), nil),
			"unauthorized", pAlice, 404, nil),
		"GET /api/v1/users/me/deposits": mxUserOnly(mxGet(mxPath("/api/v1/users/me/deposits")), "unauthorized", pAlice, 200, func(t *testing.T, _ *harness, _ *secWorld, r *response) {
			var out struct {
				Deposits []map[string]any `json:"deposits"`
			}
			r.decode(t, &out)
			if out.Deposits == nil || len(out.Deposits) != 0 {
				t.Errorf("no chain is watched, yet deposits: %s", r.body)
			}
		}),

		// Trading: one's own money and positions only.
		"POST /api/v1/markets/:market_id/buy": mxCells(
			mxUserOnly(trade("buy", func(*secWorld) any { return map[string]any{"side": "NO", "amount_kopecks": 1_000} }), "unauthorized", pBob, 200,
				func(t *testing.T, h *harness, w *secWorld, r *response) {
					var tr apiTrade
					r.decode(t, &tr)
					if got := h.me(t, w.bob.token).Balance; got != tr.Balance || got != 500_000-tr.CostKopecks {
						t.Errorf("Bob's balance %d after a buy of %d answered %d", got, tr.CostKopecks, tr.Balance)
					}
					aliceHolds(t, h, w, r)
				}),
		),
		// Without the challenge window no market has a proposed outcome.
		"POST /api/v1/markets/:market_id/disputes": mxUserOnly(mxSend(http.MethodPost, func(w *secWorld) string {
			return fmt.Sprintf("/api/v1/markets/%d/disputes", w.a1.ID)
		}, func(*secWorld) any { return map[string]any{"reason": "wrong"} }), "unauthorized", pAlice, 409, nil),
		"POST /api/v1/markets/:market_id/sell": mxCells(
			mxUserOnly(trade("sell", func(*secWorld) any { return map[string]any{"side": "YES", "shares": 10} }), "unauthorized", pAlice, 200, nil),
			[]cell{{as: pBob, req: trade("sell", func(*secWorld) any { return map[string]any{"side": "YES", "shares": 10} }),
				status: 400, code: "insufficient_shares", check: aliceHolds}},
		),

		// Creator operations: creators create; only an event's creator
		// activates it and closes its markets.
		"POST /api/v1/events": mxCells(
			mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/events"), func(*secWorld) any { return twoPoolEvent("Matrix") }), "unauthorized", pOtherCreator, 201, nil),
			[]cell{{as: pAlice, req: mxSend(http.MethodPost, mxPath("/api/v1/events"), func(*secWorld) any { return twoPoolEvent("Matrix") }), status: 403, code: "forbidden"}},
		),
		// The preview answers whoever may create (or, with proposals on, propose).
		"POST /api/v1/events/preview": mxCells(
			mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/events/preview"), func(*secWorld) any { return twoPoolEvent("Matrix") }), "unauthorized", pOtherCreator, 200, nil),
			[]cell{{as: pAlice, req: mxSend(http.MethodPost, mxPath("/api/v1/events/preview"), func(*secWorld) any { return twoPoolEvent("Matrix") }), status: 403, code: "forbidden"}},
		),
		"POST /api/v1/events/:id/active": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPost, activePath, func(*secWorld) any { return map[string]any{"is_active": false} }), status: 403, code: "forbidden"},
				{as: pOtherCreator, req: mxSend(http.MethodPost, activePath, func(*secWorld) any { return map[string]any{"is_active": false} }), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPost, activePath, func(*secWorld) any { return map[string]any{"is_active": true} }), "unauthorized", pCreator, 200, nil),
		),
		// Edits (before the first trade) and amendments: the event's
		// creator only. The other creator's event has had no trade.
		"PATCH /api/v1/events/:id": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPatch, otherEventPath, renameBody), status: 403, code: "forbidden"},
				{as: pCreator, req: mxSend(http.MethodPatch, otherEventPath, renameBody), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPatch, otherEventPath, renameBody), "unauthorized", pOtherCreator, 200, nil),
		),
		"POST /api/v1/events/:id/amendments": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPost, amendPath, amendBody), status: 403, code: "forbidden"},
				{as: pOtherCreator, req: mxSend(http.MethodPost, amendPath, amendBody), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPost, amendPath, amendBody), "unauthorized", pCreator, 201, nil),
		),
		"PATCH /api/v1/pools/:id": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPatch, poolPath, finishBody), status: 403, code: "forbidden"},
				{as: pOtherCreator, req: mxSend(http.MethodPatch, poolPath, finishBody), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPatch, poolPath, finishBody), "unauthorized", pCreator, 200, nil),
		),
		// Only the event's creator adds answers; the world's pool has no
		// Other answer, so the creator's request is 409 and changes nothing.
		"POST /api/v1/pools/:id/answers": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPost, answersPath, answerBody), status: 403, code: "forbidden"},
				{as: pOtherCreator, req: mxSend(http.MethodPost, answersPath, answerBody), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPost, answersPath, answerBody), "unauthorized", pCreator, 409, nil),
		),
		"POST /api/v1/events/:id/pools/:pool_id/markets/:market_id/close": mxCells(
			[]cell{
				{as: pAlice, req: mxSend(http.MethodPost, closePath, func(*secWorld) any { return map[string]any{"won_side": "YES"} }), status: 403, code: "forbidden"},
				{as: pOtherCreator, req: mxSend(http.MethodPost, closePath, func(*secWorld) any { return map[string]any{"won_side": "YES"} }), status: 403, code: "forbidden"},
			},
			mxUserOnly(mxSend(http.MethodPost, closePath, func(*secWorld) any { return map[string]any{"won_side": "YES"} }), "unauthorized", pCreator, 200, nil),
		),

		// Comments: anyone signed in posts and reacts as themself.
		"POST /api/v1/events/:event_id/comments": mxUserOnly(mxSend(http.MethodPost, func(w *secWorld) string { return commentsPath(w.event.ID) },
			func(*secWorld) any { return map[string]any{"content": "Bob's comment"} }), "unauthorized", pBob, 201,
			func(t *testing.T, _ *harness, w *secWorld, r *response) {
				var c apiComment
				r.decode(t, &c)
				if c.UserID != w.bob.id {
					t.Errorf("Bob's comment was posted as user %d", c.UserID)
				}
			}),
		"PUT /api/v1/comments/:id/reaction": mxUserOnly(mxSend(http.MethodPut, func(w *secWorld) string { return fmt.Sprintf("/api/v1/comments/%d/reaction", w.aliceComment.ID) },
			func(*secWorld) any { return map[string]any{"reaction": "like"} }), "unauthorized", pBob, 200,
			func(t *testing.T, h *harness, w *secWorld, _ *response) {
				cs := h.comments(t, commentsPath(w.event.ID), w.alice.token)
				for _, c := range cs {
					if c.ID == w.aliceComment.ID && c.UserReaction != nil {
						t.Errorf("Bob's like shows as Alice's own reaction %q", *c.UserReaction)
					}
				}
			}),

		// Notifications: one's own only.
		"GET /api/v1/notifications/unread": mxCells(
			mxUserOnly(mxGet(mxPath("/api/v1/notifications/unread")), "unauthorized", pAlice, 200, onlyOwn(func(w *secWorld) int64 { return w.alice.id })),
			[]cell{{as: pBob, req: mxGet(mxPath("/api/v1/notifications/unread")), status: 200, check: onlyOwn(func(w *secWorld) int64 { return w.bob.id })}},
		),
		"GET /api/v1/notifications": mxCells(
			mxUserOnly(mxGet(mxPath("/api/v1/notifications")), "unauthorized", pAlice, 200, onlyOwn(func(w *secWorld) int64 { return w.alice.id })),
			[]cell{{as: pBob, req: mxGet(mxPath("/api/v1/notifications")), status: 200, check: onlyOwn(func(w *secWorld) int64 { return w.bob.id })}},
		),
		"POST /api/v1/notifications/:id/read": mxCells(
			[]cell{{as: pBob, req: mxSend(http.MethodPost, func(w *secWorld) string { return fmt.Sprintf("/api/v1/notifications/%d/read", w.aliceNote) }, nil),
				status: 404, code: "not_found", check: aliceNoteUnread}},
			mxUserOnly(mxSend(http.MethodPost, func(w *secWorld) string { return fmt.Sprintf("/api/v1/notifications/%d/read", w.aliceNote) }, nil), "unauthorized", pAlice, 200, nil),
		),
		"POST /api/v1/notifications/read-all": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/notifications/read-all"), nil), "unauthorized", pHidden, 200,
			func(t *testing.T, h *harness, w *secWorld, _ *response) {
				if len(h.unread(t, w.alice.token)) == 0 {
					t.Error("another user's read-all marked Alice's notifications read")
				}
			}),

		// The live stream: public topics for anyone, me for a user (a
		// stream cannot be read through app.Test, so the rightful caller's
		// cell asks for a last id after the newest: past authentication,
		// refused as 400 invalid_request).
		"GET /api/v1/stream": mxCells(
			mxPublic(mxGet(mxPath("/api/v1/stream?topics=trades&last_event_id=999999999")), 400),
			mxUserOnly(mxGet(mxPath("/api/v1/stream?topics=me&last_event_id=999999999")), "unauthorized", pAlice, 400, nil),
			[]cell{{as: pAnonymous, req: mxGet(mxPath("/api/v1/stream?topics=me&ticket=not-a-ticket")), status: 401, code: "unauthorized"}},
		),
		"POST /api/v1/stream/tickets": mxUserOnly(mxSend(http.MethodPost, mxPath("/api/v1/stream/tickets"), nil), "unauthorized", pAlice, 201, nil),

		// Support chat: the cookie is the session; no cookie is no session.
		"POST /api/v1/chat/session": {{as: pAnonymous, req: mxSend(http.MethodPost, mxPath("/api/v1/chat/session"), nil), status: 200}},
		"GET /api/v1/chat/history": {
			{as: pAnonymous, req: mxGet(mxPath("/api/v1/chat/history")), status: 401, code: "unauthorized"},
			// A signed-in user reaches their account's chat on any device,
			// without its cookie; another user's token reaches none of it.
			{as: pAlice, req: mxGet(mxPath("/api/v1/chat/history")), status: 200,
				check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					if !strings.Contains(string(r.body), "Alice's secret question") {
						t.Errorf("Alice's token does not reach her account's chat: %s", r)
					}
				}},
			{as: pBob, req: mxGet(mxPath("/api/v1/chat/history")), status: 401, code: "unauthorized"},
			{as: chatOf("another session's cookie", func(w *secWorld) *chatClient { return w.anonChat }), req: mxGet(mxPath("/api/v1/chat/history")), status: 200,
				check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					if strings.Contains(string(r.body), "Alice's secret question") {
						t.Errorf("another session was shown Alice's messages: %s", r)
					}
				}},
			{as: chatOf("Alice's cookie", func(w *secWorld) *chatClient { return w.aliceChat }), req: mxGet(mxPath("/api/v1/chat/history")), status: 200,
				check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					if !strings.Contains(string(r.body), "Alice's secret question") {
						t.Errorf("Alice's history lacks her message: %s", r)
					}
				}},
		},
		"POST /api/v1/chat/messages": {
			{as: pAnonymous, req: mxSend(http.MethodPost, mxPath("/api/v1/chat/messages"), func(*secWorld) any { return map[string]any{"text": "hi"} }), status: 404, code: "not_found"},
			{as: chatOf("an pAnonymous session's cookie", func(w *secWorld) *chatClient { return w.anonChat }),
				req: mxSend(http.MethodPost, mxPath("/api/v1/chat/messages"), func(*secWorld) any { return map[string]any{"text": "hi"} }), status: 201},
		},
		"POST /api/v1/chat/session/call-operator": {
			{as: pAnonymous, req: mxSend(http.MethodPost, mxPath("/api/v1/chat/session/call-operator"), nil), status: 404, code: "not_found"},
			{as: pGarbageToken, req: mxSend(http.MethodPost, mxPath("/api/v1/chat/session/call-operator"), nil), status: 404, code: "not_found"},
			{as: chatOf("an pAnonymous session's cookie", func(w *secWorld) *chatClient { return w.anonChat }),
				req: mxSend(http.MethodPost, mxPath("/api/v1/chat/session/call-operator"), nil), status: 200},
		},

		// Partner API: each partner sees and trades its own users only.
		"POST /api/v1/partner/bet": mxCells(
			mxPartnerOnly(mxSend(http.MethodPost, mxPath("/api/v1/partner/bet"), betBody("matrix-bet"))),
			[]cell{{as: pKeyB, req: mxSend(http.MethodPost, mxPath("/api/v1/partner/bet"), betBody("matrix-bet")), status: 200,
				check: func(t *testing.T, h *harness, w *secWorld, _ *response) {
					if h.partnerState(t, w.pA.Key, "b-user").Exists {
						t.Error("partner B's bet created a sub-account under partner A")
					}
				}}},
		),
		"POST /api/v1/partner/sell": mxCells(
			mxPartnerOnly(mxSend(http.MethodPost, mxPath("/api/v1/partner/sell"), sellBody("a-user", "matrix-sell"))),
			[]cell{
				{as: pKeyB, req: mxSend(http.MethodPost, mxPath("/api/v1/partner/sell"), sellBody("a-user", "steal")), status: 404, code: "NO_ACCOUNT"},
				{as: pKeyA, req: mxSend(http.MethodPost, mxPath("/api/v1/partner/sell"), sellBody("a-user", "matrix-sell")), status: 200},
			},
		),
		"GET /api/v1/partner/users/:external_user_id": mxCells(
			mxPartnerOnly(partnerState("a-user")),
			[]cell{
				{as: pKeyB, req: partnerState("a-user"), status: 200, check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					var st apiPartnerState
					r.decode(t, &st)
					if st.Exists || st.UserID != 0 || len(st.Positions) != 0 {
						t.Errorf("partner B sees partner A's user: %s", r)
					}
				}},
				{as: pKeyA, req: partnerState("a-user"), status: 200, check: func(t *testing.T, _ *harness, _ *secWorld, r *response) {
					var st apiPartnerState
					r.decode(t, &st)
					if !st.Exists || len(st.Positions) != 1 {
						t.Errorf("partner A does not see its user: %s", r)
					}
				}},
			},
		),
		// The MCP endpoint takes only personal API keys: a session token
		// (Alice's own) is 401 like no token; its tools check the key's
		// scopes (mcp_test.go).
		"POST /mcp": mxCells(
			mxUserOnly(mcpInitialize, "unauthorized", bearerOf("Alice's API key", func(w *secWorld) string { return w.aliceKey }), 200, nil),
			[]cell{{as: pAlice, req: mcpInitialize, status: http.StatusUnauthorized, code: "unauthorized"}},
		),
		"GET /mcp":    mxPublic(mxGet(mxPath("/mcp")), http.StatusMethodNotAllowed),
		"DELETE /mcp": mxPublic(mxSend(http.MethodDelete, mxPath("/mcp"), nil), http.StatusMethodNotAllowed),
	}
}

// mcpInitialize is an MCP initialize message to POST /mcp.
func mcpInitialize(*secWorld) req {
	return req{method: http.MethodPost, path: "/mcp", header: map[string]string{"Accept": "application/json, text/event-stream"},
		body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "matrix", "version": "1"}}}}
}
