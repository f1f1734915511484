package jetstream_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

var _ jetstream.Log = (*postgres.Store)(nil)

// instances returns n stores on one fresh, migrated schema, as n server
// instances sharing a database have, each with its LISTEN connection
// running (as the server runs it).
func instances(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	schema := pgtest.Schema(t)
	ctx := context.Background()
	var ss []*postgres.Store
	for i := range n {
		s, err := postgres.New(ctx, pgtest.URL(t), postgres.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		if i == 0 {
			if err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = s.WatchChanges(wctx, func(error) {}) }()
		t.Cleanup(func() { cancel(); <-done })
		ss = append(ss, s)
	}
	return ss
}

// lastOf is the log's last entry.
func lastOf(t *testing.T, log changelog.Reader) int64 {
	t.Helper()
	b, err := log.ChangeBounds(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b.Last
}

// trading writes trades through s in the background, n of them, and
// returns a channel closed when they are written.
func trading(t *testing.T, tr *trader, n int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			if err := tr.buy(1); err != nil {
				t.Errorf("trade: %v", err)
				return
			}
		}
	}()
	return done
}

func TestRelayOnPostgres(t *testing.T) {
	t.Run("two instances' relays race on one database and each entry is published once, by one of them", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		ss := instances(t, 2)
		tr := newTrader(t, ss[0])
		var rs []*jetstream.Relay
		for _, s := range ss {
			r, err := jetstream.NewRelay(connect(t), s, jetstream.Options{Stream: stream, Subject: subject})
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
			run(t, r)
		}
		<-trading(t, tr, 40)
		n := lastOf(t, ss[0])
		eventually(t, "a relay reaches the log's end", func() bool { return max(rs[0].Last(), rs[1].Last()) == n })
		checkStream(t, js, stream, 1, n, ss[1])
		a, b := rs[0].Published(), rs[1].Published()
		if a+b != n || min(a, b) != 0 {
			t.Fatalf("the relays stored %d and %d entries; want %d in all, by the one holding the lock", a, b, n)
		}
	})

	t.Run("a relay stopped mid-way hands over to the waiting one: nothing lost, nothing repeated", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		ss := instances(t, 2)
		tr := newTrader(t, ss[0])
		opts := jetstream.Options{Stream: stream, Subject: subject}
		first, _ := jetstream.NewRelay(connect(t), ss[0], opts)
		stopFirst := run(t, first)
		start := lastOf(t, ss[0])
		eventually(t, "the first relay holds the lock and catches up", func() bool { return first.Last() == start })
		second, _ := jetstream.NewRelay(connect(t), ss[1], opts)
		run(t, second)
		writing := trading(t, tr, 60)
		eventually(t, "the first relay publishes some trades", func() bool { return first.Last() >= start+20 })
		stopFirst()
		<-writing
		n := lastOf(t, ss[0])
		eventually(t, "the second relay reaches the log's end", func() bool { return second.Last() == n })
		checkStream(t, js, stream, 1, n, ss[0])
		if first.Published()+second.Published() != n || second.Published() == 0 {
			t.Fatalf("the relays stored %d and %d entries, want %d in all", first.Published(), second.Published(), n)
		}
	})

	t.Run("a relay whose lock connection dies stops, and the other takes over without a repeat", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		ss := instances(t, 2)
		tr := newTrader(t, ss[0])
		var reported errs
		opts := jetstream.Options{Stream: stream, Subject: subject, OnError: reported.add}
		first, _ := jetstream.NewRelay(connect(t), ss[0], opts)
		run(t, first)
		start := lastOf(t, ss[0])
		eventually(t, "the first relay holds the lock and catches up", func() bool { return first.Last() == start })
		second, _ := jetstream.NewRelay(connect(t), ss[1], opts)
		run(t, second)
		writing := trading(t, tr, 60)
		eventually(t, "the first relay publishes some trades", func() bool { return first.Last() >= start+20 })
		killLock(t, "predictkit exclusive changelog relay "+stream)
		<-writing
		n := lastOf(t, ss[0])
		eventually(t, "the log's end is published", func() bool { return max(first.Last(), second.Last()) == n })
		checkStream(t, js, stream, 1, n, ss[0])
		if first.Published()+second.Published() != n {
			t.Fatalf("the relays stored %d and %d entries, want %d in all", first.Published(), second.Published(), n)
		}
		// The first relay learns of its loss at its next check of the
		// connection, and reports it once it has stopped.
		eventually(t, "the relay reports the lost lock", func() bool { return errors.Is(errorsOf(&reported), postgres.ErrExclusiveLost) })
	})
}

func TestFeedOnPostgres(t *testing.T) {
	t.Run("followers on two instances get every entry in order while trades are written", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		ss := instances(t, 2)
		tr := newTrader(t, ss[0])
		r, _ := jetstream.NewRelay(js, ss[0], jetstream.Options{Stream: stream, Subject: subject})
		run(t, r)
		from := lastOf(t, ss[0])
		const trades = 50
		writing := trading(t, tr, trades)
		var wg sync.WaitGroup
		got := make([][]int64, 2)
		errs := make([]error, 2)
		feeds := make([]*jetstream.Feed, 2)
		for i := range 2 {
			feeds[i] = jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream, Batch: 16})
			wg.Go(func() {
				<-writing
				got[i], errs[i] = follow(timeout(t), feeds[i], from, int(lastOf(t, ss[1])-from))
			})
		}
		wg.Wait()
		n := lastOf(t, ss[0])
		for i := range 2 {
			if errs[i] != nil || int64(len(got[i])) != n-from {
				t.Fatalf("follower %d: %d entries, %v; want %d", i, len(got[i]), errs[i], n-from)
			}
		}
		// One more instance starts from the middle.
		mid := from + (n-from)/2
		rest, err := follow(timeout(t), jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream}), mid, int(n-mid))
		if err != nil || int64(len(rest)) != n-mid {
			t.Fatalf("from the middle: %d entries, %v", len(rest), err)
		}
	})

	t.Run("a log pruned while no relay ran shows as a gap to a follower behind it", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		ss := instances(t, 1)
		tr := newTrader(t, ss[0])
		if err := tr.buy(5); err != nil {
			t.Fatal(err)
		}
		pruned := lastOf(t, ss[0])
		if _, err := ss[0].PruneChanges(context.Background(), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := tr.buy(3); err != nil {
			t.Fatal(err)
		}
		r, _ := jetstream.NewRelay(js, ss[0], jetstream.Options{Stream: stream, Subject: subject})
		run(t, r)
		n := lastOf(t, ss[0])
		eventually(t, "the relay reaches the log's end", func() bool { return r.Last() == n })
		checkStream(t, js, stream, pruned+1, n, ss[0])
		f := jetstream.NewFeed(connect(t), jetstream.FeedOptions{Stream: stream})
		err := f.Follow(timeout(t), 2, func([]changelog.Entry) error { return nil })
		var pe *changelog.PrunedError
		if !errors.As(err, &pe) || pe.After != 2 || pe.Pruned != pruned {
			t.Fatalf("Follow after 2 = %v, want entries 3…%d reported pruned", err, pruned)
		}
		got, err := follow(timeout(t), f, pruned, int(n-pruned))
		if err != nil || int64(len(got)) != n-pruned {
			t.Fatalf("Follow after %d = %d entries, %v", pruned, len(got), err)
		}
	})
}

// killLock ends the PostgreSQL session holding the lock named app (as
// the server cuts it to 63 bytes), as a crash or a network failure would.
func killLock(t *testing.T, app string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The holder is the one not waiting in pg_advisory_lock.
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = left($1, 63) AND state = 'idle'`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("terminated %d idle sessions named %q, want the lock holder's", n, app)
	}
}

// errorsOf joins what a relay reported.
func errorsOf(e *errs) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return errors.Join(e.list...)
}
