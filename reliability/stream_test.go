package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// The live stream across processes: every server on one PostgreSQL sees
// every commit (the change log and LISTEN/NOTIFY), and a client that
// resumes with its last id, whatever happened to the server in between,
// gets every event once.

// streamEvent is one message of a live stream.
type streamEvent struct {
	id    int64
	event string
	data  string
}

// streamReader reads a stream's messages into a channel; the channel is
// closed when the connection ends.
type streamReader struct {
	res  *http.Response
	msgs chan streamEvent
}

// openLive opens GET /api/v1/stream on base; a status other than 200 is
// returned with no reader.
func openLive(base, query string, lastID int64) (*streamReader, int, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/stream?"+query, nil)
	if err != nil {
		return nil, 0, err
	}
	if lastID >= 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	res, err := http.DefaultClient.Do(req) // no time limit: a stream lasts
	if err != nil {
		return nil, 0, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, res.StatusCode, nil
	}
	r := &streamReader{res: res, msgs: make(chan streamEvent, 100_000)}
	go func() {
		defer close(r.msgs)
		br := bufio.NewReader(res.Body)
		var m streamEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimPrefix(v, " ")
			switch {
			case line == "":
				if m.event != "" {
					r.msgs <- m
				}
				m = streamEvent{}
			case k == "id":
				m.id, _ = strconv.ParseInt(v, 10, 64)
			case k == "event":
				m.event = v
			case k == "data":
				m.data = v
			}
		}
	}()
	return r, http.StatusOK, nil
}

func (r *streamReader) close() { r.res.Body.Close() }

// tradeOf is the trade id of a trade message.
func tradeOf(t *testing.T, m streamEvent) int64 {
	t.Helper()
	var d struct {
		TradeID int64 `json:"trade_id"`
	}
	if err := json.Unmarshal([]byte(m.data), &d); err != nil || d.TradeID == 0 {
		t.Fatalf("trade message %d: %q (%v)", m.id, m.data, err)
	}
	return d.TradeID
}

// buyOn buys on market m at base for u and returns the trade id (0 when
// the trade was not answered 200).
func buyOn(base string, u loadUser, m, amount int64) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, b, err := call(ctx, http.MethodPost, fmt.Sprintf("%s/api/v1/markets/%d/buy", base, m),
		map[string]string{"Authorization": "Bearer " + u.token}, map[string]any{"side": "YES", "amount_kopecks": amount})
	if err != nil || st != http.StatusOK {
		return 0
	}
	var out struct {
		TradeID int64 `json:"trade_id"`
	}
	_ = json.Unmarshal(b, &out)
	return out.TradeID
}

// committedTrades are the ids of market m's trades, read in the database.
func committedTrades(t *testing.T, dbURL string, m int64) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := postgres.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts, err := st.Trades(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, tr := range ts {
		ids = append(ids, tr.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestStreamAcrossServers: a subscriber on one server sees, in order, the
// trades made through another server on the same database.
func TestStreamAcrossServers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server: not in -short")
	}
	dbURL := pgtest.SchemaURL(t)
	a := newProc(t, dbURL)
	a.start()
	b := newProc(t, dbURL)
	b.start()
	fx := setup(t, a.base, 2, 1)
	m := fx.markets[0]

	sub, st, err := openLive(b.base(), fmt.Sprintf("topics=market:%d", m), -1)
	if err != nil || st != http.StatusOK {
		t.Fatalf("open the stream on b: %d %v", st, err)
	}
	defer sub.close()
	var made []int64
	for i := range 20 {
		id := buyOn(a.base(), fx.users[i%2], m, 1_000+int64(i))
		if id == 0 {
			t.Fatalf("trade %d on a was refused", i)
		}
		made = append(made, id)
	}
	var got []int64
	var last int64
	deadline := time.After(30 * time.Second)
	for len(got) < len(made) {
		select {
		case msg, ok := <-sub.msgs:
			if !ok {
				t.Fatalf("b's stream ended after %v", got)
			}
			if msg.id <= last {
				t.Fatalf("id %d after %d", msg.id, last)
			}
			last = msg.id
			if msg.event == "trade" {
				got = append(got, tradeOf(t, msg))
			}
		case <-deadline:
			t.Fatalf("b's subscriber got trades %v of %v", got, made)
		}
	}
	if !slices.Equal(got, made) {
		t.Fatalf("b's subscriber got trades %v, a made %v", got, made)
	}
}

// TestStreamResumeAcrossKills: while trades go on, the server is killed
// (SIGKILL) between a subscriber's connections, several times; the
// subscriber resumes each time with its last id. It ends with every
// committed trade of its market, each once, in strictly increasing ids.
func TestStreamResumeAcrossKills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server: not in -short")
	}
	dbURL := pgtest.SchemaURL(t)
	p := newProc(t, dbURL)
	p.start()
	fx := setup(t, p.base, 3, 1)
	m := fx.markets[0]

	// Traders on the market, refused or unanswered while the server is
	// down; what counts is what the database holds at the end.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var answered atomic.Int64
	for _, u := range fx.users {
		wg.Go(func() {
			for i := int64(0); !stop.Load(); i++ {
				if buyOn(p.base(), u, m, 500+i%100) != 0 {
					answered.Add(1)
				} else {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}

	seen := map[int64]int{} // trade id → times received
	var last int64          // the last message id received
	connections := 0
	// read reads the stream until it ends or until is reached.
	read := func(sub *streamReader, until time.Time) {
		for {
			select {
			case msg, ok := <-sub.msgs:
				if !ok {
					return
				}
				if msg.id <= last {
					t.Fatalf("message %d after %d", msg.id, last)
				}
				if msg.event == "reset" {
					t.Fatalf("a reset: %s", msg.data)
				}
				last = msg.id
				if msg.event == "trade" {
					seen[tradeOf(t, msg)]++
				}
			case <-time.After(time.Until(until)):
				return
			}
		}
	}
	connect := func() *streamReader {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			sub, st, err := openLive(p.base(), fmt.Sprintf("topics=market:%d", m), last)
			if err == nil && st == http.StatusOK {
				connections++
				return sub
			}
			if time.Now().After(deadline) {
				t.Fatalf("cannot reconnect: %d %v", st, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	for range *flagKills {
		sub := connect()
		read(sub, time.Now().Add(*flagKillLoad))
		// Killed while the subscriber is connected: its connection
		// breaks wherever the server was.
		p.kill()
		read(sub, time.Now().Add(time.Second)) // drain what arrived before the kill
		sub.close()
		time.Sleep(200 * time.Millisecond) // trades fail meanwhile
		p.start()
	}
	sub := connect()
	read(sub, time.Now().Add(*flagKillLoad))
	stop.Store(true)
	wg.Wait()

	want := committedTrades(t, dbURL, m)
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < len(want) && time.Now().Before(deadline) {
		read(sub, time.Now().Add(500*time.Millisecond))
	}
	sub.close()
	var missing, repeated []int64
	for _, id := range want {
		switch seen[id] {
		case 0:
			missing = append(missing, id)
		case 1:
		default:
			repeated = append(repeated, id)
		}
	}
	if len(seen) != len(want) || len(missing) > 0 || len(repeated) > 0 {
		t.Fatalf("%d trades committed, %d received; missing %v, repeated %v", len(want), len(seen), missing, repeated)
	}
	if answered.Load() == 0 {
		t.Fatal("no trade was answered: the load did not run")
	}
	t.Logf("%d SIGKILLs, %d connections: %d trades committed (%d answered 200), each received once", *flagKills, connections, len(want), answered.Load())
}
