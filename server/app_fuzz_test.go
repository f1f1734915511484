package server_test

// FuzzApp drives the whole application (server.Build on the memory store,
// with a creator, two traders with money, an active event, partners and
// a chat session) with random requests: a route from the app's own route
// table, random or valid ids in its path, random query parameters, valid
// or invalid credentials, and a body that is the route's example, a
// mutation of it, or random bytes. After every answer: no 5xx, the answer
// is one the OpenAPI document allows, and after every accepted money
// request the amounts it accepted were positive integers within bounds,
// the amounts it answered add up, and the operator's audit is sound (the
// ledger sums to zero, no balance is negative, escrows cover payouts).
//
// Each input is a program of up to maxFuzzSteps requests against a fresh
// world, so a failure reproduces from its input alone:
//
//	go test -run '^$' -fuzz '^FuzzApp$' -fuzztime 10m ./server/
//
// FuzzQueries sends random query strings to every route that reads one.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// maxFuzzSteps bounds one program.
const maxFuzzSteps = 12

// decider reads a program's choices from the fuzzer's bytes; past the end
// every choice is 0.
type decider struct {
	b []byte
	i int
}

func (d *decider) next() byte {
	if d.i >= len(d.b) {
		return 0
	}
	v := d.b[d.i]
	d.i++
	return v
}

func (d *decider) pick(n int) int { return int(d.next()) % n }

func (d *decider) more() bool { return d.i < len(d.b) }

// fuzzWorld is the world every program starts from.
type fuzzWorld struct {
	*world
	revoked      string
	pA, pB, pOff apiNewPartner
	chat         *chatClient
	session      string // the public id of Alice's chat session
	// draft is an event of the creator's that is never activated: the
	// hostile-text walk's amendments go there, out of the listed feed.
	draft apiEvent
}

func newFuzzWorld(t *testing.T, h *harness) *fuzzWorld {
	t.Helper()
	w := &fuzzWorld{world: newWorld(t, h)}
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": w.alice.email, "password": "password-alice"}})
	expect(t, r, http.StatusOK, "")
	var login struct {
		AccessToken string `json:"access_token"`
	}
	r.decode(t, &login)
	w.revoked = login.AccessToken
	expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/logout", token: w.revoked}), http.StatusOK, "")
	h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
	w.draft = h.createEvent(t, w.creator.token, twoPoolEvent("Draft"))
	w.pA = h.createPartner(t, "A", 1_000_000)
	w.pB = h.createPartner(t, "B", 1_000_000)
	w.pOff = h.createPartner(t, "Off", 1_000_000)
	h.setPartnerDisabled(t, w.pOff.ID, true)
	h.partnerBet(t, w.pA.Key, map[string]any{"external_user_id": "fz", "market_id": w.a1.ID, "side": "yes", "amount_kopecks": 10_000, "client_bet_id": "fz-1"})
	h.postComment(t, w.alice.token, w.event.ID, "first", 0)
	w.chat = &chatClient{token: w.alice.token}
	w.session = h.openChat(t, w.chat).SessionID
	return w
}

// fuzzHarness builds an app with no rate limits (programs are short, and
// a 429 would hide what comes after it).
func fuzzHarness(t *testing.T) *harness {
	return newHarness(t, memoryStore(), withConfig(noRateLimits))
}

func noRateLimits(c *server.Config) {
	c.RateLogin, c.RateTrade, c.RatePartner = server.Rate{}, server.Rate{}, server.Rate{}
	// The chat's and the comments' limits too: with them on, which of
	// two stores' answers is rate_limited depends on how fast each runs.
	c.RateChatSession, c.RateChatMessage, c.RateChatMessageSession = server.Rate{}, server.Rate{}, server.Rate{}
	c.RateChatOperator, c.RateChatOperatorSession = server.Rate{}, server.Rate{}
	c.RateComment, c.RateReaction = server.Rate{}, server.Rate{}
}

// fuzzRoutes is the app's route table, "METHOD path", sorted.
func fuzzRoutes(f *testing.F) []string {
	cfg := testConfig(memoryStore())
	noRateLimits(&cfg)
	app, err := server.Build(cfg)
	if err != nil {
		f.Fatal(err)
	}
	set := map[string]bool{}
	for _, r := range app.GetRoutes(true) {
		if r.Method != http.MethodHead {
			set[r.Method+" "+r.Path] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	oddIDs      = []string{"0", "-1", "9223372036854775807", "9223372036854775808", "abc", "1.5", "%20", "1e3", "%F0%9F%92%A5", "00000000000000000001", "me", "%zz"}
	oddMethods  = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
	queryKeys   = []string{"limit", "offset", "side", "amount_kopecks", "shares", "type", "fiat_currency", "amount", "payment_method", "max_payment_duration", "is_active", "author_nickname", "sort_by"}
	queryValues = []string{"", "0", "1", "-1", "1.5", "20", "101", "YES", "no", "buy", "sell", "best_price", "rating", "true", "false", "9223372036854775808", "abc", "%00", "1e3", "100000", "%zz", "RUB"}
	// oddJSON are values put in place of a body's fields.
	oddJSON = []string{`0`, `-1`, `1`, `1.5`, `1e3`, `-0`, `9223372036854775807`, `9223372036854775808`, `1e400`, `"1"`, `null`, `true`, `[]`, `{}`,
		`"YES"`, `"no"`, `""`, `"\u0000"`, `100000000000`, `100000000001`, `10000000000000`, `10000000000001`, `0.0000001`, `"💥"`, `"` + strings.Repeat("x", 300) + `"`, `-9223372036854775808`}
)

// field is one key of a body, its value as JSON.
type field struct{ key, value string }

// bodyTemplate is a route's example body.
func (w *fuzzWorld) bodyTemplate(route string, d *decider) []field {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	n := func(v int64) string { return fmt.Sprint(v) }
	switch route {
	case "POST /api/v1/auth/register":
		return []field{{"email", q(fmt.Sprintf("fz%d@x.co", d.pick(4)))}, {"password", q("password-fz")}, {"name", q("Fz")}, {"language", q("ru")}}
	case "POST /api/v1/auth/login":
		return []field{{"email", q(w.alice.email)}, {"password", q("password-alice")}}
	case "PATCH /api/v1/auth/me":
		return []field{{"name", q("Renamed")}, {"nickname", q("nick_" + n(int64(d.pick(3))))}, {"language", q("en")}, {"theme", q("dark")}, {"profile_hidden", "true"}, {"avatar_url", q("https://x.example/a.png")}}
	case "POST /api/v1/events":
		margins := []string{`0.03`, `0`, `-0.1`, `1`, `0.5`, `1e-9`, `"x"`}
		bs := []string{`100000`, `0`, `-1`, `1`, `1000000000000000`, `9223372036854775807`, `100`}
		probs := []string{`0.5`, `0`, `1`, `-0.1`, `1e-12`, `0.999999999999`, `0.01`, `0.99`}
		pool := fmt.Sprintf(`{"name":"P","margin":%s,"lmsr_b_kopecks":%s,"markets":[{"name":"M","probability":%s},{"name":"N","probability":%s}]}`,
			margins[d.pick(len(margins))], bs[d.pick(len(bs))], probs[d.pick(len(probs))], probs[d.pick(len(probs))])
		return []field{{"name", q("Fuzzed")}, {"pools", "[" + pool + "]"}}
	case "POST /api/v1/events/:id/active":
		return []field{{"is_active", "true"}}
	case "PATCH /api/v1/pools/:id", "PATCH /api/v1/admin/pools/:id":
		return []field{{"finish_at", q([]string{"2100-01-02T03:04:05Z", "2020-01-02T03:04:05Z", "2100-01-02T03:04:05+03:00"}[d.pick(3)])}}
	case "POST /api/v1/events/:id/pools/:pool_id/markets/:market_id/close":
		return []field{{"won_side", q([]string{"YES", "NO"}[d.pick(2)])}}
	case "POST /api/v1/markets/:market_id/buy":
		return []field{{"side", q("YES")}, {"amount_kopecks", "1000"}, {"use_bonus", "false"}, {"max_cost_kopecks", "0"}, {"min_shares", "0"}}
	case "POST /api/v1/markets/:market_id/sell":
		return []field{{"side", q("YES")}, {"shares", "100"}, {"min_payout_kopecks", "0"}}
	case "POST /api/v1/admin/users/:id/credit":
		return []field{{"amount_kopecks", "1000"}, {"bonus", "false"}}
	case "PATCH /api/v1/admin/users/:id":
		return []field{{"is_creator", "true"}, {"is_stats_viewer", "false"}}
	case "POST /api/v1/partner/bet":
		return []field{{"external_user_id", q("fz")}, {"market_id", n(w.a1.ID)}, {"side", q("yes")}, {"amount_kopecks", "1000"}, {"client_bet_id", q("c" + n(int64(d.pick(4))))}, {"max_cost_kopecks", "0"}}
	case "POST /api/v1/partner/sell":
		return []field{{"external_user_id", q("fz")}, {"market_id", n(w.a1.ID)}, {"side", q("yes")}, {"shares", "100"}, {"client_bet_id", q("c" + n(int64(d.pick(4))))}, {"min_payout_kopecks", "0"}}
	case "POST /api/v1/admin/partners":
		return []field{{"name", q("P")}}
	case "PATCH /api/v1/admin/partners/:id":
		return []field{{"disabled", "true"}}
	case "POST /api/v1/admin/partners/:id/float":
		return []field{{"amount_kopecks", "1000"}}
	case "POST /api/v1/events/:event_id/comments":
		return []field{{"content", q("hello")}, {"parent_id", "1"}}
	case "PUT /api/v1/comments/:id/reaction":
		return []field{{"reaction", q([]string{"like", "dislike", "none"}[d.pick(3)])}}
	case "POST /api/v1/chat/session":
		return []field{{"language", q("ru")}}
	case "POST /api/v1/chat/messages", "POST /api/v1/admin/chat/sessions/:session_id/messages":
		return []field{{"text", q("how do I withdraw")}}
	case "POST /api/v1/admin/p2p/ads":
		return []field{{"user_id", n(w.alice.id)}, {"type", q("sell")}, {"fiat_currency", q("RUB")}, {"exchange_rate", "100"}, {"min_amount", "1000"},
			{"max_amount", "50000"}, {"remaining_amount", "50000"}, {"payment_methods", `["SBP"]`}, {"payment_duration", "15"}, {"instructions", q("x")}}
	case "PATCH /api/v1/admin/p2p/ads/:id":
		return []field{{"is_active", "false"}, {"moderation_status", q("approved")}}
	case "PUT /api/v1/admin/p2p/users/:id/stats":
		return []field{{"completed_orders", "3"}, {"rating_count", "2"}, {"rating_sum", "9"}}
	}
	return nil
}

// body writes the request body: the template, a mutation of it, random
// bytes, or nothing.
func (w *fuzzWorld) body(route string, d *decider) []byte {
	tpl := w.bodyTemplate(route, d)
	switch d.pick(4) {
	case 0:
		return encodeFields(tpl)
	case 1:
		var out []field
		for _, f := range tpl {
			switch d.pick(6) {
			case 3:
				out = append(out, field{f.key, oddJSON[d.pick(len(oddJSON))]})
			case 4: // dropped
			case 5:
				out = append(out, f, field{f.key, oddJSON[d.pick(len(oddJSON))]})
			default:
				out = append(out, f)
			}
		}
		if d.pick(8) == 7 {
			out = append(out, field{"extra", oddJSON[d.pick(len(oddJSON))]})
		}
		return encodeFields(out)
	case 2:
		b := make([]byte, d.pick(64))
		for i := range b {
			b[i] = d.next()
		}
		return b
	}
	return nil
}

func encodeFields(fs []field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(f.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// pathValue is a value for path parameter name: mostly a small id (a
// fresh world's ids are small), sometimes an odd one.
func (w *fuzzWorld) pathValue(name string, d *decider) string {
	c := d.pick(12)
	switch name {
	case ":session_id":
		return []string{w.session, "cs_unknown", "%zz", "x"}[c%4]
	case ":external_user_id":
		return []string{"fz", "nobody", "%E2%82%AC", "%zz", strings.Repeat("x", 300), "a%2Fb"}[c%6]
	case ":file":
		return []string{"docs.css", "index.html", "nope", "..%2F..%2Fgo.mod"}[c%4]
	}
	if c < 8 {
		return fmt.Sprint(c + 1)
	}
	return oddIDs[d.pick(len(oddIDs))]
}

// fuzzRequest is one request of a program.
type fuzzRequest struct {
	route           string // "METHOD template" it was made from
	method, path    string // path as sent, possibly with odd escapes
	docPath, query  string
	header          map[string]string
	body            []byte
	sanitizedParams bool
}

func (w *fuzzWorld) request(routes []string, d *decider) fuzzRequest {
	route := routes[d.pick(len(routes))]
	method, tpl, _ := strings.Cut(route, " ")
	fr := fuzzRequest{route: route, method: method, header: map[string]string{}}
	if d.pick(16) == 15 {
		fr.method = oddMethods[d.pick(len(oddMethods))]
	}
	segs, docSegs := strings.Split(tpl, "/"), strings.Split(tpl, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = w.pathValue(s, d)
			docSegs[i] = segs[i]
			if strings.ContainsAny(segs[i], "%") {
				docSegs[i] = "x"
			}
		}
	}
	fr.path, fr.docPath = strings.Join(segs, "/"), strings.Join(docSegs, "/")
	var q []string
	for range d.pick(4) {
		q = append(q, queryKeys[d.pick(len(queryKeys))]+"="+queryValues[d.pick(len(queryValues))])
	}
	fr.query = strings.Join(q, "&")
	switch d.pick(10) {
	case 1:
		fr.header["Authorization"] = "Bearer " + w.alice.token
	case 2:
		fr.header["Authorization"] = "Bearer " + w.bob.token
	case 3:
		fr.header["Authorization"] = "Bearer " + w.creator.token
	case 4:
		fr.header["Authorization"] = "Bearer " + adminToken
	case 5:
		fr.header["Authorization"] = "Bearer garbage-token-0123456789"
	case 6:
		fr.header["Authorization"] = "Bearer "
	case 7:
		fr.header["Authorization"] = "Bearer " + w.revoked
	case 8:
		fr.header["Authorization"] = "Basic YWxhZGRpbjpvcGVuc2VzYW1l"
	case 9:
		fr.header["Authorization"] = "bearer " + w.alice.token
	}
	switch d.pick(5) {
	case 1:
		fr.header["X-Partner-Key"] = w.pA.Key
	case 2:
		fr.header["X-Partner-Key"] = w.pB.Key
	case 3:
		fr.header["X-Partner-Key"] = w.pOff.Key
	case 4:
		fr.header["X-Partner-Key"] = "pk_garbage"
	}
	switch d.pick(4) {
	case 1:
		fr.header["Cookie"] = server.ChatCookie + "=" + w.chat.cookie
	case 2:
		fr.header["Cookie"] = server.ChatCookie + "=garbage"
	case 3:
		fr.header["Cookie"] = server.ChatCookie + "="
	}
	if d.pick(32) == 31 {
		fr.header["Content-Encoding"] = "gzip"
	}
	if fr.method != http.MethodGet {
		fr.body = w.body(route, d)
	}
	return fr
}

// escapeQuery percent-encodes the bytes of raw that cannot stand in a
// request line, keeping '%', '&' and '=' as they are.
func escapeQuery(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c <= ' ' || c >= 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sendFuzz sends fr through the app and validates the answer against the
// document as an answer of the route it was made from.
func (h *harness) sendFuzz(t *testing.T, fr fuzzRequest) *response {
	t.Helper()
	query := escapeQuery(fr.query)
	docURL := fr.docPath
	if query != "" {
		if _, err := url.ParseQuery(query); err == nil {
			docURL += "?" + query
		}
	}
	hr := httptest.NewRequest(fr.method, docURL, bytes.NewReader(fr.body))
	for k, v := range fr.header {
		hr.Header.Set(k, v)
	}
	if fr.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	sent := hr.Clone(hr.Context())
	sent.Body = io.NopCloser(bytes.NewReader(fr.body))
	sent.URL = &url.URL{Opaque: fr.path, RawQuery: query}
	sent.RequestURI = sent.URL.RequestURI()
	res, err := h.app.Test(sent, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", fr.method, fr.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp := &response{status: res.StatusCode, header: res.Header, body: b}
	if _, encoded := fr.header["Content-Encoding"]; encoded {
		// Refused before routing, whatever the method and path (the
		// document's rule for every request).
		if resp.status != http.StatusUnsupportedMediaType || resp.errorCode() != "unsupported_content_encoding" {
			t.Fatalf("%s %s with a Content-Encoding answered %s", fr.method, fr.path, resp)
		}
		return resp
	}
	h.validate(t, req{method: fr.method, path: fr.path}, hr, resp)
	return resp
}

var positiveInteger = regexp.MustCompile(`^[1-9][0-9]*$`)

// topLevel reads the top-level keys of a JSON object body with their raw
// values, in order and with repeats (nil when it is not an object).
func topLevel(body []byte) []field {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []field
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		key, _ := k.(string)
		out = append(out, field{key, string(v)})
	}
	return out
}

// moneyRoutes are the routes that move money, with the body field that
// says how much and its largest accepted value.
var moneyRoutes = map[string]struct {
	amount string
	max    int64
}{
	"POST /api/v1/markets/:market_id/buy":                             {"amount_kopecks", 100_000_000_000},
	"POST /api/v1/markets/:market_id/sell":                            {"shares", 100_000_000_000},
	"POST /api/v1/partner/bet":                                        {"amount_kopecks", 100_000_000_000},
	"POST /api/v1/partner/sell":                                       {"shares", 100_000_000_000},
	"POST /api/v1/admin/users/:id/credit":                             {"amount_kopecks", 10_000_000_000_000},
	"POST /api/v1/admin/partners/:id/float":                           {"amount_kopecks", 10_000_000_000_000},
	"POST /api/v1/events/:id/pools/:pool_id/markets/:market_id/close": {},
}

// checkAnswer applies the invariants to one answer.
func (w *fuzzWorld) checkAnswer(t *testing.T, h *harness, fr fuzzRequest, r *response) {
	t.Helper()
	if r.status >= 500 {
		t.Fatalf("%s %s?%s %v %q answered %s", fr.method, fr.path, fr.query, fr.header, fr.body, r)
	}
	m, isMoney := moneyRoutes[fr.route]
	if !isMoney || fr.method != strings.Fields(fr.route)[0] || r.status >= 300 {
		return
	}
	if m.amount != "" {
		fields := topLevel(fr.body)
		seen := map[string]bool{}
		var amount string
		for _, f := range fields {
			if seen[f.key] {
				t.Fatalf("%s accepted a body with %q twice: %s → %s", fr.route, f.key, fr.body, r)
			}
			seen[f.key] = true
			if f.key == m.amount {
				amount = f.value
			}
		}
		n, err := strconv.ParseInt(amount, 10, 64)
		if !positiveInteger.MatchString(amount) || err != nil || n < 1 || n > m.max {
			t.Fatalf("%s accepted %s %q: %s → %s", fr.route, m.amount, amount, fr.body, r)
		}
		var out map[string]any
		d := json.NewDecoder(bytes.NewReader(r.body))
		d.UseNumber()
		if err := d.Decode(&out); err != nil {
			t.Fatalf("%s answered %s: %v", fr.route, r, err)
		}
		num := func(k string) int64 {
			v, ok := out[k].(json.Number)
			if !ok {
				t.Fatalf("%s answered %s without %s", fr.route, r, k)
			}
			i, err := v.Int64()
			if err != nil {
				t.Fatalf("%s answered %s with %s %v", fr.route, r, k, v)
			}
			return i
		}
		bad := func(what string) { t.Fatalf("%s %s: %s → %s", fr.route, what, fr.body, r) }
		switch fr.route {
		case "POST /api/v1/markets/:market_id/buy":
			if c := num("cost_kopecks"); c < 1 || c > n || num("shares") < 1 || num("fee_kopecks") < 0 || num("balance") < 0 || num("bonus_balance") < 0 {
				bad("answered amounts that do not add up")
			}
		case "POST /api/v1/markets/:market_id/sell":
			if num("shares") != n || num("payout_kopecks") < 0 || num("fee_kopecks") < 0 || num("balance") < 0 {
				bad("answered amounts that do not add up")
			}
		case "POST /api/v1/partner/bet":
			if c := num("cost_kopecks"); c < 1 || c > n || num("shares_delta") < 1 {
				bad("answered amounts that do not add up")
			}
		case "POST /api/v1/partner/sell":
			if num("shares_delta") != -n || num("payout_kopecks") < 0 {
				bad("answered amounts that do not add up")
			}
		case "POST /api/v1/admin/users/:id/credit":
			if num("balance") < 0 || num("bonus_balance") < 0 {
				bad("answered a negative balance")
			}
		case "POST /api/v1/admin/partners/:id/float":
			if num("float_kopecks") < n {
				bad("answered a float smaller than the amount funded")
			}
		}
	}
	w.audit(t, h, fr)
}

// audit asks the operator's audit and fails t unless it is sound.
func (w *fuzzWorld) audit(t *testing.T, h *harness, after fuzzRequest) {
	t.Helper()
	if ok, _, problems := h.audit(t); !ok {
		t.Fatalf("after %s %s %q the audit fails: %v", after.method, after.path, after.body, problems)
	}
}

func FuzzApp(f *testing.F) {
	routes := fuzzRoutes(f)
	index := func(route string) byte {
		i := slices.Index(routes, route)
		if i < 0 {
			f.Fatalf("no route %s", route)
		}
		return byte(i)
	}
	// Hand-written programs: a step is the route, then the choices in the
	// order request() reads them (method 0, path values, query count,
	// Authorization, X-Partner-Key, cookie, encoding, body mode, ...).
	buy, sell := index("POST /api/v1/markets/:market_id/buy"), index("POST /api/v1/markets/:market_id/sell")
	bet, psell := index("POST /api/v1/partner/bet"), index("POST /api/v1/partner/sell")
	credit, closeRoute := index("POST /api/v1/admin/users/:id/credit"), index("POST /api/v1/events/:id/pools/:pool_id/markets/:market_id/close")
	for _, p := range [][]byte{
		{buy, 0, 0, 0, 1, 0, 0, 0, 0},                                              // Alice buys on market 1 with the example body
		{sell, 0, 0, 0, 1, 0, 0, 0, 0},                                             // Alice sells 100 shares
		{buy, 0, 0, 0, 1, 0, 0, 0, 1, 0, 3, 1, 0, 0, 0},                            // a buy whose amount is replaced
		{buy, 0, 0, 0, 1, 0, 0, 0, 1, 0, 5, 18, 0, 0, 0},                           // a buy with amount_kopecks twice
		{bet, 0, 0, 0, 1, 0, 0, 0, 0},                                              // partner A bets
		{psell, 0, 0, 0, 1, 0, 0, 0, 0},                                            // partner A sells
		{credit, 0, 1, 0, 4, 0, 0, 0, 1, 3, 4},                                     // the operator credits an odd amount
		{closeRoute, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, buy, 0, 0, 0, 1, 0, 0, 0, 0}, // the creator closes market 1, then Alice buys on it
		{buy, 0, 0, 0, 1, 0, 0, 0, 2, 7, '{', '"', 's', '"', ':', '1', '}'},
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, program []byte) {
		h := fuzzHarness(t)
		w := newFuzzWorld(t, h)
		d := &decider{b: program}
		var last fuzzRequest
		for step := 0; step < maxFuzzSteps && d.more(); step++ {
			fr := w.request(routes, d)
			w.checkAnswer(t, h, fr, h.sendFuzz(t, fr))
			last = fr
		}
		w.audit(t, h, last)
	})
}

// FuzzQueries sends a random query string to a route that reads one, as
// a caller who may read it. Nothing changes state, so one world serves
// every input.
func FuzzQueries(f *testing.F) {
	type target struct{ path, auth string }
	var (
		once    sync.Once
		h       *harness
		targets []target
	)
	setup := func(t *testing.T) {
		h = fuzzHarness(t)
		w := newFuzzWorld(t, h)
		targets = []target{
			{fmt.Sprintf("/api/v1/markets/%d/quote", w.a1.ID), ""},
			{"/api/v1/events", ""},
			{"/api/v1/users/me/positions/closed", w.alice.token},
			{fmt.Sprintf("/api/v1/events/%d/comments", w.event.ID), w.alice.token},
			{"/api/v1/comments/1/replies", ""},
			{"/api/v1/notifications", w.alice.token},
			{"/api/v1/p2p/ads", ""},
			{"/api/v1/admin/chat/sessions", adminToken},
			{fmt.Sprintf("/api/v1/markets/%d/candles", w.a1.ID), ""},
		}
	}
	for i := range 9 {
		for _, s := range []string{"", "limit=20&offset=0", "limit=0", "limit=101", "limit=-1", "offset=99999999999999999999", "side=YES&amount_kopecks=10000",
			"side=NO&shares=5000", "side=YES&amount_kopecks=1&shares=1", "type=buy&sort_by=best_price&amount=1000", "limit=%zz", "limit=1e3&limit=2",
			"interval=1m", "interval=1d&from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59Z", "interval=5m&from=2024-03-10T00:00:00%2B03:00", "interval=1h&to=2024-02-30T00:00:00Z"} {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, query string) {
		once.Do(func() { setup(t) })
		if h == nil {
			t.Fatal("the world could not be built")
		}
		tg := targets[int(which)%len(targets)]
		fr := fuzzRequest{route: "GET " + tg.path, method: http.MethodGet, path: tg.path, docPath: tg.path, query: query, header: map[string]string{}}
		if tg.auth != "" {
			fr.header["Authorization"] = "Bearer " + tg.auth
		}
		r := h.sendFuzz(t, fr)
		if r.status >= 500 {
			t.Fatalf("GET %s?%s answered %s", tg.path, query, r)
		}
		if r.status == http.StatusOK && !strings.HasSuffix(tg.path, "/quote") {
			var page map[string]json.RawMessage
			r.decode(t, &page)
			for k, v := range page {
				var items []json.RawMessage
				if json.Unmarshal(v, &items) == nil && len(items) > 100 {
					t.Fatalf("GET %s?%s answered %d %s", tg.path, query, len(items), k)
				}
			}
		}
	})
}
