package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// An event the operator creates for a creator counts against that
// creator's limits, so the operator's route is no way around them.
func TestOperatorCreatedEventsCountForTheirOwner(t *testing.T) {
	for _, sc := range stores() {
		t.Run("on the "+sc.name+" store, the operator's creation past the owner's limit is 409 creator_limit and moves no money", func(t *testing.T) {
			h := newHarness(t, sc.new(t), withConfig(func(c *server.Config) { c.CreatorMaxOpenEvents = 1 }))
			c := h.register(t, "creator")
			h.makeCreator(t, c.id)
			path := fmt.Sprintf("/api/v1/admin/users/%d/events", c.id)

			r := h.do(t, req{method: http.MethodPost, path: path, token: adminToken, body: smallEvent("The operator's first")})
			expect(t, r, http.StatusCreated, "")

			ok, before, _ := h.audit(t)
			if !ok {
				t.Fatal("the audit fails before the refused creation")
			}
			r = h.do(t, req{method: http.MethodPost, path: path, token: adminToken, body: smallEvent("One too many")})
			expect(t, r, http.StatusConflict, "creator_limit")
			h.refusedCreation(t, c.token, smallEvent("The creator's own, also too many"), "open_events")
			ok, after, problems := h.audit(t)
			if !ok || after != before {
				t.Fatalf("after the refusals the audit says ok = %v (%v) and %d postings, before %d", ok, problems, after, before)
			}
		})
	}
}
