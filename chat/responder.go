package chat

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Question is what a Responder answers: a user's message in a session.
type Question struct {
	// SessionID is the session's public id.
	SessionID string
	// UserID is the signed-in user, 0 when anonymous.
	UserID int64
	// Language is the language to answer in: en or ru.
	Language string
	Text     string
}

// Answer is a Responder's automatic answer.
type Answer struct {
	// Text is stored as a support message; empty means no answer.
	Text string
	// OfferOperator is true when the answer suggests calling an operator
	// (the responder had nothing better).
	OfferOperator bool
}

// Responder writes the automatic answer to a user's message. It is asked
// for every message of a session that has not been escalated (once an
// operator is called, people answer). An error is logged and the
// message stays unanswered; it never fails the user's message.
type Responder interface {
	Respond(ctx context.Context, q Question) (Answer, error)
}

// The answer when a FAQ has no entry for a question and sets no fallback.
var defaultFallback = map[string]string{
	LangEN: "I could not find an answer to that. Press \u201cCall operator\u201d to talk to a person.",
	LangRU: "Я не нашёл ответа на этот вопрос. Нажмите «Позвать оператора», чтобы поговорить с человеком.",
}

// FAQ is the content of a FAQ file (JSON):
//
//	{
//	  "fallback": {"en": "…", "ru": "…"},          // optional
//	  "entries": [
//	    {
//	      "id": "deposit",                          // optional, for logs
//	      "keywords": ["deposit", "top up", "пополн"],
//	      "patterns": ["(?i)how (do|can) i (add|put) money"],
//	      "answer": {"en": "…", "ru": "…"}
//	    }
//	  ]
//	}
//
// A keyword matches when a word of the lower-cased message starts with it
// (so a stem such as "пополн" or "deposit" matches every form of the
// word, and "fee" does not match "coffee"); a
// pattern is an RE2 regular expression, matched case-insensitively. Each
// entry scores one point per keyword and two per pattern found; the
// highest score answers (ties: the earlier entry), in the asker's
// language, or in English when the entry has no text in it. With no
// match, the fallback answers and offers the operator.
type FAQ struct {
	Fallback map[string]string `json:"fallback,omitempty"`
	Entries  []FAQEntry        `json:"entries"`
}

// FAQEntry is one question of a FAQ and its answer.
type FAQEntry struct {
	ID       string            `json:"id,omitempty"`
	Keywords []string          `json:"keywords,omitempty"`
	Patterns []string          `json:"patterns,omitempty"`
	Answer   map[string]string `json:"answer"`
}

//go:embed faq_default.json
var defaultFAQ []byte

// DefaultFAQ returns the FAQ shipped with predictkit (deposits, prices,
// fees, resolution, the partner API, the P2P board), in English and
// Russian.
func DefaultFAQ() []byte { return bytes.Clone(defaultFAQ) }

// FAQResponder answers from a FAQ. It is safe for concurrent use.
type FAQResponder struct {
	entries  []faqEntry
	fallback map[string]string
}

type faqEntry struct {
	keywords []string
	patterns []*regexp.Regexp
	answer   map[string]string
}

// NewFAQResponder reads a FAQ from JSON. It refuses unknown fields, an
// entry with no keyword and no pattern, an entry with no English answer,
// and a pattern that does not compile.
func NewFAQResponder(faqJSON []byte) (*FAQResponder, error) {
	var f FAQ
	dec := json.NewDecoder(bytes.NewReader(faqJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("chat: FAQ: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("chat: FAQ: more than one JSON value")
	}
	r := &FAQResponder{fallback: map[string]string{}}
	for k, v := range defaultFallback {
		r.fallback[k] = v
	}
	for k, v := range f.Fallback {
		if strings.TrimSpace(v) != "" {
			r.fallback[k] = v
		}
	}
	for i, e := range f.Entries {
		name := e.ID
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		if strings.TrimSpace(e.Answer[LangEN]) == "" {
			return nil, fmt.Errorf("chat: FAQ entry %s: no English answer", name)
		}
		fe := faqEntry{answer: e.Answer}
		for _, k := range e.Keywords {
			if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
				fe.keywords = append(fe.keywords, k)
			}
		}
		for _, p := range e.Patterns {
			re, err := regexp.Compile("(?i)" + p)
			if err != nil {
				return nil, fmt.Errorf("chat: FAQ entry %s: pattern %q: %w", name, p, err)
			}
			fe.patterns = append(fe.patterns, re)
		}
		if len(fe.keywords) == 0 && len(fe.patterns) == 0 {
			return nil, fmt.Errorf("chat: FAQ entry %s: no keyword and no pattern", name)
		}
		r.entries = append(r.entries, fe)
	}
	return r, nil
}

// LoadFAQResponder reads the FAQ file at path; an empty path is the
// default FAQ.
func LoadFAQResponder(path string) (*FAQResponder, error) {
	if path == "" {
		return NewFAQResponder(defaultFAQ)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chat: FAQ: %w", err)
	}
	return NewFAQResponder(b)
}

// Respond implements Responder.
func (r *FAQResponder) Respond(_ context.Context, q Question) (Answer, error) {
	text := strings.ToLower(q.Text)
	best, bestScore := -1, 0
	for i, e := range r.entries {
		score := 0
		for _, k := range e.keywords {
			if containsWordPrefix(text, k) {
				score++
			}
		}
		for _, re := range e.patterns {
			if re.MatchString(q.Text) {
				score += 2
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return Answer{Text: inLanguage(r.fallback, q.Language), OfferOperator: true}, nil
	}
	return Answer{Text: inLanguage(r.entries[best].answer, q.Language)}, nil
}

// inLanguage picks lang's text, or English.
func inLanguage(texts map[string]string, lang string) string {
	if t := strings.TrimSpace(texts[lang]); t != "" {
		return t
	}
	return strings.TrimSpace(texts[LangEN])
}

// containsWordPrefix reports whether k occurs in text at the start of a
// word: at the beginning or after a character that is not a letter or a
// digit.
func containsWordPrefix(text, k string) bool {
	for i := 0; i <= len(text)-len(k); {
		j := strings.Index(text[i:], k)
		if j < 0 {
			return false
		}
		at := i + j
		prev, _ := utf8.DecodeLastRuneInString(text[:at])
		if at == 0 || !unicode.IsLetter(prev) && !unicode.IsDigit(prev) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[at:])
		i = at + size
	}
	return false
}
