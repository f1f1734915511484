package jetstream

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/predictkit/predictkit/changelog"
)

// SeqHeader is the header that carries an entry's sequence number in the
// log, so that a reader (the relay resuming, an operator with the nats
// tool) learns it without decoding the payload.
const SeqHeader = "Predictkit-Seq"

// message is an entry as the stream keeps it: JSON with short names and
// without the place fields an entry does not have, Data inline.
type message struct {
	Seq      int64           `json:"seq"`
	Type     changelog.Type  `json:"type"`
	EventID  int64           `json:"event_id,omitempty"`
	PoolID   int64           `json:"pool_id,omitempty"`
	MarketID int64           `json:"market_id,omitempty"`
	UserID   int64           `json:"user_id,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	At       time.Time       `json:"at"`
}

// encode makes the NATS message of e on subject. Its Nats-Msg-Id is the
// sequence number: JetStream drops a second message with the same id
// within the stream's duplicate window, so a relay that publishes an entry
// again (it crashed before the acknowledgement came back, or two relays
// overlapped for a moment) does not store it twice.
func encode(subject string, e changelog.Entry) (*nats.Msg, error) {
	body, err := json.Marshal(message{
		Seq: e.Seq, Type: e.Type,
		EventID: e.EventID, PoolID: e.PoolID, MarketID: e.MarketID, UserID: e.UserID,
		Data: e.Data, At: e.At,
	})
	if err != nil {
		return nil, fmt.Errorf("jetstream: entry %d: %w", e.Seq, err)
	}
	seq := strconv.FormatInt(e.Seq, 10)
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(natsjs.MsgIDHeader, seq)
	m.Header.Set(SeqHeader, seq)
	return m, nil
}

// decode reads an entry back from a stream message's header and payload.
// A message whose header and payload disagree, or that has neither, was
// not written by a Relay.
func decode(h nats.Header, data []byte) (changelog.Entry, error) {
	hs, err := headerSeq(h)
	if err != nil {
		return changelog.Entry{}, err
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return changelog.Entry{}, fmt.Errorf("jetstream: entry %d: %w", hs, err)
	}
	if m.Seq != hs {
		return changelog.Entry{}, fmt.Errorf("jetstream: a message's %s header says %d but its entry is %d", SeqHeader, hs, m.Seq)
	}
	return changelog.Entry{
		Seq: m.Seq, Type: m.Type,
		EventID: m.EventID, PoolID: m.PoolID, MarketID: m.MarketID, UserID: m.UserID,
		Data: m.Data, At: m.At,
	}, nil
}

// headerSeq is the sequence number a message's header gives.
func headerSeq(h nats.Header) (int64, error) {
	v := h.Get(SeqHeader)
	seq, err := strconv.ParseInt(v, 10, 64)
	if err != nil || seq <= 0 {
		return 0, fmt.Errorf("jetstream: a message without a valid %s header (%q): not written by a relay", SeqHeader, v)
	}
	return seq, nil
}
