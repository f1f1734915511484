package server

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/p2p"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/stats"
	"github.com/predictkit/predictkit/telegram"
	"github.com/predictkit/predictkit/withdrawal"
)

// domainErrors are the exported error values (and error types) of the
// domains the server serves, by their qualified name.
var domainErrors = map[string]error{
	"account.ErrUserNotFound":        account.ErrUserNotFound,
	"account.ErrEmailTaken":          account.ErrEmailTaken,
	"account.ErrNicknameTaken":       account.ErrNicknameTaken,
	"account.ErrInvalidCredentials":  account.ErrInvalidCredentials,
	"account.ErrUnauthorized":        account.ErrUnauthorized,
	"account.ErrInsufficientFunds":   account.ErrInsufficientFunds,
	"account.ErrInvalidAmount":       account.ErrInvalidAmount,
	"account.ErrBalanceLimit":        account.ErrBalanceLimit,
	"account.ErrInvalidToken":        account.ErrInvalidToken,
	"account.ErrNoPassword":          account.ErrNoPassword,
	"account.ErrAddressTaken":        account.ErrAddressTaken,
	"account.ErrAPIKeyNotFound":      account.ErrAPIKeyNotFound,
	"account.ErrTooManyAPIKeys":      account.ErrTooManyAPIKeys,
	"account.ErrInvalidReferralCode": account.ErrInvalidReferralCode,
	"account.ErrReferralCodeTaken":   account.ErrReferralCodeTaken,
	"account.ErrTelegramNotLinked":   account.ErrTelegramNotLinked,
	"input.ErrInvalid":               input.ErrInvalid,

	"withdrawal.ErrInvalidAddress": withdrawal.ErrInvalidAddress,
	"withdrawal.ErrNotFound":       withdrawal.ErrNotFound,
	"withdrawal.ErrLimit":          withdrawal.ErrLimit,
	"withdrawal.ErrInvalidState":   withdrawal.ErrInvalidState,
	"withdrawal.ErrTxHashUsed":     withdrawal.ErrTxHashUsed,
	"stats.ErrForbidden":           stats.ErrForbidden,
	"input.Error":                  &input.Error{Field: "email", Reason: "must be an e-mail address"},

	"market.ErrEventNotFound":       market.ErrEventNotFound,
	"market.ErrPoolNotFound":        market.ErrPoolNotFound,
	"market.ErrMarketNotFound":      market.ErrMarketNotFound,
	"market.ErrForbidden":           market.ErrForbidden,
	"market.ErrEventTraded":         market.ErrEventTraded,
	"market.ErrEventResolved":       market.ErrEventResolved,
	"market.ErrCreatorLimit":        market.ErrCreatorLimit,
	"market.CreatorLimitError":      &market.CreatorLimitError{Limit: market.LimitOpenEvents, Max: 100, Current: 100, Adding: 1},
	"market.UnknownTagError":        &market.UnknownTagError{Slug: "derby"},
	"market.ErrNotProposed":         market.ErrNotProposed,
	"market.ErrNotApproved":         market.ErrNotApproved,
	"market.ErrResolved":            market.ErrResolved,
	"market.ErrClosed":              market.ErrClosed,
	"market.ErrPriceMoved":          market.ErrPriceMoved,
	"market.ErrNoPosition":          market.ErrNoPosition,
	"market.ErrInsufficientShares":  market.ErrInsufficientShares,
	"market.ErrTradeRefused":        market.ErrTradeRefused,
	"market.ErrIdempotencyConflict": market.ErrIdempotencyConflict,
	"market.ErrDuplicateKey":        market.ErrDuplicateKey,
	"market.ErrNoNewAnswer":         market.ErrNoNewAnswer,
	"market.ErrPoolChanged":         market.ErrPoolChanged,
	"market.ErrNoProposal":          market.ErrNoProposal,
	"market.ErrChallengeOver":       market.ErrChallengeOver,
	"market.ErrNotHolder":           market.ErrNotHolder,
	"market.ErrAlreadyDisputed":     market.ErrAlreadyDisputed,
	"market.ErrNotResolved":         market.ErrNotResolved,

	"partner.ErrUnauthorized":        partner.ErrUnauthorized,
	"partner.ErrDisabled":            partner.ErrDisabled,
	"partner.ErrNotFound":            partner.ErrNotFound,
	"partner.ErrNoAccount":           partner.ErrNoAccount,
	"partner.ErrIdempotencyConflict": partner.ErrIdempotencyConflict,

	"social.ErrNotificationNotFound": social.ErrNotificationNotFound,
	"social.ErrEventNotFound":        social.ErrEventNotFound,
	"social.ErrCommentNotFound":      social.ErrCommentNotFound,
	"social.ErrParentOtherEvent":     social.ErrParentOtherEvent,
	"social.ErrParentIsReply":        social.ErrParentIsReply,

	"p2p.ErrNotFound":     p2p.ErrNotFound,
	"p2p.ErrUserNotFound": p2p.ErrUserNotFound,

	"chat.ErrSessionNotFound": chat.ErrSessionNotFound,
	"chat.ErrSessionClosed":   chat.ErrSessionClosed,
	"chat.ErrNotifyFailed":    chat.ErrNotifyFailed,

	"telegram.ErrNotConfigured":    telegram.ErrNotConfigured,
	"telegram.ErrInvalidLinkToken": telegram.ErrInvalidLinkToken,
	"telegram.ErrUpdateSeen":       telegram.ErrUpdateSeen,
	"telegram.ErrBlocked":          telegram.ErrBlocked,
	"telegram.ErrUnavailable":      telegram.ErrUnavailable,

	// The server's own.
	"server.errInvalidID":  errInvalidID,
	"server.errTgSecret":   errTelegramForbidden,
	"server.requestError":  badRequest("body", "malformed JSON"),
	"server.errAdminOff":   errAdminDisabled,
	"server.errEncoding":   errContentEncoding,
	"server.errUnavailabe": errUnavailable,
	"server.malformedBody": malformedBody("malformed JSON"),
	"server.errCrossOrig":  errCrossOrigin,
	"server.errScope":      errInsufficientScope,
}

// notOnAnyRoute are domain errors no route of the server can meet yet,
// with the reason. (The partner routes made the idempotency errors
// reachable.)
var notOnAnyRoute = map[string]string{
	"account.ErrAddressTaken": "the address book's guard against users renumbered under it (an import); the addresses " +
		"derived for distinct users never collide, so registration and the deposit addresses do not meet it",
	"account.ErrBalanceLimit": "the services that bring money in turn it into *input.Error (market.Service.CreateEvent, " +
		"account.Service.Credit, partner.Service.FundFloat); trades and settlements only move money already in, " +
		"which account.MaxExposure keeps within 4 × 10^18 kopecks",
	"account.ErrReferralCodeTaken": "a store's answer to a drawn referral code that is taken; account.Service.Register " +
		"draws another (five draws of 40 bits each: a sixth would be needed with odds below 10^-50 per registration)",
	"market.ErrNotResolved": "only the challenge window's worker meets it (a store's FinishProposal before the market resolved), " +
		"and logs it; the proposal is claimed again after its lease",
	"telegram.ErrUpdateSeen": "telegram.Service.HandleUpdate answers a redelivered update with nil (200: handled before)",
	"telegram.ErrBlocked":    "only the notification sender meets it, and turns the chat's notifications off",
	"market.UnknownTagError": "a store's answer that market.Service.CreateEvent turns into the *input.Error naming tags[i] " +
		"(400 invalid_request) before it leaves the service",
}

// answered500 are domain errors whose documented answer is a 5xx: an
// operator who could not be notified is call-operator's 500
// internal_error; a server without a bot, or a Bot API that does not
// answer, is the Telegram link's 503.
var answered500 = map[string]bool{"chat.ErrNotifyFailed": true, "telegram.ErrNotConfigured": true, "telegram.ErrUnavailable": true}

// canOccur lists, per route, the errors its handler and the services it
// calls can return (from the services' documentation).
var canOccur = []struct {
	route string
	table *errorTable
	errs  []string
}{
	{"GET /users/{id}/pnl/chart", errsPnLChart, []string{"server.errInvalidID", "account.ErrUnauthorized", "account.ErrUserNotFound", "server.errEncoding"}},
	{"GET /auth/me", errsAuthMe, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errEncoding"}},
	{"PATCH /auth/me", errsUpdateProfile, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "account.ErrNicknameTaken", "account.ErrTelegramNotLinked", "input.Error", "input.ErrInvalid", "server.requestError"}},
	// Telegram (module_telegram.go).
	{"POST /auth/telegram/link", errsTelegramLink, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "telegram.ErrNotConfigured", "telegram.ErrUnavailable"}},
	{"DELETE /auth/telegram", errsTelegramUnlink, []string{"account.ErrUnauthorized", "account.ErrUserNotFound"}},
	{"POST /telegram/webhook/{secret}", errsTelegramWebhook, []string{"server.errTgSecret", "server.requestError", "server.malformedBody", "telegram.ErrInvalidLinkToken", "telegram.ErrNotConfigured", "server.errEncoding"}},
	{"POST /auth/register", errsRegister, []string{"account.ErrEmailTaken", "input.Error", "input.ErrInvalid", "server.requestError", "account.ErrInvalidReferralCode"}},
	{"GET /users/me/referrals", errsReferrals, []string{"account.ErrUnauthorized"}},
	{"POST /auth/login", errsLogin, []string{"account.ErrInvalidCredentials", "account.ErrUserNotFound", "server.requestError"}},
	{"POST /auth/logout", errsLogout, []string{"account.ErrUnauthorized"}},
	// The cookie session (module_session.go): the origin check and the
	// scopes' guard first, then a token or a login.
	{"POST /auth/session", errsSessionOpen, []string{"server.errCrossOrig", "server.errScope", "server.requestError", "account.ErrUnauthorized",
		"account.ErrInvalidCredentials", "account.ErrUserNotFound", "input.Error", "input.ErrInvalid", "server.errEncoding"}},
	{"DELETE /auth/session", errsSessionEnd, []string{"server.errCrossOrig", "server.errScope", "server.errEncoding"}},
	// The password routes (account.Service: ChangePassword, ResetPassword,
	// IssueReset; NormalizeEmail before the reset queue).
	{"POST /auth/password", errsChangePassword, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.requestError",
		"input.Error", "input.ErrInvalid", "account.ErrInvalidCredentials", "account.ErrNoPassword"}},
	{"POST /auth/password/reset-request", errsResetRequest, []string{"server.requestError", "input.Error", "input.ErrInvalid"}},
	{"POST /auth/password/reset", errsReset, []string{"server.requestError", "input.Error", "input.ErrInvalid", "account.ErrInvalidToken"}},
	{"POST /admin/users/{id}/password-reset", errsAdminReset, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID",
		"account.ErrUserNotFound", "account.ErrNoPassword"}},
	{"GET /users/me/positions/closed", errsClosedPosition, []string{"account.ErrUnauthorized", "server.requestError"}},
	{"GET /users/me/trades", errsUserTrades, []string{"account.ErrUnauthorized", "server.requestError", "input.Error", "input.ErrInvalid"}},
	{"GET /users/me/deposits", errsUserDeposits, []string{"account.ErrUnauthorized", "server.requestError"}},
	{"POST /auth/api-keys", errsCreateAPIKey, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.requestError", "input.Error", "input.ErrInvalid", "account.ErrTooManyAPIKeys"}},
	{"GET /auth/api-keys", errsAPIKeys, []string{"account.ErrUnauthorized"}},
	{"DELETE /auth/api-keys/{id}", errsRevokeAPIKey, []string{"account.ErrUnauthorized", "server.errInvalidID", "account.ErrAPIKeyNotFound"}},
	{"admin API key routes", errsAdminAPIKeys, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID", "account.ErrUserNotFound", "account.ErrAPIKeyNotFound"}},
	{"GET /pools/{id}", errsPool, []string{"server.errInvalidID", "market.ErrPoolNotFound"}},
	{"GET /market/trades/latest", errsLatestTrades, []string{"server.errEncoding"}},
	{"POST /events/{id}/active", errsEventActive, []string{"account.ErrUnauthorized", "server.errInvalidID", "market.ErrEventNotFound", "market.ErrForbidden", "input.Error", "input.ErrInvalid", "market.ErrNotApproved"}},
	{"POST /events/{id}/pools/{pool_id}/markets/{market_id}/close", errsMarketClose, []string{"account.ErrUnauthorized", "server.errInvalidID",
		"market.ErrMarketNotFound", "market.ErrEventNotFound", "market.ErrPoolNotFound", "market.ErrForbidden", "input.Error", "input.ErrInvalid", "market.ErrResolved", "market.ErrNotApproved"}},
	{"PATCH /pools/{id}", errsMoveFinish, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "server.requestError",
		"market.ErrPoolNotFound", "market.ErrForbidden", "input.Error", "input.ErrInvalid", "market.ErrResolved"}},
	{"PATCH /admin/pools/{id}", errsAdminMoveFinish, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID", "server.requestError",
		"market.ErrPoolNotFound", "input.Error", "input.ErrInvalid", "market.ErrResolved"}},
	{"POST /pools/{id}/answers", errsAddAnswer, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "server.requestError",
		"market.ErrPoolNotFound", "market.ErrEventNotFound", "market.ErrForbidden", "input.Error", "input.ErrInvalid", "market.ErrNoNewAnswer", "market.ErrNotApproved", "account.ErrBalanceLimit"}},
	{"POST /admin/pools/{id}/answers", errsAdminAddAnswer, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID", "server.requestError",
		"market.ErrPoolNotFound", "input.Error", "input.ErrInvalid", "market.ErrNoNewAnswer", "market.ErrNotApproved", "account.ErrBalanceLimit"}},
	{"POST /events", errsCreateEvent, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "market.ErrForbidden", "input.Error", "input.ErrInvalid", "server.requestError",
		"market.ErrCreatorLimit", "market.CreatorLimitError", "account.ErrInsufficientFunds"}},
	{"PATCH /events/{id}", errsEditEvent, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "server.requestError",
		"market.ErrEventNotFound", "market.ErrForbidden", "input.Error", "input.ErrInvalid", "market.ErrEventTraded", "market.ErrEventResolved",
		"market.ErrNotApproved", "market.ErrCreatorLimit", "market.CreatorLimitError"}},
	{"POST /events/{id}/amendments", errsAmendEvent, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "server.requestError",
		"market.ErrEventNotFound", "market.ErrForbidden", "input.Error", "input.ErrInvalid"}},
	// Proposals (module_proposals.go; market.Service: Preview, EventsByStatus, Approve, Reject).
	{"POST /events/preview", errsPreviewEvent, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "market.ErrForbidden", "input.Error", "input.ErrInvalid", "server.requestError"}},
	{"GET /admin/events", errsAdminEvents, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.requestError", "input.Error", "input.ErrInvalid", "account.ErrUserNotFound"}},
	{"POST /admin/events/{id}/approve", errsApprove, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID",
		"market.ErrEventNotFound", "market.ErrNotProposed", "market.ErrCreatorLimit", "market.CreatorLimitError", "input.Error", "input.ErrInvalid"}},
	{"POST /admin/events/{id}/reject", errsReject, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID", "server.requestError",
		"input.Error", "input.ErrInvalid", "market.ErrEventNotFound", "market.ErrNotProposed"}},
	// Withdrawals (module_withdrawals.go; withdrawal.Service).
	{"POST /users/me/withdrawals", errsRequestWithdrawal, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.requestError",
		"input.Error", "input.ErrInvalid", "withdrawal.ErrInvalidAddress", "account.ErrInsufficientFunds", "withdrawal.ErrLimit"}},
	{"GET /users/me/withdrawals", errsUserWithdrawals, []string{"account.ErrUnauthorized", "server.requestError", "input.Error", "input.ErrInvalid"}},
	{"GET /stats/daily, /stats/overview", errsStats, []string{"account.ErrUnauthorized", "stats.ErrForbidden", "input.Error", "input.ErrInvalid", "server.errEncoding"}},
	{"DELETE /users/me/withdrawals/{id}", errsCancelWithdrawal, []string{"account.ErrUnauthorized", "server.errInvalidID", "withdrawal.ErrNotFound", "withdrawal.ErrInvalidState"}},
	{"GET /admin/withdrawals", errsAdminWithdrawals, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.requestError", "input.Error", "input.ErrInvalid", "account.ErrUserNotFound"}},
	{"POST /admin/withdrawals/{id}/approve|reject", errsDecideWithdrawal, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID", "server.requestError",
		"input.Error", "input.ErrInvalid", "withdrawal.ErrNotFound", "withdrawal.ErrInvalidState", "withdrawal.ErrTxHashUsed"}},
	{"GET /events", errsEvents, []string{"server.requestError"}},
	{"GET /events/{id}", errsEvent, []string{"server.errInvalidID", "market.ErrEventNotFound"}},
	{"GET /markets/{id}", errsMarket, []string{"server.errInvalidID", "market.ErrMarketNotFound"}},
	{"GET /markets/{id}/quote", errsQuote, []string{"server.errInvalidID", "server.requestError", "market.ErrMarketNotFound", "market.ErrClosed", "market.ErrTradeRefused", "input.Error"}},
	{"POST /markets/{id}/buy|sell", errsTrade, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "server.requestError",
		"market.ErrMarketNotFound", "market.ErrClosed", "market.ErrPriceMoved", "market.ErrNoPosition", "market.ErrInsufficientShares",
		"market.ErrTradeRefused", "account.ErrInsufficientFunds", "account.ErrInvalidAmount", "input.Error", "input.ErrInvalid", "market.ErrForbidden", "market.ErrPoolChanged"}},
	{"POST /markets/{id}/disputes", errsDispute, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "server.requestError",
		"input.Error", "input.ErrInvalid", "market.ErrMarketNotFound", "market.ErrNoProposal", "market.ErrChallengeOver", "market.ErrNotHolder",
		"market.ErrAlreadyDisputed", "account.ErrInsufficientFunds"}},
	{"GET /admin/disputes", errsAdminDisputes, []string{"server.errAdminOff", "account.ErrUnauthorized"}},
	{"GET /markets/{id}/history", errsHistory, []string{"server.errInvalidID", "market.ErrMarketNotFound"}},
	{"GET /markets/{id}/candles", errsCandles, []string{"server.errInvalidID", "server.requestError", "input.Error", "input.ErrInvalid", "market.ErrMarketNotFound"}},
	{"GET /markets/{id}/trades.csv", errsTradesCSV, []string{"server.errInvalidID", "market.ErrMarketNotFound"}},
	{"admin routes", errsAdmin, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID", "server.requestError",
		"account.ErrUserNotFound", "input.Error", "input.ErrInvalid", "account.ErrInvalidAmount"}},
	{"GET /readyz", errsMeta, []string{"server.errUnavailabe"}},
	// The partner API: the key, the body, then the partner service's
	// errors (partner.Service.Bet and Sell: *InvalidError,
	// ErrIdempotencyConflict, ErrNoAccount and the market's refusals;
	// ErrDuplicateKey is retried by the service and mapped defensively).
	{"POST /partner/bet", errsPartnerBet, partnerTradeErrors},
	{"POST /partner/sell", errsPartnerSell, partnerTradeErrors},
	{"GET /partner/users/{external_user_id}", errsPartnerState, []string{"partner.ErrUnauthorized", "partner.ErrDisabled",
		"server.requestError", "input.Error", "input.ErrInvalid", "server.errEncoding"}},
	// The social routes (social.Service: Post, EventComments, Replies,
	// React, Unread, Notifications, MarkRead, MarkAllRead).
	{"GET /events/{event_id}/comments", errsEventComments, []string{"server.errInvalidID", "social.ErrEventNotFound", "server.errEncoding"}},
	{"POST /events/{event_id}/comments", errsPostComment, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "server.requestError",
		"input.Error", "input.ErrInvalid", "social.ErrEventNotFound", "social.ErrCommentNotFound", "social.ErrParentOtherEvent", "social.ErrParentIsReply", "server.errEncoding"}},
	{"GET /comments/{id}/replies", errsReplies, []string{"server.errInvalidID", "social.ErrCommentNotFound", "server.errEncoding"}},
	{"PUT /comments/{id}/reaction", errsReaction, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "server.requestError",
		"input.Error", "input.ErrInvalid", "social.ErrCommentNotFound", "server.errEncoding"}},
	{"GET /notifications/unread, GET /notifications, POST /notifications/read-all", errsNotifications, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errEncoding"}},
	{"POST /notifications/{id}/read", errsNotificationRead, []string{"account.ErrUnauthorized", "account.ErrUserNotFound", "server.errInvalidID", "social.ErrNotificationNotFound", "server.errEncoding"}},
	{"admin partner routes", errsAdminPartner, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID",
		"server.requestError", "partner.ErrNotFound", "input.Error", "input.ErrInvalid"}},
	// The P2P routes (p2p.Service: List, Ad, Create, Moderate, SetStats).
	{"GET /p2p/ads", errsP2PAds, []string{"input.Error", "input.ErrInvalid", "server.requestError", "server.errEncoding"}},
	{"GET /p2p/ads/{id}", errsP2PAd, []string{"server.errInvalidID", "p2p.ErrNotFound", "server.errEncoding"}},
	{"admin P2P routes", errsAdminP2P, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.errInvalidID", "server.requestError",
		"p2p.ErrNotFound", "p2p.ErrUserNotFound", "input.Error", "input.ErrInvalid"}},
	// The chat routes (chat.Service: Open, History, Send, CallOperator,
	// Sessions, Transcript, Reply, Close).
	{"POST /chat/session", errsChatSession, []string{"server.requestError", "server.errEncoding"}},
	{"GET /chat/history", errsChatHistory, []string{"chat.ErrSessionNotFound", "server.errEncoding"}},
	{"POST /chat/messages", errsChatMessage, []string{"server.requestError", "input.Error", "input.ErrInvalid", "chat.ErrSessionNotFound", "chat.ErrSessionClosed"}},
	{"POST /chat/session/call-operator", errsChatCallOperator, []string{"chat.ErrSessionNotFound", "chat.ErrSessionClosed", "chat.ErrNotifyFailed", "server.errEncoding"}},
	{"admin chat routes", errsAdminChat, []string{"server.errAdminOff", "account.ErrUnauthorized", "server.requestError",
		"chat.ErrSessionNotFound", "input.Error", "input.ErrInvalid"}},
}

var partnerTradeErrors = []string{"partner.ErrUnauthorized", "partner.ErrDisabled", "server.malformedBody", "server.requestError",
	"input.Error", "input.ErrInvalid", "input.Error", "input.ErrInvalid", "partner.ErrNoAccount", "market.ErrNoPosition",
	"partner.ErrIdempotencyConflict", "market.ErrIdempotencyConflict", "market.ErrDuplicateKey",
	"market.ErrMarketNotFound", "market.ErrClosed", "market.ErrResolved", "market.ErrPriceMoved", "market.ErrInsufficientShares",
	"market.ErrTradeRefused", "account.ErrInsufficientFunds", "account.ErrInvalidAmount", "server.errEncoding", "market.ErrPoolChanged"}

// exportedErrors parses the non-test Go files of a domain package and
// returns its exported Err* variables and *Error types.
func exportedErrors(t *testing.T, pkg string) []string {
	t.Helper()
	dir := filepath.Join("..", pkg)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && strings.HasPrefix(n.Name, "Err") {
							names = append(names, pkg+"."+n.Name)
						}
					}
				case *ast.TypeSpec:
					if s.Name.IsExported() && strings.HasSuffix(s.Name.Name, "Error") {
						names = append(names, pkg+"."+s.Name.Name)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

func TestEveryDomainErrorIsKnownToTheServer(t *testing.T) {
	onSomeRoute := map[string]bool{}
	for _, r := range canOccur {
		for _, n := range r.errs {
			onSomeRoute[n] = true
		}
	}
	for _, pkg := range []string{"account", "market", "partner", "social", "p2p", "chat", "withdrawal", "stats", "telegram"} {
		for _, name := range exportedErrors(t, pkg) {
			t.Run(name+" is accounted for by the server", func(t *testing.T) {
				if _, ok := domainErrors[name]; !ok {
					t.Fatalf("%s is a new domain error: add it to domainErrors and to canOccur (or notOnAnyRoute), and map it in the tables of the routes that meet it (module_*.go)", name)
				}
				if !onSomeRoute[name] && notOnAnyRoute[name] == "" {
					t.Errorf("%s occurs on no route in canOccur and is not listed in notOnAnyRoute", name)
				}
			})
		}
	}
}

func TestNoDomainErrorIsAnsweredAs500(t *testing.T) {
	for _, r := range canOccur {
		for _, name := range r.errs {
			err, ok := domainErrors[name]
			if !ok {
				t.Fatalf("canOccur names unknown error %s", name)
			}
			for _, form := range []struct {
				how string
				err error
			}{{"as is", err}, {"wrapped", fmt.Errorf("context: %w", err)}} {
				t.Run(fmt.Sprintf("%s on %s %s is not a 500", name, r.route, form.how), func(t *testing.T) {
					status, code := r.table.resolve(form.err)
					if status >= 500 && !(name == "server.errUnavailabe" && status == http.StatusServiceUnavailable) && !answered500[name] {
						t.Errorf("answered %d %q", status, code)
					}
					if code == "" {
						t.Error("answered with no code")
					}
				})
			}
		}
	}
}

func TestUnmappedErrorsAre500WithTheRouteCode(t *testing.T) {
	cases := []struct {
		name  string
		table *errorTable
		want  string
	}{
		{"the latest trades answer INTERNAL_ERROR", errsLatestTrades, "INTERNAL_ERROR"},
		{"the pool answers internal_error", errsPool, "internal_error"},
		{"an unmatched route answers internal_error", nil, "internal_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, code := c.table.resolve(fmt.Errorf("pq: connection refused"))
			if status != 500 || code != c.want {
				t.Errorf("got %d %q", status, code)
			}
			if detail(fmt.Errorf("pq: connection refused")) != "" {
				t.Error("an internal error has a client-visible detail")
			}
		})
	}
}

func TestContractCodesPerRoute(t *testing.T) {
	cases := []struct {
		name   string
		table  *errorTable
		err    error
		status int
		code   string
	}{
		{"a missing market on close is the message 'market not found'", errsMarketClose, market.ErrMarketNotFound, 404, "market not found"},
		{"a missing market on a trade is the code market_not_found", errsTrade, market.ErrMarketNotFound, 404, "market_not_found"},
		{"an invalid won_side is 'invalid request' with a space", errsMarketClose, &input.Error{Field: "won_side"}, 400, "invalid request"},
		{"an invalid trade is invalid_request", errsTrade, &input.Error{Field: "side"}, 400, "invalid_request"},
		{"an unknown referral code at registration is invalid_referral_code", errsRegister, account.ErrInvalidReferralCode, 400, "invalid_referral_code"},
		{"auth/me's 401 is UNAUTHORIZED", errsAuthMe, account.ErrUnauthorized, 401, "UNAUTHORIZED"},
		{"the chart's 401 is unauthorized", errsPnLChart, account.ErrUnauthorized, 401, "unauthorized"},
		{"a non-integer pool id is invalid_pool_id", errsPool, errInvalidID, 400, "invalid_pool_id"},
		{"a non-integer event id on activation is 'event not found'", errsEventActive, errInvalidID, 404, "event not found"},
		{"a content encoding is 415 everywhere", errsPool, errContentEncoding, 415, "unsupported_content_encoding"},
		{"a missing partner key is 401 UNAUTHORIZED", errsPartnerSell, partner.ErrUnauthorized, 401, "UNAUTHORIZED"},
		{"a disabled partner is 403 FORBIDDEN", errsPartnerState, partner.ErrDisabled, 403, "FORBIDDEN"},
		{"a partner body that is not JSON is BAD_BODY", errsPartnerBet, malformedBody("malformed JSON"), 400, "BAD_BODY"},
		{"a partner body with a bad field is BAD_PARAMS", errsPartnerBet, badRequest("shares", "must be an integer in range"), 400, "BAD_PARAMS"},
		{"an invalid partner field is BAD_PARAMS", errsPartnerSell, &input.Error{Field: "client_bet_id"}, 400, "BAD_PARAMS"},
		{"a closed market on a partner bet is TRADE_FAILED", errsPartnerBet, market.ErrClosed, 400, "TRADE_FAILED"},
		{"an unknown market on a partner sell is TRADE_FAILED, not 404", errsPartnerSell, market.ErrMarketNotFound, 400, "TRADE_FAILED"},
		{"overselling is TRADE_FAILED", errsPartnerSell, market.ErrInsufficientShares, 400, "TRADE_FAILED"},
		{"no sub-account is 404 NO_ACCOUNT", errsPartnerSell, partner.ErrNoAccount, 404, "NO_ACCOUNT"},
		{"a reused client_bet_id is 409 IDEMPOTENCY_CONFLICT", errsPartnerBet, partner.ErrIdempotencyConflict, 409, "IDEMPOTENCY_CONFLICT"},
		{"a duplicate key that got through is 409 IDEMPOTENCY_CONFLICT", errsPartnerSell, market.ErrDuplicateKey, 409, "IDEMPOTENCY_CONFLICT"},
		{"a body that is not JSON elsewhere is still invalid_request", errsTrade, malformedBody("malformed JSON"), 400, "invalid_request"},
		{"an unknown partner is partner_not_found to the operator", errsAdminPartner, partner.ErrNotFound, 404, "partner_not_found"},
		{"a partner's unmapped failure is INTERNAL_ERROR", errsPartnerBet, errors.New("pq: connection refused"), 500, "INTERNAL_ERROR"},
		{"an unknown event's comments are 404 not_found", errsEventComments, social.ErrEventNotFound, 404, "not_found"},
		{"a non-integer event id on the comments is 404 not_found", errsEventComments, errInvalidID, 404, "not_found"},
		{"a failing comment read is 500 internal_error", errsEventComments, errors.New("pq: connection refused"), 500, "internal_error"},
		{"unread notifications without a token are 401 unauthorized", errsNotifications, account.ErrUnauthorized, 401, "unauthorized"},
		{"a failing notification read is 500 internal_error", errsNotifications, errors.New("pq: connection refused"), 500, "internal_error"},
		{"a reply to a comment of another event is 400 invalid_request", errsPostComment, social.ErrParentOtherEvent, 400, "invalid_request"},
		{"a reply to an unknown comment is 404 not_found", errsPostComment, social.ErrCommentNotFound, 404, "not_found"},
		{"an unknown reaction is 400 invalid_request", errsReaction, &input.Error{Field: "reaction"}, 400, "invalid_request"},
		{"someone else's notification is 404 not_found", errsNotificationRead, social.ErrNotificationNotFound, 404, "not_found"},
		{"a cookie from another origin is 403 cross_origin_request on any route", errsTrade, errCrossOrigin, 403, "cross_origin_request"},
		{"a bad token when opening a session is 401 unauthorized", errsSessionOpen, account.ErrUnauthorized, 401, "unauthorized"},
		{"a wrong password when opening a session is 401 invalid_credentials", errsSessionOpen, account.ErrInvalidCredentials, 401, "invalid_credentials"},
		{"a Telegram link without a bot is 503 telegram_not_configured", errsTelegramLink, telegram.ErrNotConfigured, 503, "telegram_not_configured"},
		{"a webhook request without the secret is 403 forbidden", errsTelegramWebhook, errTelegramForbidden, 403, "forbidden"},
		{"a used link token is 400 invalid_link_token", errsTelegramWebhook, telegram.ErrInvalidLinkToken, 400, "invalid_link_token"},
		{"notifications without a linked chat are 409 telegram_not_linked", errsUpdateProfile, account.ErrTelegramNotLinked, 409, "telegram_not_linked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if status, code := c.table.resolve(c.err); status != c.status || code != c.code {
				t.Errorf("got %d %q, want %d %q", status, code, c.status, c.code)
			}
		})
	}
}

// TestPartnerRoutesAnswerOnlyPartnerCodes: every error a partner route can
// meet becomes one of the partner API's codes (none of the other
// routes' lowercase codes leaks in), and every TRADE_FAILED says why.
func TestPartnerRoutesAnswerOnlyPartnerCodes(t *testing.T) {
	allowed := map[string]bool{"UNAUTHORIZED": true, "FORBIDDEN": true, "BAD_BODY": true, "BAD_PARAMS": true, "TRADE_FAILED": true,
		"NO_ACCOUNT": true, "IDEMPOTENCY_CONFLICT": true, "unsupported_content_encoding": true}
	for _, r := range canOccur {
		if r.table != errsPartnerBet && r.table != errsPartnerSell && r.table != errsPartnerState {
			continue
		}
		for _, name := range r.errs {
			t.Run(fmt.Sprintf("%s on %s is a partner code", name, r.route), func(t *testing.T) {
				m := r.table.match(fmt.Errorf("context: %w", domainErrors[name]))
				if !allowed[m.code] {
					t.Errorf("answered %d %q", m.status, m.code)
				}
				if m.code == "TRADE_FAILED" && m.detail == "" {
					t.Error("a TRADE_FAILED with no detail saying why")
				}
			})
		}
	}
}
