package server_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

// streamTicket asks for a stream ticket with token.
func (h *harness) streamTicket(t *testing.T, token string) string {
	t.Helper()
	r := h.do(t, req{method: http.MethodPost, path: "/api/v1/stream/tickets", token: token})
	expect(t, r, http.StatusCreated, "")
	var tk struct {
		Ticket string `json:"ticket"`
	}
	r.decode(t, &tk)
	return tk.Ticket
}

// ends checks that c's stream ends within a few seconds (pings aside).
func (c *sseConn) ends(t *testing.T) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return
			}
			if m.comment == "" {
				t.Fatalf("got %v, want the stream to end", m)
			}
		case <-deadline:
			t.Fatal("the stream is still open 5 s later")
		}
	}
}

func resetPasswordRevokingKeys(token, next string, revoke bool) req {
	return req{method: http.MethodPost, path: "/api/v1/auth/password/reset",
		body: map[string]any{"token": token, "new_password": next, "revoke_api_keys": revoke}}
}

// TestPasswordChangeRevokes: a password reset or change ends what the old
// password gave besides access tokens: older reset tokens, stream
// tickets and the streams of the user's me topic, and, when the reset
// asks, the user's API keys.
func TestPasswordChangeRevokes(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h = streamHarness(t, h.store)
		meTicket := func(ticket string) string { return "topics=me&ticket=" + url.QueryEscape(ticket) }

		t.Run("a reset refuses the reset tokens and stream tickets issued before it, and ends the user's streams, not another's", func(t *testing.T) {
			ann, bo := h.register(t, "ann"), h.register(t, "bo")
			older, used := h.adminReset(t, ann.id), h.adminReset(t, ann.id)
			ticket, bosTicket := h.streamTicket(t, ann.token), h.streamTicket(t, bo.token)
			annStream := openStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + ann.token})
			bosStream := openStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + bo.token})

			expect(t, h.do(t, resetPassword(used.Token, "a brand new password")), http.StatusOK, "")

			expect(t, h.do(t, resetPassword(older.Token, "the attacker's password")), http.StatusBadRequest, "invalid_token")
			if _, res := tryStream(t, h, meTicket(ticket), nil); res == nil {
				t.Fatal("a stream ticket issued before the reset opened a stream")
			} else {
				expect(t, res, http.StatusUnauthorized, "unauthorized")
			}
			annStream.ends(t)
			bosStream.quiet(t, 300*time.Millisecond)
			openStream(t, h, meTicket(bosTicket), nil)

			tok := h.login(t, ann.email, "a brand new password")
			openStream(t, h, meTicket(h.streamTicket(t, tok)), nil)
		})

		t.Run("a change refuses the reset tokens and stream tickets issued before it, and ends the user's streams", func(t *testing.T) {
			cy := h.register(t, "cy")
			pending, ticket := h.adminReset(t, cy.id), h.streamTicket(t, cy.token)
			stream := openStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + cy.token})

			expect(t, h.do(t, changePassword(cy.token, "password-cy", "a brand new password")), http.StatusOK, "")

			expect(t, h.do(t, resetPassword(pending.Token, "the attacker's password")), http.StatusBadRequest, "invalid_token")
			if _, res := tryStream(t, h, meTicket(ticket), nil); res == nil {
				t.Fatal("a stream ticket issued before the change opened a stream")
			} else {
				expect(t, res, http.StatusUnauthorized, "unauthorized")
			}
			stream.ends(t)
			openStream(t, h, meTicket(h.streamTicket(t, cy.token)), nil) // the caller's token is kept
		})

		t.Run("revoke_api_keys revokes the user's API keys with the reset; without it they work", func(t *testing.T) {
			di, ed := h.register(t, "di"), h.register(t, "ed")
			diKey, edKey := h.createKey(t, di.token, "bot", "read"), h.createKey(t, ed.token, "bot", "read")
			me := func(key string) req { return req{method: http.MethodGet, path: "/api/v1/auth/me", token: key} }

			expect(t, h.do(t, resetPasswordRevokingKeys(h.adminReset(t, ed.id).Token, "ed's new password", false)), http.StatusOK, "")
			expect(t, h.do(t, me(edKey.Key)), http.StatusOK, "")

			expect(t, h.do(t, resetPasswordRevokingKeys(h.adminReset(t, di.id).Token, "di's new password", true)), http.StatusOK, "")
			expect(t, h.do(t, me(diKey.Key)), http.StatusUnauthorized, "UNAUTHORIZED")
			if ks := h.listKeys(t, h.login(t, di.email, "di's new password")); len(ks) != 0 {
				t.Fatalf("after the reset di still has keys %+v", ks)
			}
			expect(t, h.do(t, me(edKey.Key)), http.StatusOK, "")
		})

		t.Run("a reset refused changes nothing: the keys stay, even when it asks to revoke them", func(t *testing.T) {
			flo := h.register(t, "flo")
			key := h.createKey(t, flo.token, "bot", "read")
			r := h.adminReset(t, flo.id)
			expect(t, h.do(t, resetPasswordRevokingKeys(r.Token, "short", true)), http.StatusBadRequest, "invalid_request")
			expect(t, h.do(t, resetPasswordRevokingKeys("no such token", "a long enough password", true)), http.StatusBadRequest, "invalid_token")
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/auth/password/reset",
				body: map[string]any{"token": r.Token, "new_password": "a long enough password", "revoke_api_keys": "yes"}}), http.StatusBadRequest, "invalid_request")
			expect(t, h.do(t, req{method: http.MethodGet, path: "/api/v1/auth/me", token: key.Key}), http.StatusOK, "")
			if !h.signedIn(t, flo.token) {
				t.Fatal("a refused reset signed the user out")
			}
		})
	})
}
