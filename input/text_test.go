package input_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/input"
)

func TestTextRule(t *testing.T) {
	cases := []struct {
		name            string
		s               string
		text, multiline string // the reason each refuses with, "" when it accepts
	}{
		{"plain text is text", "Hello, мир 💥", "", ""},
		{"the empty string is text (a field's own rule says if it may be empty)", "", "", ""},
		{"NUL is refused", "a\x00b", input.ReasonControl, input.ReasonControl},
		{"another C0 control is refused", "\x1b[31m", input.ReasonControl, input.ReasonControl},
		{"DEL is refused", "x\x7f", input.ReasonControl, input.ReasonControl},
		{"a C1 control is refused", "x\u0085", input.ReasonControl, input.ReasonControl},
		{"a line feed is refused in one line, allowed in many", "a\nb", input.ReasonControl, ""},
		{"a carriage return is refused in one line, allowed in many", "a\r\nb", input.ReasonControl, ""},
		{"a tab is refused in one line, allowed in many", "a\tb", input.ReasonControl, ""},
		{"an invalid byte is refused", "a\xffb", input.ReasonNotUTF8, input.ReasonNotUTF8},
		{"a lone surrogate (as bytes) is refused", "\xed\xa0\x80", input.ReasonNotUTF8, input.ReasonNotUTF8},
		{"an overlong NUL is refused", "\xc0\x80", input.ReasonNotUTF8, input.ReasonNotUTF8},
		{"a cut sequence is refused", "x\xe2\x82", input.ReasonNotUTF8, input.ReasonNotUTF8},
		{"a bidirectional override is text", "\u202Eabc\u202C", "", ""},
		{"a zero-width joiner and a BOM are text", "\uFEFFa\u200Db", "", ""},
		{"noncharacters and the last code point are text", "\uFFFE\U0010FFFF", "", ""},
		{"the line separator is text", "a\u2028b", "", ""},
	}
	reason := func(err error) string {
		if err == nil {
			return ""
		}
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Field != "f" || !errors.Is(err, input.ErrInvalid) {
			t.Fatalf("%v is not an *input.Error for f", err)
		}
		return ie.Reason
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := reason(input.Text("f", c.s)); got != c.text {
				t.Errorf("Text(%q) refuses with %q, want %q", c.s, got, c.text)
			}
			if got := reason(input.MultilineText("f", c.s)); got != c.multiline {
				t.Errorf("MultilineText(%q) refuses with %q, want %q", c.s, got, c.multiline)
			}
			if input.IsText(c.s) != (c.text == "") || input.IsMultilineText(c.s) != (c.multiline == "") {
				t.Errorf("IsText(%q) = %v, IsMultilineText = %v", c.s, input.IsText(c.s), input.IsMultilineText(c.s))
			}
		})
	}
	t.Run("every control character is refused, whichever it is", func(t *testing.T) {
		for r := rune(0); r <= 0x9F; r++ {
			if r >= 0x20 && r < 0x7F {
				continue
			}
			s := "x" + string(r) + "y"
			if input.IsText(s) {
				t.Errorf("IsText accepts %U", r)
			}
			if input.IsMultilineText(s) != (r == '\t' || r == '\n' || r == '\r') {
				t.Errorf("IsMultilineText(%U) = %v", r, input.IsMultilineText(s))
			}
		}
	})
	t.Run("a long text is checked to its end", func(t *testing.T) {
		if input.IsText(strings.Repeat("ж", 100_000) + "\x00") {
			t.Error("a NUL at the end of a long text passed")
		}
	})
}

// A domain checks each text field with the one rule, so that every store
// gets the same refusal: PostgreSQL cannot store a NUL, the memory store
// would.
func ExampleText() {
	fmt.Println(input.Text("name", "Alice"))
	fmt.Println(input.Text("name", "Al\x00ice"))
	fmt.Println(input.Text("name", "one\ntwo"))
	fmt.Println(input.MultilineText("rules", "one\ntwo"))
	fmt.Println(input.Text("external_user_id", "\xff"))
	// Output:
	// <nil>
	// invalid name: must not contain control characters
	// invalid name: must not contain control characters
	// <nil>
	// invalid external_user_id: must be UTF-8 text
}
