package server

import (
	"errors"
	"fmt"
	"testing"

	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/p2p"
)

func TestP2PAndChatContractCodes(t *testing.T) {
	cases := []struct {
		name   string
		table  *errorTable
		err    error
		status int
		code   string
	}{
		{"a malformed list parameter is 400 INVALID_REQUEST", errsP2PAds, &input.Error{Field: "type"}, 400, "INVALID_REQUEST"},
		{"a malformed query the server found is INVALID_REQUEST too", errsP2PAds, badRequest("limit", "must be a non-negative integer"), 400, "INVALID_REQUEST"},
		{"a failing list is 500 INTERNAL_ERROR", errsP2PAds, errors.New("connection refused"), 500, "INTERNAL_ERROR"},
		{"an unknown ad is 404 NOT_FOUND", errsP2PAd, p2p.ErrNotFound, 404, "NOT_FOUND"},
		{"a non-integer ad id is 404 NOT_FOUND", errsP2PAd, errInvalidID, 404, "NOT_FOUND"},
		{"an unknown ad to the operator is ad_not_found", errsAdminP2P, p2p.ErrNotFound, 404, "ad_not_found"},
		{"an ad for an unknown user is user_not_found", errsAdminP2P, p2p.ErrUserNotFound, 404, "user_not_found"},
		{"a history without a session is 401 unauthorized", errsChatHistory, chat.ErrSessionNotFound, 401, "unauthorized"},
		{"a history that cannot be read is 500 internal_error", errsChatHistory, errors.New("connection refused"), 500, "internal_error"},
		{"a call without a session is 404 not_found", errsChatCallOperator, chat.ErrSessionNotFound, 404, "not_found"},
		{"a call from a closed session is 404 not_found", errsChatCallOperator, chat.ErrSessionClosed, 404, "not_found"},
		{"a call whose notification failed is 500 internal_error", errsChatCallOperator, fmt.Errorf("%w: webhook answered 502", chat.ErrNotifyFailed), 500, "internal_error"},
		{"an empty chat message is 400 invalid_request", errsChatMessage, &input.Error{Field: "text"}, 400, "invalid_request"},
		{"a message without a session is 404 not_found", errsChatMessage, chat.ErrSessionNotFound, 404, "not_found"},
		{"an unknown session to the operator is session_not_found", errsAdminChat, chat.ErrSessionNotFound, 404, "session_not_found"},
		{"the operator routes are 404 not_found when disabled", errsAdminChat, errAdminDisabled, 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if status, code := c.table.resolve(c.err); status != c.status || code != c.code {
				t.Errorf("got %d %q, want %d %q", status, code, c.status, c.code)
			}
		})
	}
	t.Run("an invalid parameter shows its field and reason", func(t *testing.T) {
		if d := detail(&input.Error{Field: "sort_by", Reason: "must be rating, orders_count or best_price"}); d != "sort_by: must be rating, orders_count or best_price" {
			t.Errorf("detail %q", d)
		}
		if d := detail(&input.Error{Field: "text", Reason: "must not be empty"}); d != "text: must not be empty" {
			t.Errorf("detail %q", d)
		}
	})
}
