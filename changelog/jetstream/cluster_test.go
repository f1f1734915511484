package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
)

// natsBinary is the nats-server program. It skips t when there is none,
// unless NATS is required (CI), which fails it.
func natsBinary(t testing.TB) string {
	t.Helper()
	if bin, err := exec.LookPath("nats-server"); err == nil {
		return bin
	}
	if _, err := os.Stat("/usr/sbin/nats-server"); err == nil {
		return "/usr/sbin/nats-server"
	}
	if os.Getenv(envRequire) == "1" {
		t.Fatalf("no nats-server program, and %s=1 requires NATS", envRequire)
	}
	t.Skip("no nats-server program to run a NATS cluster with (install Debian's nats-server)")
	return ""
}

// freePorts returns n loopback TCP ports free at the moment.
func freePorts(t testing.TB, n int) []string {
	t.Helper()
	ports := make([]string, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// natsCluster is a three-node JetStream cluster of the test's own, on
// loopback, each node with its own store.
type natsCluster struct {
	t     testing.TB
	nodes []*clusterNode
}

type clusterNode struct {
	name, port string
	cmd        *exec.Cmd
	exited     chan struct{}
}

// startCluster starts three nats-server processes routed to each other
// and waits until JetStream can keep a stream with three replicas.
func startCluster(t testing.TB) *natsCluster {
	t.Helper()
	bin := natsBinary(t)
	const n = 3
	ports := freePorts(t, 2*n)
	c := &natsCluster{t: t}
	for i := range n {
		var routes []string
		for j := range n {
			if j != i {
				routes = append(routes, "nats://127.0.0.1:"+ports[n+j])
			}
		}
		node := &clusterNode{name: fmt.Sprintf("n%d", i+1), port: ports[i], exited: make(chan struct{})}
		node.cmd = exec.Command(bin, "-a", "127.0.0.1", "-p", node.port, "-n", node.name,
			"-js", "-sd", t.TempDir(),
			"--cluster_name", "predictkit-test", "--cluster", "nats://127.0.0.1:"+ports[n+i],
			"--routes", strings.Join(routes, ","))
		if err := node.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = node.cmd.Wait(); close(node.exited) }()
		c.nodes = append(c.nodes, node)
		t.Cleanup(func() { c.kill(node.name) })
	}
	for _, node := range c.nodes {
		eventually(t, "NATS node "+node.name+" answers", func() bool {
			conn, err := net.DialTimeout("tcp", "127.0.0.1:"+node.port, 100*time.Millisecond)
			if err == nil {
				conn.Close()
			}
			return err == nil
		})
	}
	c.ready()
	return c
}

// urls is the nodes' client URLs, comma-separated, as
// PREDICTKIT_STREAM_NATS_URL lists them.
func (c *natsCluster) urls() string {
	var us []string
	for _, n := range c.nodes {
		us = append(us, "nats://127.0.0.1:"+n.port)
	}
	return strings.Join(us, ",")
}

// ready waits until the cluster has elected its JetStream meta leader
// and can place a stream on all three nodes: it creates and deletes one.
func (c *natsCluster) ready() {
	c.t.Helper()
	js := dialCluster(c.t, c.urls())
	eventually(c.t, "the NATS cluster keeps a stream with 3 replicas", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.CreateOrUpdateStream(ctx, natsjs.StreamConfig{Name: "READY", Subjects: []string{"ready"}, Replicas: 3})
		return err == nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, "READY"); err != nil {
		c.t.Fatal(err)
	}
}

// kill kills node name at once (SIGKILL: no goodbye to its clients or
// peers) and waits until it is gone.
func (c *natsCluster) kill(name string) {
	for _, n := range c.nodes {
		if n.name == name {
			_ = n.cmd.Process.Signal(syscall.SIGKILL)
			<-n.exited
			return
		}
	}
	c.t.Fatalf("no node %q", name)
}

// dialCluster connects to the cluster as a server does: reconnecting for
// ever, quickly, to any node, keeping no publishes while it reconnects.
func dialCluster(t testing.TB, urls string) natsjs.JetStream {
	t.Helper()
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatalf("connect to the NATS cluster: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

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
	const total = 3000
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
			func(t *testing.T, _ *nats.Conn, _ []*nats.Conn, s natsjs.Stream) string {
				info, err := s.Info(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if info.Cluster == nil || info.Cluster.Leader == "" {
					t.Fatalf("the stream has no leader: %+v", info.Cluster)
				}
				return info.Cluster.Leader
			}},
		{"killing a follower's node, the follower moves to another and nothing is lost or repeated",
			func(t *testing.T, _ *nats.Conn, followers []*nats.Conn, _ natsjs.Stream) string {
				return followers[0].ConnectedServerName()
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t)
			log := changelog.NewMemory()
			var reported errs
			relayJS := dialCluster(t, c.urls())
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
				js := dialCluster(t, c.urls())
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
					c.kill(killed)
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
			t.Logf("killed %s; longest pause between deliveries: %s, %s; the relay published %d and reported: %s; the followers: %s; %s",
				killed, got[0].longestPause(), got[1].longestPause(), r.Published(), reported.String(), feedErrs[0], feedErrs[1])
		})
	}
}
