package server

// This file is how errors become HTTP answers. The API gives
// different codes for the same meaning on different endpoints
// (pool_not_found, NOT_FOUND, "market not found"...), so every route
// names its own small table, which lives beside its handler in the
// module's file (module_*.go); the rules every route shares follow it
// here. Anything a table does not map is a 500 with the route's internal
// error code, logged with the request id, and never shows the client
// what went wrong inside.

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/storage"
)

// Errors the server raises itself, before any service is called.
var (
	// errInvalidID: a path id that is not a decimal int64.
	errInvalidID = errors.New("server: invalid id")
	// errBadRequest matches every *requestError: a body or query the
	// server cannot read.
	errBadRequest = errors.New("server: invalid request")
	// errAdminDisabled: no admin token is configured.
	errAdminDisabled = errors.New("server: operator endpoints disabled")
	// errContentEncoding: the request has a Content-Encoding header.
	errContentEncoding = errors.New("server: content encoding not supported")
	// errMediaType: a body whose Content-Type is not application/json
	// (see jsonContent).
	errMediaType = errors.New("server: request body is not application/json")
	// errUnavailable: the store does not answer its ping.
	errUnavailable = errors.New("server: store unavailable")
	// errMalformedBody matches the *requestError of a body that is not
	// one JSON object at all (not JSON, or another JSON value), as opposed
	// to an object with a missing or invalid field. Only the routes that
	// tell the two apart (the partner API) raise it; it also matches
	// errBadRequest, so every other table answers it as before.
	errMalformedBody = errors.New("server: body is not a JSON object")
)

// requestError is a malformed request; detail ("<field>: <reason>") is
// shown to the client.
type requestError struct {
	detail string
	// malformed: the body is not one JSON object (errMalformedBody).
	malformed bool
}

func (e *requestError) Error() string { return "server: invalid request: " + e.detail }
func (e *requestError) Is(target error) bool {
	return target == errBadRequest || e.malformed && target == errMalformedBody
}

func badRequest(field, reason string) error {
	return &requestError{detail: field + ": " + reason}
}

func malformedBody(reason string) error {
	return &requestError{detail: "body: " + reason, malformed: true}
}

// rule maps errors matching target (errors.Is) to status and code.
type rule struct {
	target error
	status int
	code   string
	// detail, when set, is the answer's detail instead of the error's own.
	detail string
	// expected: a 5xx that is the server's configuration answering (no
	// Telegram bot), not a failure: it keeps its detail and is not logged
	// as an error.
	expected bool
}

func on(target error, status int, code string) rule {
	return rule{target: target, status: status, code: code}
}

// saying returns r answering with detail d.
func (r rule) saying(d string) rule {
	r.detail = d
	return r
}

// configured returns r as an expected answer (see rule.expected).
func (r rule) configured() rule {
	r.expected = true
	return r
}

// errorTable is one route's mapping, tried in order, then the common one.
type errorTable struct {
	// internal is the code of an unmapped error (500).
	internal string
	rules    []rule
}

func table(internal string, rules ...rule) *errorTable {
	return &errorTable{internal: internal, rules: rules}
}

// Rules every route shares, tried after its own.
var commonRules = []rule{
	on(errContentEncoding, http.StatusUnsupportedMediaType, "unsupported_content_encoding"),
	on(errMediaType, http.StatusUnsupportedMediaType, "unsupported_media_type").
		saying("Content-Type: must be application/json (a charset parameter is allowed)"),
	on(errRateLimited, http.StatusTooManyRequests, "rate_limited"),
	// An API key outside its scopes (scopes.go), whatever the route.
	on(errInsufficientScope, http.StatusForbidden, "insufficient_scope"),
	// The session cookie on a request with an unsafe method from another
	// origin (module_session.go), or a cookie of the server's from an
	// origin that may not send it (cookieOrigins), whatever the route.
	on(errCrossOrigin, http.StatusForbidden, "cross_origin_request"),
	on(errAdminDisabled, http.StatusNotFound, "not_found"),
	on(errUnavailable, http.StatusServiceUnavailable, "database_unavailable"),
	// The database could not be reached, or the connection broke before
	// anything was committed: nothing happened, send the request again.
	on(storage.ErrUnavailable, http.StatusServiceUnavailable, "database_unavailable"),
	// The connection broke during COMMIT: the request may have taken
	// effect. Partners resend the same client_bet_id; users read their
	// trades and positions (docs/guarantees.md, "When the database fails").
	on(storage.ErrOutcomeUnknown, http.StatusServiceUnavailable, "outcome_unknown"),
	on(errInvalidID, http.StatusBadRequest, "invalid_id"),
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(account.ErrInvalidAmount, http.StatusBadRequest, "invalid_request"),
}

// unauthorized is the 401 of a missing or unknown Bearer token, shared by
// the routes of several modules.
var unauthorized = on(account.ErrUnauthorized, http.StatusUnauthorized, "unauthorized")

// errorBody is every error answer.
type errorBody struct {
	Error  string `json:"error"`
	Detail string `json:"detail,omitempty"`
}

// resolve maps err for a route with table t (nil: no route matched).
func (t *errorTable) resolve(err error) (status int, code string) {
	r := t.match(err)
	return r.status, r.code
}

// match is the rule err falls under for a route with table t (nil: no
// route matched); an unmapped error gets a 500 rule.
func (t *errorTable) match(err error) rule {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return rule{status: fe.Code, code: fiberCode(fe.Code)}
	}
	if t != nil {
		for _, r := range t.rules {
			if errors.Is(err, r.target) {
				return r
			}
		}
	}
	for _, r := range commonRules {
		if errors.Is(err, r.target) {
			return r
		}
	}
	if t == nil {
		return rule{status: http.StatusInternalServerError, code: "internal_error"}
	}
	return rule{status: http.StatusInternalServerError, code: t.internal}
}

// fiberCode is the code of an error Fiber raised itself (no route, wrong
// method, body too large...).
func fiberCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusRequestTimeout:
		return "request_timeout"
	case http.StatusRequestHeaderFieldsTooLarge:
		return "request_headers_too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_content_encoding"
	}
	if status >= 500 {
		return "internal_error"
	}
	return strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
}

// detail is what the client may see of a 4xx error: the field and reason
// of an invalid input.
func detail(err error) string {
	var re *requestError
	if errors.As(err, &re) {
		return re.detail
	}
	var ie *input.Error
	if errors.As(err, &ie) {
		return ie.Field + ": " + ie.Reason
	}
	// A refusal that says itself what the client may read
	// (market.CreatorLimitError).
	var d interface{ Detail() string }
	if errors.As(err, &d) {
		return d.Detail()
	}
	return ""
}

// errorHandler is Fiber's one ErrorHandler: it writes {"error": "..."}
// with the status and code of the matched route's table.
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		if requestID(c) == "" { // an error before the middleware ran (e.g. 413)
			setRequestID(c)
		}
		t, _ := c.Locals(localTable).(*errorTable)
		r := t.match(err)
		status := r.status
		body := errorBody{Error: r.code}
		if status < 500 || r.expected {
			body.Detail = r.detail
			if body.Detail == "" {
				body.Detail = detail(err)
			}
		} else {
			log.LogAttrs(c.UserContext(), slog.LevelError, "request failed",
				slog.String("request_id", requestID(c)),
				slog.String("method", c.Method()),
				slog.String("route", routeTemplate(c)),
				slog.Int("status", status),
				slog.String("error", err.Error()),
			)
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		if status == http.StatusServiceUnavailable && !r.expected {
			c.Set(fiber.HeaderRetryAfter, "1")
		}
		if err := c.Status(status).JSON(body); err != nil {
			return fmt.Errorf("write error response: %w", err)
		}
		return nil
	}
}
