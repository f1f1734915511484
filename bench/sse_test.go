package bench

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestSSEReaderParsesTheEventStreamFormat(t *testing.T) {
	type ev struct {
		id    string
		hasID bool
		typ   string
		data  string
	}
	cases := []struct {
		name     string
		stream   string
		want     []ev
		comments int64
		end      error
	}{
		{"a message has its id, type and data",
			"id: 7\nevent: trade\ndata: {\"trade_id\":1}\n\n",
			[]ev{{"7", true, "trade", `{"trade_id":1}`}}, 0, io.EOF},
		{"several data lines join with newlines",
			"id: 1\ndata: a\ndata:b\ndata:  c\n\n",
			[]ev{{"1", true, "message", "a\nb\n c"}}, 0, io.EOF},
		{"CRLF line endings read like LF",
			"id: 3\r\nevent: price\r\ndata: x\r\n\r\n",
			[]ev{{"3", true, "price", "x"}}, 0, io.EOF},
		{"pings and other comments are counted, not dispatched",
			": ping\n\n:\nid: 2\ndata: y\n: in the middle\n\n: ping\n\n",
			[]ev{{"2", true, "message", "y"}}, 4, io.EOF},
		{"an event without an id keeps the last one, marked as not its own",
			"id: 5\ndata: a\n\ndata: b\n\n",
			[]ev{{"5", true, "message", "a"}, {"5", false, "message", "b"}}, 0, io.EOF},
		{"an empty id field resets the last id",
			"id: 5\ndata: a\n\nid\ndata: b\n\n",
			[]ev{{"5", true, "message", "a"}, {"", true, "message", "b"}}, 0, io.EOF},
		{"an id containing NUL is ignored",
			"id: 5\ndata: a\n\nid: 6\x007\ndata: b\n\n",
			[]ev{{"5", true, "message", "a"}, {"5", false, "message", "b"}}, 0, io.EOF},
		{"a block without data dispatches nothing but keeps its id",
			"id: 9\nevent: trade\n\ndata: z\n\n",
			[]ev{{"9", false, "message", "z"}}, 0, io.EOF},
		{"an empty data field dispatches an empty message",
			"data\n\n",
			[]ev{{"", false, "message", ""}}, 0, io.EOF},
		{"a reset event is an event like any other",
			"id: 40\nevent: reset\ndata: {}\n\n",
			[]ev{{"40", true, "reset", "{}"}}, 0, io.EOF},
		{"retry and unknown fields are ignored",
			"retry: 3000\nfoo: bar\nid: 1\ndata: q\n\n",
			[]ev{{"1", true, "message", "q"}}, 0, io.EOF},
		{"a leading byte-order mark is skipped",
			"\xEF\xBB\xBFid: 1\ndata: q\n\n",
			[]ev{{"1", true, "message", "q"}}, 0, io.EOF},
		{"a line longer than the buffer reads whole",
			"id: 1\ndata: " + strings.Repeat("x", 100) + "\n\n",
			[]ev{{"1", true, "message", strings.Repeat("x", 100)}}, 0, io.EOF},
		{"an event cut off by the end of the stream is not dispatched",
			"id: 1\ndata: a\n\nid: 2\ndata: b\n",
			[]ev{{"1", true, "message", "a"}}, 0, io.ErrUnexpectedEOF},
		{"a line cut off by the end of the stream is not read",
			"id: 1\ndata: a\n\nda",
			[]ev{{"1", true, "message", "a"}}, 0, io.ErrUnexpectedEOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// One byte a read: every line crosses reads.
			r := newSSEReader(iotest.OneByteReader(strings.NewReader(c.stream)), 16)
			var got []ev
			var err error
			for {
				var e sseEvent
				e, err = r.next()
				if err != nil {
					break
				}
				got = append(got, ev{e.ID, e.HasID, e.Type, string(e.Data)})
			}
			if !errors.Is(err, c.end) {
				t.Errorf("ended with %v, want %v", err, c.end)
			}
			if len(got) != len(c.want) {
				t.Fatalf("events %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("event %d is %+v, want %+v", i, got[i], c.want[i])
				}
			}
			if r.comments != c.comments {
				t.Errorf("%d comments, want %d", r.comments, c.comments)
			}
		})
	}
}

func TestParseTradeDataReadsTheThreeFieldsOfAnyValidObject(t *testing.T) {
	cases := []struct {
		name string
		data string
		want tradeData
		ok   bool
	}{
		{"the stream's trade object",
			`{"trade_id":42,"market_id":7,"pool_id":3,"event_id":1,"side":"YES","action":"buy","shares":10,"amount_kopecks":500,"yes_probability":0.51,"created_at":"2026-11-24T10:00:00.123456789Z"}`,
			tradeData{42, 7, []byte("2026-11-24T10:00:00.123456789Z")}, true},
		{"spaces around the colons", `{ "trade_id" : 42 , "market_id" :7, "created_at": "2026-11-24T10:00:00Z" }`,
			tradeData{42, 7, []byte("2026-11-24T10:00:00Z")}, true},
		{"no created_at still reads through encoding/json", `{"trade_id":42,"market_id":7}`, tradeData{42, 7, []byte("")}, true},
		{"no trade_id fails", `{"market_id":7,"created_at":"x"}`, tradeData{}, false},
		{"not JSON fails", `trade 42`, tradeData{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parseTradeData([]byte(c.data))
			if ok != c.ok || got.trade != c.want.trade || got.market != c.want.market || string(got.createdAt) != string(c.want.createdAt) {
				t.Errorf("parseTradeData = %+v (%s), %v; want %+v, %v", got, got.createdAt, ok, c.want, c.ok)
			}
		})
	}
}
