package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/input"
)

// decodeStrict reads body into dst (a pointer to a struct with json tags)
// and validates it with its `validate` tags. It refuses, as a
// *requestError naming the field: anything but one JSON object, unknown or
// duplicated keys, keys that differ from the field names in case only
// (encoding/json would accept them), wrong types, numbers that do not fit
// (fractions or overflow in integer fields), and trailing data.
//
// The body is decoded first and its keys checked after, on the bytes the
// decoder has just parsed (scanKeys): one tokenizing pass over a body
// that is fine, where walking it with json.Decoder.Token cost as much as
// the decoding. Only a body that fails to decode is walked token by token
// (checkKeys) first, so that a key problem is still named before a type
// error, exactly as when the keys were checked first.
func decodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("body", "must be a JSON object")
	}
	if !utf8.Valid(body) {
		return badRequest("body", "must be UTF-8")
	}
	t := reflect.TypeOf(dst).Elem()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if kerr := checkKeys(json.NewDecoder(bytes.NewReader(body)), t, "", 0); kerr != nil {
			return kerr
		}
		return jsonError(err)
	}
	s := keyScan{b: body[:dec.InputOffset()]}
	if err := s.value(t, "", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("body", "must hold one JSON value")
	}
	return validate(dst)
}

// maxDepth bounds the nesting of a request body.
const maxDepth = 32

// checkKeys walks one JSON value from dec against type t, refusing keys
// that are not exactly a json name of t's fields, duplicated keys, and
// nesting deeper than maxDepth.
func checkKeys(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if depth > maxDepth {
		return badRequest(orBody(path), "nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return badRequest(orBody(path), "malformed JSON")
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		if path == "" {
			return badRequest("body", "must be a JSON object")
		}
		return nil // scalars are type-checked by the decoder
	}
	switch delim {
	case '{':
		var fields map[string]reflect.Type
		if t.Kind() == reflect.Struct && t != reflect.TypeOf(time.Time{}) {
			fields = jsonFields(t)
		} else if path == "" {
			return badRequest("body", "must be a JSON object")
		}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return badRequest(orBody(path), "malformed JSON")
			}
			key, _ := kt.(string)
			name := key
			if path != "" {
				name = path + "." + key
			}
			if seen[key] {
				return badRequest(name, "appears twice")
			}
			seen[key] = true
			var ft reflect.Type
			if fields != nil {
				if ft, ok = fields[key]; !ok {
					return badRequest(name, "unknown field")
				}
			} else {
				ft = reflect.TypeOf((*any)(nil)).Elem()
				if t.Kind() == reflect.Map {
					ft = t.Elem()
				}
			}
			if err := checkKeys(dec, ft, name, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return badRequest(orBody(path), "malformed JSON")
		}
	case '[':
		if path == "" {
			return badRequest("body", "must be a JSON object")
		}
		et := reflect.TypeOf((*any)(nil)).Elem()
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			et = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := checkKeys(dec, et, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return badRequest(orBody(path), "malformed JSON")
		}
	default:
		return badRequest(orBody(path), "malformed JSON")
	}
	return nil
}

// keyScan applies checkKeys's rules to JSON text that json.Decoder has
// parsed already, so it need not check the syntax: it skips strings and
// scalars byte by byte and allocates only to name a problem (or for a
// key written with escapes).
type keyScan struct {
	b []byte
	i int
}

func (s *keyScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// str reads the string at s.i, which starts with a quote, and returns its
// contents, unescaped.
func (s *keyScan) str() string {
	start, escaped := s.i+1, false
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			s.i = j + 1
			if !escaped {
				return string(s.b[start:j])
			}
			var out string
			_ = json.Unmarshal(s.b[start-1:j+1], &out) // parsed already: cannot fail
			return out
		}
	}
	s.i = len(s.b)
	return ""
}

// skipScalar skips a string, number, true, false or null.
func (s *keyScan) skipScalar() {
	if s.b[s.i] == '"' {
		for j := s.i + 1; j < len(s.b); j++ {
			switch s.b[j] {
			case '\\':
				j++
			case '"':
				s.i = j + 1
				return
			}
		}
		s.i = len(s.b)
		return
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return
		}
		s.i++
	}
}

// value checks the value at s.i against type t, as checkKeys does.
func (s *keyScan) value(t reflect.Type, path string, depth int) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if depth > maxDepth {
		return badRequest(orBody(path), "nested too deeply")
	}
	s.space()
	if s.i >= len(s.b) {
		return badRequest(orBody(path), "malformed JSON")
	}
	switch s.b[s.i] {
	case '{':
		var fields map[string]reflect.Type
		if t.Kind() == reflect.Struct && t != reflect.TypeOf(time.Time{}) {
			fields = jsonFields(t)
		} else if path == "" {
			return badRequest("body", "must be a JSON object")
		}
		s.i++
		var seen []string
		var seenSet map[string]bool
		for {
			s.space()
			if s.b[s.i] == '}' {
				s.i++
				return nil
			}
			if s.b[s.i] == ',' {
				s.i++
				s.space()
			}
			key := s.str()
			s.space()
			s.i++ // the colon
			name := func() string {
				if path == "" {
					return key
				}
				return path + "." + key
			}
			if s.seen(&seen, &seenSet, key) {
				return badRequest(name(), "appears twice")
			}
			var ft reflect.Type
			if fields != nil {
				var ok bool
				if ft, ok = fields[key]; !ok {
					return badRequest(name(), "unknown field")
				}
			} else {
				ft = anyType
				if t.Kind() == reflect.Map {
					ft = t.Elem()
				}
			}
			if err := s.member(ft, name, depth+1); err != nil {
				return err
			}
		}
	case '[':
		if path == "" {
			return badRequest("body", "must be a JSON object")
		}
		et := anyType
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			et = t.Elem()
		}
		s.i++
		for i := 0; ; i++ {
			s.space()
			if s.b[s.i] == ']' {
				s.i++
				return nil
			}
			if s.b[s.i] == ',' {
				s.i++
			}
			if err := s.member(et, func() string { return fmt.Sprintf("%s[%d]", path, i) }, depth+1); err != nil {
				return err
			}
		}
	default:
		if path == "" {
			return badRequest("body", "must be a JSON object")
		}
		s.skipScalar()
		return nil
	}
}

// seen reports whether key was seen in this object, and notes it: in a
// slice while there are few keys (the bodies here), in a map beyond, so
// that a body with many keys in a map-typed field costs linear time.
func (s *keyScan) seen(few *[]string, many *map[string]bool, key string) bool {
	if *many == nil {
		if slices.Contains(*few, key) {
			return true
		}
		if len(*few) < 16 {
			*few = append(*few, key)
			return false
		}
		*many = make(map[string]bool, 2*len(*few))
		for _, k := range *few {
			(*many)[k] = true
		}
	}
	if (*many)[key] {
		return true
	}
	(*many)[key] = true
	return false
}

// member checks a value inside an object or array, naming it only when it
// is a container or too deep.
func (s *keyScan) member(t reflect.Type, name func() string, depth int) error {
	s.space()
	if depth <= maxDepth && s.b[s.i] != '{' && s.b[s.i] != '[' {
		s.skipScalar()
		return nil
	}
	return s.value(t, name(), depth)
}

var anyType = reflect.TypeOf((*any)(nil)).Elem()

func orBody(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields maps the json names of struct type t's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	fieldCache.Store(t, m)
	return m
}

// jsonError turns a decoding error into a *requestError naming the field.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "body"
		}
		isNumber := te.Value == "number" || strings.HasPrefix(te.Value, "number ")
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if isNumber {
				return badRequest(field, "must be an integer in range")
			}
		}
		return badRequest(field, "must be "+typeName(te.Type))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return badRequest("body", "malformed JSON")
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return badRequest("body", "timestamps must be RFC 3339")
	}
	if strings.HasPrefix(err.Error(), "json: unknown field ") {
		return badRequest(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "unknown field")
	}
	return badRequest("body", "malformed JSON")
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		if t == reflect.TypeOf(time.Time{}) {
			return "an RFC 3339 timestamp"
		}
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct:
		if t == reflect.TypeOf(time.Time{}) {
			return "an RFC 3339 timestamp"
		}
		return "an object"
	}
	return "of another type"
}

var validate = func() func(any) error {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	return func(s any) error {
		err := v.Struct(s)
		if err == nil {
			return nil
		}
		var ves validator.ValidationErrors
		if !errors.As(err, &ves) || len(ves) == 0 {
			return badRequest("body", "invalid")
		}
		fe := ves[0]
		field := fe.Namespace()
		if _, rest, ok := strings.Cut(field, "."); ok {
			field = rest // drop the struct's own name
		}
		return badRequest(field, reason(fe))
	}
}()

func reason(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return "is required"
	case "min", "gte":
		return "must be at least " + fe.Param()
	case "max", "lte":
		return "must be at most " + fe.Param()
	case "gt":
		return "must be greater than " + fe.Param()
	case "oneof":
		return "must be one of " + strings.ReplaceAll(fe.Param(), " ", ", ")
	}
	return "is invalid (" + fe.Tag() + ")"
}

// idAndBody reads path parameter name as an id, then decodes the body
// strictly into a T (decodeBody): the order every such handler checks
// them in, so a bad id is a 404 before a bad body is a 400.
func idAndBody[T any](c *fiber.Ctx, name string) (int64, T, error) {
	var b T
	id, err := pathID(c, name)
	if err != nil {
		return 0, b, err
	}
	if err := decodeBody(c, &b); err != nil {
		return 0, b, err
	}
	return id, b, nil
}

// decodeBody is decodeStrict for the request's body, once requireJSON
// has accepted its Content-Type. Every handler that reads a body reads
// it so (or calls requireJSON itself first).
func decodeBody(c *fiber.Ctx, dst any) error {
	if err := requireJSON(c); err != nil {
		return err
	}
	return decodeStrict(c.Body(), dst)
}

// requireJSON is errMediaType unless the request declares its body as
// JSON (jsonContent). A request with neither a body nor a Content-Type
// passes, so that the decoder names the missing body (400) and a
// route's optional body may be left out.
//
// The header, not the bytes, decides: a page of another site can send a
// body as text/plain (or as a form) without asking the server first (a
// CORS preflight), never as application/json; refusing every other type
// keeps such requests from doing anything.
func requireJSON(c *fiber.Ctx) error {
	if jsonContent(c) {
		return nil
	}
	if len(c.Request().Header.ContentType()) == 0 && len(c.Request().Body()) == 0 {
		return nil
	}
	return errMediaType
}

// jsonContent reports whether the request's Content-Type is
// application/json, in any case, with or without parameters
// ("application/json; charset=utf-8").
func jsonContent(c *fiber.Ctx) bool {
	mt, _, _ := bytes.Cut(c.Request().Header.ContentType(), []byte(";"))
	return bytes.EqualFold(bytes.TrimSpace(mt), []byte("application/json"))
}

// refuseOtherBodies refuses, before any route runs, a request with a
// body that is not declared as JSON (errMediaType, 415), whatever its
// route: so that no route that reads a body, now or later, can be
// reached by one. decodeBody also refuses a wrong Content-Type on an
// empty body, where the route takes one.
func refuseOtherBodies(c *fiber.Ctx) error {
	if len(c.Request().Body()) > 0 && !jsonContent(c) {
		return errMediaType
	}
	return c.Next()
}

// pathID reads path parameter name as a decimal int64 (an optional minus
// sign and digits), or errInvalidID. Zero and negative ids are integers
// that name nothing: the service answers "not found" for them.
func pathID(c *fiber.Ctx, name string) (int64, error) {
	id, ok := parseID(c.Params(name))
	if !ok {
		return 0, errInvalidID
	}
	return id, nil
}

// pathText reads path parameter name, which names something by text (a
// chat session's public id), as Fiber gives it (not unescaped): an
// *input.Error naming the parameter when it breaks the text rule
// (input.Text), so that no store is asked for bytes it cannot hold.
// A parameter the handler unescapes itself is checked by the service
// that reads it (the partner API's external_user_id).
func pathText(c *fiber.Ctx, name string) (string, error) {
	v := c.Params(name)
	if err := input.Text(name, v); err != nil {
		return "", err
	}
	return v, nil
}

func parseID(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > 19 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return id, true
}

// queryInt reads query parameter name as a non-negative integer; def when
// absent. A malformed value is a *requestError.
func queryInt(c *fiber.Ctx, name string, def int64) (int64, error) {
	raw := c.Query(name)
	if raw == "" {
		return def, nil
	}
	if len(raw) > 19 || strings.TrimLeft(raw, "0123456789") != "" {
		return 0, badRequest(name, "must be a non-negative integer")
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, badRequest(name, "must be a non-negative integer")
	}
	return n, nil
}

// page reads limit and offset (defaults def and 0; limit capped at max).
func page(c *fiber.Ctx, def, maxLimit int) (limit, offset int, err error) {
	l, err := queryInt(c, "limit", int64(def))
	if err != nil {
		return 0, 0, err
	}
	o, err := queryInt(c, "offset", 0)
	if err != nil {
		return 0, 0, err
	}
	if l == 0 {
		l = int64(def)
	}
	if o > 1<<31 {
		return 0, 0, badRequest("offset", "is too large")
	}
	return int(min(l, int64(maxLimit))), int(o), nil
}

// lenientField reads the top-level key of a JSON object body, exactly as
// named (no case folding); ok is false when the body is not a JSON object
// or lacks the key.
func lenientField(body []byte, key string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	v, ok := m[key]
	return v, ok
}
