// Package natstest runs NATS JetStream clusters for tests: three
// nats-server processes on loopback, routed to each other, each with a
// store of its own, which a test can kill one by one.
package natstest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// EnvRequire, set to 1 (as CI does), makes a missing nats-server program
// fail the tests that need one instead of skipping them.
const EnvRequire = "PREDICTKIT_REQUIRE_NATS"

// Binary is the nats-server program: nats-server on PATH, or Debian's
// /usr/sbin/nats-server. It skips t when there is none, unless
// PREDICTKIT_REQUIRE_NATS=1, which fails it.
func Binary(t testing.TB) string {
	t.Helper()
	if bin, err := exec.LookPath("nats-server"); err == nil {
		return bin
	}
	if _, err := os.Stat("/usr/sbin/nats-server"); err == nil {
		return "/usr/sbin/nats-server"
	}
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("no nats-server program, and %s=1 requires NATS", EnvRequire)
	}
	t.Skip("no nats-server program to run a NATS cluster with (install Debian's nats-server)")
	return ""
}

// A Cluster is a three-node JetStream cluster of a test's own.
type Cluster struct {
	t     testing.TB
	nodes []*node
}

type node struct {
	name, port string
	cmd        *exec.Cmd
	exited     chan struct{}
}

// Start starts a three-node cluster (nodes n1, n2 and n3) and waits until
// JetStream can keep a stream with three replicas on it. The nodes are
// killed when t ends. It skips t without a nats-server program (Binary).
func Start(t testing.TB) *Cluster {
	t.Helper()
	bin := Binary(t)
	const n = 3
	ports := freePorts(t, 2*n)
	c := &Cluster{t: t}
	for i := range n {
		var routes []string
		for j := range n {
			if j != i {
				routes = append(routes, "nats://127.0.0.1:"+ports[n+j])
			}
		}
		nd := &node{name: fmt.Sprintf("n%d", i+1), port: ports[i], exited: make(chan struct{})}
		nd.cmd = exec.Command(bin, "-a", "127.0.0.1", "-p", nd.port, "-n", nd.name,
			"-js", "-sd", t.TempDir(),
			"--cluster_name", "predictkit-test", "--cluster", "nats://127.0.0.1:"+ports[n+i],
			"--routes", strings.Join(routes, ","))
		if err := nd.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = nd.cmd.Wait(); close(nd.exited) }()
		c.nodes = append(c.nodes, nd)
		t.Cleanup(func() { c.Kill(nd.name) })
	}
	for _, nd := range c.nodes {
		wait(t, "NATS node "+nd.name+" answers", func() bool {
			conn, err := net.DialTimeout("tcp", "127.0.0.1:"+nd.port, 100*time.Millisecond)
			if err == nil {
				conn.Close()
			}
			return err == nil
		})
	}
	c.ready()
	return c
}

// URLs is the nodes' client URLs, comma-separated, as
// PREDICTKIT_STREAM_NATS_URL lists them.
func (c *Cluster) URLs() string {
	var us []string
	for _, nd := range c.nodes {
		us = append(us, "nats://127.0.0.1:"+nd.port)
	}
	return strings.Join(us, ",")
}

// Kill kills node name (n1, n2 or n3) at once, with SIGKILL (no goodbye to
// its clients or peers), and waits until it is gone.
func (c *Cluster) Kill(name string) {
	for _, nd := range c.nodes {
		if nd.name == name {
			_ = nd.cmd.Process.Signal(syscall.SIGKILL)
			<-nd.exited
			return
		}
	}
	c.t.Fatalf("no NATS node %q", name)
}

// Dial connects to the cluster as a predictkit server does: reconnecting
// for ever, quickly, to any node, keeping no publishes while it
// reconnects. The connection is closed when t ends.
func Dial(t testing.TB, urls string) natsjs.JetStream {
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

// Leader is the name of the node that leads stream, asked through js. A
// stream between leaders (an election runs for seconds on a loaded
// machine) is asked again, for up to 30 seconds.
func Leader(t testing.TB, js natsjs.JetStream, stream string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := js.Stream(ctx, stream)
		cancel()
		if err == nil {
			if info := s.CachedInfo(); info.Cluster != nil && info.Cluster.Leader != "" {
				return info.Cluster.Leader
			}
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("stream %s: %v", stream, err)
			}
			t.Fatalf("stream %s has had no leader for 30 s: %+v", stream, s.CachedInfo().Cluster)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ready waits until the cluster has elected its JetStream meta leader
// and can place a stream on all three nodes: it creates and deletes one.
func (c *Cluster) ready() {
	c.t.Helper()
	js := Dial(c.t, c.URLs())
	wait(c.t, "the NATS cluster keeps a stream with 3 replicas", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.CreateOrUpdateStream(ctx, natsjs.StreamConfig{Name: "READY", Subjects: []string{"natstest.ready"}, Replicas: 3})
		return err == nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, "READY"); err != nil {
		c.t.Fatal(err)
	}
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

// wait waits until cond holds, failing t after a generous limit.
func wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
