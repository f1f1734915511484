package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// TestLoginFailuresPerAccount: failed passwords are counted per account
// (the e-mail a login names), whatever the client's address, so that an
// attacker with many addresses cannot guess one account's password at
// all of their rates. The limits by address are left at their defaults:
// each attempt below comes from an address of its own.
func TestLoginFailuresPerAccount(t *testing.T) {
	addr := 0
	// next is an address no attempt has come from yet.
	next := func() string {
		addr++
		return fmt.Sprintf("198.51.%d.%d", addr/250, addr%250+1)
	}
	login := func(email, password string) req {
		return fromAddr(next(), req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": password}})
	}
	session := func(email, password string) req {
		return fromAddr(next(), req{method: http.MethodPost, path: "/api/v1/auth/session", body: map[string]any{"email": email, "password": password}})
	}
	// fail sends n wrong passwords for email, one a minute, each refused
	// as wrong.
	fail := func(t *testing.T, h *harness, clk *clock, email string, n int) {
		t.Helper()
		for i := range n {
			expect(t, h.do(t, login(email, fmt.Sprintf("wrong password %d", i))), http.StatusUnauthorized, "invalid_credentials")
			clk.advance(time.Minute)
		}
	}

	t.Run("the eleventh attempt in 15 minutes is 429 from any address, the right password too, until the first failure is 15 minutes old", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, nil)
		ann := h.register(t, "ann")
		fail(t, h, clk, ann.email, 10) // failures at 0..9 minutes; now 10 minutes
		expectLimited(t, h.do(t, login(ann.email, "another guess")), "300")
		expectLimited(t, h.do(t, login(ann.email, "password-ann")), "300")
		expectLimited(t, h.do(t, login(strings.ToUpper(ann.email)+" ", "password-ann")), "300")
		expectLimited(t, h.do(t, session(ann.email, "password-ann")), "300")
		clk.advance(5*time.Minute - time.Second)
		expectLimited(t, h.do(t, login(ann.email, "password-ann")), "1")
		clk.advance(time.Second)
		if r := h.do(t, login(ann.email, "password-ann")); r.status != http.StatusOK {
			t.Fatalf("once the first failure is 15 minutes old the right password is %s, want 200", r)
		}
	})

	t.Run("a success before the limit clears the count", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, nil)
		bo := h.register(t, "bo")
		fail(t, h, clk, bo.email, 9)
		expect(t, h.do(t, login(bo.email, "password-bo")), http.StatusOK, "")
		fail(t, h, clk, bo.email, 10)
		expectLimited(t, h.do(t, login(bo.email, "password-bo")), "300")
	})

	t.Run("another account is not limited, and an e-mail with no account is limited as one with", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, nil)
		cy, di := h.register(t, "cy"), h.register(t, "di")
		fail(t, h, clk, cy.email, 10)
		expectLimited(t, h.do(t, login(cy.email, "password-cy")), "300")
		expect(t, h.do(t, login(di.email, "password-di")), http.StatusOK, "")
		expect(t, h.do(t, login(di.email, "wrong")), http.StatusUnauthorized, "invalid_credentials")

		nobody := "nobody-" + cy.email
		fail(t, h, clk, nobody, 10)
		expectLimited(t, h.do(t, login(nobody, "password-cy")), "300")
	})

	t.Run("a password change's wrong current passwords count against the account, and a limited account changes nothing", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, nil)
		ed := h.register(t, "ed")
		fail(t, h, clk, ed.email, 5)
		for i := range 5 {
			expect(t, h.do(t, fromAddr(next(), changePassword(ed.token, fmt.Sprintf("wrong %d", i), "a new password"))), http.StatusUnauthorized, "invalid_credentials")
		}
		expectLimited(t, h.do(t, fromAddr(next(), changePassword(ed.token, "password-ed", "a new password"))), "600")
		expectLimited(t, h.do(t, login(ed.email, "password-ed")), "600")
		clk.advance(10 * time.Minute)
		expect(t, h.do(t, login(ed.email, "password-ed")), http.StatusOK, "")
	})

	t.Run("a password reset clears the count", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, nil)
		flo := h.register(t, "flo")
		fail(t, h, clk, flo.email, 10)
		expect(t, h.do(t, fromAddr(next(), resetPassword(h.adminReset(t, flo.id).Token, "a brand new password"))), http.StatusOK, "")
		expect(t, h.do(t, login(flo.email, "a brand new password")), http.StatusOK, "")
	})

	t.Run("requests that check no password are not counted", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, nil)
		gus := h.register(t, "gus")
		for range 12 {
			expect(t, h.do(t, fromAddr(next(), req{method: http.MethodPost, path: "/api/v1/auth/login", body: map[string]any{"email": gus.email}})), http.StatusBadRequest, "invalid_request")
			expect(t, h.do(t, fromAddr(next(), changePassword(gus.token, "password-gus", "short"))), http.StatusBadRequest, "invalid_request")
		}
		expect(t, h.do(t, login(gus.email, "password-gus")), http.StatusOK, "")
	})

	t.Run("a setting of 0 limits nothing, and 3 limits at the fourth", func(t *testing.T) {
		clk := newClock()
		h := floodHarness(t, clk, func(c *server.Config) { c.LoginFailuresPerAccount = 0 })
		hal := h.register(t, "hal")
		fail(t, h, clk, hal.email, 20)
		expect(t, h.do(t, login(hal.email, "password-hal")), http.StatusOK, "")

		h = floodHarness(t, clk, func(c *server.Config) { c.LoginFailuresPerAccount = 3 })
		ivy := h.register(t, "ivy")
		fail(t, h, clk, ivy.email, 3)
		expectLimited(t, h.do(t, login(ivy.email, "password-ivy")), "720")
	})
}
