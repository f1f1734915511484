package server

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeStrict(t *testing.T) {
	type inner struct {
		N int64 `json:"n"`
	}
	type body struct {
		Side   string  `json:"side" validate:"required"`
		Amount int64   `json:"amount_kopecks" validate:"required,gte=1"`
		Items  []inner `json:"items"`
		Ptr    *inner  `json:"ptr"`
	}
	cases := []struct {
		name, in, detail string
	}{
		{"a well-formed body is accepted", `{"side":"YES","amount_kopecks":5,"items":[{"n":1}],"ptr":{"n":2}}`, ""},
		{"whitespace around the body is fine", " \n{\"side\":\"YES\",\"amount_kopecks\":5}\n ", ""},
		{"an empty body names the body", ``, "body: must be a JSON object"},
		{"an array names the body", `[1]`, "body: must be a JSON object"},
		{"a string names the body", `"x"`, "body: must be a JSON object"},
		{"an unknown top-level key is named", `{"side":"YES","amount_kopecks":5,"x":1}`, "x: unknown field"},
		{"an unknown nested key is named with its path", `{"side":"YES","amount_kopecks":5,"items":[{"n":1},{"m":1}]}`, "items[1].m: unknown field"},
		{"an unknown key in a nested object is named", `{"side":"YES","amount_kopecks":5,"ptr":{"N":1}}`, "ptr.N: unknown field"},
		{"a key in another case is unknown", `{"Side":"YES","amount_kopecks":5}`, "Side: unknown field"},
		{"a duplicated key is refused", `{"side":"YES","side":"NO","amount_kopecks":5}`, "side: appears twice"},
		{"a fraction in an integer is refused", `{"side":"YES","amount_kopecks":5.5}`, "amount_kopecks: must be an integer in range"},
		{"an overflow is refused", `{"side":"YES","amount_kopecks":92233720368547758070}`, "amount_kopecks: must be an integer in range"},
		{"a string in an integer is refused", `{"side":"YES","amount_kopecks":"5"}`, "amount_kopecks: must be an integer"},
		{"a number in a string is refused", `{"side":5,"amount_kopecks":5}`, "side: must be a string"},
		{"trailing data is refused", `{"side":"YES","amount_kopecks":5} {}`, "body: must hold one JSON value"},
		{"a missing required field is named", `{"amount_kopecks":5}`, "side: is required"},
		{"a negative amount is refused", `{"side":"YES","amount_kopecks":-5}`, "amount_kopecks: must be at least 1"},
		{"malformed JSON is refused", `{"side":"YES",}`, "body: malformed JSON"},
		{"deep nesting is refused", `{"side":"YES","amount_kopecks":5,"items":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, "items"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b body
			err := decodeStrict([]byte(c.in), &b)
			if c.detail == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var re *requestError
			if !errors.As(err, &re) || !errors.Is(err, errBadRequest) {
				t.Fatalf("got %v, want a request error", err)
			}
			if !strings.HasPrefix(re.detail, c.detail) {
				t.Errorf("detail %q, want %q", re.detail, c.detail)
			}
		})
	}
}

func TestParseID(t *testing.T) {
	cases := []struct {
		in   string
		id   int64
		isID bool
	}{
		{"1", 1, true}, {"0", 0, true}, {"-7", -7, true}, {"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false}, {"", 0, false}, {"-", 0, false}, {"+1", 0, false}, {"1.0", 0, false},
		{"1e3", 0, false}, {" 1", 0, false}, {"0x10", 0, false}, {"me", 0, false}, {"١", 0, false},
	}
	for _, c := range cases {
		t.Run("the path id "+c.in, func(t *testing.T) {
			id, ok := parseID(c.in)
			if ok != c.isID || id != c.id {
				t.Errorf("parseID(%q) = %d, %v; want %d, %v", c.in, id, ok, c.id, c.isID)
			}
		})
	}
}

// FuzzDecodeStrict: no input makes the decoder panic, and whatever it
// accepts is a JSON object that decodes again to the same value.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{`{"side":"YES","amount_kopecks":100}`, `{"side":"NO","shares":1,"min_payout_kopecks":0}`, `{`, `[]`, `{"a":{"b":[1,2,{"c":null}]}}`,
		`{"pools":[{"name":"p","margin":0.1,"lmsr_b_kopecks":100,"markets":[{"name":"m","probability":0.5}]}],"name":"e"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b buyBody
		_ = decodeStrict(in, &b)
		var s sellBody
		_ = decodeStrict(in, &s)
		var e newEventBody
		if err := decodeStrict(in, &e); err == nil {
			_ = e.toDomain()
		}
		var c creditBody
		_ = decodeStrict(in, &c)
	})
}
