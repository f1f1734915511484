package stream_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/stream"
)

func TestParseTopics(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     string // the topics, joined; "" when refused
		badID    bool   // refused for an id
	}{
		{"every kind is read", "trades,market:12,pool:3,event:4,me", "trades,market:12,pool:3,event:4,me", false},
		{"blanks and repeats are dropped", " trades, ,market:1,trades,market:01 ", "trades,market:1", false},
		{"an empty list is refused", " , ", "", false},
		{"an unknown topic is refused", "trades,weather", "", false},
		{"a kind's name is case-sensitive", "Trades", "", false},
		{"an id that is not a number is refused", "market:abc", "", true},
		{"a negative id is refused", "pool:-1", "", true},
		{"a zero id is refused", "event:0", "", true},
		{"a signed id is refused", "event:+4", "", true},
		{"an id past int64 is refused", "market:9223372036854775808", "", true},
		{"a kind without its id is refused", "market", "", true},
		{"trades takes no id", "trades:1", "", false},
		{"more than 32 topics are refused", manyIDs(33), "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := stream.ParseTopics(c.in)
			if c.want == "" {
				var te *stream.TopicError
				if !errors.As(err, &te) || te.BadID != c.badID {
					t.Fatalf("ParseTopics(%q) = %v, %v; want a TopicError (bad id %v)", c.in, ts, err, c.badID)
				}
				return
			}
			var names []string
			for _, tp := range ts {
				names = append(names, tp.String())
			}
			if err != nil || strings.Join(names, ",") != c.want {
				t.Fatalf("ParseTopics(%q) = %v, %v; want %s", c.in, names, err, c.want)
			}
		})
	}
	t.Run("an error quotes a long topic only in part", func(t *testing.T) {
		_, err := stream.ParseTopics(strings.Repeat("é", 100))
		if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "…") {
			t.Fatalf("error %q", err)
		}
	})
}

func manyIDs(n int) string {
	var s []string
	for i := 1; i <= n; i++ {
		s = append(s, fmt.Sprintf("market:%d", i))
	}
	return strings.Join(s, ",")
}

func TestParseLastID(t *testing.T) {
	for _, c := range []struct {
		in      string
		id      int64
		ok, bad bool
	}{
		{"", 0, false, false},
		{"  ", 0, false, false},
		{"0", 0, true, false},
		{"42", 42, true, false},
		{" 42 ", 42, true, false},
		{"-1", 0, false, true},
		{"1e3", 0, false, true},
		{"abc", 0, false, true},
		{"9223372036854775808", 0, false, true},
	} {
		id, ok, err := stream.ParseLastID(c.in)
		if id != c.id || ok != c.ok || (err != nil) != c.bad {
			t.Errorf("ParseLastID(%q) = %d, %v, %v", c.in, id, ok, err)
		}
	}
}
