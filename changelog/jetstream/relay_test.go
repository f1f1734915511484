package jetstream_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
	"github.com/predictkit/predictkit/storage/memory"
)

var _ jetstream.Log = (*memory.Store)(nil)

func TestRelay(t *testing.T) {
	t.Run("every entry is stored once, in order, as the message of its own number", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		appendN(log, 40)
		r, err := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
		if err != nil {
			t.Fatal(err)
		}
		run(t, r)
		appendN(log, 60)
		eventually(t, "the relay reaches entry 100", func() bool { return r.Last() == 100 })
		checkStream(t, js, stream, 1, 100, log)
		if r.Published() != 100 {
			t.Fatalf("Published = %d, want 100", r.Published())
		}
	})

	t.Run("the stream gets the relay's name, subject and retention", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		appendN(log, 1)
		r, err := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject, MaxAge: 3 * time.Hour, Duplicates: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		run(t, r)
		eventually(t, "the relay publishes", func() bool { return r.Last() == 1 })
		s, err := js.Stream(context.Background(), stream)
		if err != nil {
			t.Fatal(err)
		}
		c := s.CachedInfo().Config
		if c.MaxAge != 3*time.Hour || c.Duplicates != time.Minute || len(c.Subjects) != 1 || c.Subjects[0] != subject {
			t.Fatalf("stream config: max age %s, duplicates %s, subjects %v", c.MaxAge, c.Duplicates, c.Subjects)
		}
	})

	t.Run("a relay stopped mid-way and a new one neither lose nor repeat an entry", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		opts := jetstream.Options{Stream: stream, Subject: subject}
		first, err := jetstream.NewRelay(js, memLog{log}, opts)
		if err != nil {
			t.Fatal(err)
		}
		stop := run(t, first)
		writing := make(chan struct{})
		go func() {
			defer close(writing)
			for range 100 {
				appendN(log, 3)
				time.Sleep(time.Millisecond)
			}
		}()
		eventually(t, "the first relay publishes 30 entries", func() bool { return first.Last() >= 30 })
		stop()
		// Another instance (its own connection) takes over while
		// entries keep coming.
		js2 := connect(t)
		second, err := jetstream.NewRelay(js2, memLog{log}, opts)
		if err != nil {
			t.Fatal(err)
		}
		run(t, second)
		<-writing
		eventually(t, "the second relay reaches entry 300", func() bool { return second.Last() == 300 })
		checkStream(t, js, stream, 1, 300, log)
		if n := first.Published() + second.Published(); n != 300 {
			t.Fatalf("the relays stored %d + %d entries, want 300 in all", first.Published(), second.Published())
		}
	})

	t.Run("entries a dead relay stored before its acknowledgement came back are not stored again", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		appendN(log, 20)
		ctx := context.Background()
		r, err := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.CreateOrUpdateStream(ctx, r.StreamConfig()); err != nil {
			t.Fatal(err)
		}
		// What a relay that died between publish and acknowledgement
		// left: entries 1…12 stored, nobody told.
		es, _ := log.Changes(ctx, 0, 12)
		for _, e := range es {
			m, err := jetstream.Encode(subject, e)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		run(t, r)
		eventually(t, "the relay reaches entry 20", func() bool { return r.Last() == 20 })
		checkStream(t, js, stream, 1, 20, log)
		if r.Published() != 8 {
			t.Fatalf("the relay stored %d entries, want the 8 after the dead relay's", r.Published())
		}
		// A late copy of entry 12 (the dead relay's publish still in
		// flight) is dropped by the duplicate window.
		m, _ := jetstream.Encode(subject, es[11])
		ack, err := js.PublishMsg(ctx, m)
		if err != nil || !ack.Duplicate || ack.Sequence != 12 {
			t.Fatalf("entry 12 again: %+v, %v; want a duplicate of message 12", ack, err)
		}
		checkStream(t, js, stream, 1, 20, log)
	})

	t.Run("two relays running at once without a lock still store each entry once", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		var rs []*jetstream.Relay
		for range 2 {
			r, err := jetstream.NewRelay(connect(t), memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
			run(t, r)
		}
		for range 100 {
			appendN(log, 2)
		}
		eventually(t, "both relays reach entry 200", func() bool { return rs[0].Last() == 200 && rs[1].Last() == 200 })
		checkStream(t, js, stream, 1, 200, log)
		if n := rs[0].Published() + rs[1].Published(); n != 200 {
			t.Fatalf("the relays stored %d + %d entries, want 200 in all", rs[0].Published(), rs[1].Published())
		}
	})

	t.Run("a lock keeps a second relay waiting until the first lets go", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		sem := make(chan struct{}, 1) // the lock, as one process would have it
		var holders atomic.Int32
		lock := func(ctx context.Context, name string, run func(context.Context) error) error {
			if !strings.Contains(name, stream) {
				t.Errorf("lock name %q does not name the stream", name)
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			holders.Add(1)
			defer func() { holders.Add(-1); <-sem }()
			return run(ctx)
		}
		opts := jetstream.Options{Stream: stream, Subject: subject, Lock: lock}
		first, _ := jetstream.NewRelay(js, memLog{log}, opts)
		second, _ := jetstream.NewRelay(connect(t), memLog{log}, opts)
		stopFirst := run(t, first)
		eventually(t, "the first relay holds the lock", func() bool { return holders.Load() == 1 })
		run(t, second)
		appendN(log, 50)
		eventually(t, "the first relay reaches entry 50", func() bool { return first.Last() == 50 })
		if second.Published() != 0 || second.Last() != 0 {
			t.Fatalf("the second relay published %d entries while the first held the lock", second.Published())
		}
		stopFirst()
		appendN(log, 50)
		eventually(t, "the second relay reaches entry 100", func() bool { return second.Last() == 100 })
		checkStream(t, js, stream, 1, 100, log)
		if first.Published() != 50 || second.Published() != 50 {
			t.Fatalf("the relays stored %d and %d entries, want 50 each", first.Published(), second.Published())
		}
	})

	t.Run("a new stream of a pruned log starts at the log's first entry", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		old := time.Now().Add(-48 * time.Hour)
		for range 30 {
			log.Append(changelog.Entry{Type: changelog.Trade, At: old})
		}
		appendN(log, 10)
		if _, err := log.Prune(context.Background(), time.Now().Add(-24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		r, _ := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject})
		run(t, r)
		appendN(log, 5)
		eventually(t, "the relay reaches entry 45", func() bool { return r.Last() == 45 })
		checkStream(t, js, stream, 31, 45, log)
	})

	t.Run("a stream past the log's end is refused, and nothing is published to it", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		ahead := changelog.NewMemory()
		appendN(ahead, 10)
		r, _ := jetstream.NewRelay(js, memLog{ahead}, jetstream.Options{Stream: stream, Subject: subject})
		stop := run(t, r)
		eventually(t, "the relay reaches entry 10", func() bool { return r.Last() == 10 })
		stop()
		// Another database's log, shorter, pointed at the same stream.
		other := changelog.NewMemory()
		appendN(other, 3)
		var reported errs
		r2, _ := jetstream.NewRelay(js, memLog{other}, jetstream.Options{Stream: stream, Subject: subject, OnError: reported.add})
		run(t, r2)
		eventually(t, "the relay reports the stream", func() bool { return strings.Contains(reported.String(), "another log") })
		checkStream(t, js, stream, 1, 10, ahead)
	})

	t.Run("a stream with a message the relay did not write is refused", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		log := changelog.NewMemory()
		appendN(log, 5)
		var reported errs
		r, _ := jetstream.NewRelay(js, memLog{log}, jetstream.Options{Stream: stream, Subject: subject, OnError: reported.add})
		if _, err := js.CreateOrUpdateStream(context.Background(), r.StreamConfig()); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(context.Background(), subject, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		run(t, r)
		eventually(t, "the relay reports the stray message", func() bool { return strings.Contains(reported.String(), "Predictkit-Seq") })
		if r.Published() != 0 {
			t.Fatalf("the relay stored %d entries after a stray message", r.Published())
		}
	})

	t.Run("bad options are refused", func(t *testing.T) {
		js := connect(t)
		log := memLog{changelog.NewMemory()}
		for _, o := range []jetstream.Options{
			{Stream: "a.b"},
			{Subject: "predictkit.*"},
			{Subject: "predictkit..changes"},
			{MaxAge: -time.Second},
		} {
			if _, err := jetstream.NewRelay(js, log, o); err == nil {
				t.Errorf("NewRelay(%+v) accepted", o)
			}
		}
	})
}

func TestRelayOnStore(t *testing.T) {
	t.Run("trades written through the memory store reach the stream in order", func(t *testing.T) {
		js := connect(t)
		stream, subject := names(t, js)
		store := memory.New()
		tr := newTrader(t, store)
		r, _ := jetstream.NewRelay(js, store, jetstream.Options{Stream: stream, Subject: subject})
		run(t, r)
		if err := tr.buy(20); err != nil {
			t.Fatal(err)
		}
		b, _ := store.ChangeBounds(context.Background())
		eventually(t, "the relay reaches the log's end", func() bool { return r.Last() == b.Last })
		checkStream(t, js, stream, 1, b.Last, store)
	})
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ schema, stream, subject string }{
		{"", "PREDICTKIT_CHANGES", "predictkit.changes"},
		{"tenant_7", "PREDICTKIT_TENANT_7_CHANGES", "predictkit.tenant_7.changes"},
	} {
		t.Run("schema "+c.schema+" has its own stream and subject", func(t *testing.T) {
			s, sub := jetstream.Names(c.schema)
			if s != c.stream || sub != c.subject {
				t.Fatalf("Names(%q) = %q, %q", c.schema, s, sub)
			}
		})
	}
}
