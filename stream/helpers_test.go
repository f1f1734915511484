package stream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/stream"
)

// msg is one message (or comment) a subscriber received.
type msg struct {
	id      int64
	event   string
	data    string
	comment string
}

func (m msg) String() string {
	if m.comment != "" {
		return ":" + m.comment
	}
	return fmt.Sprintf("%d %s %s", m.id, m.event, m.data)
}

// recorder is a Writer that parses what is flushed into messages.
type recorder struct {
	mu      sync.Mutex
	pending bytes.Buffer
	msgs    []msg
	// batches are the messages of each flush that had any.
	batches [][]msg
	changed chan struct{} // closed and replaced at every flush
	// gate, when set, is received from before every Flush: a client that
	// reads only when told to.
	gate chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending.Write(p)
}

func (r *recorder) Flush() error {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var batch []msg
	for {
		b := r.pending.Bytes()
		i := bytes.Index(b, []byte("\n\n"))
		if i < 0 {
			break
		}
		batch = append(batch, parseMsg(string(b[:i])))
		r.pending.Next(i + 2)
	}
	r.msgs = append(r.msgs, batch...)
	if len(batch) > 0 {
		r.batches = append(r.batches, batch)
	}
	close(r.changed)
	r.changed = make(chan struct{})
	return nil
}

func parseMsg(block string) msg {
	var m msg
	for line := range strings.SplitSeq(block, "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "":
			m.comment = v
		case "id":
			m.id, _ = strconv.ParseInt(v, 10, 64)
		case "event":
			m.event = v
		case "data":
			m.data = v
		}
	}
	return m
}

// client is a subscription served in the background.
type client struct {
	rec  *recorder
	done chan error
}

func subscribe(t *testing.T, h *stream.Hub, r stream.Request) *client {
	t.Helper()
	c, err := trySubscribe(h, r, newRecorder())
	if err != nil {
		t.Fatalf("Open(%+v) = %v", r, err)
	}
	c.opened(t)
	return c
}

// opened waits for the opening comment: a subscription that does not
// resume is registered with the fan-out by then.
func (c *client) opened(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.rec.mu.Lock()
		ch := c.rec.changed
		ok := len(c.rec.msgs) > 0 && c.rec.msgs[0].comment == "ok"
		c.rec.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case err := <-c.done:
			c.done <- err
			t.Fatalf("the subscription ended (%v) before it opened", err)
		case <-deadline:
			t.Fatal("the subscription did not open")
		}
	}
}

func trySubscribe(h *stream.Hub, r stream.Request, rec *recorder) (*client, error) {
	s, err := h.Open(context.Background(), r)
	if err != nil {
		return nil, err
	}
	c := &client{rec: rec, done: make(chan error, 1)}
	go func() { c.done <- s.Serve(rec) }()
	return c, nil
}

// messages are the messages received so far, comments left out.
func (c *client) messages() []msg {
	c.rec.mu.Lock()
	defer c.rec.mu.Unlock()
	var out []msg
	for _, m := range c.rec.msgs {
		if m.comment == "" {
			out = append(out, m)
		}
	}
	return out
}

// waitFor waits until cond holds of the messages received, and returns
// them.
func (c *client) waitFor(t *testing.T, what string, cond func([]msg) bool) []msg {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.rec.mu.Lock()
		ch := c.rec.changed
		c.rec.mu.Unlock()
		ms := c.messages()
		if cond(ms) {
			return ms
		}
		select {
		case <-ch:
		case err := <-c.done:
			c.done <- err
			ms := c.messages()
			if cond(ms) {
				return ms
			}
			t.Fatalf("the subscription ended (%v) before %s; got %v", err, what, ms)
		case <-deadline:
			t.Fatalf("timed out waiting for %s; got %v", what, c.messages())
		}
	}
}

// until waits for the message with id seq and returns every message.
func (c *client) until(t *testing.T, seq int64) []msg {
	t.Helper()
	return c.waitFor(t, fmt.Sprintf("message %d", seq), func(ms []msg) bool {
		return len(ms) > 0 && ms[len(ms)-1].id >= seq
	})
}

// ended waits for the subscription to end and returns Serve's error.
func (c *client) ended(t *testing.T) error {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription did not end")
		return nil
	}
}

func ids(ms []msg) []int64 {
	var out []int64
	for _, m := range ms {
		out = append(out, m.id)
	}
	return out
}

// newHub is a started hub on a memory log.
func newHub(t *testing.T, log *changelog.Memory, o stream.Options) *stream.Hub {
	t.Helper()
	if o.Log == nil {
		o.Log = log
	}
	if o.Feed == nil {
		o.Feed = &changelog.Poller{Log: log, Woken: log.Appended, Interval: time.Hour, Batch: 50}
	}
	h := stream.New(o)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// waitPosition waits until the hub has handed out entry seq.
func waitPosition(t *testing.T, h *stream.Hub, seq int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.Position() < seq {
		if time.Now().After(deadline) {
			t.Fatalf("the hub is at %d, want %d", h.Position(), seq)
		}
		time.Sleep(time.Millisecond)
	}
}

// Entries.

func trade(event, pool, market int64) changelog.Entry {
	return changelog.Entry{Type: changelog.Trade, EventID: event, PoolID: pool, MarketID: market,
		Data: json.RawMessage(fmt.Sprintf(`{"market_id":%d,"side":"YES"}`, market))}
}

func price(event, pool, market int64) changelog.Entry {
	return changelog.Entry{Type: changelog.Price, EventID: event, PoolID: pool, MarketID: market,
		Data: json.RawMessage(fmt.Sprintf(`{"market_id":%d,"yes_probability":0.5}`, market))}
}

func resolved(event, pool, market int64) changelog.Entry {
	return changelog.Entry{Type: changelog.MarketResolved, EventID: event, PoolID: pool, MarketID: market,
		Data: json.RawMessage(fmt.Sprintf(`{"market_id":%d,"winning_outcome":"YES"}`, market))}
}

func comment(event int64) changelog.Entry {
	return changelog.Entry{Type: changelog.Comment, EventID: event, Data: json.RawMessage(`{"content":"hi"}`)}
}

func personal(typ changelog.Type, user int64) changelog.Entry {
	return changelog.Entry{Type: typ, UserID: user, Data: json.RawMessage(fmt.Sprintf(`{"user_id":%d}`, user))}
}

// events is a stream.EventStatus over a map, counting its calls.
type events struct {
	mu     sync.Mutex
	hidden map[int64]bool
	calls  int
	fail   error
}

func (e *events) EventActive(_ context.Context, id int64) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.fail != nil {
		return false, e.fail
	}
	return !e.hidden[id], nil
}

// settlements is a stream.Settlements: holders[market] are the users who
// held a position there.
type settlements struct {
	mu      sync.Mutex
	holders map[int64][]int64
	calls   [][]int64
	fail    error
	// hold, when set, is closed by the test to let calls return; entered
	// is signalled when a call starts.
	hold    chan struct{}
	entered chan struct{}
}

func (s *settlements) Settlement(_ context.Context, e changelog.Entry, users []int64) (map[int64]json.RawMessage, error) {
	if s.entered != nil {
		select {
		case s.entered <- struct{}{}:
		default:
		}
	}
	if s.hold != nil {
		<-s.hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, append([]int64(nil), users...))
	if s.fail != nil {
		return nil, s.fail
	}
	out := map[int64]json.RawMessage{}
	for _, u := range users {
		for _, h := range s.holders[e.MarketID] {
			if h == u {
				out[u] = json.RawMessage(fmt.Sprintf(`{"type":"market_resolved","user_id":%d}`, u))
			}
		}
	}
	return out, nil
}

var errBoom = errors.New("boom")
