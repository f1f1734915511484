package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/internal/redistest"
)

// testInstance is one instance's view of the test Redis, under
// prefix, with its log in a buffer and a clock the test moves.
type testInstance struct {
	r   *RedisLimits
	log *syncBuffer
	clk *fakeClock
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

func newTestInstance(t *testing.T, url, prefix string) *testInstance {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	in := &testInstance{log: &syncBuffer{}, clk: &fakeClock{time.Unix(1_000_000, 0)}}
	in.r = newRedisLimitsFrom(opt, slog.New(slog.NewTextHandler(in.log, nil)), in.clk.now)
	in.r.prefix = prefix
	t.Cleanup(func() { in.r.client.Close() })
	return in
}

// limit is a's limit name of rate r, shared through Redis, with its own
// in-process fallback on clk.
func (in *testInstance) limit(name string, r Rate) *fleetLimiter {
	return &fleetLimiter{shared: in.r.budget(name, r), local: newLimiter(r, in.clk.now)}
}

func allow(t *testing.T, l Limiter, key string) (bool, time.Duration) {
	t.Helper()
	ok, wait, err := l.Allow(context.Background(), key)
	if err != nil {
		t.Fatalf("Allow(%q): %v", key, err)
	}
	return ok, wait
}

func TestRedisLimiter(t *testing.T) {
	url := redistest.URL(t)
	five := Rate{N: 5, Per: time.Minute}

	t.Run("two instances share one budget of N, and the next request waits Per/N", func(t *testing.T) {
		prefix := redistest.Prefix(t, url)
		a := newTestInstance(t, url, prefix).limit("login", five)
		b := newTestInstance(t, url, prefix).limit("login", five)
		for i := range 5 {
			l := []*fleetLimiter{a, b}[i%2]
			if ok, _ := allow(t, l, "1.2.3.4"); !ok {
				t.Fatalf("request %d refused", i+1)
			}
		}
		for _, l := range []*fleetLimiter{a, b} {
			ok, wait := allow(t, l, "1.2.3.4")
			// Redis's clock moved on since the first request: the wait
			// is a little less than the 12 s one request's share is.
			if ok || wait <= 10*time.Second || wait > 12*time.Second {
				t.Fatalf("sixth request: ok %v, retry after %v; want refused for up to 12s", ok, wait)
			}
		}
		if ok, _ := allow(t, a, "5.6.7.8"); !ok {
			t.Fatal("another key's budget was spent")
		}
	})

	t.Run("without Redis each instance grants its own budget", func(t *testing.T) {
		clk := &fakeClock{time.Unix(1_000_000, 0)}
		a, b := newLimiter(five, clk.now), newLimiter(five, clk.now)
		granted := 0
		for i := range 12 {
			if ok, _ := allow(t, []*limiter{a, b}[i%2], "1.2.3.4"); ok {
				granted++
			}
		}
		if granted != 10 {
			t.Fatalf("%d of 12 granted, want 10 (5 each)", granted)
		}
	})

	t.Run("a refund gives the request back, also the only one spent", func(t *testing.T) {
		prefix := redistest.Prefix(t, url)
		l := newTestInstance(t, url, prefix).limit("trade", five)
		ctx := context.Background()
		for _, spent := range []int{1, 3} {
			key := "u" + string(rune('0'+spent))
			for range spent {
				allow(t, l, key)
			}
			if err := l.Refund(ctx, key); err != nil {
				t.Fatal(err)
			}
			granted := 0
			for range 6 {
				if ok, _ := allow(t, l, key); ok {
					granted++
				}
			}
			if want := 5 - spent + 1; granted != want {
				t.Errorf("after %d spent and one refunded: %d granted, want %d", spent, granted, want)
			}
		}
	})

	t.Run("keys are namespaced predictkit:rl:<limit>:<key>", func(t *testing.T) {
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		r := newRedisLimitsFrom(opt, slog.New(slog.DiscardHandler), nil)
		defer r.client.Close()
		key := fmt.Sprintf("test-%d", time.Now().UnixNano())
		full := "rate:predictkit:rl:login:" + key // redis_rate's "rate:" in front
		t.Cleanup(func() { redistest.Clean(t, url, full) })
		if ok, _ := allow(t, &fleetLimiter{shared: r.budget("login", five), local: newLimiter(five, nil)}, key); !ok {
			t.Fatal("refused")
		}
		if n, err := r.client.Exists(context.Background(), full).Result(); err != nil || n != 1 {
			t.Fatalf("EXISTS %s: %d %v", full, n, err)
		}
	})
}

// TestRedisLoginFailures: the failed passwords per account, shared.
func TestRedisLoginFailures(t *testing.T) {
	url := redistest.URL(t)
	newPair := func(t *testing.T) (a, b *loginFailures) {
		prefix := redistest.Prefix(t, url)
		for _, l := range []**loginFailures{&a, &b} {
			in := newTestInstance(t, url, prefix)
			*l = provideLoginFailures(Config{LoginFailuresPerAccount: 3, Now: in.clk.now}, in.r)
		}
		return a, b
	}
	ctx := context.Background()
	try := func(l *loginFailures, err error) bool {
		at, ok, _ := l.start(ctx, "ann@example.com")
		if ok {
			l.finish(ctx, "ann@example.com", at, err)
		}
		return ok
	}

	t.Run("failures at two instances add up, and the limited account waits for one failure's share", func(t *testing.T) {
		a, b := newPair(t)
		for i := range 3 {
			if !try([]*loginFailures{a, b}[i%2], account.ErrInvalidCredentials) {
				t.Fatalf("failure %d refused", i+1)
			}
		}
		for _, l := range []*loginFailures{a, b} {
			_, ok, wait := l.start(ctx, "ann@example.com")
			if ok || wait <= 4*time.Minute || wait > 5*time.Minute {
				t.Fatalf("fourth attempt: ok %v, wait %v; want refused for up to 5m", ok, wait)
			}
		}
	})

	t.Run("a success clears the count everywhere", func(t *testing.T) {
		a, b := newPair(t)
		try(a, account.ErrInvalidCredentials)
		try(a, account.ErrInvalidCredentials)
		try(b, nil)
		for i := range 3 {
			if !try(a, account.ErrInvalidCredentials) {
				t.Fatalf("failure %d after the success refused", i+1)
			}
		}
	})

	t.Run("an attempt that is neither is not counted, and a reset clears", func(t *testing.T) {
		a, b := newPair(t)
		for range 5 {
			if !try(a, errRateLimited) {
				t.Fatal("refused after attempts that were not failures")
			}
		}
		for range 3 {
			try(b, account.ErrInvalidCredentials)
		}
		a.clear(ctx, "ann@example.com")
		if !try(b, account.ErrInvalidCredentials) {
			t.Fatal("refused after the reset")
		}
	})
}

// cutProxy forwards TCP connections to target until cut: then it closes
// them and every new one at once (a Redis that is down), or, stalled,
// holds new ones without an answer (a Redis that hangs).
type cutProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	cut     bool
	stalled bool
	conns   []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.set(true, false)
	})
	return p
}

// set cuts (or restores) the proxy, closing the connections open now.
func (p *cutProxy) set(cut, stalled bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut, p.stalled = cut, stalled
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *cutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut, stalled := p.cut, p.stalled
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		if stalled {
			continue // held open, never answered; set closes it
		}
		if cut {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, c); s.Close() }()
		go func() { _, _ = io.Copy(c, s); c.Close() }()
	}
}

// TestRedisFallback: Redis going away and coming back, through a proxy
// the test cuts and restores.
func TestRedisFallback(t *testing.T) {
	url := redistest.URL(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, opt.Addr)
	viaProxy := strings.Replace(url, opt.Addr, proxy.ln.Addr().String(), 1)
	prefix := redistest.Prefix(t, url)
	in := newTestInstance(t, viaProxy, prefix)
	other := newTestInstance(t, url, prefix) // an instance Redis stays up for
	two := Rate{N: 2, Per: time.Hour}
	l, ol := in.limit("comment", two), other.limit("comment", two)
	r := in.r
	shared := func() float64 { return testutil.ToFloat64(r.shared) }
	fallbacks := func() float64 { return testutil.ToFloat64(r.fallbacks) }

	// Shared: the other instance spends the budget.
	allow(t, ol, "7")
	allow(t, ol, "7")
	if ok, _ := allow(t, l, "7"); ok || shared() != 1 {
		t.Fatalf("while Redis answers: ok %v, shared %v; want refused by the budget the other instance spent", ok, shared())
	}

	for _, stalled := range []bool{false, true} {
		what := map[bool]string{false: "down", true: "hanging"}[stalled]
		t.Run("a Redis "+what+" leaves the limits per instance, then shared again", func(t *testing.T) {
			key := "k-" + what
			proxy.set(true, stalled)
			before := fallbacks()
			warned := in.log.count("Redis does not answer")
			for i := range 3 {
				if i > 0 {
					in.clk.t = in.clk.t.Add(2 * r.backoff) // each request tries Redis again
				}
				if ok, _ := allow(t, l, key); ok != (i < 2) {
					t.Fatalf("request %d per instance: ok %v", i+1, ok)
				}
			}
			if shared() != 0 || fallbacks()-before != 3 {
				t.Fatalf("shared %v, fallbacks +%v; want 0 and +3", shared(), fallbacks()-before)
			}
			if n := in.log.count("Redis does not answer") - warned; n != 1 {
				t.Fatalf("%d warnings in one outage, want 1", n)
			}
			if st := r.Status(context.Background()); st.Status != "degraded" || st.Error == "" {
				t.Fatalf("status %+v, want degraded with the error", st)
			}
			// Within the backoff no request waits for Redis.
			proxy.set(false, false)
			before = fallbacks()
			allow(t, l, "within-backoff")
			if fallbacks()-before != 1 || shared() != 0 {
				t.Fatal("a request within the backoff asked Redis")
			}
			in.clk.t = in.clk.t.Add(r.backoff)
			ok, _ := allow(t, l, "7")
			if ok || shared() != 1 || in.log.count("Redis answers again") == 0 {
				t.Fatalf("after the backoff: ok %v, shared %v; want the shared budget's refusal, and a log line", ok, shared())
			}
			if st := r.Status(context.Background()); st.Status != "ok" || st.Error != "" {
				t.Fatalf("status %+v, want ok", st)
			}
		})
	}
}
