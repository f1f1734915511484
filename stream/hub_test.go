package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/stream"
)

func topics(t *testing.T, s string) []stream.Topic {
	t.Helper()
	ts, err := stream.ParseTopics(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestFanOut(t *testing.T) {
	t.Run("each topic gets its scope's entries, and nothing else", func(t *testing.T) {
		log := changelog.NewMemory()
		ev := &events{hidden: map[int64]bool{9: true}}
		h := newHub(t, log, stream.Options{Events: ev})
		// Event 1 has pool 10 with markets 100 and 101; event 9 (hidden)
		// has pool 90 with market 900.
		cs := map[string]*client{}
		for _, name := range []string{"trades", "market:100", "pool:10", "event:1", "event:9", "me"} {
			cs[name] = subscribe(t, h, stream.Request{Topics: topics(t, name), UserID: 7})
		}
		log.Append(trade(1, 10, 100), price(1, 10, 100)) // 1, 2
		log.Append(trade(1, 10, 101), price(1, 10, 101)) // 3, 4
		log.Append(trade(9, 90, 900))                    // 5
		log.Append(comment(1))                           // 6
		log.Append(personal(changelog.Balance, 7))       // 7
		log.Append(personal(changelog.Notification, 8))  // 8
		log.Append(resolved(1, 10, 100))                 // 9
		log.Append(comment(9))                           // 10: everyone's last
		log.Append(personal(changelog.Notification, 7))  // 11
		want := map[string][]int64{
			"trades":     {1, 3},
			"market:100": {1, 2, 9},
			"pool:10":    {1, 2, 3, 4, 9},
			"event:1":    {1, 2, 3, 4, 6, 9},
			"event:9":    {5, 10},
			"me":         {7, 11},
		}
		waitPosition(t, h, 11)
		for name, c := range cs {
			last := want[name][len(want[name])-1]
			if got := ids(c.until(t, last)); !slices.Equal(got, want[name]) {
				t.Errorf("%s got %v, want %v", name, got, want[name])
			}
		}
		ms := cs["me"].messages()
		if ms[0].event != "balance" || ms[0].data != `{"user_id":7}` {
			t.Errorf("me's first message = %v, want user 7's balance", ms[0])
		}
	})

	t.Run("a subscriber of overlapping topics gets each entry once", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "trades,market:100,pool:10,event:1")})
		log.Append(trade(1, 10, 100), price(1, 10, 100), comment(1))
		if got := ids(c.until(t, 3)); !slices.Equal(got, []int64{1, 2, 3}) {
			t.Fatalf("got %v, want [1 2 3]", got)
		}
	})

	t.Run("a message is one id, one event and one line of data", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:5")})
		log.Append(changelog.Entry{Type: changelog.Trade, MarketID: 5, Data: json.RawMessage("{\n  \"trade_id\": 1,\n  \"text\": \"a\\nb\"\n}")})
		log.Append(changelog.Entry{Type: changelog.Trade, MarketID: 5, Data: json.RawMessage(`not json`)}) // skipped
		log.Append(changelog.Entry{Type: changelog.Price, MarketID: 5, Data: json.RawMessage(`{"ok":true}`)})
		ms := c.until(t, 3)
		if len(ms) != 2 || ms[0].id != 1 || ms[0].event != "trade" || ms[0].data != `{"trade_id":1,"text":"a\nb"}` || ms[1].id != 3 {
			t.Fatalf("got %v", ms)
		}
	})

	t.Run("an event's active flag is read once, then from memory", func(t *testing.T) {
		log := changelog.NewMemory()
		ev := &events{hidden: map[int64]bool{}}
		h := newHub(t, log, stream.Options{Events: ev, ActiveTTL: time.Hour})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "trades")})
		for range 20 {
			log.Append(trade(1, 10, 100))
		}
		c.until(t, 20)
		ev.mu.Lock()
		defer ev.mu.Unlock()
		if ev.calls != 1 {
			t.Fatalf("EventActive called %d times for 20 trades of one event, want 1", ev.calls)
		}
	})

	t.Run("a hidden event's trades reach the trades topic again once it is shown", func(t *testing.T) {
		log := changelog.NewMemory()
		ev := &events{hidden: map[int64]bool{1: true}}
		h := newHub(t, log, stream.Options{Events: ev, ActiveTTL: time.Millisecond})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "trades")})
		log.Append(trade(1, 10, 100))
		waitPosition(t, h, 1)
		ev.mu.Lock()
		ev.hidden[1] = false
		ev.mu.Unlock()
		// The stale flag is used while it is read again; a few trades
		// later the new one is.
		deadline := time.Now().Add(10 * time.Second)
		for len(c.messages()) == 0 && time.Now().Before(deadline) {
			log.Append(trade(1, 10, 100))
			time.Sleep(5 * time.Millisecond)
		}
		ms := c.messages()
		if len(ms) == 0 || ms[0].id == 1 {
			t.Fatalf("got %v, want trades after the first (hidden) one", ms)
		}
	})

	t.Run("when the active flag cannot be read, the trade goes out", func(t *testing.T) {
		log := changelog.NewMemory()
		ev := &events{fail: errBoom}
		h := newHub(t, log, stream.Options{Events: ev})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "trades")})
		log.Append(trade(1, 10, 100))
		c.until(t, 1)
	})
}

func TestSharedBytes(t *testing.T) {
	t.Run("subscribers of one entry get the same bytes", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{})
		var cs []*client
		for range 3 {
			cs = append(cs, subscribe(t, h, stream.Request{Topics: topics(t, "market:1")}))
		}
		log.Append(trade(1, 1, 1))
		var first string
		for i, c := range cs {
			ms := c.until(t, 1)
			if i == 0 {
				first = ms[0].String()
			} else if ms[0].String() != first {
				t.Fatalf("subscriber %d got %v, the first %v", i, ms[0], first)
			}
		}
	})
}

func TestSlowSubscriber(t *testing.T) {
	t.Run("a subscriber that falls behind is disconnected and the others go on", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{Buffer: 4})
		slow := newRecorder()
		slow.gate = make(chan struct{})
		sc, err := trySubscribe(h, stream.Request{Topics: topics(t, "market:1")}, slow)
		if err != nil {
			t.Fatal(err)
		}
		slow.gate <- struct{}{} // the opening comment
		fast := subscribe(t, h, stream.Request{Topics: topics(t, "market:1")})
		for range 50 {
			log.Append(trade(1, 1, 1))
			time.Sleep(100 * time.Microsecond)
		}
		if got := ids(fast.until(t, 50)); len(got) != 50 {
			t.Fatalf("the fast subscriber got %d messages, want 50", len(got))
		}
		close(slow.gate)
		if err := sc.ended(t); !errors.Is(err, stream.ErrSlow) {
			t.Fatalf("the slow subscriber's Serve = %v, want ErrSlow", err)
		}
		if h.Slow() != 1 {
			t.Errorf("Slow() = %d, want 1", h.Slow())
		}
		if got := len(sc.messages()); got > 6 {
			t.Errorf("the slow subscriber got %d messages, want at most its buffer and the one it was writing", got)
		}
		// It resumes from the log where it stopped.
		ms := sc.messages()
		var last int64
		if len(ms) > 0 {
			last = ms[len(ms)-1].id
		}
		again := subscribe(t, h, stream.Request{Topics: topics(t, "market:1"), Resume: true, After: last})
		got := ids(again.until(t, 50))
		if len(got) != int(50-last) || got[0] != last+1 {
			t.Fatalf("resumed after %d: %v", last, got)
		}
	})
}

func TestCoalesce(t *testing.T) {
	t.Run("a message after a quiet spell goes out at once, and those right after it go out together", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{Coalesce: time.Second})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "market:1")})
		log.Append(trade(1, 1, 1))
		c.until(t, 1)
		for range 3 {
			log.Append(trade(1, 1, 1))
		}
		c.until(t, 4)
		c.rec.mu.Lock()
		defer c.rec.mu.Unlock()
		var got [][]int64
		for _, b := range c.rec.batches {
			if b[0].comment == "" {
				got = append(got, ids(b))
			}
		}
		if len(got) != 2 || !slices.Equal(got[0], []int64{1}) || !slices.Equal(got[1], []int64{2, 3, 4}) {
			t.Fatalf("writes %v, want [[1] [2 3 4]]", got)
		}
	})
}

func TestPing(t *testing.T) {
	t.Run("an idle subscriber gets a ping comment", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{Ping: 20 * time.Millisecond})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "trades")})
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			c.rec.mu.Lock()
			n := 0
			for _, m := range c.rec.msgs {
				if m.comment == "ping" {
					n++
				}
			}
			c.rec.mu.Unlock()
			if n >= 2 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("no two pings")
	})
}

func TestClose(t *testing.T) {
	t.Run("closing the hub ends every subscription and refuses new ones", func(t *testing.T) {
		log := changelog.NewMemory()
		h := stream.New(stream.Options{Log: log, Feed: &changelog.Poller{Log: log, Woken: log.Appended}})
		if _, err := h.Open(context.Background(), stream.Request{Topics: topics(t, "trades")}); !errors.Is(err, stream.ErrClosed) {
			t.Fatalf("Open before Start = %v, want ErrClosed", err)
		}
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := subscribe(t, h, stream.Request{Topics: topics(t, "trades")})
		waitLen(t, h, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.ended(t); !errors.Is(err, stream.ErrClosed) {
			t.Fatalf("Serve = %v, want ErrClosed", err)
		}
		c.rec.mu.Lock()
		last := c.rec.msgs[len(c.rec.msgs)-1]
		c.rec.mu.Unlock()
		if last.comment != "closing" {
			t.Errorf("last thing written = %v, want the closing comment", last)
		}
		if _, err := h.Open(context.Background(), stream.Request{Topics: topics(t, "trades")}); !errors.Is(err, stream.ErrClosed) {
			t.Fatalf("Open after Close = %v, want ErrClosed", err)
		}
		if h.Len() != 0 {
			t.Errorf("Len = %d after close", h.Len())
		}
	})
}

func waitLen(t *testing.T, h *stream.Hub, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.Len() != n {
		if time.Now().After(deadline) {
			t.Fatalf("Len = %d, want %d", h.Len(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSettlements(t *testing.T) {
	ctx := context.Background()
	t.Run("a holder's me topic turns a resolution into its notification", func(t *testing.T) {
		log := changelog.NewMemory()
		st := &settlements{holders: map[int64][]int64{100: {7}}}
		h := newHub(t, log, stream.Options{Settlements: st})
		holderMe := subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 7})
		holderBoth := subscribe(t, h, stream.Request{Topics: topics(t, "me,market:100"), UserID: 7})
		otherMe := subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 8})
		otherBoth := subscribe(t, h, stream.Request{Topics: topics(t, "me,event:1"), UserID: 8})
		waitLen(t, h, 4)
		log.Append(resolved(1, 10, 100))                                                     // 1
		log.Append(personal(changelog.Notification, 7), personal(changelog.Notification, 8)) // 2, 3

		ms := holderMe.until(t, 2)
		if len(ms) != 2 || ms[0].id != 1 || ms[0].event != "notification" || ms[0].data != `{"type":"market_resolved","user_id":7}` {
			t.Fatalf("the holder's me got %v", ms)
		}
		ms = holderBoth.until(t, 2)
		if len(ms) != 2 || ms[0].event != "market_resolved" ||
			ms[0].data != `{"market_id":100,"winning_outcome":"YES","notification":{"type":"market_resolved","user_id":7}}` {
			t.Fatalf("the holder's me and market got %v", ms)
		}
		if ms := otherMe.until(t, 3); len(ms) != 1 || ms[0].id != 3 {
			t.Fatalf("a non-holder's me got %v, want only its own notification", ms)
		}
		if ms := otherBoth.until(t, 3); len(ms) != 2 || ms[0].event != "market_resolved" || strings.Contains(ms[0].data, "notification") {
			t.Fatalf("a non-holder's me and event got %v, want the public resolution", ms)
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.calls) != 1 || len(st.calls[0]) != 2 {
			t.Errorf("Settlement calls %v, want one for both users", st.calls)
		}
	})

	t.Run("a subscriber that joins while the settlement is read asks for itself", func(t *testing.T) {
		log := changelog.NewMemory()
		st := &settlements{holders: map[int64][]int64{100: {7, 9}}, hold: make(chan struct{}), entered: make(chan struct{}, 1)}
		h := newHub(t, log, stream.Options{Settlements: st})
		first := subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 7})
		waitLen(t, h, 1)
		log.Append(resolved(1, 10, 100))
		<-st.entered
		// It resumes from 0: the fan-out, held up at 0, registers it at
		// once, and the resolution is then queued for it unasked.
		late := subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 9, Resume: true})
		waitLen(t, h, 2)
		time.Sleep(10 * time.Millisecond) // let it register
		close(st.hold)
		log.Append(personal(changelog.Notification, 9))
		if ms := first.until(t, 1); ms[0].event != "notification" {
			t.Fatalf("the first got %v", ms)
		}
		ms := late.until(t, 2)
		if len(ms) != 2 || ms[0].id != 1 || ms[0].event != "notification" || ms[0].data != `{"type":"market_resolved","user_id":9}` {
			t.Fatalf("the late subscriber got %v", ms)
		}
	})

	t.Run("a resuming holder gets its notification from the log", func(t *testing.T) {
		log := changelog.NewMemory()
		st := &settlements{holders: map[int64][]int64{100: {7}}}
		log.Append(resolved(1, 10, 100), trade(1, 10, 100))
		h := newHub(t, log, stream.Options{Settlements: st})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 7, Resume: true})
		log.Append(personal(changelog.Balance, 7))
		ms := c.until(t, 3)
		if len(ms) != 2 || ms[0].id != 1 || ms[0].event != "notification" || ms[1].id != 3 {
			t.Fatalf("got %v", ms)
		}
	})

	t.Run("when the settlement cannot be read, its users are dropped and resume", func(t *testing.T) {
		log := changelog.NewMemory()
		st := &settlements{holders: map[int64][]int64{100: {7}}, fail: errBoom}
		h := newHub(t, log, stream.Options{Settlements: st})
		c := subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 7})
		public := subscribe(t, h, stream.Request{Topics: topics(t, "market:100")})
		waitLen(t, h, 2)
		log.Append(resolved(1, 10, 100))
		if err := c.ended(t); !errors.Is(err, stream.ErrDropped) {
			t.Fatalf("Serve = %v, want ErrDropped", err)
		}
		public.until(t, 1)
		st.mu.Lock()
		st.fail = nil
		st.mu.Unlock()
		c = subscribe(t, h, stream.Request{Topics: topics(t, "me"), UserID: 7, Resume: true})
		if ms := c.until(t, 1); ms[0].event != "notification" {
			t.Fatalf("resumed: %v", ms)
		}
	})

	t.Run("the me topic needs a user", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{})
		if _, err := h.Open(ctx, stream.Request{Topics: topics(t, "me")}); err == nil {
			t.Fatal("me without a user was accepted")
		}
	})
}

func TestReader(t *testing.T) {
	t.Run("a subscription read as bytes, a few at a time, is the stream Serve writes", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{})
		s, err := h.Open(context.Background(), stream.Request{Topics: topics(t, "market:1")})
		if err != nil {
			t.Fatal(err)
		}
		sent := 0
		r := s.Reader(func() { sent++ })
		rec := newRecorder()
		done := make(chan error, 1)
		go func() {
			buf := make([]byte, 7)
			for {
				n, err := r.Read(buf)
				rec.Write(buf[:n])
				rec.Flush()
				if err != nil {
					done <- err
					return
				}
			}
		}()
		c := &client{rec: rec, done: make(chan error, 1)}
		c.opened(t)
		log.Append(trade(1, 1, 1), price(1, 1, 1), trade(1, 1, 2))
		if got := ids(c.until(t, 2)); !slices.Equal(got, []int64{1, 2}) {
			t.Fatalf("got %v", got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		go h.Close(ctx)
		select {
		case err := <-done:
			if err != io.EOF {
				t.Fatalf("Read ended with %v, want io.EOF", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Read did not end when the hub closed")
		}
		if !errors.Is(r.Err(), stream.ErrClosed) {
			t.Errorf("Err = %v, want ErrClosed", r.Err())
		}
		if sent == 0 {
			t.Error("sending was never called")
		}
		r.Close()
		waitLen(t, h, 0)
	})

	t.Run("closing a reader ends its subscription", func(t *testing.T) {
		log := changelog.NewMemory()
		h := newHub(t, log, stream.Options{})
		s, err := h.Open(context.Background(), stream.Request{Topics: topics(t, "trades")})
		if err != nil {
			t.Fatal(err)
		}
		r := s.Reader(nil)
		buf := make([]byte, 64)
		if n, err := r.Read(buf); err != nil || string(buf[:n]) != ": ok\n\n" {
			t.Fatalf("first Read = %q, %v", buf[:n], err)
		}
		waitLen(t, h, 1)
		r.Close()
		waitLen(t, h, 0)
		if n, err := r.Read(buf); n != 0 || err != io.EOF {
			t.Fatalf("Read after Close = %d, %v", n, err)
		}
	})
}
