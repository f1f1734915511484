package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/predictkit/predictkit/changelog"
)

// frame is one message as it goes on the wire, encoded once and shared by
// every subscriber that gets it.
type frame struct {
	seq int64
	b   []byte
	// resolve, when set, is a market_resolved entry whose meaning for
	// the subscriber's own user the hub could not learn in advance (the
	// subscriber joined while the hub was asking): the subscriber asks
	// itself when it writes the frame. b is then the public message, or
	// nil when the subscriber follows none of the market's topics.
	resolve *changelog.Entry
}

// The wire format (text/event-stream): an id line, an event line, one
// data line, a blank line. The data is one JSON object on one line.
var (
	pingBytes    = []byte(": ping\n\n")
	openBytes    = []byte(": ok\n\n")
	closingBytes = []byte(": closing\n\n")
)

// encode is the message of entry seq, of type typ, with data.
func encode(seq int64, typ string, data []byte) ([]byte, error) {
	data, err := oneLine(data)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(data)+len(typ)+32)
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, "\nevent: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return b, nil
}

// oneLine returns data as one line: a line break would end the data
// field, so JSON written with line breaks between its tokens is compacted.
// Data that is not one JSON object is refused.
func oneLine(data []byte) ([]byte, error) {
	d := bytes.TrimSpace(data)
	if len(d) < 2 || d[0] != '{' || d[len(d)-1] != '}' {
		return nil, fmt.Errorf("stream: an entry's data is not a JSON object: %.40q", data)
	}
	if bytes.IndexByte(d, '\n') < 0 && bytes.IndexByte(d, '\r') < 0 {
		return d, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, d); err != nil {
		return nil, fmt.Errorf("stream: an entry's data is not JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// withNotification is public, a JSON object, with the member
// "notification": note added.
func withNotification(public, note []byte) ([]byte, error) {
	p, err := oneLine(public)
	if err != nil {
		return nil, err
	}
	n, err := oneLine(note)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(p)+len(n)+20)
	out = append(out, p[:len(p)-1]...)
	if len(bytes.TrimSpace(p[1:len(p)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"notification":`...)
	out = append(out, n...)
	return append(out, '}'), nil
}

// ResetData is the data of a reset message: the log no longer holds
// entries the client missed.
type ResetData struct {
	// Reason is "pruned": the entries after the client's last id are
	// older than the log keeps.
	Reason string `json:"reason"`
	// OldestID is the oldest id the log still holds (every id up to
	// OldestID-1 is gone).
	OldestID int64 `json:"oldest_id"`
	// LastEventID is the message's own id: the stream goes on with the
	// events after it.
	LastEventID int64 `json:"last_event_id"`
	// Action says what the client should do.
	Action string `json:"action"`
}

// resetAction tells a client what a reset means for it.
const resetAction = "reload the state you show from the REST API (events, markets, balances, notifications), then keep reading: the events after last_event_id follow"

func encodeReset(pos, pruned int64) []byte {
	data, _ := json.Marshal(ResetData{Reason: "pruned", OldestID: pruned + 1, LastEventID: pos, Action: resetAction})
	b, _ := encode(pos, "reset", data)
	return b
}
