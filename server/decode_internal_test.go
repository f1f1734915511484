package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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

// decodeByTokens is decodeStrict as it was before scanKeys: the keys
// walked token by token first, then the decoding. decodeStrict must give
// the same answer for every body.
func decodeByTokens(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("body", "must be a JSON object")
	}
	if !utf8.Valid(body) {
		return badRequest("body", "must be UTF-8")
	}
	if err := checkKeys(json.NewDecoder(bytes.NewReader(body)), reflect.TypeOf(dst).Elem(), "", 0); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("body", "must hold one JSON value")
	}
	return validate(dst)
}

// scanBody has a field of every shape checkKeys distinguishes: struct,
// pointer, slice of structs, map, any and time.
type scanBody struct {
	Side  string         `json:"side" validate:"omitempty,oneof=YES NO"`
	N     int64          `json:"n"`
	Ptr   *scanBody      `json:"ptr"`
	Items []scanBody     `json:"items"`
	Map   map[string]int `json:"map"`
	Any   any            `json:"any"`
	At    *time.Time     `json:"at"`
}

func FuzzDecodeStrictMatchesTokenWalk(f *testing.F) {
	for _, s := range []string{
		`{"side":"YES","n":1}`, `{"ptr":{"ptr":{"n":2}},"items":[{"n":1},{"N":1}]}`, `{"map":{"a":1,"a":2}}`,
		`{"any":{"x":[1,{"y":null}],"x":1}}`, `{"at":"2026-01-02T03:04:05Z","side":"MAYBE"}`, `{"n":1.5,"Side":"YES"}`,
		`{"s\u0069de":"YES","side":"NO"}`, `null`, `{"n":1} {}`, `{"n":1}}`, `{"any":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`,
		`{"items":[{"items":[{"x":1}]}]}`, `{"map":{"b":"x"}}`, `{"any":"\"}\\"}`, `{"n":1,}`, `[{"n":1}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var got, want scanBody
		gotErr, wantErr := decodeStrict(in, &got), decodeByTokens(in, &want)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("decodeStrict(%q) = %v, the token walk says %v", in, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeStrict(%q) decoded %+v, the token walk %+v", in, got, want)
		}
	})
}

func TestDecodeStrictManyKeysInAMap(t *testing.T) {
	t.Run("a map of 20,000 distinct keys is accepted", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{"map":{`)
		for i := range 20000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":%d`, i, i)
		}
		b.WriteString(`}}`)
		var v scanBody
		if err := decodeStrict([]byte(b.String()), &v); err != nil || len(v.Map) != 20000 {
			t.Fatalf("got %d keys, %v", len(v.Map), err)
		}
	})
	t.Run("a key repeated after 20 others is named", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{"map":{`)
		for i := range 20 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		b.WriteString(`"k3":0}}`)
		var v scanBody
		err := decodeStrict([]byte(b.String()), &v)
		var re *requestError
		if !errors.As(err, &re) || re.detail != "map.k3: appears twice" {
			t.Fatalf("got %v, want map.k3: appears twice", err)
		}
	})
}

func BenchmarkDecodeStrictBuy(b *testing.B) {
	body := []byte(`{"side":"YES","amount_kopecks":12345,"max_cost_kopecks":20000,"min_shares":1}`)
	for _, d := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"scan", decodeStrict}, {"tokens", decodeByTokens}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v buyBody
				if err := d.decode(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
