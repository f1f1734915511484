package jetstream_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
	"github.com/predictkit/predictkit/market"
)

// The environment variables the tests read.
const (
	envURL     = "PREDICTKIT_TEST_NATS_URL"
	envRequire = "PREDICTKIT_REQUIRE_NATS"
)

// connect returns a JetStream context on a connection of its own (one
// per simulated instance), closed when t ends. It skips t when no NATS
// server is named, unless PREDICTKIT_REQUIRE_NATS=1 (CI), which fails it.
func connect(t testing.TB) natsjs.JetStream {
	t.Helper()
	url := os.Getenv(envURL)
	if url == "" {
		if os.Getenv(envRequire) == "1" {
			t.Fatalf("%s is not set but %s=1 requires NATS", envURL, envRequire)
		}
		t.Skipf("set %s (e.g. nats://127.0.0.1:4222, a server run with -js) to run the NATS JetStream tests", envURL)
	}
	nc, err := nats.Connect(url, nats.Name(t.Name()), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatalf("connect to NATS at %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// names returns a stream and subject of t's own, the stream deleted when
// t ends.
func names(t testing.TB, js natsjs.JetStream) (stream, subject string) {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	stream, subject = jetstream.Names(schema)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, stream); err != nil && !errors.Is(err, natsjs.ErrStreamNotFound) {
			t.Errorf("delete stream %s: %v", stream, err)
		}
	})
	return stream, subject
}

// memLog is a changelog.Memory as a relay reads it.
type memLog struct{ *changelog.Memory }

func (m memLog) ChangeFeed() changelog.Feed {
	return &changelog.Poller{Log: m.Memory, Woken: m.Appended}
}

// appendN appends n trade entries to log, in batches of up to 3 (as a
// trade's entries are appended together).
func appendN(log *changelog.Memory, n int) {
	for n > 0 {
		k := min(n, 3)
		es := make([]changelog.Entry, k)
		for i := range es {
			es[i] = changelog.Entry{Type: changelog.Trade, MarketID: int64(i + 1), Data: []byte(`{"trade_id":1,"side":"YES"}`)}
		}
		log.Append(es...)
		n -= k
	}
}

// errs collects what a relay or feed reports to OnError.
type errs struct {
	mu   sync.Mutex
	list []error
}

func (e *errs) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, err)
}

func (e *errs) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var s []string
	for _, err := range e.list {
		s = append(s, err.Error())
	}
	return strings.Join(s, "; ")
}

// run runs r until the returned stop is called (or t ends); stop waits
// for Run to return and checks it returned nil.
func run(t testing.TB, r *jetstream.Relay) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run returned %v after its context ended, want nil", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// eventually waits until cond holds, failing t after a generous limit
// (the limit only keeps a broken relay from hanging the test).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkStream fails t unless stream holds exactly entries 1…n (or from…n
// where older ones were pruned), each once, as message number = entry
// number, each with the entry the log holds.
func checkStream(t testing.TB, js natsjs.JetStream, stream string, from, n int64, log changelog.Reader) {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	st := s.CachedInfo().State
	if int64(st.FirstSeq) != from || int64(st.LastSeq) != n || int64(st.Msgs) != n-from+1 {
		t.Fatalf("stream holds messages %d…%d (%d of them), want %d…%d once each", st.FirstSeq, st.LastSeq, st.Msgs, from, n)
	}
	want, err := log.Changes(ctx, from-1, int(n-from+1))
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i <= n; i++ {
		m, err := s.GetMsg(ctx, uint64(i))
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		e, err := jetstream.Decode(m.Header, m.Data)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		w := want[i-from]
		if e.Seq != i || w.Seq != i || e.Type != w.Type || string(e.Data) != string(w.Data) || e.MarketID != w.MarketID || !e.At.Equal(w.At) {
			t.Fatalf("message %d holds %+v, want %+v", i, e, w)
		}
	}
}

// follow runs f.Follow(after) until it has delivered n entries and checks
// that they are after+1…after+n in order; it returns Follow's error
// unless that is the stop it asked for.
func follow(ctx context.Context, f changelog.Feed, after int64, n int) ([]int64, error) {
	var got []int64
	errEnough := errors.New("enough")
	err := f.Follow(ctx, after, func(es []changelog.Entry) error {
		for _, e := range es {
			got = append(got, e.Seq)
		}
		if len(got) >= n {
			return errEnough
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	for i, s := range got {
		if s != after+int64(i)+1 {
			return got, fmt.Errorf("delivered %v…, want %d, %d, … in order, each once", got[:min(len(got), i+3)], after+1, after+2)
		}
	}
	return got, err
}

// trader writes trades through a store, as the API would.
type trader struct {
	t       testing.TB
	ctx     context.Context
	markets *market.Service
	user    *account.User
	market  *market.Market
}

type tradeStore interface {
	account.Store
	market.Store
}

func newTrader(t testing.TB, s tradeStore) *trader {
	t.Helper()
	ctx := context.Background()
	acc := account.NewService(s)
	acc.BcryptCost = bcrypt.MinCost
	ms := market.NewService(s, acc)
	var b [4]byte
	_, _ = rand.Read(b[:])
	tag := hex.EncodeToString(b[:])
	creator, _, err := acc.Register(ctx, account.Registration{Email: "creator-" + tag + "@example.com", Password: "password123", Name: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	if creator, err = acc.SetRoles(ctx, creator.ID, account.RolesPatch{IsCreator: &yes}); err != nil {
		t.Fatal(err)
	}
	ev, err := ms.CreateEvent(ctx, creator, market.NewEvent{Name: "Final", NameRu: "Финал", Pools: []market.NewPool{{
		Name: "Winner", NameRu: "Победитель", Rules: "Official result", Margin: 0.02, B: 100000,
		Markets: []market.NewMarket{{Name: "Home", Probability: 0.5}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	active := true
	if err := ms.SetActive(ctx, creator.ID, ev.ID, &active); err != nil {
		t.Fatal(err)
	}
	u, _, err := acc.Register(ctx, account.Registration{Email: "trader-" + tag + "@example.com", Password: "password123", Name: "trader"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acc.Credit(ctx, u.ID, 1_000_000_00, false); err != nil {
		t.Fatal(err)
	}
	return &trader{t: t, ctx: ctx, markets: ms, user: u, market: ev.Pools[0].Markets[0]}
}

// buy buys YES for 1 rouble and NO for 1 rouble, n times over (each trade
// writes several entries).
func (tr *trader) buy(n int) error {
	for i := range n {
		side := market.Yes
		if i%2 == 1 {
			side = market.No
		}
		if _, err := tr.markets.Execute(tr.ctx, tr.market.ID, market.Request{UserID: tr.user.ID, Side: side, Action: market.ActionBuy, Amount: 100}); err != nil {
			return err
		}
	}
	return nil
}
