package jetstream

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/predictkit/predictkit/changelog"
)

// msg is a stream message as a consumer hands it over: stored as number
// seq, holding entry e.
type msg struct {
	natsjs.Msg
	seq  uint64
	head nats.Header
	data []byte
}

func (m msg) Metadata() (*natsjs.MsgMetadata, error) {
	return &natsjs.MsgMetadata{Sequence: natsjs.SequencePair{Stream: m.seq}}, nil
}
func (m msg) Headers() nats.Header { return m.head }
func (m msg) Data() []byte         { return m.data }

func stored(t *testing.T, seq uint64, e changelog.Entry) msg {
	t.Helper()
	m, err := encode("s", e)
	if err != nil {
		t.Fatal(err)
	}
	return msg{seq: seq, head: m.Header, data: m.Data}
}

func TestFeedEntry(t *testing.T) {
	f := NewFeed(nil, FeedOptions{Stream: "S"})
	at := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	entry := func(seq int64) changelog.Entry {
		return changelog.Entry{Seq: seq, Type: changelog.Price, EventID: 3, PoolID: 4, MarketID: 5, Data: []byte(`{"yes_probability":0.6}`), At: at}
	}
	t.Run("the next message is delivered, its entry whole", func(t *testing.T) {
		e, ok, err := f.entry(stored(t, 8, entry(8)), 7, nil)
		if err != nil || !ok || e.Seq != 8 || e.Type != changelog.Price || e.EventID != 3 || e.PoolID != 4 || e.MarketID != 5 || string(e.Data) != `{"yes_probability":0.6}` || !e.At.Equal(at) {
			t.Fatalf("entry = %+v, %v, %v", e, ok, err)
		}
	})
	t.Run("the next message after a batch follows the batch's last entry", func(t *testing.T) {
		if _, ok, err := f.entry(stored(t, 10, entry(10)), 7, []changelog.Entry{entry(8), entry(9)}); err != nil || !ok {
			t.Fatalf("entry = %v, %v", ok, err)
		}
	})
	t.Run("a message at or before the last delivered is dropped, not delivered twice", func(t *testing.T) {
		for _, seq := range []uint64{6, 7} {
			if _, ok, err := f.entry(stored(t, seq, entry(int64(seq))), 7, nil); err != nil || ok {
				t.Fatalf("message %d after 7: ok %v, %v; want dropped", seq, ok, err)
			}
		}
	})
	t.Run("a message past the next one is a gap", func(t *testing.T) {
		_, _, err := f.entry(stored(t, 11, entry(11)), 7, nil)
		var pe *changelog.PrunedError
		if !errors.As(err, &pe) || !errors.Is(err, changelog.ErrPruned) || pe.After != 7 || pe.Pruned != 10 {
			t.Fatalf("entry = %v, want entries 8…10 missing", err)
		}
	})
	t.Run("a message holding another entry than its number is refused", func(t *testing.T) {
		_, _, err := f.entry(stored(t, 8, entry(9)), 7, nil)
		if err == nil || !strings.Contains(err.Error(), "out of step") {
			t.Fatalf("entry = %v, want out of step", err)
		}
	})
	t.Run("a message without the sequence header is refused", func(t *testing.T) {
		m := stored(t, 8, entry(8))
		m.head = nats.Header{}
		if _, _, err := f.entry(m, 7, nil); err == nil || !strings.Contains(err.Error(), SeqHeader) {
			t.Fatalf("entry = %v, want a missing header", err)
		}
	})
	t.Run("a header and a payload that disagree are refused", func(t *testing.T) {
		m := stored(t, 8, entry(8))
		m.head = nats.Header{SeqHeader: []string{"80"}}
		if _, _, err := f.entry(m, 7, nil); err == nil {
			t.Fatal("entry accepted a header that disagrees with its payload")
		}
	})
}

func TestEncode(t *testing.T) {
	t.Run("a message is compact: the entry's fields by short names, empty places left out", func(t *testing.T) {
		m, err := encode("predictkit.changes", changelog.Entry{Seq: 42, Type: changelog.Balance, UserID: 7, Data: []byte(`{"balance":100}`), At: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		want := `{"seq":42,"type":"balance","user_id":7,"data":{"balance":100},"at":"2025-03-01T12:00:00Z"}`
		if string(m.Data) != want || m.Subject != "predictkit.changes" {
			t.Fatalf("message %s on %s, want %s", m.Data, m.Subject, want)
		}
		if m.Header.Get(natsjs.MsgIDHeader) != "42" || m.Header.Get(SeqHeader) != "42" {
			t.Fatalf("headers %v, want the entry's number as Nats-Msg-Id and %s", m.Header, SeqHeader)
		}
	})
}
