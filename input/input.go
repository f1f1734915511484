// Package input holds what every domain of predictkit says about input
// that breaks one of its rules: one error type, so that a caller (the HTTP
// server, a program using the packages) recognises invalid input from any
// domain in one way, and shows its field and reason to whoever sent it.
package input

import (
	"errors"
	"strconv"
	"unicode"
	"unicode/utf8"
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

// The text rule. Every field a client sends as text (a name, an e-mail,
// a comment, an id a partner chooses, a path or query parameter that
// names something) is UTF-8 without control characters: no NUL, no other
// C0 control (U+0001 to U+001F), no DEL (U+007F), no C1 control (U+0080
// to U+009F). Fields that document line breaks and tabs (rules, comments,
// chat messages, P2P instructions) take MultilineText, which also allows
// '\t', '\n' and '\r'. Lone surrogates cannot occur: they are not UTF-8
// (and encoding/json decodes a "\ud800" escape to U+FFFD). Other
// characters, format characters such as bidirectional overrides
// included, are text: they have uses in right-to-left writing, and
// clients escape what they display.
//
// Every store keeps such text as it is (PostgreSQL cannot store NUL or
// invalid UTF-8 at all), so a domain that applies the rule before its
// store gets the same refusal on every store.

// Reasons of a refusal by the text rule.
const (
	ReasonNotUTF8 = "must be UTF-8 text"
	ReasonControl = "must not contain control characters"
)

// Text refuses s, as an *Error for field, unless it is UTF-8 without
// control characters.
func Text(field, s string) error { return check(field, s, false) }

// MultilineText is Text for fields that document line breaks and tabs:
// it also allows '\t', '\n' and '\r'.
func MultilineText(field, s string) error { return check(field, s, true) }

// IsText reports whether Text accepts s, for a domain that words its
// refusal itself (a field that was refused before the rule, with a
// reason clients already read).
func IsText(s string) bool { return problem(s, false) == "" }

// IsMultilineText reports whether MultilineText accepts s.
func IsMultilineText(s string) bool { return problem(s, true) == "" }

func check(field, s string, multiline bool) error {
	if p := problem(s, multiline); p != "" {
		return Invalid(field, p)
	}
	return nil
}

// problem is the reason s breaks the text rule, or "".
func problem(s string, multiline bool) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf { // ASCII, the common case
			if (c < 0x20 || c == 0x7F) && !(multiline && (c == '\t' || c == '\n' || c == '\r')) {
				return ReasonControl
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return ReasonNotUTF8
		}
		if unicode.IsControl(r) { // C1
			return ReasonControl
		}
		i += size
	}
	return ""
}
