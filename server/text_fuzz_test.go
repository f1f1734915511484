package server_test

// TestHostileTextIsNeverA5xx is the property test of the text rule: it
// sends hostile strings (NUL and the other control characters, lone
// surrogates, invalid UTF-8, bidirectional overrides, noncharacters, very
// long text, and random mixtures of them) into every text field of every
// route's body, every path parameter, the query parameters the routes
// read and the headers that reach a store, on PostgreSQL and on the
// memory store side by side. It checks that no answer is a 5xx, that the
// two stores answer alike, and that no accepted request stored a control
// character the field does not allow (a 2xx answer echoes what was
// stored).
//
// It needs PostgreSQL (PREDICTKIT_TEST_DATABASE_URL) and is skipped
// without it. Its random strings come from -textseed (the clock's when
// 0); a failure prints the seed.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/predictkit/predictkit/server"
)

var textSeed = flag.Uint64("textseed", 0, "seed of TestHostileTextIsNeverA5xx's random strings (0: from the clock)")

// hostile is a string to send, as bytes: lone surrogates are written as
// their three-byte WTF-8 form (ED A0 80 for U+D800), which jsonLiteral
// turns into a \uD800 escape; any other invalid byte stays raw.
type hostile struct{ name, s string }

// surrogate is the WTF-8 bytes of lone surrogate r (0xD800..0xDFFF).
func surrogate(r rune) string {
	return string([]byte{0xE0 | byte(r>>12), 0x80 | byte(r>>6)&0x3F, 0x80 | byte(r)&0x3F})
}

// fixedHostile is the corpus every run sends.
func fixedHostile() []hostile {
	return []hostile{
		{"NUL", "\x00"},
		{"a NUL inside text", "ab\x00cd"},
		{"SOH", "\x01"},
		{"BEL", "x\ay"},
		{"backspace", "x\by"},
		{"a tab", "x\ty"},
		{"a line feed", "x\ny"},
		{"a carriage return", "x\ry"},
		{"ESC", "x\x1b[31my"},
		{"US", "\x1f"},
		{"DEL", "x\x7fy"},
		{"NEL (C1)", "x\u0085y"},
		{"CSI (C1)", "x\u009by"},
		{"a lone high surrogate", "x" + surrogate(0xD800) + "y"},
		{"a lone low surrogate", surrogate(0xDFFF)},
		{"a reversed surrogate pair", surrogate(0xDC00) + surrogate(0xD800)},
		{"an RTL override", "\u202Eevil.exe"},
		{"bidi isolates", "\u2066x\u2069\u200F"},
		{"a zero-width joiner", "a\u200Db"},
		{"a BOM", "\uFEFFx"},
		{"noncharacters", "\uFFFE\uFFFF\U0010FFFF"},
		{"the line separator", "x\u2028y"},
		{"an invalid byte", "x\xffy"},
		{"an overlong NUL", "x\xc0\x80y"},
		{"a cut sequence", "x\xe2\x82"},
		{"an empty string", ""},
		{"blanks", "   "},
		{"a JSON-looking string", `","admin":true,"x":"`},
		{"SQL", "'; DROP TABLE users; --"},
		{"a percent escape", "%00%ff"},
		{"3000 bytes (past a btree entry)", strings.Repeat("ж", 1500)},
		{"100 kB", strings.Repeat("x", 100_000)},
		{"20,000 emoji", strings.Repeat("💥", 20_000)},
	}
}

// randomHostile is n random strings drawn from the classes above.
func randomHostile(r *rand.Rand, n int) []hostile {
	classes := []func() string{
		func() string { return string(rune(r.IntN(0x20))) },              // C0
		func() string { return string(rune(0x7F + r.IntN(0x21))) },       // DEL, C1
		func() string { return string(rune(0x20 + r.IntN(0x5F))) },       // printable ASCII
		func() string { return string(rune(0x410 + r.IntN(0x40))) },      // Cyrillic
		func() string { return string(rune(0x300 + r.IntN(0x70))) },      // combining marks
		func() string { return string(rune(0x200B + r.IntN(0x0F))) },     // zero-width, bidi marks and overrides
		func() string { return string(rune(0x2066 + r.IntN(4))) },        // bidi isolates
		func() string { return surrogate(rune(0xD800 + r.IntN(0x800))) }, // lone surrogates
		func() string { return string([]byte{byte(0x80 + r.IntN(0x80))}) },
		func() string { return string(rune(0xFFFE + r.IntN(2))) },
		func() string { return string(rune(0x1F300 + r.IntN(0x300))) }, // emoji
	}
	out := make([]hostile, 0, n)
	for i := range n {
		var b strings.Builder
		for range 1 + r.IntN(40) {
			b.WriteString(classes[r.IntN(len(classes))]())
		}
		s := b.String()
		if r.IntN(8) == 0 {
			s = strings.Repeat(s, 1+r.IntN(2000))
		}
		out = append(out, hostile{fmt.Sprintf("random %d", i), s})
	}
	return out
}

// jsonLiteral writes s as a JSON string: control characters, quotes and
// lone surrogates escaped, invalid bytes left raw (so that the body is not
// UTF-8).
func jsonLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1 && i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0:
			sr := rune(s[i]&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
			fmt.Fprintf(&b, `\u%04X`, sr)
			size = 3
		case r == utf8.RuneError && size == 1:
			b.WriteByte(s[i])
		case r < 0x20 || r >= 0x7F && r <= 0x9F || r == '"' || r == '\\':
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// percentEncode escapes every byte of s but the unreserved ones, as a
// client puts text in a path or a query.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// rawPathSegment escapes only what cannot stand in a request line at all
// (controls, space, '/', '?', '#', '%'), leaving bytes of 0x80 and above
// raw: what a careless client sends.
func rawPathSegment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7F || c == '/' || c == '?' || c == '#' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// credentials are the headers that let the caller through route's checks
// (the operator's, a partner's, the creator's or Alice's, with Alice's
// chat cookie).
func (w *fuzzWorld) credentials(route string) map[string]string {
	h := map[string]string{"Cookie": server.ChatCookie + "=" + w.chat.cookie}
	switch {
	case strings.Contains(route, "/admin/"):
		h["Authorization"] = "Bearer " + adminToken
	case strings.Contains(route, "/partner/"):
		h["X-Partner-Key"] = w.pA.Key
	case strings.Contains(route, "/events"), strings.Contains(route, "/pools/"):
		h["Authorization"] = "Bearer " + w.creator.token
	default:
		h["Authorization"] = "Bearer " + w.alice.token
	}
	return h
}

// pathParam is a valid value of path parameter name in w.
func (w *fuzzWorld) pathParam(route, name string) string {
	switch name {
	case ":session_id":
		return w.session
	case ":external_user_id":
		return "fz"
	case ":market_id":
		return fmt.Sprint(w.a1.ID)
	case ":pool_id":
		return fmt.Sprint(w.poolA.ID)
	case ":event_id":
		return fmt.Sprint(w.event.ID)
	case ":file":
		return "index.html"
	case ":slug":
		return "fuzz-tag"
	}
	switch {
	case strings.HasSuffix(route, "/admin/users/:id/events"): // the owner must be a creator
		return fmt.Sprint(w.creator.id)
	case strings.HasSuffix(route, "/events/:id/amendments"): // kept, so not on the listed event
		return fmt.Sprint(w.draft.ID)
	case strings.Contains(route, "/events/"):
		return fmt.Sprint(w.event.ID)
	case strings.Contains(route, "/partners/"):
		return fmt.Sprint(w.pA.ID)
	case strings.Contains(route, "/pools/"):
		return fmt.Sprint(w.poolA.ID)
	case strings.Contains(route, "/users/"):
		return fmt.Sprint(w.alice.id)
	}
	return "1"
}

// textRequest is one hostile request, built for a world.
type textRequest struct {
	target string // what is under test: the route and the field
	// allowed are the control characters an accepted request may echo.
	allowed func(rune) bool
	build   func(w *fuzzWorld, n int) fuzzRequest
}

func noControls(rune) bool { return false }

func lineBreaksAndTabs(r rune) bool { return r == '\n' || r == '\r' || r == '\t' }

// multiline are the fields that document line breaks and tabs.
var multiline = []string{"pools[0].rules", "pools[0].rules_ru", "content", "text", "text_ru", "instructions", "reason"}

// textRequests is every hostile request of the test, for the routes of
// the app and the values vs.
func textRequests(t *testing.T, routes []string, vs []hostile) []textRequest {
	t.Helper()
	var out []textRequest
	split := func(route string) (string, []string) {
		method, tpl, _ := strings.Cut(route, " ")
		return method, strings.Split(tpl, "/")
	}
	// path builds the route's path with value (already escaped) in place
	// of parameter at (or no parameter when at is -1), and the path the
	// OpenAPI document routes it by.
	path := func(w *fuzzWorld, route string, at int, value string) (string, string) {
		_, segs := split(route)
		doc := slices.Clone(segs)
		for i, s := range segs {
			if !strings.HasPrefix(s, ":") {
				continue
			}
			if i == at {
				segs[i], doc[i] = value, "x"
				continue
			}
			segs[i] = w.pathParam(route, s)
			doc[i] = segs[i]
		}
		return strings.Join(segs, "/"), strings.Join(doc, "/")
	}
	// Paths, queries and headers take the strings that fit in a request's
	// head: a longer one is refused before routing (431), which
	// TestRequestLimits covers, and app.Test cannot even send it.
	var short []hostile
	for _, v := range vs {
		if len(v.s) <= 1000 {
			short = append(short, v)
		}
	}
	bodies := map[string]bodyTarget{}
	for _, b := range bodyTargets {
		bodies[b.route] = b
	}
	validBody := func(w *fuzzWorld, route string, n int) []byte {
		b, ok := bodies[route]
		if !ok {
			return nil
		}
		return []byte(b.body(w, n, func(_, def string) string { return jsonLiteral(def) }))
	}
	for _, route := range routes {
		method, segs := split(route)
		if b, ok := bodies[route]; ok {
			for _, f := range b.fields {
				allowed := noControls
				if slices.Contains(multiline, f) {
					allowed = lineBreaksAndTabs
				}
				for _, v := range vs {
					for _, after := range []bool{false, true} {
						name := route + " body " + f + " = " + v.name
						if after {
							name += ", after a valid value"
						}
						out = append(out, textRequest{target: name, allowed: allowed, build: func(w *fuzzWorld, n int) fuzzRequest {
							p, doc := path(w, route, -1, "")
							body := b.body(w, n, func(field, def string) string {
								switch {
								case field != f:
									return jsonLiteral(def)
								case after:
									return jsonLiteral(def + v.s)
								}
								return jsonLiteral(v.s)
							})
							return fuzzRequest{route: route, method: method, path: p, docPath: doc, header: w.credentials(route), body: []byte(body)}
						}})
					}
				}
			}
		} else if method != http.MethodGet && !slices.Contains(noTextBody, route) {
			t.Errorf("route %s takes a body: list its text fields in bodyTargets, or the route in noTextBody", route)
		}
		for i, s := range segs {
			if !strings.HasPrefix(s, ":") || s == ":file" { // /docs/{file} looks up embedded files, no store
				continue
			}
			// A parameter that names something by text gets every string,
			// escaped and raw, alone and after a valid value. An integer
			// id gets each string once (escaped or raw in turn): any text
			// is refused as invalid_id before a store is asked.
			text := s == ":session_id" || s == ":external_user_id" || s == ":slug"
			for k, v := range short {
				if v.s == "" {
					continue // an empty segment is another route
				}
				for _, enc := range []struct {
					name string
					f    func(string) string
				}{{"escaped", percentEncode}, {"raw", rawPathSegment}} {
					if !text && (enc.name == "raw") != (k%2 == 1) {
						continue
					}
					out = append(out, textRequest{target: route + " path " + s + " (" + enc.name + ") = " + v.name, allowed: noControls, build: func(w *fuzzWorld, n int) fuzzRequest {
						p, doc := path(w, route, i, enc.f(v.s))
						return fuzzRequest{route: route, method: method, path: p, docPath: doc, header: w.credentials(route), body: validBody(w, route, n)}
					}})
					if !text {
						continue
					}
					out = append(out, textRequest{target: route + " path " + s + " (" + enc.name + ") = " + v.name + ", after a valid value", allowed: noControls, build: func(w *fuzzWorld, n int) fuzzRequest {
						p, doc := path(w, route, i, enc.f(w.pathParam(route, s)+v.s))
						return fuzzRequest{route: route, method: method, path: p, docPath: doc, header: w.credentials(route), body: validBody(w, route, n)}
					}})
				}
			}
		}
		for _, q := range queryTargets[route] {
			for _, v := range short {
				out = append(out, textRequest{target: route + " query " + q + " = " + v.name, allowed: noControls, build: func(w *fuzzWorld, n int) fuzzRequest {
					p, doc := path(w, route, -1, "")
					return fuzzRequest{route: route, method: method, path: p, docPath: doc, query: q + "=" + percentEncode(v.s), header: w.credentials(route)}
				}})
			}
		}
	}
	for k := range queryTargets {
		if !slices.Contains(routes, k) {
			t.Errorf("queryTargets names %s, which the app does not serve", k)
		}
	}
	for _, b := range bodyTargets {
		if !slices.Contains(routes, b.route) {
			t.Errorf("bodyTargets names %s, which the app does not serve", b.route)
		}
	}
	// The headers that reach a store (hashed or parsed, never stored as
	// sent): the Bearer token, the partner key, the chat cookie, the
	// language a chat session opens in, and the request id.
	for _, v := range short {
		if strings.ContainsAny(v.s, "\r\n") {
			continue // a header cannot hold them
		}
		for _, hd := range []struct{ route, path, name, prefix string }{
			{"GET /api/v1/auth/me", "/api/v1/auth/me", "Authorization", "Bearer "},
			{"GET /api/v1/partner/users/:external_user_id", "/api/v1/partner/users/fz", "X-Partner-Key", ""},
			{"GET /api/v1/chat/history", "/api/v1/chat/history", "Cookie", server.ChatCookie + "="},
			{"POST /api/v1/chat/session", "/api/v1/chat/session", "Accept-Language", ""},
			{"GET /api/v1/events", "/api/v1/events", "X-Request-ID", ""},
		} {
			method, _, _ := strings.Cut(hd.route, " ")
			out = append(out, textRequest{target: hd.route + " header " + hd.name + " = " + v.name, allowed: noControls, build: func(w *fuzzWorld, _ int) fuzzRequest {
				return fuzzRequest{route: hd.route, method: method, path: hd.path, docPath: hd.path, header: map[string]string{hd.name: hd.prefix + v.s}}
			}})
		}
	}
	return out
}

// storedControl is the first control character that is not allowed in
// the strings of a JSON answer, or -1.
func storedControl(body []byte, allowed func(rune) bool) rune {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return -1
	}
	var walk func(any) rune
	walk = func(v any) rune {
		switch x := v.(type) {
		case string:
			for _, r := range x {
				if unicode.IsControl(r) && !allowed(r) {
					return r
				}
			}
		case []any:
			for _, e := range x {
				if r := walk(e); r >= 0 {
					return r
				}
			}
		case map[string]any:
			for _, e := range x {
				if r := walk(e); r >= 0 {
					return r
				}
			}
		}
		return -1
	}
	return walk(v)
}

func TestHostileTextIsNeverA5xx(t *testing.T) {
	pg := newHarness(t, postgresStore(t), withConfig(noRateLimits)) // skipped without PostgreSQL
	mem := newHarness(t, memoryStore(), withConfig(noRateLimits))
	wp, wm := newFuzzWorld(t, pg), newFuzzWorld(t, mem)

	seed := *textSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	random := 4
	if testing.Short() {
		random = 2
	}
	vs := append(fixedHostile(), randomHostile(rand.New(rand.NewPCG(seed, seed)), random)...)
	var routes []string
	for _, r := range pg.app.GetRoutes(true) {
		if k := r.Method + " " + r.Path; r.Method != http.MethodHead && !slices.Contains(routes, k) {
			routes = append(routes, k)
		}
	}
	slices.Sort(routes)
	reqs := textRequests(t, routes, vs)
	t.Logf("%d requests on each store; random strings from -textseed=%d", len(reqs), seed)

	failures := 0
	for n, tr := range reqs {
		if failures >= 20 {
			t.Fatalf("stopping after %d failures (-textseed=%d)", failures, seed)
		}
		fp, fm := tr.build(wp, n), tr.build(wm, n)
		// PostgreSQL's answer is checked against the OpenAPI document;
		// the memory store's must equal it.
		rp, rm := pg.sendFuzz(t, fp), mem.sendUnchecked(t, fm)
		fail := func(format string, args ...any) {
			t.Errorf("%s (%s %s?%s): %s (-textseed=%d)", tr.target, fp.method, clip(fp.path), clip(fp.query), fmt.Sprintf(format, args...), seed)
			failures++
		}
		switch {
		case rp.status >= 500:
			fail("PostgreSQL answered %s", clip(rp.String()))
		case rm.status >= 500:
			fail("the memory store answered %s", clip(rm.String()))
		case rp.status != rm.status || rp.errorCode() != rm.errorCode():
			fail("the stores differ: PostgreSQL %s, memory %s", clip(rp.String()), clip(rm.String()))
		case rp.status < 300:
			for _, r := range []*response{rp, rm} {
				if c := storedControl(r.body, tr.allowed); c >= 0 {
					fail("accepted, and the answer holds %U: %s", c, clip(r.String()))
					break
				}
			}
		}
	}
}

// sendUnchecked sends fr through the app as sendFuzz does, without
// checking the answer against the OpenAPI document.
func (h *harness) sendUnchecked(t *testing.T, fr fuzzRequest) *response {
	t.Helper()
	hr := httptest.NewRequest(fr.method, "/", bytes.NewReader(fr.body))
	for k, v := range fr.header {
		hr.Header.Set(k, v)
	}
	if fr.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.URL = &url.URL{Opaque: fr.path, RawQuery: escapeQuery(fr.query)}
	hr.RequestURI = hr.URL.RequestURI()
	res, err := h.app.Test(hr, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", fr.method, fr.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: b}
}

// clip shortens s for a failure message.
func clip(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%q… (%d bytes)", s[:300], len(s))
	}
	return fmt.Sprintf("%q", s)
}
