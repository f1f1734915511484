package telegram

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
)

func TestSecretMatches(t *testing.T) {
	const s = "0123456789abcdef_-"
	for _, c := range []struct {
		name, secret, path, header string
		want                       bool
	}{
		{"both the path and the header carry the secret", s, s, s, true},
		{"the header is missing", s, s, "", false},
		{"the path is wrong", s, s + "x", s, false},
		{"the header is a prefix", s, s, s[:10], false},
		{"no secret is configured", "", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := SecretMatches(c.secret, c.path, c.header); got != c.want {
				t.Fatalf("SecretMatches = %v, want %v", got, c.want)
			}
		})
	}
}

func TestStartToken(t *testing.T) {
	for _, c := range []struct {
		text, token string
		start       bool
	}{
		{"/start abc", "abc", true},
		{"  /start   abc  ", "abc", true},
		{"/start@predictkit_bot abc", "abc", true},
		{"/start", "", true},
		{"/started abc", "", false},
		{"hello", "", false},
		{"", "", false},
	} {
		t.Run("the text "+c.text, func(t *testing.T) {
			tok, ok := startToken(c.text)
			if tok != c.token || ok != c.start {
				t.Fatalf("startToken(%q) = %q, %v; want %q, %v", c.text, tok, ok, c.token, c.start)
			}
		})
	}
}

func TestTokensAreRandomAndHashed(t *testing.T) {
	a, ha := NewToken()
	b, _ := NewToken()
	if a == b || len(a) != 43 || strings.ContainsAny(a, "+/=") {
		t.Fatalf("tokens %q and %q", a, b)
	}
	if string(HashToken(a)) != string(ha) || string(ha) == a {
		t.Fatal("the hash is not the token's SHA-256")
	}
}

func TestMessageIsInTheUsersLanguage(t *testing.T) {
	n := &social.Notification{ID: 7, UserID: 3, Type: social.TypeCommentReply, RelatedID: 9, RelatedType: social.RelatedComment,
		Data: social.NotificationData{Author: "Bob", Excerpt: "agreed", EventID: 4}}
	e := social.NotificationChange(n)
	s := &Service{PublicURL: "https://predict.example/"}
	for _, c := range []struct{ lang, want string }{
		{"en", "New reply\nBob replied to your comment: agreed\nhttps://predict.example/events/4#comment-9"},
		{"ru", "Новый ответ\nBob ответил(а) на ваш комментарий: agreed\nhttps://predict.example/events/4#comment-9"},
	} {
		got, err := s.Message(Delivery{Entry: e, Language: c.lang})
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.lang, got, err, c.want)
		}
	}
	if _, err := s.Message(Delivery{Entry: changelog.Entry{Type: changelog.Notification, Data: json.RawMessage(`[`)}}); err == nil {
		t.Error("a broken entry was read")
	}
}
