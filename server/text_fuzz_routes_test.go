package server_test

import (
	"fmt"
	"strings"
)

// The routes TestHostileTextIsNeverA5xx sends hostile text to, and where
// in each request the text goes.

// bodyTarget is a route with a JSON body and the text fields in it.
type bodyTarget struct {
	route  string // "METHOD template", as in the route table
	fields []string
	// body is the route's body with text(field, default) in place of each
	// text field: the hostile literal for the field under test, the
	// default (as a JSON string) for the others.
	body func(w *fuzzWorld, n int, text func(field, def string) string) string
}

// bodyTargets lists every route whose body holds text. n numbers the
// request, for values that must be unique (e-mails, client_bet_id).
var bodyTargets = []bodyTarget{
	{"POST /api/v1/auth/register", []string{"email", "password", "name", "language", "referral_code"}, func(_ *fuzzWorld, n int, text func(string, string) string) string {
		return fmt.Sprintf(`{"email":%s,"password":%s,"name":%s,"language":%s,"referral_code":%s}`,
			text("email", fmt.Sprintf("text%d@x.co", n)), text("password", "password-text"), text("name", "Text"), text("language", "ru"),
			text("referral_code", ""))
	}},
	{"POST /api/v1/auth/api-keys", []string{"name", "scopes[0]"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"name":%s,"scopes":[%s]}`, text("name", "bot"), text("scopes[0]", "read"))
	}},
	// Telegram's update: refused before it is read without the secret
	// (and every request here is, the fuzz server having no bot).
	{"POST /api/v1/telegram/webhook/:secret", []string{"message.text", "message.from.language_code"}, func(_ *fuzzWorld, n int, text func(string, string) string) string {
		return fmt.Sprintf(`{"update_id":%d,"message":{"message_id":1,"date":0,"chat":{"id":5,"type":"private"},"from":{"id":5,"is_bot":false,"first_name":"F","language_code":%s},"text":%s}}`,
			n+1, text("message.from.language_code", "en"), text("message.text", "/start x"))
	}},
	{"POST /api/v1/auth/login", []string{"email", "password"}, func(w *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"email":%s,"password":%s}`, text("email", w.alice.email), text("password", "password-alice"))
	}},
	{"POST /api/v1/auth/session", []string{"email", "password"}, func(w *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"email":%s,"password":%s}`, text("email", w.alice.email), text("password", "password-alice"))
	}},
	// The current password is wrong on purpose: a change would sign Alice's
	// other sessions out under the other routes' requests.
	{"POST /api/v1/auth/password", []string{"current_password", "new_password"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"current_password":%s,"new_password":%s}`, text("current_password", "not-alices-password"), text("new_password", "a new password"))
	}},
	{"POST /api/v1/auth/password/reset-request", []string{"email"}, func(w *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"email":%s}`, text("email", w.alice.email))
	}},
	{"POST /api/v1/auth/password/reset", []string{"token", "new_password"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"token":%s,"new_password":%s}`, text("token", "not-a-reset-token"), text("new_password", "a new password"))
	}},
	{"PATCH /api/v1/auth/me", []string{"name", "nickname", "language", "theme", "avatar_url"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"name":%s,"language":%s,"theme":%s,"avatar_url":%s}`,
			text("name", "Alice"), text("language", "en"), text("theme", "dark"), text("avatar_url", "https://x.example/a.png"))
	}},
	{"POST /api/v1/events", []string{"name", "name_ru", "pools[0].name", "pools[0].name_ru", "pools[0].rules", "pools[0].rules_ru",
		"pools[0].markets[0].name", "pools[0].markets[0].name_ru", "pools[0].markets[0].yes_name", "pools[0].markets[0].no_name"},
		func(_ *fuzzWorld, _ int, text func(string, string) string) string {
			return fmt.Sprintf(`{"name":%s,"name_ru":%s,"pools":[{"name":%s,"name_ru":%s,"rules":%s,"rules_ru":%s,"margin":0.03,"lmsr_b_kopecks":100000,`+
				`"markets":[{"name":%s,"name_ru":%s,"yes_name":%s,"no_name":%s,"probability":0.5}]}]}`,
				text("name", "E"), text("name_ru", "Е"), text("pools[0].name", "P"), text("pools[0].name_ru", "П"),
				text("pools[0].rules", "rules, line two"), text("pools[0].rules_ru", "правила"),
				text("pools[0].markets[0].name", "M"), text("pools[0].markets[0].name_ru", "М"),
				text("pools[0].markets[0].yes_name", "Yes"), text("pools[0].markets[0].no_name", "No"))
		}},
	{"POST /api/v1/admin/users/:id/events", newEventTextFields, newEventTextBody},
	// The world's event has had trades: a valid edit is 409, and the
	// text is checked before (400).
	{"PATCH /api/v1/events/:id", newEventTextFields, newEventTextBody},
	{"POST /api/v1/events/:id/amendments", []string{"text", "text_ru"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"text":%s,"text_ru":%s}`, text("text", "a note,\nline two"), text("text_ru", "уточнение"))
	}},
	{"POST /api/v1/events/preview", newEventTextFields, newEventTextBody},
	{"POST /api/v1/admin/events/:id/reject", []string{"reason"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"reason":%s,"refund":true}`, text("reason", "Duplicate"))
	}},
	{"POST /api/v1/users/me/withdrawals", []string{"chain", "address"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"chain":%s,"address":%s,"amount_kopecks":100}`, text("chain", "ethereum"), text("address", "0x52908400098527886E0F7030069857D2E4169EE7"))
	}},
	// No such withdrawal: the reason and the hash are checked before.
	{"POST /api/v1/admin/withdrawals/:id/reject", []string{"reason"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"reason":%s}`, text("reason", "Not your address"))
	}},
	{"POST /api/v1/admin/withdrawals/:id/approve", []string{"tx_hash"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"tx_hash":%s}`, text("tx_hash", "0x"+strings.Repeat("ab", 32)))
	}},
	{"POST /api/v1/events/:id/pools/:pool_id/markets/:market_id/close", []string{"won_side"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"won_side":%s}`, text("won_side", "MAYBE"))
	}},
	{"POST /api/v1/admin/markets/:id/resolve", []string{"won_side"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"won_side":%s}`, text("won_side", "MAYBE"))
	}},
	{"POST /api/v1/markets/:market_id/buy", []string{"side"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"side":%s,"amount_kopecks":1000}`, text("side", "YES"))
	}},
	{"POST /api/v1/markets/:market_id/sell", []string{"side"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"side":%s,"shares":1}`, text("side", "YES"))
	}},
	{"POST /api/v1/markets/:market_id/disputes", []string{"reason"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"reason":%s}`, text("reason", "the match was abandoned"))
	}},
	{"POST /api/v1/partner/bet", []string{"external_user_id", "side", "client_bet_id"}, func(w *fuzzWorld, n int, text func(string, string) string) string {
		return fmt.Sprintf(`{"external_user_id":%s,"market_id":%d,"side":%s,"amount_kopecks":1000,"client_bet_id":%s}`,
			text("external_user_id", "text-user"), w.a1.ID, text("side", "yes"), text("client_bet_id", fmt.Sprintf("text-%d", n)))
	}},
	{"POST /api/v1/partner/sell", []string{"external_user_id", "side", "client_bet_id"}, func(w *fuzzWorld, n int, text func(string, string) string) string {
		return fmt.Sprintf(`{"external_user_id":%s,"market_id":%d,"side":%s,"shares":1,"client_bet_id":%s}`,
			text("external_user_id", "fz"), w.a1.ID, text("side", "yes"), text("client_bet_id", fmt.Sprintf("text-sell-%d", n)))
	}},
	{"POST /api/v1/admin/partners", []string{"name"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"name":%s}`, text("name", "Text partner"))
	}},
	{"PUT /api/v1/admin/tags/:slug", []string{"name", "name_ru"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"name":%s,"name_ru":%s}`, text("name", "Tag"), text("name_ru", "Тег"))
	}},
	{"PUT /api/v1/admin/partners/:id/webhook", []string{"url"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"url":%s}`, text("url", "https://93.184.216.34/hook"))
	}},
	{"POST /api/v1/events/:event_id/comments", []string{"content"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"content":%s}`, text("content", "a comment"))
	}},
	{"PUT /api/v1/comments/:id/reaction", []string{"reaction"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"reaction":%s}`, text("reaction", "like"))
	}},
	{"POST /api/v1/chat/session", []string{"language"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"language":%s}`, text("language", "ru"))
	}},
	{"POST /api/v1/chat/messages", []string{"text"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"text":%s}`, text("text", "how do I withdraw"))
	}},
	{"POST /api/v1/admin/chat/sessions/:session_id/messages", []string{"text"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"text":%s}`, text("text", "hello from support"))
	}},
	{"POST /api/v1/admin/p2p/ads", []string{"type", "fiat_currency", "payment_methods[0]", "instructions"}, func(w *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"user_id":%d,"type":%s,"fiat_currency":%s,"exchange_rate":100,"min_amount":1000,"max_amount":50000,`+
			`"payment_methods":[%s],"payment_duration":15,"instructions":%s}`,
			w.alice.id, text("type", "sell"), text("fiat_currency", "RUB"), text("payment_methods[0]", "SBP"), text("instructions", "pay, then wait"))
	}},
	{"PATCH /api/v1/admin/p2p/ads/:id", []string{"moderation_status"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"moderation_status":%s}`, text("moderation_status", "approved"))
	}},
	{"PATCH /api/v1/pools/:id", []string{"finish_at"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"finish_at":%s}`, text("finish_at", "2100-01-02T03:04:05Z"))
	}},
	{"PATCH /api/v1/admin/pools/:id", []string{"finish_at"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"finish_at":%s}`, text("finish_at", "2100-01-02T03:04:05Z"))
	}},
	{"POST /api/v1/pools/:id/answers", []string{"name", "name_ru"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"name":%s,"name_ru":%s,"probability":0.01}`, text("name", "Late"), text("name_ru", "Поздний"))
	}},
	{"POST /api/v1/admin/pools/:id/answers", []string{"name", "name_ru"}, func(_ *fuzzWorld, _ int, text func(string, string) string) string {
		return fmt.Sprintf(`{"name":%s,"name_ru":%s,"probability":0.01}`, text("name", "Late"), text("name_ru", "Поздний"))
	}},
}

// noTextBody are the routes that take a body without text (numbers and
// booleans only) or none.
var noTextBody = []string{
	"PUT /api/v1/events/:id/follow",
	"DELETE /api/v1/events/:id/follow",
	// JSON-RPC messages: FuzzMCP sends any body to the MCP endpoint.
	"POST /mcp",
	"DELETE /mcp",
	"POST /api/v1/auth/logout",
	"DELETE /api/v1/auth/session",
	"POST /api/v1/events/:id/active",
	"POST /api/v1/admin/events/:id/active",
	"POST /api/v1/admin/events/:id/approve",
	"POST /api/v1/admin/users/:id/credit",
	"POST /api/v1/admin/users/:id/password-reset",
	"PATCH /api/v1/admin/users/:id",
	"PATCH /api/v1/admin/partners/:id",
	"POST /api/v1/admin/partners/:id/float",
	"POST /api/v1/admin/partners/:id/rotate-key",
	"DELETE /api/v1/admin/partners/:id/webhook",
	"POST /api/v1/admin/partners/:id/deliveries/:delivery_id/redeliver",
	"PUT /api/v1/admin/p2p/users/:id/stats",
	"POST /api/v1/notifications/read-all",
	"POST /api/v1/notifications/:id/read",
	"DELETE /api/v1/users/me/withdrawals/:id",
	"POST /api/v1/chat/session/call-operator",
	"POST /api/v1/admin/chat/sessions/:session_id/close",
	"POST /api/v1/stream/tickets",
	"DELETE /api/v1/auth/api-keys/:id",
	"POST /api/v1/auth/telegram/link",
	"DELETE /api/v1/auth/telegram",
	"DELETE /api/v1/admin/users/:id/api-keys/:key_id",
}

// queryTargets are the routes that read query parameters, and the
// parameters each reads.
var queryTargets = map[string][]string{
	"GET /api/v1/markets/:market_id/quote":  {"side", "amount_kopecks", "shares"},
	"GET /api/v1/events":                    {"limit", "offset"},
	"GET /api/v1/users/me/positions/closed": {"limit", "offset"},
	"GET /api/v1/users/me/trades":           {"limit", "cursor"},
	"GET /api/v1/users/me/deposits":         {"limit", "cursor"},
	"GET /api/v1/events/:event_id/comments": {"limit", "offset"},
	"GET /api/v1/comments/:id/replies":      {"limit", "offset"},
	"GET /api/v1/notifications":             {"limit", "offset"},
	"GET /api/v1/admin/chat/sessions":       {"limit", "offset"},
	"GET /api/v1/p2p/ads":                   {"type", "fiat_currency", "amount", "payment_method", "max_payment_duration", "is_active", "author_nickname", "sort_by", "limit", "offset"},
}
