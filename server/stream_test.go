package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/server"
)

// sseMsg is one message of a live stream (or a comment).
type sseMsg struct {
	id      int64
	event   string
	data    string
	comment string
}

func (m sseMsg) String() string {
	if m.comment != "" {
		return ":" + m.comment
	}
	return fmt.Sprintf("%d %s %s", m.id, m.event, m.data)
}

// decode reads the message's data into v.
func (m sseMsg) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(m.data), v); err != nil {
		t.Fatalf("message %v: %v", m, err)
	}
}

// sseConn is an open stream read in the background.
type sseConn struct {
	res  *http.Response
	msgs chan sseMsg
	done chan error // the reading's end
}

// streamMessageSchemas are the components of the OpenAPI document each
// message's data must match, by event.
var streamMessageSchemas = map[string]string{
	"trade": "StreamTrade", "price": "StreamPrice", "market_resolved": "StreamMarketResolved", "comment": "Comment",
	"notification": "StreamNotification", "balance": "StreamBalance", "withdrawal": "Withdrawal", "reset": "StreamReset",
}

// openStream opens GET /api/v1/stream?query on h's server (which must
// listen) with header, and checks it starts as the document says.
func openStream(t *testing.T, h *harness, query string, header map[string]string) *sseConn {
	t.Helper()
	c, res := tryStream(t, h, query, header)
	if res != nil {
		t.Fatalf("GET /api/v1/stream?%s answered %s", query, res)
	}
	return c
}

// tryStream opens a stream, or returns the error answer (validated
// against the document).
func tryStream(t *testing.T, h *harness, query string, header map[string]string) (*sseConn, *response) {
	t.Helper()
	path := "/api/v1/stream?" + query
	r, err := http.NewRequest(http.MethodGet, "http://"+h.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		resp := &response{status: res.StatusCode, header: res.Header, body: b}
		hr := httpRequest(t, path, header)
		h.validate(t, req{method: http.MethodGet, path: path}, hr, resp)
		return nil, resp
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	c := &sseConn{res: res, msgs: make(chan sseMsg, 10000), done: make(chan error, 1)}
	go c.read()
	t.Cleanup(c.close)
	if m := c.next(t); m.comment != "ok" {
		t.Fatalf("the stream began with %v, want the comment ok", m)
	}
	return c, nil
}

func httpRequest(t *testing.T, path string, header map[string]string) *http.Request {
	t.Helper()
	hr, err := http.NewRequest(http.MethodGet, "http://localhost"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	return hr
}

func (c *sseConn) read() {
	br := bufio.NewReader(c.res.Body)
	var m sseMsg
	var lines int
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.done <- err
			close(c.msgs)
			return
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if lines > 0 {
				c.msgs <- m
			}
			m, lines = sseMsg{}, 0
			continue
		}
		lines++
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
			m.data += v
		}
	}
}

func (c *sseConn) close() { _ = c.res.Body.Close() }

// next is the next message or comment.
func (c *sseConn) next(t *testing.T) sseMsg {
	t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			t.Fatalf("the stream ended: %v", <-c.done)
		}
		return m
	case <-time.After(15 * time.Second):
		t.Fatal("no message within 15 s")
		return sseMsg{}
	}
}

// message is the next message, comments skipped; its data is checked
// against the document's schema of its event.
func (c *sseConn) message(t *testing.T) sseMsg {
	t.Helper()
	for {
		m := c.next(t)
		if m.comment != "" {
			continue
		}
		checkStreamData(t, m)
		return m
	}
}

// messages reads n messages.
func (c *sseConn) messages(t *testing.T, n int) []sseMsg {
	t.Helper()
	out := make([]sseMsg, 0, n)
	for range n {
		out = append(out, c.message(t))
	}
	return out
}

// quiet checks that no message comes within d.
func (c *sseConn) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return
			}
			if m.comment == "" {
				t.Fatalf("unexpected message %v", m)
			}
		case <-deadline:
			return
		}
	}
}

func checkStreamData(t *testing.T, m sseMsg) {
	t.Helper()
	name, ok := streamMessageSchemas[m.event]
	if !ok {
		t.Fatalf("message %v: an event the document does not list", m)
	}
	if m.id <= 0 {
		t.Fatalf("message %v: no positive id", m)
	}
	doc, _ := openAPI(t)
	ref := doc.Components.Schemas[name]
	if ref == nil {
		t.Fatalf("the document has no schema %s", name)
	}
	var v any
	if err := json.Unmarshal([]byte(m.data), &v); err != nil {
		t.Fatalf("message %v: data is not JSON: %v", m, err)
	}
	if err := ref.Value.VisitJSON(v); err != nil {
		t.Fatalf("message %v does not match the document's %s: %v", m, name, err)
	}
}

// streamHarness starts a server that listens, on store.
func streamHarness(t *testing.T, store server.Store, mod ...func(*server.Config)) *harness {
	t.Helper()
	cfg := testConfig(store)
	cfg.StreamPing = 200 * time.Millisecond
	for _, m := range mod {
		m(&cfg)
	}
	h, _ := startServer(t, cfg)
	return h
}

type streamTrade struct {
	TradeID        int64   `json:"trade_id"`
	MarketID       int64   `json:"market_id"`
	PoolID         int64   `json:"pool_id"`
	EventID        int64   `json:"event_id"`
	Side           string  `json:"side"`
	Action         string  `json:"action"`
	Shares         int64   `json:"shares"`
	AmountKopecks  int64   `json:"amount_kopecks"`
	YesProbability float64 `json:"yes_probability"`
	CreatedAt      string  `json:"created_at"`
}

type streamPrice struct {
	MarketID       int64   `json:"market_id"`
	YesProbability float64 `json:"yes_probability"`
	TradeID        int64   `json:"trade_id"`
}

func TestStreamTrades(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h = streamHarness(t, h.store)
		w := newWorld(t, h)
		t.Run("a trade made through the API appears on its market's topic with the contract's fields", func(t *testing.T) {
			c := openStream(t, h, fmt.Sprintf("topics=market:%d", w.a1.ID), nil)
			tr := h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
			ms := c.messages(t, 2)
			if ms[0].event != "trade" || ms[1].event != "price" || ms[1].id <= ms[0].id {
				t.Fatalf("got %v, want a trade then its price", ms)
			}
			var got streamTrade
			ms[0].decode(t, &got)
			want := streamTrade{TradeID: tr.TradeID, MarketID: w.a1.ID, PoolID: w.poolA.ID, EventID: w.event.ID, Side: "YES", Action: "buy",
				Shares: tr.Shares, AmountKopecks: tr.CostKopecks, YesProbability: tr.Market.YesProbability}
			got.CreatedAt = ""
			if got != want {
				t.Fatalf("trade %+v, want %+v", got, want)
			}
			if strings.Contains(ms[0].data, fmt.Sprint(w.alice.id)) && strings.Contains(ms[0].data, "user") {
				t.Errorf("a public trade names its trader: %s", ms[0].data)
			}
			var p streamPrice
			ms[1].decode(t, &p)
			if p.MarketID != w.a1.ID || p.TradeID != tr.TradeID || p.YesProbability != tr.Market.YesProbability {
				t.Fatalf("price %+v", p)
			}
			// A refused trade never appears.
			r := h.do(t, req{method: http.MethodPost, path: fmt.Sprintf("/api/v1/markets/%d/sell", w.a1.ID), token: w.bob.token,
				body: map[string]any{"side": "YES", "shares": 5}})
			if r.status == http.StatusOK {
				t.Fatalf("bob sold shares he has not: %s", r)
			}
			c.quiet(t, 300*time.Millisecond)
		})

		t.Run("the trades topic carries active events only; the event's topic carries its trades and comments", func(t *testing.T) {
			hidden := h.createEvent(t, w.creator.token, twoPoolEvent("Hidden"))
			hm := hidden.Pools[0].Markets[0]
			all := openStream(t, h, "topics=trades", nil)
			ev := openStream(t, h, fmt.Sprintf("topics=event:%d", hidden.ID), nil)
			h.buy(t, w.alice.token, hm.ID, "NO", 5_000)
			cm := h.postComment(t, w.alice.token, hidden.ID, "first!", 0)
			tr := h.buy(t, w.alice.token, w.b1.ID, "YES", 5_000)
			m := all.message(t)
			var got streamTrade
			m.decode(t, &got)
			if m.event != "trade" || got.TradeID != tr.TradeID {
				t.Fatalf("trades got %v, want the listed event's trade only", m)
			}
			ms := ev.messages(t, 3)
			if ms[0].event != "trade" || ms[1].event != "price" || ms[2].event != "comment" {
				t.Fatalf("the hidden event's topic got %v", ms)
			}
			var com apiComment
			ms[2].decode(t, &com)
			if com.ID != cm.ID || com.Content != "first!" {
				t.Fatalf("comment %+v, want %+v", com, cm)
			}
		})

		t.Run("a resumed stream gets exactly the messages it missed, then the live ones", func(t *testing.T) {
			c := openStream(t, h, fmt.Sprintf("topics=pool:%d", w.poolA.ID), nil)
			h.buy(t, w.alice.token, w.a2.ID, "YES", 1_000)
			last := c.messages(t, 2)[1].id
			c.close()
			var missed []int64 // the pool's trades after last
			for range 3 {
				missed = append(missed, h.buy(t, w.bob.token, w.a1.ID, "NO", 1_000).TradeID)
			}
			h.buy(t, w.bob.token, w.b1.ID, "NO", 1_000) // another pool
			for _, how := range []struct {
				name   string
				query  string
				header map[string]string
			}{
				{"by the Last-Event-ID header", "", map[string]string{"Last-Event-ID": fmt.Sprint(last)}},
				{"by the query", fmt.Sprintf("&last_event_id=%d", last), nil},
				{"by the header, which wins over the query", "&last_event_id=1", map[string]string{"Last-Event-ID": fmt.Sprint(last)}},
			} {
				t.Run(how.name, func(t *testing.T) {
					c := openStream(t, h, fmt.Sprintf("topics=pool:%d", w.poolA.ID)+how.query, how.header)
					ms := c.messages(t, 2*len(missed))
					prev := last
					for i, m := range ms {
						if m.id <= prev {
							t.Fatalf("message %d has id %d after %d: %v", i, m.id, prev, ms)
						}
						prev = m.id
						if i%2 == 1 {
							if m.event != "price" {
								t.Fatalf("message %d = %v, want a price", i, m)
							}
							continue
						}
						var tr streamTrade
						m.decode(t, &tr)
						if m.event != "trade" || tr.TradeID != missed[i/2] {
							t.Fatalf("message %d = %v, want trade %d", i, m, missed[i/2])
						}
					}
					live := h.buy(t, w.alice.token, w.a1.ID, "YES", 1_000)
					m := c.message(t)
					var got streamTrade
					m.decode(t, &got)
					if m.event != "trade" || got.TradeID != live.TradeID {
						t.Fatalf("then %v, want the live trade %d", m, live.TradeID)
					}
					c.message(t) // its price
					missed = append(missed, live.TradeID)
				})
			}
		})
	})
}

func TestStreamMe(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h = streamHarness(t, h.store)
		w := newWorld(t, h)
		t.Run("me carries the caller's notifications and balances, nobody else's", func(t *testing.T) {
			c := openStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + w.alice.token})
			h.buy(t, w.bob.token, w.a1.ID, "YES", 2_000)
			tr := h.buy(t, w.alice.token, w.a1.ID, "NO", 3_000)
			ms := c.messages(t, 2)
			var n struct {
				UserID int64  `json:"user_id"`
				Type   string `json:"type"`
			}
			var b struct {
				UserID  int64  `json:"user_id"`
				Balance int64  `json:"balance"`
				Reason  string `json:"reason"`
			}
			if ms[0].event != "notification" || ms[1].event != "balance" {
				t.Fatalf("got %v, want alice's notification and balance", ms)
			}
			ms[0].decode(t, &n)
			ms[1].decode(t, &b)
			if n.UserID != w.alice.id || n.Type != "trade_executed" || b.UserID != w.alice.id || b.Balance != tr.Balance || b.Reason != "trade" {
				t.Fatalf("notification %+v, balance %+v; want alice's, balance %d", n, b, tr.Balance)
			}
		})

		t.Run("a ticket opens me once", func(t *testing.T) {
			r := h.do(t, req{method: http.MethodPost, path: "/api/v1/stream/tickets", token: w.bob.token})
			expect(t, r, http.StatusCreated, "")
			var tk struct {
				Ticket    string `json:"ticket"`
				ExpiresAt string `json:"expires_at"`
			}
			r.decode(t, &tk)
			exp, err := time.Parse(time.RFC3339Nano, tk.ExpiresAt)
			if tk.Ticket == "" || err != nil || exp.Before(time.Now()) || exp.After(time.Now().Add(2*time.Minute)) {
				t.Fatalf("ticket %+v", tk)
			}
			q := "topics=me&ticket=" + url.QueryEscape(tk.Ticket)
			c := openStream(t, h, q, nil)
			h.credit(t, w.bob.id, 100, false)
			if m := c.message(t); m.event != "balance" || !strings.Contains(m.data, fmt.Sprintf(`"user_id":%d`, w.bob.id)) {
				t.Fatalf("got %v, want bob's balance", m)
			}
			_, res := tryStream(t, h, q, nil)
			if res == nil {
				t.Fatal("a used ticket opened a second stream")
			}
			expect(t, res, http.StatusUnauthorized, "unauthorized")
			expect(t, h.do(t, req{method: http.MethodPost, path: "/api/v1/stream/tickets"}), http.StatusUnauthorized, "unauthorized")
		})

		t.Run("a holder's me gets its settlement as a notification, inside the resolution when it follows the market too", func(t *testing.T) {
			h.buy(t, w.bob.token, w.b1.ID, "YES", 20_000)
			meOnly := openStream(t, h, "topics=me", map[string]string{"Authorization": "Bearer " + w.bob.token})
			both := openStream(t, h, fmt.Sprintf("topics=me,market:%d", w.b1.ID), map[string]string{"Authorization": "Bearer " + w.bob.token})
			public := openStream(t, h, fmt.Sprintf("topics=event:%d", w.event.ID), nil)
			r := h.do(t, req{method: http.MethodPost, path: w.closePath(w.event.ID, w.poolB.ID, w.b1.ID), token: w.creator.token,
				body: map[string]any{"won_side": "YES"}})
			expect(t, r, http.StatusOK, "")
			profile := h.me(t, w.bob.token)

			pm := public.message(t)
			if pm.event != "market_resolved" || strings.Contains(pm.data, "notification") {
				t.Fatalf("the public got %v", pm)
			}
			type note struct {
				UserID   int64  `json:"user_id"`
				Type     string `json:"type"`
				Balances struct {
					Balance int64 `json:"balance"`
				} `json:"balances"`
			}
			m := meOnly.message(t)
			var n note
			m.decode(t, &n)
			if m.event != "notification" || m.id != pm.id || n.UserID != w.bob.id || n.Type != "market_resolved" || n.Balances.Balance != profile.Balance {
				t.Fatalf("me got %v, want bob's settlement at id %d with balance %d", m, pm.id, profile.Balance)
			}
			m = both.message(t)
			var inside struct {
				MarketID     int64 `json:"market_id"`
				Notification note  `json:"notification"`
			}
			m.decode(t, &inside)
			if m.event != "market_resolved" || m.id != pm.id || inside.MarketID != w.b1.ID || inside.Notification.UserID != w.bob.id {
				t.Fatalf("me and market got %v", m)
			}
			// Resuming before the resolution reads it again from the log.
			again := openStream(t, h, "topics=me&last_event_id="+fmt.Sprint(pm.id-1), map[string]string{"Authorization": "Bearer " + w.bob.token})
			if m := again.message(t); m.event != "notification" || m.id != pm.id {
				t.Fatalf("resumed: %v", m)
			}
		})
	})
}

func TestStreamRefusals(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		h = streamHarness(t, h.store, func(c *server.Config) {
			c.StreamMaxPerAddress = 2
			c.StreamMaxPerUser = 1
		})
		u := h.register(t, "refused")
		auth := map[string]string{"Authorization": "Bearer " + u.token}
		for _, c := range []struct {
			name, query string
			header      map[string]string
			status      int
			code        string
		}{
			{"no topics", "", nil, 400, "invalid_request"},
			{"an unknown topic", "topics=trades,weather", nil, 400, "invalid_request"},
			{"too many topics", "topics=" + manyTopics(33), nil, 400, "invalid_request"},
			{"a topic id that is not a positive integer", "topics=market:abc", nil, 400, "invalid_id"},
			{"a topic id of zero", "topics=event:0", nil, 400, "invalid_id"},
			{"a topic without its id", "topics=pool", nil, 400, "invalid_id"},
			{"a malformed last id in the query", "topics=trades&last_event_id=-1", nil, 400, "invalid_request"},
			{"a malformed Last-Event-ID", "topics=trades", map[string]string{"Last-Event-ID": "abc"}, 400, "invalid_request"},
			{"a last id from the future", "topics=trades&last_event_id=999999999", nil, 400, "invalid_request"},
			{"me without authentication", "topics=me", nil, 401, "unauthorized"},
			{"me with a bad token", "topics=me", map[string]string{"Authorization": "Bearer nope"}, 401, "unauthorized"},
			{"me with an unknown ticket", "topics=me&ticket=nope", nil, 401, "unauthorized"},
		} {
			t.Run(c.name+" is "+fmt.Sprint(c.status)+" "+c.code, func(t *testing.T) {
				_, res := tryStream(t, h, c.query, c.header)
				if res == nil {
					t.Fatal("the stream opened")
				}
				expect(t, res, c.status, c.code)
				if c.status == 400 && !strings.Contains(res.String(), `"detail"`) {
					t.Errorf("no detail: %s", res)
				}
			})
		}

		t.Run("an expired ticket is 401 unauthorized", func(t *testing.T) {
			st := h.store.(interface {
				CreateStreamTicket(ctx context.Context, hash []byte, userID int64, expiresAt time.Time) error
			})
			if err := st.CreateStreamTicket(context.Background(), account.HashToken("stale"), u.id, time.Now().Add(-time.Second)); err != nil {
				t.Fatal(err)
			}
			_, res := tryStream(t, h, "topics=me&ticket=stale", nil)
			if res == nil {
				t.Fatal("an expired ticket opened a stream")
			}
			expect(t, res, 401, "unauthorized")
		})

		t.Run("past the limits a stream is 429 too_many_streams", func(t *testing.T) {
			openStream(t, h, "topics=me", auth)
			_, res := tryStream(t, h, "topics=me", auth)
			if res == nil {
				t.Fatal("a second stream of the user opened")
			}
			expect(t, res, 429, "too_many_streams")
			if res.header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
			c := openStream(t, h, "topics=trades", nil)
			if _, res = tryStream(t, h, "topics=trades", nil); res == nil {
				t.Fatal("a third stream from the address opened")
			}
			expect(t, res, 429, "too_many_streams")
			// Closing one makes room.
			c.close()
			deadline := time.Now().Add(10 * time.Second)
			for {
				c, res := tryStream(t, h, "topics=trades", nil)
				if res == nil {
					c.close()
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("still %s after a stream closed", res)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	})

	t.Run("past the server's limit a stream is 429 too_many_streams", func(t *testing.T) {
		h := streamHarness(t, memoryStore(), func(c *server.Config) { c.StreamMaxConnections = 1 })
		openStream(t, h, "topics=trades", nil)
		_, res := tryStream(t, h, "topics=trades", nil)
		if res == nil {
			t.Fatal("a second stream opened")
		}
		expect(t, res, 429, "too_many_streams")
	})
}

func manyTopics(n int) string {
	var ts []string
	for i := 1; i <= n; i++ {
		ts = append(ts, fmt.Sprintf("market:%d", i))
	}
	return strings.Join(ts, ",")
}

func TestStreamLifetime(t *testing.T) {
	t.Run("a stream outlives the write timeout, pinged while silent", func(t *testing.T) {
		h := streamHarness(t, memoryStore(), func(c *server.Config) {
			c.WriteTimeout = 500 * time.Millisecond
			c.StreamPing = 15 * time.Second // the write timeout makes it 250 ms
		})
		w := newWorld(t, h)
		c := openStream(t, h, "topics=trades", nil)
		pings := 0
		deadline := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(deadline) {
			if m := c.next(t); m.comment == "ping" {
				pings++
			}
		}
		if pings < 2 {
			t.Fatalf("%d pings in 1.5 s", pings)
		}
		tr := h.buy(t, w.alice.token, w.a1.ID, "YES", 1_000)
		var got streamTrade
		c.message(t).decode(t, &got)
		if got.TradeID != tr.TradeID {
			t.Fatalf("got trade %d, want %d", got.TradeID, tr.TradeID)
		}
	})

	t.Run("stopping the server ends its streams cleanly", func(t *testing.T) {
		cfg := testConfig(memoryStore())
		cfg.ShutdownTimeout = 20 * time.Second
		h, app := startServer(t, cfg)
		c := openStream(t, h, "topics=trades", nil)
		stopped := make(chan error, 1)
		go func() { stopped <- app.Stop(context.Background()) }()
		for {
			m, ok := <-c.msgs
			if !ok {
				break
			}
			if m.comment == "closing" {
				if _, more := <-c.msgs; more {
					t.Fatal("the stream went on after closing")
				}
				break
			}
		}
		if err := <-c.done; err != io.EOF {
			t.Errorf("the stream ended with %v, want the end of its body", err)
		}
		if err := <-stopped; err != nil {
			t.Fatalf("stop: %v", err)
		}
	})

}

// TestStreamOverNATS runs the stream with the change log carried by NATS
// JetStream (PREDICTKIT_STREAM_NATS_URL): the server's relay publishes
// the log and its hub follows the JetStream stream.
func TestStreamOverNATS(t *testing.T) {
	url := os.Getenv("PREDICTKIT_TEST_NATS_URL")
	if url == "" {
		if os.Getenv("PREDICTKIT_REQUIRE_NATS") == "1" {
			t.Fatal("PREDICTKIT_REQUIRE_NATS=1 but PREDICTKIT_TEST_NATS_URL is not set")
		}
		t.Skip("PREDICTKIT_TEST_NATS_URL is not set (a NATS server with JetStream, e.g. nats://127.0.0.1:4222)")
	}
	eachStore(t, func(t *testing.T, h *harness) {
		// A stream of its own, so that no other run's log is in it.
		name := fmt.Sprintf("test_%d", time.Now().UnixNano())
		h = streamHarness(t, h.store, func(c *server.Config) { c.StreamNATSURL, c.StreamNATSName = url, name })
		w := newWorld(t, h)
		t.Run("a trade reaches a subscriber through JetStream, and a resume gets it again", func(t *testing.T) {
			c := openStream(t, h, fmt.Sprintf("topics=market:%d", w.a1.ID), nil)
			tr := h.buy(t, w.alice.token, w.a1.ID, "YES", 10_000)
			ms := c.messages(t, 2)
			var got streamTrade
			ms[0].decode(t, &got)
			if ms[0].event != "trade" || got.TradeID != tr.TradeID || ms[1].event != "price" {
				t.Fatalf("got %v, want trade %d then its price", ms, tr.TradeID)
			}
			r := openStream(t, h, fmt.Sprintf("topics=market:%d&last_event_id=%d", w.a1.ID, ms[0].id-1), nil)
			again := r.messages(t, 2)
			if again[0].id != ms[0].id || again[1].id != ms[1].id {
				t.Fatalf("resumed %v, want %v", again, ms)
			}
		})
	})
}
