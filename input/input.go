// Package input holds what every domain of predictkit says about input
// that breaks one of its rules: one error type, so that a caller (the HTTP
// server, a program using the packages) recognises invalid input from any
// domain in one way, and shows its field and reason to whoever sent it.
package input

import (
	"errors"
	"strconv"
)

// Error reports input that breaks a rule of a domain. Field names the
// field as the client sent it (a JSON name or path such as
// "pools[0].markets[1].probability"); Reason says what the rule is. Both
// are safe to show to the client.
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string { return "invalid " + e.Field + ": " + e.Reason }

// ErrInvalid matches every *Error with errors.Is.
var ErrInvalid = errors.New("invalid input")

// Is makes errors.Is(err, ErrInvalid) true for an *Error.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Invalid returns an *Error for field.
func Invalid(field, reason string) error { return &Error{Field: field, Reason: reason} }

// InRange refuses v outside lo..hi with an *Error for field that says
// which end it passed ("must be at least 1", "must be at most 100").
func InRange(field string, v, lo, hi int64) error {
	switch {
	case v < lo:
		return Invalid(field, "must be at least "+strconv.FormatInt(lo, 10))
	case v > hi:
		return Invalid(field, "must be at most "+strconv.FormatInt(hi, 10))
	}
	return nil
}
