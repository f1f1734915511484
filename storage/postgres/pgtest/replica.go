package pgtest

import (
	"context"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/storage/postgres"
)

// The environment variables of the read replica tests: a primary and a
// streaming replica of it (.ci/replica.sh starts both).
const (
	EnvPrimaryURL     = "PREDICTKIT_TEST_PRIMARY_URL"
	EnvReplicaURL     = "PREDICTKIT_TEST_REPLICA_URL"
	EnvRequireReplica = "PREDICTKIT_REQUIRE_REPLICA"
)

// Replica is a primary and a streaming replica of it, for one test. The
// replica is reached through a proxy that the test may stop and start,
// as if the replica went down and came back.
type Replica struct {
	// Schema is t's fresh schema on the primary (and so on the replica).
	Schema string
	// PrimaryURL is the primary's database.
	PrimaryURL string
	// ReplicaURL is the replica's database through the proxy.
	ReplicaURL string

	direct string // the replica, not through the proxy
	proxy  *proxy
}

// NewReplica returns t's primary and replica, or skips t (fails it when
// PREDICTKIT_REQUIRE_REPLICA=1) if the variables are not set.
func NewReplica(t testing.TB) *Replica {
	t.Helper()
	primary, replica := os.Getenv(EnvPrimaryURL), os.Getenv(EnvReplicaURL)
	if primary == "" || replica == "" {
		if os.Getenv(EnvRequireReplica) == "1" {
			t.Fatalf("pgtest: %s and %s are not set but %s=1 requires a replica", EnvPrimaryURL, EnvReplicaURL, EnvRequireReplica)
		}
		t.Skipf("pgtest: set %s and %s (.ci/replica.sh starts a primary and a replica) to run the read replica tests", EnvPrimaryURL, EnvReplicaURL)
	}
	u, err := url.Parse(replica)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvReplicaURL, err)
	}
	p, err := newProxy(u.Host)
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	t.Cleanup(p.stop)
	proxied := *u
	proxied.Host = p.addr
	r := &Replica{Schema: schemaIn(t, primary), PrimaryURL: primary, ReplicaURL: proxied.String(), direct: replica, proxy: p}
	return r
}

// New returns a migrated store on the primary, in r.Schema, that sends
// its reads to the replica, closed when t ends. It waits until the
// replica has replayed the migrations.
func (r *Replica) New(t testing.TB, rc postgres.ReplicaConfig, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts = append([]postgres.Option{postgres.WithSchema(r.Schema), postgres.WithReplicas([]string{r.ReplicaURL}, rc)}, opts...)
	s, err := postgres.New(ctx, r.PrimaryURL, opts...)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	r.CatchUp(t)
	return s
}

// CatchUp waits until the replica has replayed everything the primary
// has written so far.
func (r *Replica) CatchUp(t testing.TB) {
	t.Helper()
	var lsn string
	r.exec(t, r.PrimaryURL, `SELECT pg_current_wal_lsn()::text`, &lsn)
	for start := time.Now(); ; {
		var done bool
		r.exec(t, r.direct, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, &done, lsn)
		if done {
			return
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("pgtest: the replica has not replayed %s after 30 s", lsn)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Pause stops the replica's replay (it keeps receiving WAL) until Resume
// or the end of t.
func (r *Replica) Pause(t testing.TB) {
	t.Helper()
	r.exec(t, r.direct, `SELECT pg_wal_replay_pause()::text`, new(string))
	t.Cleanup(func() { r.exec(t, r.direct, `SELECT pg_wal_replay_resume()::text`, new(string)) })
}

// Resume resumes the replica's replay.
func (r *Replica) Resume(t testing.TB) {
	t.Helper()
	r.exec(t, r.direct, `SELECT pg_wal_replay_resume()::text`, new(string))
}

// Stop makes the replica unreachable: the proxy closes its listener and
// every connection through it.
func (r *Replica) Stop(t testing.TB) { r.proxy.stop() }

// Start makes the replica reachable again, at the same address.
func (r *Replica) Start(t testing.TB) {
	t.Helper()
	if err := r.proxy.start(); err != nil {
		t.Fatalf("pgtest: restart the proxy: %v", err)
	}
}

func (r *Replica) exec(t testing.TB, dbURL, sql string, dest any, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql, args...).Scan(dest); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// proxy forwards TCP connections from addr to target while it runs.
type proxy struct {
	target, addr string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func newProxy(target string) (*proxy, error) {
	p := &proxy{target: target, addr: "127.0.0.1:0", conns: map[net.Conn]bool{}}
	if err := p.start(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *proxy) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.ln, p.addr = ln, ln.Addr().String()
	go p.accept(ln)
	return nil
}

func (p *proxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *proxy) forward(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src) // ends when either side closes
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}
