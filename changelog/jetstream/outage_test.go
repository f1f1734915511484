package jetstream_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/changelog/jetstream"
)

// natsServer is a NATS server of the test's own, which it can stop and
// start again (on the same port, with the same store).
type natsServer struct {
	t         *testing.T
	bin, port string
	dir       string
	cmd       *exec.Cmd
}

// ownServer starts a nats-server with JetStream on a free port. It skips
// t when there is no nats-server program, unless NATS is required.
func ownServer(t *testing.T) *natsServer {
	t.Helper()
	connect(t) // skips when NATS tests are off
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nats-server"); serr != nil {
			if os.Getenv(envRequire) == "1" {
				t.Fatalf("no nats-server program to stop and start: %v", err)
			}
			t.Skip("no nats-server program to stop and start (install Debian's nats-server)")
		}
		bin = "/usr/sbin/nats-server"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	s := &natsServer{t: t, bin: bin, port: port, dir: t.TempDir()}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *natsServer) url() string { return "nats://127.0.0.1:" + s.port }

func (s *natsServer) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "-a", "127.0.0.1", "-p", s.port, "-js", "-sd", s.dir)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	eventually(s.t, "the NATS server answers", func() bool {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+s.port, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func (s *natsServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// connectTo connects to url as a server would: reconnecting for ever.
func connectTo(t *testing.T, url string) natsjs.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func TestNATSOutage(t *testing.T) {
	t.Run("while NATS is down the stream falls behind; when it is back the relay catches up and followers carry on", func(t *testing.T) {
		srv := ownServer(t)
		log := changelog.NewMemory()
		var reported errs
		r, err := jetstream.NewRelay(connectTo(t, srv.url()), memLog{log}, jetstream.Options{OnError: reported.add, AckTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		run(t, r)
		f := jetstream.NewFeed(connectTo(t, srv.url()), jetstream.FeedOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		got := make(chan []int64, 1)
		go func() {
			seqs, err := follow(ctx, f, 0, 60)
			if err != nil {
				t.Errorf("Follow: %v", err)
			}
			got <- seqs
		}()
		appendN(log, 20)
		eventually(t, "the relay publishes 20 entries", func() bool { return r.Last() == 20 })

		srv.stop()
		appendN(log, 20)
		time.Sleep(1500 * time.Millisecond) // longer than AckTimeout: the relay tries, and fails
		if r.Last() != 20 {
			t.Fatalf("the relay is at %d with NATS down", r.Last())
		}
		srv.start()
		appendN(log, 20)
		eventually(t, "the relay catches up", func() bool { return r.Last() == 60 })
		if seqs := <-got; len(seqs) != 60 {
			t.Fatalf("the follower got %d entries, want 60", len(seqs))
		}
		checkStream(t, connectTo(t, srv.url()), "PREDICTKIT_CHANGES", 1, 60, log)
		t.Logf("the relay reported: %s", reported.String())
		if reported.String() == "" {
			t.Error("the relay reported nothing while NATS was down")
		}
	})
}
