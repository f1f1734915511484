package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// APIError is the server's refusal of a request: its status and the
// documented body {"error": "<code>", "detail": "<text>"}.
type APIError struct {
	// StatusCode is the HTTP status, such as 409.
	StatusCode int
	// Code is the body's "error": price_moved, insufficient_funds,
	// TRADE_FAILED, IDEMPOTENCY_CONFLICT, … (the spelling depends on the
	// route; see docs/errors.md). An answer without the
	// documented body, say a proxy's 502 page, gets the status text in
	// the same style: bad_gateway.
	Code string
	// Detail is the body's "detail", when the server says more: the field
	// and what is wrong with it, or why a partner's trade failed.
	Detail string
	// RetryAfter is the answer's Retry-After (429 rate_limited, 503
	// database_unavailable and outcome_unknown): how long to wait before
	// sending again. Zero when the answer has none.
	RetryAfter time.Duration
	// RequestID is the answer's X-Request-ID, under which the server logs
	// what went wrong behind a 5xx.
	RequestID string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("predictkit: %d %s", e.StatusCode, e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Response is what every answer of a ...WithResponse method has.
type Response interface {
	StatusCode() int
	GetBody() []byte
}

// Check passes on the result of a ...WithResponse call: its error when the
// call failed (the server could not be reached, or its answer could not be
// read or decoded), an *APIError when the server answered with a status
// other than 2xx, and otherwise the answer with a nil error.
//
//	res, err := client.Check(c.BuyWithResponse(ctx, marketID, body))
//	var refused *client.APIError
//	if errors.As(err, &refused) && refused.Code == "price_moved" {
//		// quote again
//	}
func Check[R Response](res R, err error) (R, error) {
	if err != nil {
		return res, err
	}
	if code := res.StatusCode(); code >= 200 && code <= 299 {
		return res, nil
	}
	return res, newAPIError(res.StatusCode(), res.GetBody(), httpResponse(res))
}

// newAPIError reads the status, body and headers of a refusal.
func newAPIError(status int, body []byte, res *http.Response) *APIError {
	e := &APIError{StatusCode: status}
	var b struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &b) == nil && b.Error != "" {
		e.Code, e.Detail = b.Error, b.Detail
	} else {
		e.Code = strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
	}
	if res != nil {
		e.RequestID = res.Header.Get("X-Request-ID")
		e.RetryAfter = retryAfter(res.Header.Get("Retry-After"))
	}
	return e
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// httpResponse returns the HTTPResponse field of a generated answer. The
// generated types give the status and body through methods but the
// headers only through that field, which every one of them has.
func httpResponse(res any) *http.Response {
	v := reflect.ValueOf(res)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("HTTPResponse")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	r, _ := f.Interface().(*http.Response)
	return r
}
