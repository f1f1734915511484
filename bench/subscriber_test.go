package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseTrade is a trade message of market 7 as the stream writes it.
func sseTrade(id, trade int64) string {
	return fmt.Sprintf("id: %d\nevent: trade\ndata: {\"trade_id\":%d,\"market_id\":7,\"side\":\"YES\",\"action\":\"buy\",\"created_at\":\"%s\"}\n\n",
		id, trade, time.Now().UTC().Format(time.RFC3339Nano))
}

func ssePrice(id int64) string {
	return fmt.Sprintf("id: %d\nevent: price\ndata: {\"market_id\":7,\"yes_probability\":0.5}\n\n", id)
}

// sseServer serves, to its n-th connection (from 0), script(n, the
// request's Last-Event-ID), then holds the connection open until the test
// ends when hold(n) says so, or closes it.
type sseServer struct {
	t       *testing.T
	mu      sync.Mutex
	n       int
	resumed []string // each connection's Last-Event-ID
	script  func(n int, last string) (status int, body string, hold bool)
	done    chan struct{}
}

func newSSEServer(t *testing.T, script func(n int, last string) (int, string, bool)) (*sseServer, *streamTarget) {
	s := &sseServer{t: t, script: script, done: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := s.n
		s.n++
		s.resumed = append(s.resumed, r.Header.Get("Last-Event-ID"))
		s.mu.Unlock()
		if got := r.URL.Query().Get("topics"); got != "market:7" {
			t.Errorf("topics %q, want market:7", got)
		}
		status, body, hold := s.script(n, r.Header.Get("Last-Event-ID"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		w.Write([]byte(body))
		w.(http.Flusher).Flush()
		if hold {
			select {
			case <-s.done:
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(s.done) })
	target, err := newStreamTarget(srv.URL, "market:7")
	if err != nil {
		t.Fatal(err)
	}
	return s, target
}

// follow runs a subscriber from from until it has want distinct trades
// or a second passed, then stops it and returns it and its first
// connection's outcome.
func follow(t *testing.T, target *streamTarget, from int64, want int64, book *answerBook) (*subscriber, error) {
	t.Helper()
	run := newStreamRun(7, book)
	s := &subscriber{from: from}
	ready := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(context.Background(), target, time.Second, run, func(err error) { ready <- err })
	}()
	first := <-ready
	deadline := time.Now().Add(time.Second)
	for first == nil && s.distinct.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s.stop()
	<-done
	return s, first
}

func TestSubscriberResumesWithLastEventIDAfterADrop(t *testing.T) {
	cases := []struct {
		name   string
		from   int64
		script func(n int, last string) (int, string, bool)
		want   int64 // distinct trades to wait for
		check  func(t *testing.T, s *subscriber, resumed []string)
	}{
		{"a dropped connection resumes after the last id and misses nothing", 0,
			func(n int, last string) (int, string, bool) {
				if n == 0 {
					return 200, sseTrade(1, 101) + ssePrice(2) + sseTrade(3, 102), false
				}
				return 200, ": ping\n\n" + sseTrade(4, 103) + ssePrice(5), true
			}, 3,
			func(t *testing.T, s *subscriber, resumed []string) {
				if len(resumed) < 2 || resumed[0] != "" || resumed[1] != "3" {
					t.Errorf("Last-Event-ID of each connection %q, want none then 3", resumed)
				}
				if s.reconnects != 1 || s.comments != 1 {
					t.Errorf("%d reconnects, %d comment lines; want 1 and 1", s.reconnects, s.comments)
				}
				if s.t.duplicates != 0 || s.t.outOfOrder != 0 || s.t.messages != 5 {
					t.Errorf("tally %+v", s.t)
				}
			}},
		{"a server that resends the last trade on resuming shows a duplicate", 0,
			func(n int, last string) (int, string, bool) {
				if n == 0 {
					return 200, sseTrade(1, 101) + sseTrade(3, 102), false
				}
				return 200, sseTrade(3, 102) + sseTrade(4, 103), true
			}, 3,
			func(t *testing.T, s *subscriber, resumed []string) {
				if s.t.duplicates != 1 || s.reconnects != 1 {
					t.Errorf("%d duplicates, %d reconnects; want 1 and 1", s.t.duplicates, s.reconnects)
				}
			}},
		{"the first connection resumes from the position given", 40,
			func(n int, last string) (int, string, bool) {
				return 200, sseTrade(41, 101) + sseTrade(43, 102) + sseTrade(45, 103), true
			}, 3,
			func(t *testing.T, s *subscriber, resumed []string) {
				if len(resumed) != 1 || resumed[0] != "40" {
					t.Errorf("Last-Event-ID %q, want 40 once", resumed)
				}
				if s.reconnects != 0 || s.t.lastID != 45 {
					t.Errorf("%d reconnects, last id %d", s.reconnects, s.t.lastID)
				}
			}},
		{"a reset after a reconnection is counted", 0,
			func(n int, last string) (int, string, bool) {
				if n == 0 {
					return 200, sseTrade(1, 101), false
				}
				return 200, "id: 90\nevent: reset\ndata: {}\n\n" + sseTrade(91, 102) + sseTrade(92, 103), true
			}, 3,
			func(t *testing.T, s *subscriber, resumed []string) {
				if s.t.resets != 1 || s.reconnects != 1 {
					t.Errorf("%d resets, %d reconnects; want 1 and 1", s.t.resets, s.reconnects)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, target := newSSEServer(t, c.script)
			book := newAnswerBook()
			for _, id := range []int64{101, 102, 103} {
				book.add(id, answer{at: time.Now(), measured: true})
			}
			s, err := follow(t, target, c.from, c.want, book)
			if err != nil {
				t.Fatalf("first connection: %v", err)
			}
			if !s.connected {
				t.Fatal("not marked connected")
			}
			tt := totals([]*tally{&s.t}, []int64{101, 102, 103})
			if tt.gaps != 0 {
				t.Errorf("gaps %d: %v", tt.gaps, tt.problems)
			}
			srv.mu.Lock()
			resumed := append([]string(nil), srv.resumed...)
			srv.mu.Unlock()
			c.check(t, s, resumed)
		})
	}
}

func TestSubscriberWhoseFirstConnectionIsRefusedDoesNotRetry(t *testing.T) {
	srv, target := newSSEServer(t, func(n int, last string) (int, string, bool) {
		return http.StatusServiceUnavailable, `{"error":"too many streams"}`, false
	})
	s, err := follow(t, target, 0, 1, newAnswerBook())
	var se *statusError
	if !errors.As(err, &se) || se.status != http.StatusServiceUnavailable || kindOf(err) != "503" {
		t.Fatalf("first connection error %v, want a 503", err)
	}
	if !strings.Contains(err.Error(), "too many streams") {
		t.Errorf("error %q does not quote the answer", err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if s.connected || srv.n != 1 {
		t.Errorf("connected %v after %d attempts; want false after 1", s.connected, srv.n)
	}
}

func TestSubscriberReadsAStreamThatIsNotChunked(t *testing.T) {
	// An HTTP/1.1 answer without a length, ended by closing the
	// connection, as a proxy may send.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			conn.Read(buf)
			fmt.Fprint(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"+sseTrade(1, 101)+sseTrade(2, 102))
			time.Sleep(50 * time.Millisecond)
			conn.Close()
		}
	}()
	target, err := newStreamTarget("http://"+ln.Addr().String(), "market:7")
	if err != nil {
		t.Fatal(err)
	}
	book := newAnswerBook()
	s, err := follow(t, target, 0, 2, book)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.distinct.Load(); got != 2 {
		t.Errorf("%d trades read, want 2", got)
	}
	if len(s.pending) != 2 {
		t.Errorf("%d deliveries pending an answer, want 2 (the book is empty)", len(s.pending))
	}
}
