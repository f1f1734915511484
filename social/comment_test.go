package social

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/predictkit/predictkit/input"
)

func TestCheckContent(t *testing.T) {
	cases := []struct {
		name, in, want string
		ok             bool
	}{
		{"plain text is kept", "hello", "hello", true},
		{"surrounding white space is trimmed", " \n\thello world\r\n ", "hello world", true},
		{"inner newlines and markup are kept as written", "<b>a</b>\n& b", "<b>a</b>\n& b", true},
		{"exactly 2000 characters of Cyrillic are fine", strings.Repeat("ж", 2000), strings.Repeat("ж", 2000), true},
		{"2000 characters plus white space are fine", "  " + strings.Repeat("a", 2000) + "\n", strings.Repeat("a", 2000), true},
		{"an empty string is refused", "", "", false},
		{"white space only is refused", " \t\n\u00a0", "", false},
		{"2001 characters are refused", strings.Repeat("a", 2001), "", false},
		{"a NUL character is refused", "a\x00b", "", false},
		{"invalid UTF-8 is refused", "ok\xc3\x28", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := CheckContent(c.in)
			if c.ok && (err != nil || got != c.want) {
				t.Fatalf("CheckContent = %q, %v; want %q", got, err, c.want)
			}
			if !c.ok && !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("CheckContent = %q, %v; want input.ErrInvalid", got, err)
			}
		})
	}
}

func TestPage(t *testing.T) {
	cases := []struct {
		name                    string
		limit, offset, wl, woff int
	}{
		{"no limit is the default", 0, 0, DefaultPageSize, 0},
		{"a negative limit is the default", -5, 3, DefaultPageSize, 3},
		{"a limit within range is kept", 7, 0, 7, 0},
		{"100 is kept", 100, 0, 100, 0},
		{"over 100 is 100", 101, 0, 100, 0},
		{"a negative offset is 0", 10, -1, 10, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if l, o := Page(c.limit, c.offset); l != c.wl || o != c.woff {
				t.Fatalf("Page(%d, %d) = %d, %d; want %d, %d", c.limit, c.offset, l, o, c.wl, c.woff)
			}
		})
	}
}

func TestParseReaction(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Reaction
		ok   bool
	}{{"like", ReactionLike, true}, {"dislike", ReactionDislike, true}, {"none", ReactionNone, true},
		{"", ReactionNone, false}, {"LIKE", ReactionNone, false}, {"love", ReactionNone, false}} {
		t.Run("reaction "+strconv.Quote(c.in), func(t *testing.T) {
			got, err := ParseReaction(c.in)
			if c.ok != (err == nil) || got != c.want {
				t.Fatalf("ParseReaction(%q) = %q, %v", c.in, got, err)
			}
			if err != nil && !errors.Is(err, input.ErrInvalid) {
				t.Fatalf("the error %v is not input.ErrInvalid", err)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	t.Run("a short reply is quoted whole", func(t *testing.T) {
		if got := excerpt("agreed"); got != "agreed" {
			t.Fatal(got)
		}
	})
	t.Run("exactly 140 characters are quoted whole", func(t *testing.T) {
		s := strings.Repeat("я", ExcerptChars)
		if got := excerpt(s); got != s {
			t.Fatal(got)
		}
	})
	t.Run("a long reply is cut at 140 characters, never inside one, with an ellipsis", func(t *testing.T) {
		got := excerpt(strings.Repeat("я", ExcerptChars+1))
		if got != strings.Repeat("я", ExcerptChars)+"…" || !utf8.ValidString(got) {
			t.Fatal(got)
		}
	})
}

func TestHiddenAuthors(t *testing.T) {
	a := Author{ID: 7, Name: "Casper", Nickname: "ghost", ProfileHidden: true, AvatarURL: "https://example.com/g.png"}
	for _, c := range []struct {
		name   string
		viewer int64
		want   Author
	}{
		{"an anonymous reader sees Anonymous", 0, Author{ID: 7, Name: AnonymousName, ProfileHidden: true}},
		{"another user sees Anonymous", 8, Author{ID: 7, Name: AnonymousName, ProfileHidden: true}},
		{"the author sees themself", 7, a},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := a.masked(c.viewer); got != c.want {
				t.Fatalf("got %+v", got)
			}
		})
	}
	t.Run("a visible author is shown to everyone", func(t *testing.T) {
		v := a
		v.ProfileHidden = false
		if got := v.masked(0); got != v {
			t.Fatalf("got %+v", got)
		}
	})
}
