package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/chat"
)

func TestDefaultFAQResponder(t *testing.T) {
	r, err := chat.LoadFAQResponder("")
	if err != nil {
		t.Fatalf("the default FAQ does not load: %v", err)
	}
	cases := []struct {
		name, lang, text string
		contains         string
		offer            bool
	}{
		{"a deposit question in English is answered in English", "en", "How do I deposit money?", "credited by the platform's operator", false},
		{"a deposit question in Russian is answered in Russian", "ru", "Как пополнить баланс?", "зачисляет оператор платформы", false},
		{"an English question from a Russian speaker is answered in Russian", "ru", "how do I top up?", "зачисляет оператор платформы", false},
		{"prices are explained", "en", "Why did the price move after my trade?", "LMSR", false},
		{"prices are explained in Russian", "ru", "Как считаются цены?", "LMSR", false},
		{"fees are explained", "en", "What fee do you charge?", "margin", false},
		{"a keyword inside another word does not match", "en", "I love coffee", "Call operator", true},
		{"resolution is explained", "en", "When will I get paid after the match?", "winning share", false},
		{"the partner API is explained", "en", "Do you have a partner API key?", "X-Partner-Key", false},
		{"the partner API is explained in Russian", "ru", "Нужна интеграция для партнёра", "X-Partner-Key", false},
		{"an unmatched question offers the operator in English", "en", "My cat ate my password", "Call operator", true},
		{"an unmatched question offers the operator in Russian", "ru", "Мой кот съел пароль", "Позвать оператора", true},
		{"an unknown language is answered in English", "de", "Wie kann ich deposit machen?", "credited by the platform's operator", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := r.Respond(context.Background(), chat.Question{Language: c.lang, Text: c.text})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(a.Text, c.contains) || a.OfferOperator != c.offer {
				t.Fatalf("got %+v, want text with %q and offer %v", a, c.contains, c.offer)
			}
		})
	}
}

// The profile's deposit address fields are always empty (no route sets
// them) and deposits are credited by the operator, so the built-in FAQ
// must not send anyone to look for a deposit address.
func TestDefaultFAQPromisesNoDepositAddress(t *testing.T) {
	r, err := chat.LoadFAQResponder("")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []chat.Question{
		{Language: "en", Text: "How do I deposit money?"},
		{Language: "en", Text: "What is my wallet address?"},
		{Language: "ru", Text: "Как пополнить баланс?"},
	} {
		t.Run(q.Language+": "+q.Text+" is answered without a deposit address", func(t *testing.T) {
			a, err := r.Respond(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.ToLower(a.Text)
			for _, word := range []string{"wallet", "address", "адрес", "кошел"} {
				if strings.Contains(text, word) {
					t.Errorf("the answer mentions %q: %s", word, a.Text)
				}
			}
			if !strings.Contains(text, "operator") && !strings.Contains(text, "оператор") {
				t.Errorf("the answer does not send the user to the operator: %s", a.Text)
			}
		})
	}
}

func TestFAQFile(t *testing.T) {
	t.Run("patterns are case-insensitive regular expressions and outscore keywords", func(t *testing.T) {
		r, err := chat.NewFAQResponder([]byte(`{"entries":[
			{"keywords":["limit"],"answer":{"en":"limits"}},
			{"patterns":["withdraw(al)?s? limits?"],"answer":{"en":"withdrawals","ru":"вывод"}}]}`))
		if err != nil {
			t.Fatal(err)
		}
		a, _ := r.Respond(context.Background(), chat.Question{Language: "ru", Text: "WITHDRAWAL LIMIT?"})
		if a.Text != "вывод" {
			t.Fatalf("got %+v", a)
		}
	})
	t.Run("a file's fallback replaces the built-in one", func(t *testing.T) {
		r, err := chat.NewFAQResponder([]byte(`{"fallback":{"en":"Ask a human."},"entries":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		if a, _ := r.Respond(context.Background(), chat.Question{Language: "en", Text: "?"}); a.Text != "Ask a human." || !a.OfferOperator {
			t.Fatalf("got %+v", a)
		}
		if a, _ := r.Respond(context.Background(), chat.Question{Language: "ru", Text: "?"}); !strings.Contains(a.Text, "оператора") {
			t.Fatalf("the built-in Russian fallback is kept: %+v", a)
		}
	})
	bad := []struct{ name, json string }{
		{"an entry without an English answer is refused", `{"entries":[{"keywords":["x"],"answer":{"ru":"х"}}]}`},
		{"an entry without keywords or patterns is refused", `{"entries":[{"answer":{"en":"x"}}]}`},
		{"a pattern that does not compile is refused", `{"entries":[{"patterns":["(unclosed"],"answer":{"en":"x"}}]}`},
		{"an unknown field is refused", `{"entries":[],"answers":[]}`},
		{"trailing data is refused", `{"entries":[]} {}`},
		{"a missing file is refused", ""},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.json == "" {
				_, err = chat.LoadFAQResponder("testdata/does-not-exist.json")
			} else {
				_, err = chat.NewFAQResponder([]byte(c.json))
			}
			if err == nil {
				t.Fatal("accepted")
			}
		})
	}
	t.Run("the shipped FAQ is the default", func(t *testing.T) {
		if _, err := chat.NewFAQResponder(chat.DefaultFAQ()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLanguageFromAcceptLanguage(t *testing.T) {
	cases := []struct{ name, header, want string }{
		{"no header is English", "", "en"},
		{"Russian first is Russian", "ru-RU,ru;q=0.9,en;q=0.8", "ru"},
		{"English first is English", "en-US,en;q=0.9,ru;q=0.8", "en"},
		{"the higher weight wins", "en;q=0.3, ru;q=0.7", "ru"},
		{"other languages are skipped", "de-DE,fr;q=0.9,ru;q=0.5", "ru"},
		{"only other languages is English", "de,fr", "en"},
		{"a zero weight excludes", "ru;q=0", "en"},
		{"a malformed weight excludes", "ru;q=lots", "en"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := chat.LanguageFromAcceptLanguage(c.header); got != c.want {
				t.Fatalf("%q: got %s, want %s", c.header, got, c.want)
			}
		})
	}
}

func TestCheckText(t *testing.T) {
	cases := []struct {
		name, text string
		ok         bool
		want       string
	}{
		{"text is trimmed", "  hello \n", true, "hello"},
		{"line breaks inside stay", "a\nb", true, "a\nb"},
		{"4000 characters are allowed", strings.Repeat("ж", 4000), true, strings.Repeat("ж", 4000)},
		{"4001 characters are refused", strings.Repeat("ж", 4001), false, ""},
		{"only spaces are refused", " \t\n ", false, ""},
		{"nothing is refused", "", false, ""},
		{"invalid UTF-8 is refused", "a\xffb", false, ""},
		{"a NUL is refused", "a\x00b", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := chat.CheckText(c.text)
			if (err == nil) != c.ok || got != c.want {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
	t.Run("an excerpt is the first 140 characters", func(t *testing.T) {
		if got := chat.Excerpt(strings.Repeat("щ", 200)); got != strings.Repeat("щ", 140) {
			t.Fatalf("got %d characters", len([]rune(got)))
		}
		if got := chat.Excerpt("short"); got != "short" {
			t.Fatalf("got %q", got)
		}
	})
}
