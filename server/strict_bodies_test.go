package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// doTyped sends r with exactly the Content-Type given (none when
// contentType is nil), whatever its body, and checks the answer against
// the OpenAPI document as h.do does.
func (h *harness) doTyped(t *testing.T, r req, contentType *string) *response {
	t.Helper()
	raw, _ := r.body.(string)
	hr := httptest.NewRequest(r.method, r.path, bytes.NewReader([]byte(raw)))
	hr.Header.Del("Content-Type")
	if contentType != nil {
		hr.Header.Set("Content-Type", *contentType)
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	res, err := h.app.Test(hr, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	resp := &response{status: res.StatusCode, header: res.Header, body: out}
	h.validate(t, r, hr, resp)
	return resp
}

func ptr(s string) *string { return &s }

// TestBodiesMustBeDeclaredJSON: a page of another site can post
// text/plain, a form or multipart to any address without asking the
// server first (no CORS preflight), never application/json. Every body
// that is not declared as JSON is 415 unsupported_media_type and changes
// nothing, on every kind of route that reads one.
func TestBodiesMustBeDeclaredJSON(t *testing.T) {
	h := newHarness(t, memoryStore())
	w := newWorld(t, h)
	bookie := h.createPartner(t, "Bookie", 1_000_000)
	buyPath := fmt.Sprintf("/api/v1/markets/%d/buy", w.a1.ID)
	buyBody := `{"side":"YES","amount_kopecks":1000}`

	// Each write route, with a body it would accept as JSON, and what
	// shows that nothing changed.
	type state struct {
		alice        apiProfile
		trades       int
		comments     int
		chatSessions int
	}
	snapshot := func() state {
		return state{alice: h.me(t, w.alice.token), trades: h.tradeCount(t, w.a1.ID, w.a2.ID),
			comments: len(h.comments(t, commentsPath(w.event.ID), "")), chatSessions: len(h.chatSessionsAll(t))}
	}
	routes := []struct {
		name string
		r    req
	}{
		{"registration", req{method: http.MethodPost, path: "/api/v1/auth/register",
			body: `{"email":"mallory@test.predictkit","password":"password-mallory","name":"Mallory"}`}},
		{"login", req{method: http.MethodPost, path: "/api/v1/auth/login", body: `{"email":"` + w.alice.email + `","password":"password-alice"}`}},
		{"a buy", req{method: http.MethodPost, path: buyPath, token: w.alice.token, body: buyBody}},
		{"a comment", req{method: http.MethodPost, path: commentsPath(w.event.ID), token: w.alice.token, body: `{"content":"hello"}`}},
		{"a profile change", req{method: http.MethodPatch, path: "/api/v1/auth/me", token: w.alice.token, body: `{"name":"Mallory"}`}},
		{"an event hidden (a body read leniently)", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/events/%d/active", w.event.ID),
			token: w.creator.token, body: `{"is_active":false}`}},
		{"a partner's bet", req{method: http.MethodPost, path: "/api/v1/partner/bet", header: map[string]string{"X-Partner-Key": bookie.Key},
			body: fmt.Sprintf(`{"external_user_id":"u1","market_id":%d,"side":"yes","amount_kopecks":1000,"client_bet_id":"b1"}`, w.a2.ID)}},
		{"opening a chat session (an optional body)", req{method: http.MethodPost, path: "/api/v1/chat/session", body: `{"lang":"en"}`}},
		{"an operator's credit", req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/admin/users/%d/credit", w.alice.id),
			token: adminToken, body: `{"amount_kopecks":500}`}},
		{"a body on a route that reads none (logout)", req{method: http.MethodPost, path: "/api/v1/auth/logout", token: w.alice.token, body: `{}`}},
	}
	types := []*string{ptr("text/plain"), ptr("text/plain;charset=UTF-8"), ptr("application/x-www-form-urlencoded"),
		ptr("multipart/form-data; boundary=x"), ptr("text/json"), ptr("application/jsonp"), nil}
	for _, rt := range routes {
		for _, ct := range types {
			name := "no Content-Type"
			if ct != nil {
				name = "Content-Type " + *ct
			}
			t.Run(rt.name+" with "+name+" is 415 unsupported_media_type and changes nothing", func(t *testing.T) {
				before := snapshot()
				rq := rt.r
				if ct != nil && strings.HasPrefix(*ct, "multipart/") {
					// A form a page would post: fasthttp reads (and
					// refuses) a malformed one before any route.
					rq.body = "--x\r\nContent-Disposition: form-data; name=\"json\"\r\n\r\n" + rt.r.body.(string) + "\r\n--x--\r\n"
				}
				r := h.doTyped(t, rq, ct)
				expect(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
				if d := r.errorDetail(t); d == "" {
					t.Error("the answer does not say what is wrong")
				}
				for _, c := range (&http.Response{Header: r.header}).Cookies() {
					t.Errorf("the answer set a cookie: %v", c)
				}
				after := snapshot()
				if after.alice.Balance != before.alice.Balance || after.alice.Name != before.alice.Name ||
					len(after.alice.Positions) != len(before.alice.Positions) || after.trades != before.trades ||
					after.comments != before.comments || after.chatSessions != before.chatSessions {
					t.Errorf("something changed: %+v → %+v", before, after)
				}
			})
		}
	}
	t.Run("the refused registration made no account and the refused logout revoked nothing", func(t *testing.T) {
		expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/login",
			body: map[string]any{"email": "mallory@test.predictkit", "password": "password-mallory"}}), http.StatusUnauthorized, "invalid_credentials")
		h.me(t, w.alice.token)
		r := h.do(t, req{method: http.MethodGet, path: fmt.Sprintf("/api/v1/events/%d", w.event.ID)})
		expect(t, r, http.StatusOK, "")
		var ev apiEvent
		r.decode(t, &ev)
		if !ev.IsActive {
			t.Error("the refused request hid the event")
		}
	})

	t.Run("an empty body declared as text/plain is 415 where the route reads a body", func(t *testing.T) {
		before := h.me(t, w.alice.token).Balance
		expect(t, h.doTyped(t, req{method: http.MethodPost, path: buyPath, token: w.alice.token}, ptr("text/plain")),
			http.StatusUnsupportedMediaType, "unsupported_media_type")
		if after := h.me(t, w.alice.token).Balance; after != before {
			t.Errorf("balance %d → %d", before, after)
		}
	})
	t.Run("no body and no Content-Type where a body is needed is still 400 invalid_request", func(t *testing.T) {
		expect(t, h.doTyped(t, req{method: http.MethodPost, path: buyPath, token: w.alice.token}, nil), http.StatusBadRequest, "invalid_request")
	})

	for _, ct := range []string{"application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON", " application/json "} {
		t.Run("a buy with Content-Type "+ct+" trades", func(t *testing.T) {
			before := h.me(t, w.bob.token).Balance
			r := h.doTyped(t, req{method: http.MethodPost, path: buyPath, token: w.bob.token, body: buyBody}, ptr(ct))
			expect(t, r, http.StatusOK, "")
			if after := h.me(t, w.bob.token).Balance; after != before-1000 {
				t.Errorf("balance %d → %d after a buy of 1000", before, after)
			}
		})
	}

	t.Run("routes without a body work without a Content-Type, or with any type and no body", func(t *testing.T) {
		u := h.register(t, "leaver")
		expect(t, h.doTyped(t, req{method: http.MethodPost, path: "/api/v1/notifications/read-all", token: u.token}, nil), http.StatusOK, "")
		expect(t, h.doTyped(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: u.token}, ptr("text/plain")), http.StatusOK, "")
		expect(t, h.doTyped(t, req{method: http.MethodDelete, path: "/api/v1/auth/session"}, nil), http.StatusNoContent, "")
		expect(t, h.doTyped(t, req{method: http.MethodPost, path: "/api/v1/auth/logout", token: u.token}, nil), http.StatusOK, "")
		expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: u.token}), http.StatusUnauthorized, "UNAUTHORIZED")
	})
	t.Run("an optional body may be left out", func(t *testing.T) {
		r := h.doTyped(t, req{method: http.MethodPost, path: "/api/v1/chat/session"}, nil)
		expect(t, r, http.StatusOK, "")
		if chatCookie(t, r).Value == "" {
			t.Error("no chat session")
		}
	})
}
