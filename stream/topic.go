package stream

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is what a topic follows.
type Kind uint8

// The kinds of topics.
const (
	// Trades is every trade of the events that are active (listed).
	Trades Kind = iota + 1
	// Market is one market's trades, prices and resolution.
	Market
	// Pool is the trades, prices and resolutions of one pool's markets.
	Pool
	// Event is the trades, prices and resolutions of one event's markets
	// and the event's new comments.
	Event
	// Me is one user's notifications and balance changes, and the
	// settlement of every market where the user held a position.
	Me
)

// Topic is one thing a subscriber follows: a Kind and, for Market, Pool
// and Event, an id.
type Topic struct {
	Kind Kind
	ID   int64
}

// String is the topic as a client names it: "trades", "market:12", "me".
func (t Topic) String() string {
	switch t.Kind {
	case Trades:
		return "trades"
	case Me:
		return "me"
	case Market:
		return "market:" + strconv.FormatInt(t.ID, 10)
	case Pool:
		return "pool:" + strconv.FormatInt(t.ID, 10)
	case Event:
		return "event:" + strconv.FormatInt(t.ID, 10)
	}
	return fmt.Sprintf("kind%d:%d", t.Kind, t.ID)
}

// MaxTopics is the most topics one subscription may name.
const MaxTopics = 32

// TopicError is a topic list ParseTopics refuses.
type TopicError struct {
	// Topic is the offending item ("" when the list as a whole is wrong).
	Topic string
	// Reason says what is wrong with it.
	Reason string
	// BadID: the topic's kind is known but its id is not a positive
	// integer.
	BadID bool
}

func (e *TopicError) Error() string {
	if e.Topic == "" {
		return "topics: " + e.Reason
	}
	return fmt.Sprintf("topics: %q: %s", e.Topic, e.Reason)
}

// ParseTopics reads a comma-separated topic list ("trades,market:12,me").
// Blank items are skipped and repeated topics count once; an empty list,
// more than MaxTopics topics, an unknown topic or an id that is not a
// positive integer is a *TopicError.
func ParseTopics(s string) ([]Topic, error) {
	var out []Topic
	seen := map[Topic]bool{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		t, err := parseTopic(item)
		if err != nil {
			return nil, err
		}
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) > MaxTopics {
			return nil, &TopicError{Reason: fmt.Sprintf("at most %d topics", MaxTopics)}
		}
	}
	if len(out) == 0 {
		return nil, &TopicError{Reason: "required: one or more of trades, market:{id}, pool:{id}, event:{id}, me"}
	}
	return out, nil
}

func parseTopic(item string) (Topic, error) {
	switch item {
	case "trades":
		return Topic{Kind: Trades}, nil
	case "me":
		return Topic{Kind: Me}, nil
	}
	name, id, ok := strings.Cut(item, ":")
	var k Kind
	switch name {
	case "market":
		k = Market
	case "pool":
		k = Pool
	case "event":
		k = Event
	default:
		return Topic{}, &TopicError{Topic: clip(item), Reason: "unknown topic: use trades, market:{id}, pool:{id}, event:{id} or me"}
	}
	if !ok {
		return Topic{}, &TopicError{Topic: clip(item), Reason: "needs an id, as in " + name + ":12", BadID: true}
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 || strings.TrimLeft(id, "0123456789") != "" {
		return Topic{}, &TopicError{Topic: clip(item), Reason: "the id must be a positive integer", BadID: true}
	}
	return Topic{Kind: k, ID: n}, nil
}

// clip keeps an error message short whatever the client sent.
func clip(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ParseLastID reads a client's last event id ("" is none): a
// non-negative decimal integer.
func ParseLastID(s string) (id int64, ok bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, nil
	}
	if strings.TrimLeft(s, "0123456789") != "" {
		return 0, false, fmt.Errorf("last event id %q: must be a non-negative integer", clip(s))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("last event id %q: must be a non-negative integer", clip(s))
	}
	return n, true, nil
}
