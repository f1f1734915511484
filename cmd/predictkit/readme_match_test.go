//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// How TestReadmeSamples and TestDocsSamples compare what a command printed with the output
// the sample shows under it; the rules are at the top of readme_test.go.

var exitNote = regexp.MustCompile(`\bexit (\d+)\b`)

// checkStep compares what a command printed, and its exit code, with what
// the sample shows; it returns "" when they agree, else what differs.
func checkStep(s sampleStep, actual string, code int) string {
	actual = strings.TrimRight(actual, "\n")
	shown := strings.Join(s.expected, "\n")
	show := func(what string) string {
		return fmt.Sprintf("%s\nthe sample shows (line %d):\n%s\nit printed (exit %d):\n%s", what, s.expLine, indent(shown), code, indent(actual))
	}
	var notes []string
	var problem string
	switch {
	case len(s.expected) == 0:
		var answer struct {
			Error any `json:"error"`
		}
		if json.Unmarshal([]byte(actual), &answer) == nil && answer.Error != nil {
			return fmt.Sprintf("the sample shows no output, but the answer is an error:\n%s", indent(actual))
		}
	case strings.HasPrefix(shown, "{") || strings.HasPrefix(shown, "["):
		pats, n, err := parseShownJSON(shown)
		if err != nil {
			return show("the sample's output cannot be read: " + err.Error())
		}
		notes = n
		values, err := decodeAnswers(actual)
		if err != nil {
			problem = "it printed no JSON: " + err.Error()
		} else {
			problem = matchSeq(pats, values, "")
		}
	default:
		want, n := shownLines(s.expected)
		notes = n
		problem = matchLines(want, strings.Split(actual, "\n"))
	}
	if problem != "" {
		return show(problem)
	}
	wantCode := 0
	for _, n := range notes {
		if m := exitNote.FindStringSubmatch(n); m != nil {
			wantCode, _ = strconv.Atoi(m[1])
		}
	}
	if code != wantCode {
		return show(fmt.Sprintf("it exited %d, the sample says %d", code, wantCode))
	}
	return ""
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// decodeAnswers reads a sequence of JSON values.
func decodeAnswers(s string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var values []any
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			return values, nil
		}
		if err != nil {
			return nil, err
		}
		values = append(values, v)
	}
}

// shownPattern is a JSON value as a sample shows it, with elisions.
type shownPattern struct {
	kind   byte // '{', '[', '"', '0' number, 'l' literal, '*' anything
	keys   []string
	vals   []*shownPattern
	open   bool // an object that shows … may hold other keys
	elems  []*shownPattern
	text   string // a string, number or literal as shown
	prefix bool   // a number followed by …: these are its first digits
}

func (p *shownPattern) hasAny() bool {
	for _, e := range p.elems {
		if e.kind == '*' {
			return true
		}
	}
	return false
}

// parseShownJSON reads the JSON values a sample shows, one or more
// lines each; text after a value on its line, and lines in parentheses,
// are notes.
func parseShownJSON(s string) (pats []*shownPattern, notes []string, err error) {
	p := &jsonPatternParser{s: s}
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return pats, notes, nil
		}
		switch {
		case p.s[p.i] == '(':
			notes = append(notes, p.restOfLine())
			continue
		case p.ellipsis():
			pats = append(pats, &shownPattern{kind: '*'})
		default:
			v, err := p.value()
			if err != nil {
				return nil, nil, err
			}
			pats = append(pats, v)
		}
		if note := strings.TrimSpace(p.restOfLine()); note != "" {
			notes = append(notes, note)
		}
	}
}

type jsonPatternParser struct {
	s string
	i int
}

func (p *jsonPatternParser) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *jsonPatternParser) restOfLine() string {
	end := strings.IndexByte(p.s[p.i:], '\n')
	if end < 0 {
		end = len(p.s) - p.i
	}
	line := p.s[p.i : p.i+end]
	p.i += end
	return line
}

// ellipsis consumes a … or ... if one is next.
func (p *jsonPatternParser) ellipsis() bool {
	for _, e := range []string{"…", "..."} {
		if strings.HasPrefix(p.s[p.i:], e) {
			p.i += len(e)
			return true
		}
	}
	return false
}

func (p *jsonPatternParser) errorf(format string, args ...any) error {
	near := p.s[p.i:]
	if len(near) > 30 {
		near = near[:30] + "…"
	}
	return fmt.Errorf("%s at %q", fmt.Sprintf(format, args...), near)
}

func (p *jsonPatternParser) value() (*shownPattern, error) {
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, p.errorf("a value is missing")
	}
	if p.ellipsis() {
		return &shownPattern{kind: '*'}, nil
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		o := &shownPattern{kind: '{'}
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == '}' && len(o.keys) == 0 && !o.open {
				p.i++
				return o, nil
			}
			if p.ellipsis() {
				o.open = true
			} else {
				k, err := p.value()
				if err != nil {
					return nil, err
				}
				if k.kind != '"' || strings.Contains(k.text, "…") {
					return nil, p.errorf("a key must be a string")
				}
				p.skipSpace()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return nil, p.errorf("':' is missing")
				}
				p.i++
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, k.text)
				o.vals = append(o.vals, v)
			}
			p.skipSpace()
			if p.i >= len(p.s) {
				return nil, p.errorf("'}' is missing")
			}
			switch p.s[p.i] {
			case ',':
				p.i++
			case '}':
				p.i++
				return o, nil
			default:
				return nil, p.errorf("',' or '}' is missing")
			}
		}
	case c == '[':
		p.i++
		a := &shownPattern{kind: '['}
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == ']' && len(a.elems) == 0 {
				p.i++
				return a, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, v)
			p.skipSpace()
			if p.i >= len(p.s) {
				return nil, p.errorf("']' is missing")
			}
			switch p.s[p.i] {
			case ',':
				p.i++
			case ']':
				p.i++
				return a, nil
			default:
				return nil, p.errorf("',' or ']' is missing")
			}
		}
	case c == '"':
		j := p.i + 1
		for j < len(p.s) && p.s[j] != '"' {
			if p.s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(p.s) {
			return nil, p.errorf("the string does not end")
		}
		var str string
		if err := json.Unmarshal([]byte(p.s[p.i:j+1]), &str); err != nil {
			return nil, p.errorf("%v", err)
		}
		p.i = j + 1
		return &shownPattern{kind: '"', text: str}, nil
	case c == '-' || c >= '0' && c <= '9':
		j := p.i
		for j < len(p.s) && strings.IndexByte("+-.eE0123456789", p.s[j]) >= 0 {
			j++
		}
		n := &shownPattern{kind: '0', text: p.s[p.i:j]}
		p.i = j
		n.prefix = p.ellipsis()
		return n, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(p.s[p.i:], lit) {
				p.i += len(lit)
				return &shownPattern{kind: 'l', text: lit}, nil
			}
		}
		return nil, p.errorf("not a JSON value")
	}
}

// matchValue compares an answer with what the sample shows; it returns
// "" or the first difference, at its path.
func matchValue(p *shownPattern, v any, path string) string {
	at := func() string {
		if path == "" {
			return "."
		}
		return path
	}
	compact := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	switch p.kind {
	case '*':
		return ""
	case '{':
		o, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("at %s: the sample shows an object, the answer has %s", at(), compact(v))
		}
		for i, k := range p.keys {
			av, ok := o[k]
			if !ok {
				return fmt.Sprintf("at %s: the answer has no key %q", at(), k)
			}
			if msg := matchValue(p.vals[i], av, path+"."+k); msg != "" {
				return msg
			}
		}
		if !p.open {
			for k := range o {
				if !slices.Contains(p.keys, k) {
					return fmt.Sprintf("at %s: the answer has the key %q, which the sample does not show (show … for keys left out)", at(), k)
				}
			}
		}
		return ""
	case '[':
		a, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("at %s: the sample shows an array, the answer has %s", at(), compact(v))
		}
		return matchSeq(p.elems, a, path)
	case '"':
		str, ok := v.(string)
		if !ok || !globMatch(p.text, str) {
			return fmt.Sprintf("at %s: the sample shows %q, the answer has %s", at(), p.text, compact(v))
		}
		return ""
	case '0':
		num, ok := v.(json.Number)
		if !ok {
			return fmt.Sprintf("at %s: the sample shows %s, the answer has %s", at(), p.text, compact(v))
		}
		if p.prefix && strings.HasPrefix(num.String(), p.text) || !p.prefix && sameNumber(p.text, num.String()) {
			return ""
		}
		suffix := ""
		if p.prefix {
			suffix = "…"
		}
		return fmt.Sprintf("at %s: the sample shows %s%s, the answer has %s", at(), p.text, suffix, num)
	default: // 'l'
		if compact(v) != p.text {
			return fmt.Sprintf("at %s: the sample shows %s, the answer has %s", at(), p.text, compact(v))
		}
		return ""
	}
}

func sameNumber(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// matchSeq compares a sequence of values (an array's elements, or the
// answers of a command) with the patterns shown, where a '*' pattern
// stands for any number of values.
func matchSeq(pats []*shownPattern, vals []any, path string) string {
	p := &shownPattern{elems: pats}
	if !p.hasAny() {
		if len(pats) != len(vals) {
			return fmt.Sprintf("at %s: the sample shows %d values, the answer has %d (show … for values left out)", orDot(path), len(pats), len(vals))
		}
		for i := range pats {
			if msg := matchValue(pats[i], vals[i], fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return msg
			}
		}
		return ""
	}
	var first string
	var try func(i, j int) bool
	try = func(i, j int) bool {
		if i == len(pats) {
			return j == len(vals)
		}
		if pats[i].kind == '*' {
			for k := j; k <= len(vals); k++ {
				if try(i+1, k) {
					return true
				}
			}
			return false
		}
		if j == len(vals) {
			return false
		}
		if msg := matchValue(pats[i], vals[j], fmt.Sprintf("%s[%d]", path, j)); msg != "" {
			if first == "" {
				first = msg
			}
			return false
		}
		return try(i+1, j+1)
	}
	if try(0, 0) {
		return ""
	}
	if first == "" {
		first = "too few values"
	}
	return fmt.Sprintf("at %s: the values shown cannot be found in order in the answer (first difference: %s)", orDot(path), first)
}

func orDot(path string) string {
	if path == "" {
		return "."
	}
	return path
}

// globMatch reports whether s is pattern, where … and ... stand for any
// text.
func globMatch(pattern, s string) bool {
	parts := strings.Split(strings.ReplaceAll(pattern, "...", "…"), "…")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		k := strings.Index(s, part)
		if k < 0 {
			return false
		}
		s = s[k+len(part):]
	}
	return strings.HasSuffix(s, last)
}

var (
	spaces       = regexp.MustCompile(`[ \t]+`)
	trailingNote = regexp.MustCompile(`\s{2,}(\([^()]*(?:\([^()]*\)[^()]*)*\))$`)
)

// shownLines returns the text lines the sample shows, normalized, and
// their notes.
func shownLines(lines []string) (want, notes []string) {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") {
			notes = append(notes, t)
			continue
		}
		if m := trailingNote.FindStringSubmatchIndex(l); m != nil {
			notes = append(notes, l[m[2]:m[3]])
			l = l[:m[0]]
		}
		want = append(want, normalizeLine(l))
	}
	return want, notes
}

func normalizeLine(l string) string {
	return strings.TrimSpace(spaces.ReplaceAllString(strings.TrimRight(l, "\r"), " "))
}

// matchLines compares printed lines with the lines shown, where a line
// that is all … stands for any number of lines.
func matchLines(want, got []string) string {
	for i := range got {
		got[i] = normalizeLine(got[i])
	}
	if len(got) == 1 && got[0] == "" {
		got = nil
	}
	var try func(i, j int) bool
	try = func(i, j int) bool {
		if i == len(want) {
			return j == len(got)
		}
		if want[i] == "…" || want[i] == "..." {
			for k := j; k <= len(got); k++ {
				if try(i+1, k) {
					return true
				}
			}
			return false
		}
		return j < len(got) && globMatch(want[i], got[j]) && try(i+1, j+1)
	}
	if try(0, 0) {
		return ""
	}
	for i := range want {
		if i >= len(got) {
			return fmt.Sprintf("line %d is missing: %q", i+1, want[i])
		}
		if want[i] == "…" || want[i] == "..." {
			break
		}
		if !globMatch(want[i], got[i]) {
			return fmt.Sprintf("line %d differs: the sample shows %q, it printed %q", i+1, want[i], got[i])
		}
	}
	return "the lines differ"
}

func TestSampleOutputComparison(t *testing.T) {
	cases := []struct {
		name   string
		shown  []string // the # lines under the command
		actual string   // what it printed
		code   int      // its exit code
		ok     bool
	}{
		{"the same JSON matches", []string{`{"id":4,"name":"Ann"}`}, `{"id":4,"name":"Ann"}`, 0, true},
		{"key order does not matter", []string{`{"name":"Ann","id":4}`}, `{"id":4,"name":"Ann"}`, 0, true},
		{"a JSON value may span lines", []string{`{"id":4,`, ` "name":"Ann"}`}, `{"id":4,"name":"Ann"}`, 0, true},
		{"a different id is a difference", []string{`{"id":4,"name":"Ann"}`}, `{"id":5,"name":"Ann"}`, 0, false},
		{"a different amount is a difference", []string{`{"balance":100000}`}, `{"balance":99999}`, 0, false},
		{"a different error code is a difference", []string{`{"error":"not_found"}`}, `{"error":"user_not_found"}`, 0, false},
		{"a key the README leaves out is a difference", []string{`{"id":4}`}, `{"id":4,"name":"Ann"}`, 0, false},
		{"… among the keys allows more", []string{`{"id":4,…}`}, `{"id":4,"name":"Ann"}`, 0, true},
		{"... among the keys allows more too", []string{`{"id":4,...}`}, `{"id":4,"name":"Ann"}`, 0, true},
		{"a key the answer lacks is a difference", []string{`{"id":4,"email":"a@b",…}`}, `{"id":4,"name":"Ann"}`, 0, false},
		{"… as a value matches any value", []string{`{"created_at":…,"id":4}`}, `{"created_at":1795303539881,"id":4}`, 0, true},
		{"… in a string matches any text", []string{`{"key":"pk_…"}`}, `{"key":"pk_45uPJ9yh"}`, 0, true},
		{"a string with … must still start as shown", []string{`{"key":"pk_…"}`}, `{"key":"sk_45uPJ9yh"}`, 0, false},
		{"a number's first digits and … match", []string{`{"p":0.399998…}`}, `{"p":0.3999988259465338}`, 0, true},
		{"other first digits do not", []string{`{"p":0.4…}`}, `{"p":0.3999988259465338}`, 0, false},
		{"an array shows every element", []string{`{"a":[1,2]}`}, `{"a":[1,2,3]}`, 0, false},
		{"… in an array stands for any elements", []string{`{"a":[1,…]}`}, `{"a":[1,2,3]}`, 0, true},
		{"each answer is one JSON value", []string{`{"id":2}`, `{"id":1}`}, "{\"id\":2}\n{\"id\":1}", 0, true},
		{"an answer left out is a difference", []string{`{"id":2}`}, "{\"id\":2}\n{\"id\":1}", 0, false},
		{"a line of … stands for any answers", []string{`{"id":2}`, `…`}, "{\"id\":2}\n{\"id\":1}", 0, true},
		{"text after a JSON value is a note", []string{`{"error":"not_found"}   (404: not Bob's)`}, `{"error":"not_found"}`, 0, true},
		{"prose right under an output is read as output, and fails", []string{`{"id":1}`, `The same request again.`}, `{"id":1}`, 0, false},
		{"JSON shown where text is printed is a difference", []string{`{"id":4}`}, `No user matches.`, 0, false},
		{"text compares line by line, runs of spaces as one", []string{"ID  NAME", "2   Corner Bets"}, "ID  NAME\n2   Corner  Bets", 0, true},
		{"a different line is a difference", []string{"ID  NAME", "2   Corner Bets"}, "ID  NAME\n1   Corner Bets", 0, false},
		{"… in a line matches any text", []string{"yes  0  …"}, "yes  0  2026-11-23T21:36:36Z", 0, true},
		{"a line of … matches any lines", []string{"…", "last"}, "first\nsecond\nlast", 0, true},
		{"a line printed but not shown is a difference", []string{"first"}, "first\nsecond", 0, false},
		{"a trailing carriage return is not compared", []string{"Idempotent-Replayed: true"}, "Idempotent-Replayed: true\r", 0, true},
		{"a non-zero exit is a difference", []string{"done"}, "done", 1, false},
		{"unless a note says it", []string{"failed", "(exit 1)"}, "failed", 1, true},
		{"a trailing note may say it", []string{"failed          (exit 2)"}, "failed", 2, true},
		{"and it must be that one", []string{"failed", "(exit 1)"}, "failed", 2, false},
		{"a note saying exit 1 of a command that exits 0 is a difference", []string{`{"ok":true}  (exit 1)`}, `{"ok":true}`, 0, false},
		{"an error answer the README does not show is a difference", nil, `{"error":"session_not_found"}`, 0, false},
		{"an answer the README does not show is fine", nil, `{"status":"ok"}`, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := checkStep(sampleStep{line: 1, command: "cmd", expected: c.shown, expLine: 2}, c.actual, c.code)
			if (msg == "") != c.ok {
				t.Errorf("shown %q, printed %q (exit %d): ok = %v, want %v\n%s", c.shown, c.actual, c.code, msg == "", c.ok, msg)
			}
		})
	}
}

func TestSampleSteps(t *testing.T) {
	block := readmeBlock{info: "sh", line: 10, lines: strings.Split(`B=http://localhost:8080/api/v1

# Prose before a command.
EV=$(curl -s -X POST $B/events -d '{
  "name":"# not a comment",
  "pools":[]}')
echo "$EV" | jq -c .
# {"id":1}
#  (a note)
curl -s $B/a   # {"status":"ok"}
curl -s $B/b   # prose, not an output
predictkit admin users \
  -limit 2
# ID  NAME
#
# More users

# Prose after a blank line.`, "\n")}
	steps, err := sampleSteps(block, block.lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []sampleStep{
		{line: 10, command: "B=http://localhost:8080/api/v1"},
		{line: 13, command: "EV=$(curl -s -X POST $B/events -d '{\n  \"name\":\"# not a comment\",\n  \"pools\":[]}')"},
		{line: 16, command: `echo "$EV" | jq -c .`, expected: []string{`{"id":1}`, ` (a note)`}, expLine: 17},
		{line: 19, command: `curl -s $B/a   # {"status":"ok"}`, expected: []string{`{"status":"ok"}`}, expLine: 19},
		{line: 20, command: `curl -s $B/b   # prose, not an output`},
		{line: 21, command: "predictkit admin users \\\n  -limit 2", expected: []string{"ID  NAME", "", "More users"}, expLine: 23},
	}
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(steps), len(want), steps)
	}
	for i := range want {
		t.Run(fmt.Sprintf("step %d is the command at line %d and the output under it", i, want[i].line), func(t *testing.T) {
			got := steps[i]
			if got.line != want[i].line || got.command != want[i].command || got.expLine != want[i].expLine || !slices.Equal(got.expected, want[i].expected) {
				t.Errorf("got %+v\nwant %+v", got, want[i])
			}
		})
	}
	t.Run("a quote that never closes is an error naming its line", func(t *testing.T) {
		b := readmeBlock{info: "sh", line: 5, lines: []string{"curl -d '{", "  \"a\":1}"}}
		if _, err := sampleSteps(b, b.lines); err == nil || !strings.Contains(err.Error(), "README.md:5") {
			t.Errorf("err = %v", err)
		}
	})
}
