package jetstream_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
	"github.com/predictkit/predictkit/internal/natstest"
)

// delivery is what a follower was handed, and when.
type delivery struct {
	seqs  []int64
	times []time.Time
	n     atomic.Int64 // len(seqs), read while it grows
}

// longestPause is the longest time between two deliveries.
func (d *delivery) longestPause() time.Duration {
	var p time.Duration
	for i := 1; i < len(d.times); i++ {
		p = max(p, d.times[i].Sub(d.times[i-1]))
	}
	return p
}

// TestNATSCluster runs a relay and two followers on a three-node
// JetStream cluster with a stream of three replicas, and kills a node
// while entries flow: the node the relay is connected to, the stream's
// leader, or a follower's node. Every follower must get every entry once,
// in order, and the stream must hold each entry once under its number.
func TestNATSCluster(t *testing.T) {
	const total = 1500
	cases := []struct {
		name string
		// victim picks the node to kill, given the relay's connection,
		// the followers' connections and the stream.
		victim func(t *testing.T, relay *nats.Conn, followers []*nats.Conn, s natsjs.Stream) string
	}{
		{"killing the node the relay publishes through, the relay moves to another and nothing is lost or repeated",
			func(t *testing.T, relay *nats.Conn, _ []*nats.Conn, _ natsjs.Stream) string {
				return relay.ConnectedServerName()
			}},
		{"killing the stream's leader, another node leads and nothing is lost or repeated",
			func(t *testing.T, relay *nats.Conn, _ []*nats.Conn, s natsjs.Stream) string {
				js, err := natsjs.New(relay)
				if err != nil {
					t.Fatal(err)
				}
				return natstest.Leader(t, js, s.CachedInfo().Config.Name)
			}},
		{"killing a follower's node, the follower moves to another and nothing is lost or repeated",
			func(t *testing.T, _ *nats.Conn, followers []*nats.Conn, _ natsjs.Stream) string {
				return followers[0].ConnectedServerName()
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each case has a cluster of its own, and waits mostly for
			// elections and timeouts: they run side by side.
			t.Parallel()
			c := natstest.Start(t)
			log := changelog.NewMemory()
			var reported errs
			relayJS := natstest.Dial(t, c.URLs())
			r, err := jetstream.NewRelay(relayJS, memLog{log}, jetstream.Options{Replicas: 3, OnError: reported.add, AckTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			run(t, r)

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var followers []*nats.Conn
			got := make([]*delivery, 2)
			feedErrs := make([]*errs, 2)
			var wg sync.WaitGroup
			for i := range got {
				js := natstest.Dial(t, c.URLs())
				followers = append(followers, js.Conn())
				got[i], feedErrs[i] = &delivery{}, &errs{}
				f := jetstream.NewFeed(js, jetstream.FeedOptions{Batch: 100, OnError: feedErrs[i].add})
				wg.Go(func() {
					errEnough := errors.New("enough")
					err := f.Follow(ctx, 0, func(es []changelog.Entry) error {
						now := time.Now()
						for _, e := range es {
							got[i].seqs = append(got[i].seqs, e.Seq)
							got[i].times = append(got[i].times, now)
						}
						got[i].n.Store(int64(len(got[i].seqs)))
						if es[len(es)-1].Seq >= total {
							return errEnough
						}
						return nil
					})
					if !errors.Is(err, errEnough) {
						t.Errorf("follower %d: Follow returned %v after %d entries (it reported: %s)", i, err, len(got[i].seqs), feedErrs[i])
					}
				})
			}

			// Entries flow, a trade's few at a time, a little faster
			// than a busy market; a node dies a third of the way.
			// The stream exists on all three nodes and both followers
			// follow it before anything dies.
			appendN(log, 3)
			eventually(t, "both followers have the first entries", func() bool {
				return got[0].n.Load() == 3 && got[1].n.Load() == 3
			})
			killed := ""
			for n := 6; n <= total; n += 3 {
				appendN(log, 3)
				if n == total/3/3*3 {
					s, err := relayJS.Stream(ctx, r.Stream())
					if err != nil {
						t.Fatal(err)
					}
					killed = tc.victim(t, relayJS.Conn(), followers, s)
					c.Kill(killed)
				}
				time.Sleep(time.Millisecond)
			}
			wg.Wait()
			eventually(t, "the relay has published every entry", func() bool { return r.Last() == total })
			for i, d := range got {
				if len(d.seqs) != total {
					t.Errorf("follower %d got %d entries, want %d", i, len(d.seqs), total)
				}
				for k, s := range d.seqs {
					if s != int64(k)+1 {
						t.Fatalf("follower %d got %v… at %d, want every entry once, in order", i, d.seqs[k:min(k+5, len(d.seqs))], k+1)
					}
				}
			}
			checkStream(t, relayJS, r.Stream(), 1, total, log)
			// What keeps a relay that publishes again after a failover
			// from storing an entry twice: the stream's duplicate window,
			// set, and an entry's copy within it dropped.
			info, err := relayJS.Stream(ctx, r.Stream())
			if err != nil {
				t.Fatal(err)
			}
			if d := info.CachedInfo().Config.Duplicates; d != 2*time.Minute {
				t.Errorf("the stream's duplicate window is %s, want 2m", d)
			}
			es, err := log.Changes(ctx, total/2-1, 1)
			if err != nil {
				t.Fatal(err)
			}
			m, err := jetstream.Encode(info.CachedInfo().Config.Subjects[0], es[0])
			if err != nil {
				t.Fatal(err)
			}
			ack, err := relayJS.PublishMsg(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			if !ack.Duplicate || ack.Sequence != total/2 {
				t.Errorf("entry %d published again: %+v, want a duplicate of message %d", total/2, ack, total/2)
			}
			checkStream(t, relayJS, r.Stream(), 1, total, log)
			t.Logf("killed %s; longest pause between deliveries: %s, %s; the relay published %d and reported: %s; the followers: %s; %s",
				killed, got[0].longestPause(), got[1].longestPause(), r.Published(), reported.String(), feedErrs[0], feedErrs[1])
		})
	}
}
