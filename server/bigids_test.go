package server_test

// TestEveryIDAndPageParameterTakesAnyInteger walks every operation of the
// OpenAPI document that takes an id in its path or a page's limit, offset
// or cursor in its query (and the ids of the bodies that carry one), and
// sends each such parameter values past int32 (2147483648: a bigint
// column's ids get there, and an int4 parameter does not hold it), past
// 2^53, int64's largest, -1, and values past int64. The other parameters
// name things that exist, so that the value reaches the store. Every
// answer must be the one the table below gives, which the OpenAPI
// document allows (the harness checks), on every store, and never a 500.

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// extremeValues are the integers every id and page parameter is sent.
var extremeValues = []string{"2147483648", "9007199254740993", "9223372036854775807", "-1", "9223372036854775808", "-9223372036854775809"}

// Statuses answered to the extremeValues, in order, by kind of parameter.
var (
	// An id names nothing; past int64 it is not an id (400 invalid_id).
	idStatuses = []int{404, 404, 404, 404, 400, 400}
	// An id the route reads leniently: any text names nothing.
	lenientIDStatuses = []int{404, 404, 404, 404, 404, 404}
	// A limit capped at the page's maximum, an amount filter or a cursor
	// the client may write: any int64 from 0 up.
	nonNegativeStatuses = []int{200, 200, 200, 400, 400, 400}
	// An offset: at most 2^31.
	offsetStatuses = []int{200, 400, 400, 400, 400, 400}
	// A value with a small range, or an opaque cursor written by hand.
	refusedStatuses = []int{400, 400, 400, 400, 400, 400}
	// A page of the social API's, which reads what it cannot use as its
	// default and answers no 400.
	lenientStatuses = []int{200, 200, 200, 200, 200, 200}
)

// walkedStatuses are the answers of the walked parameters that are not
// path ids, and of the path ids that are not idStatuses, by "METHOD path
// parameter" (an opaque cursor's encoded values by "… cursor (encoded)").
var walkedStatuses = map[string][]int{
	"GET /api/v1/admin/chat/sessions limit":                                           nonNegativeStatuses,
	"GET /api/v1/admin/chat/sessions offset":                                          offsetStatuses,
	"GET /api/v1/admin/partners/{id}/deliveries limit":                                refusedStatuses,
	"GET /api/v1/admin/partners/{id}/deliveries cursor":                               {200, 200, 200, 400, 400, 400},
	"POST /api/v1/admin/partners/{id}/deliveries/{delivery_id}/redeliver delivery_id": refusedStatuses, // unknown_delivery, then invalid_id
	"GET /api/v1/admin/users limit":                                                   refusedStatuses,
	"GET /api/v1/admin/users cursor":                                                  refusedStatuses,
	"GET /api/v1/admin/users cursor (encoded)":                                        nonNegativeStatuses,
	"GET /api/v1/users/me/trades limit":                                               refusedStatuses,
	"GET /api/v1/users/me/trades cursor":                                              refusedStatuses,
	"GET /api/v1/users/me/trades cursor (encoded)":                                    nonNegativeStatuses,
	"GET /api/v1/users/me/withdrawals limit":                                          refusedStatuses, // 1 to 100
	"GET /api/v1/users/me/withdrawals cursor":                                         refusedStatuses, // a number is no cursor
	"GET /api/v1/users/me/withdrawals cursor (encoded)":                               nonNegativeStatuses,
	"GET /api/v1/admin/withdrawals limit":                                             refusedStatuses,
	"GET /api/v1/admin/withdrawals cursor":                                            refusedStatuses,
	"GET /api/v1/admin/withdrawals cursor (encoded)":                                  nonNegativeStatuses,
	"GET /api/v1/users/me/deposits limit":                                             refusedStatuses,
	"GET /api/v1/users/me/deposits cursor":                                            nonNegativeStatuses, // a deposit id
	"GET /api/v1/users/me/positions/closed limit":                                     nonNegativeStatuses,
	"GET /api/v1/users/me/positions/closed offset":                                    offsetStatuses,
	"GET /api/v1/admin/events limit":                                                  nonNegativeStatuses,
	"GET /api/v1/admin/events offset":                                                 offsetStatuses,
	"GET /api/v1/events limit":                                                        nonNegativeStatuses,
	"GET /api/v1/events offset":                                                       offsetStatuses,
	"GET /api/v1/users/me/following limit":                                            refusedStatuses, // 1 to 50
	"GET /api/v1/users/me/following cursor":                                           refusedStatuses, // a number is no cursor
	"GET /api/v1/events cursor":                                                       refusedStatuses, // a number is no cursor of the feed
	"GET /api/v1/leaderboard limit":                                                   refusedStatuses,
	"GET /api/v1/markets/{market_id}/quote amount_kopecks":                            refusedStatuses, // trade_refused past the bounds, then invalid_request
	"GET /api/v1/markets/{market_id}/quote shares":                                    refusedStatuses,
	"GET /api/v1/p2p/ads amount":                                                      nonNegativeStatuses,
	"GET /api/v1/p2p/ads max_payment_duration":                                        nonNegativeStatuses,
	"GET /api/v1/p2p/ads limit":                                                       nonNegativeStatuses,
	"GET /api/v1/p2p/ads offset":                                                      offsetStatuses,
	"GET /api/v1/p2p/ads/{id} id":                                                     lenientIDStatuses,
	"GET /api/v1/stream last_event_id":                                                refusedStatuses, // after the last event, or not an event id
	"GET /api/v1/events/{event_id}/comments event_id":                                 lenientIDStatuses,
	"POST /api/v1/events/{event_id}/comments event_id":                                lenientIDStatuses,
	"GET /api/v1/events/{event_id}/comments limit":                                    lenientStatuses,
	"GET /api/v1/events/{event_id}/comments offset":                                   lenientStatuses,
	"GET /api/v1/comments/{id}/replies id":                                            lenientIDStatuses,
	"GET /api/v1/comments/{id}/replies limit":                                         lenientStatuses,
	"GET /api/v1/comments/{id}/replies offset":                                        lenientStatuses,
	"PUT /api/v1/comments/{id}/reaction id":                                           lenientIDStatuses,
	"GET /api/v1/notifications limit":                                                 lenientStatuses,
	"GET /api/v1/notifications offset":                                                lenientStatuses,
	"POST /api/v1/notifications/{id}/read id":                                         lenientIDStatuses,
	"POST /api/v1/admin/markets/{id}/resolve id":                                      lenientIDStatuses,
	"POST /api/v1/events/{id}/active id":                                              lenientIDStatuses,
	"POST /api/v1/events/{id}/pools/{pool_id}/markets/{market_id}/close id":           lenientIDStatuses,
	"POST /api/v1/events/{id}/pools/{pool_id}/markets/{market_id}/close pool_id":      lenientIDStatuses,
	"POST /api/v1/events/{id}/pools/{pool_id}/markets/{market_id}/close market_id":    lenientIDStatuses,
	"GET /api/v1/admin/chat/sessions/{session_id}/messages session_id":                lenientIDStatuses,
	"POST /api/v1/admin/chat/sessions/{session_id}/messages session_id":               lenientIDStatuses,
	"POST /api/v1/admin/chat/sessions/{session_id}/close session_id":                  lenientIDStatuses,
	"GET /api/v1/partner/users/{external_user_id} external_user_id":                   lenientStatuses, // a user without an account
	// A number is no webhook secret: refused as any wrong secret is.
	"POST /api/v1/telegram/webhook/{secret} secret": {403, 403, 403, 403, 403, 403},
	// A slug of digits is a slug, one starting with a hyphen is not.
	"PUT /api/v1/admin/tags/{slug} slug": {200, 200, 200, 400, 200, 400},
	// Ids in bodies. The partner API answers TRADE_FAILED (400) for a
	// market that does not exist; a reply to a comment that does not
	// exist is 404, to -1 or a number past int64 400.
	"POST /api/v1/partner/bet market_id":                refusedStatuses,
	"POST /api/v1/partner/sell market_id":               refusedStatuses,
	"POST /api/v1/events/{event_id}/comments parent_id": {404, 404, 404, 400, 400, 400},
}

// walkedQuery are the query parameters that hold integers: pages' limits,
// offsets and cursors, amounts, and the stream's last event id.
var walkedQuery = []string{"limit", "offset", "cursor", "amount_kopecks", "shares", "amount", "max_payment_duration", "last_event_id"}

// bigWorld is what the walk's real ids name.
type bigWorld struct {
	*fuzzWorld
	key     apiKey
	comment apiComment
}

// pathIDs returns the real ids of path's parameters.
func (w *bigWorld) pathIDs(path string) map[string]string {
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	ids := map[string]string{"market_id": id(w.a1.ID), "pool_id": id(w.poolB.ID), "event_id": id(w.event.ID),
		"key_id": id(w.key.ID), "delivery_id": "1", "session_id": w.session, "external_user_id": "fz"}
	switch {
	case strings.HasPrefix(path, "/api/v1/events/{id}/pools/"):
		ids["id"], ids["market_id"] = id(w.event.ID), id(w.b1.ID)
	case strings.HasPrefix(path, "/api/v1/events/"):
		ids["id"] = id(w.event.ID)
	case strings.HasPrefix(path, "/api/v1/pools/"), strings.HasPrefix(path, "/api/v1/admin/pools/"):
		ids["id"] = id(w.poolA.ID)
	case strings.HasPrefix(path, "/api/v1/admin/markets/"):
		ids["id"] = id(w.a1.ID)
	case strings.HasPrefix(path, "/api/v1/admin/events/"):
		ids["id"] = id(w.event.ID)
	case strings.HasPrefix(path, "/api/v1/admin/partners/"):
		ids["id"] = id(w.pA.ID)
	case strings.HasPrefix(path, "/api/v1/comments/"):
		ids["id"] = id(w.comment.ID)
	case strings.HasPrefix(path, "/api/v1/auth/api-keys/"):
		ids["id"] = id(w.key.ID)
	default: // users, notifications, p2p ads: an id that exists or not, it is the other parameter that is walked
		ids["id"] = id(w.alice.id)
	}
	return ids
}

// walkedRequest is one request of the walk.
type walkedRequest struct {
	method, docPath string
	param, value    string
	// want is the status the value must be answered.
	want   int
	path   string // with its query
	token  string
	header map[string]string
	body   any
}

// requests are the walk's requests of every operation of the document,
// in the order of its paths and methods.
func (w *bigWorld) requests(t *testing.T) []walkedRequest {
	d, _ := openAPI(t)
	var out []walkedRequest
	paths := d.Paths.Map()
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		ops := paths[p].Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, method := range methods {
			op := ops[method]
			var walked []string
			inPath := map[string]bool{}
			for _, ref := range append(slices.Clone(paths[p].Parameters), op.Parameters...) {
				prm := ref.Value
				switch {
				case prm.In == "path" && prm.Name != "file":
					walked, inPath[prm.Name] = append(walked, prm.Name), true
				case prm.In == "query" && slices.Contains(walkedQuery, prm.Name):
					walked = append(walked, prm.Name)
				}
			}
			token, header := "", map[string]string{}
			if op.Security != nil {
				for _, req := range *op.Security {
					switch {
					case req["admin"] != nil:
						token = adminToken
					case req["partnerKey"] != nil:
						header["X-Partner-Key"] = w.pA.Key
					case req["bearer"] != nil && token == "":
						token = w.alice.token
					}
				}
			}
			for _, param := range walked {
				for i, v := range w.values(p, param) {
					ids := w.pathIDs(p)
					path := p
					q := url.Values{}
					switch p {
					case "/api/v1/markets/{market_id}/quote":
						q.Set("side", "YES")
						if param != "shares" {
							q.Set("amount_kopecks", "100")
						}
					case "/api/v1/markets/{market_id}/candles":
						q.Set("interval", "1h")
					}
					if inPath[param] {
						ids[param] = v
					} else {
						q.Set(param, v)
					}
					for name, id := range ids {
						path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(id))
					}
					if len(q) > 0 {
						path += "?" + q.Encode()
					}
					key := method + " " + p + " " + param
					if i >= len(extremeValues) {
						key += " (encoded)"
					}
					want, ok := walkedStatuses[key]
					if !ok && inPath[param] {
						want, ok = idStatuses, true
					}
					if !ok {
						t.Fatalf("%s: no answers in walkedStatuses", key)
					}
					out = append(out, walkedRequest{method: method, docPath: p, param: param, value: v,
						want: want[i%len(extremeValues)], path: path, token: token, header: header, body: w.body(method, p)})
				}
			}
		}
	}
	return out
}

// values are what param of the operation at path is sent: the extreme
// integers and, for an opaque cursor, the same integers in its encoding.
func (w *bigWorld) values(path, param string) []string {
	vs := slices.Clone(extremeValues)
	if param != "cursor" {
		return vs
	}
	for _, v := range extremeValues {
		switch path {
		case "/api/v1/users/me/trades":
			vs = append(vs, base64.RawURLEncoding.EncodeToString([]byte("t"+v)))
		case "/api/v1/admin/users":
			vs = append(vs, base64.RawURLEncoding.EncodeToString([]byte(v)))
		case "/api/v1/users/me/withdrawals", "/api/v1/admin/withdrawals":
			vs = append(vs, base64.RawURLEncoding.EncodeToString([]byte("w"+v)))
		}
	}
	return vs
}

// body is what the operation at path is sent: valid but for
// the walked parameter, so that it alone decides the answer.
func (w *bigWorld) body(method, path string) any {
	if method == http.MethodGet || method == http.MethodDelete {
		return nil
	}
	switch path {
	case "/api/v1/events/{id}/active":
		return map[string]any{"active": true}
	case "/api/v1/events/{id}/pools/{pool_id}/markets/{market_id}/close":
		return map[string]any{"won_side": "YES"}
	case "/api/v1/markets/{market_id}/buy":
		return map[string]any{"side": "YES", "amount_kopecks": 100}
	case "/api/v1/markets/{market_id}/sell":
		return map[string]any{"side": "YES", "shares": 1}
	case "/api/v1/markets/{market_id}/disputes":
		return map[string]any{"reason": "walked"}
	case "/api/v1/admin/users/{id}/credit":
		return map[string]any{"amount_kopecks": 100}
	case "/api/v1/admin/markets/{id}/resolve":
		return map[string]any{"won_side": "YES"}
	case "/api/v1/admin/events/{id}/active":
		return map[string]any{"is_active": true}
	case "/api/v1/admin/events/{id}/reject":
		return map[string]any{"reason": "Big ids", "refund": true}
	case "/api/v1/admin/withdrawals/{id}/reject":
		return map[string]any{"reason": "Big ids"}
	case "/api/v1/admin/withdrawals/{id}/approve":
		return map[string]any{"tx_hash": "0x" + strings.Repeat("0", 64)}
	case "/api/v1/admin/users/{id}/events":
		return map[string]any{"name": "Big ids", "pools": []any{map[string]any{"name": "Pool", "margin": 0, "lmsr_b_kopecks": 10000,
			"markets": []any{map[string]any{"name": "Yes?", "probability": 0.5}}}}}
	case "/api/v1/admin/partners/{id}/float":
		return map[string]any{"amount_kopecks": 100}
	case "/api/v1/admin/partners/{id}/webhook":
		return map[string]any{"url": "https://hooks.partner.example/predictkit"}
	case "/api/v1/admin/partners/{id}":
		return map[string]any{"disabled": false}
	case "/api/v1/pools/{id}/answers", "/api/v1/admin/pools/{id}/answers":
		return map[string]any{"name": "Big ids", "probability": 0.01}
	case "/api/v1/pools/{id}", "/api/v1/admin/pools/{id}":
		return map[string]any{"finish_at": time.Now().Add(90 * 24 * time.Hour).UTC().Format(time.RFC3339)}
	case "/api/v1/admin/p2p/users/{id}/stats":
		return map[string]any{"completed_orders": 1}
	case "/api/v1/admin/chat/sessions/{session_id}/messages":
		return map[string]any{"text": "hello"}
	case "/api/v1/comments/{id}/reaction":
		return map[string]any{"reaction": "like"}
	case "/api/v1/events/{event_id}/comments":
		return map[string]any{"content": "hello"}
	case "/api/v1/admin/tags/{slug}":
		return map[string]any{"name": "Numbers"}
	case "/api/v1/events/{id}":
		return map[string]any{"name": "Big ids"}
	case "/api/v1/events/{id}/amendments":
		return map[string]any{"text": "Big ids"}
	}
	return map[string]any{}
}

func TestEveryIDAndPageParameterTakesAnyInteger(t *testing.T) {
	var cases []storeCase
	for _, sc := range stores() {
		cases = append(cases, storeCase{"the " + sc.name + " store", sc.new})
	}
	if postgresStore != nil {
		// Real ids past 2^32: every statement the world's setup and the
		// walk run carries them.
		cases = append(cases, storeCase{"a postgres store whose ids start past 2^32", func(t *testing.T) server.Store {
			s := pgtest.New(t)
			restartSequences(t, s.DB(), 1<<32+1)
			return s
		}})
	}
	for _, sc := range cases {
		t.Run("on "+sc.name, func(t *testing.T) {
			w := walkExtremeValues(t, newHarness(t, sc.new(t)))
			if strings.Contains(sc.name, "past 2^32") && (w.a1.ID <= 1<<32 || w.pA.ID <= 1<<32 || w.alice.id <= 1<<32) {
				t.Errorf("the world's ids are not past 2^32: market %d, partner %d, user %d", w.a1.ID, w.pA.ID, w.alice.id)
			}
		})
	}
}

// restartSequences makes every bigint sequence of the store's schema
// start at n.
func restartSequences(t *testing.T, db *pgxpool.Pool, n int64) {
	t.Helper()
	_, err := db.Exec(context.Background(), fmt.Sprintf(`DO $$ DECLARE s record; BEGIN
		FOR s IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() AND max_value >= %[1]d LOOP
			EXECUTE format('ALTER SEQUENCE %%I RESTART WITH %[1]d', s.sequencename);
		END LOOP; END $$`, n))
	if err != nil {
		t.Fatalf("restart the sequences: %v", err)
	}
}

// walkExtremeValues builds a world on h and sends it the walk.
func walkExtremeValues(t *testing.T, h *harness) *bigWorld {
	w := &bigWorld{fuzzWorld: newFuzzWorld(t, h)}
	w.key = h.createKey(t, w.alice.token, "walk", "read")
	w.comment = h.postComment(t, w.alice.token, w.event.ID, "walked", 0)
	for _, r := range append(w.requests(t), w.bodyRequests()...) {
		name := fmt.Sprintf("%s %s with %s=%s is answered %d", r.method, r.docPath, r.param, r.value, r.want)
		t.Run(name, func(t *testing.T) {
			res := h.do(t, req{method: r.method, path: r.path, token: r.token, header: r.header, body: r.body})
			if res.status != r.want {
				t.Fatalf("%s %s answered %s, want %d", r.method, r.path, res, r.want)
			}
		})
	}
	return w
}

// bodyRequests are the requests whose body carries an id: each value is
// written in the JSON as is, a number.
func (w *bigWorld) bodyRequests() []walkedRequest {
	var out []walkedRequest
	for i, v := range extremeValues {
		for _, r := range []walkedRequest{
			{method: http.MethodPost, docPath: "/api/v1/partner/bet", param: "market_id", path: "/api/v1/partner/bet",
				body: fmt.Sprintf(`{"external_user_id":"walk","market_id":%s,"side":"yes","amount_kopecks":100,"client_bet_id":"walk-bet-%d"}`, v, i)},
			{method: http.MethodPost, docPath: "/api/v1/partner/sell", param: "market_id", path: "/api/v1/partner/sell",
				body: fmt.Sprintf(`{"external_user_id":"fz","market_id":%s,"side":"yes","shares":1,"client_bet_id":"walk-sell-%d"}`, v, i)},
			{method: http.MethodPost, docPath: "/api/v1/events/{event_id}/comments", param: "parent_id",
				path: commentsPath(w.event.ID), token: w.alice.token, body: fmt.Sprintf(`{"content":"reply","parent_id":%s}`, v)},
		} {
			r.value, r.want = v, walkedStatuses[r.method+" "+r.docPath+" "+r.param][i]
			if r.docPath == "/api/v1/partner/bet" || r.docPath == "/api/v1/partner/sell" {
				r.header = map[string]string{"X-Partner-Key": w.pA.Key}
			}
			out = append(out, r)
		}
	}
	return out
}
