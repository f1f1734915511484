package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/server"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// The stream's two performance figures, measured with the subscribers in
// a child process (this test binary, run as TestStreamClientProcess), so
// that the server's heap is the server's alone and the two processes do
// not share a file-descriptor limit:
//
//	go test -run '^$' -bench BenchmarkStream -benchtime 1x ./server
//
// PREDICTKIT_STREAM_BENCH_CONNS (default 10000) sets the idle connections;
// PREDICTKIT_STREAM_BENCH_SUBS (1000), _RATE (100 trades/s) and _SECONDS
// (10) the fan-out.

// BenchmarkStreamIdleConnections opens many idle streams and reports the
// server's Go heap (and goroutine stacks) per connection.
func BenchmarkStreamIdleConnections(b *testing.B) {
	n := envInt("PREDICTKIT_STREAM_BENCH_CONNS", 10_000)
	for range b.N {
		h := benchServer(b, memoryStore())
		before := heapNow()
		child := startClients(b, h.base, "idle", n, "topics=trades")
		time.Sleep(time.Second) // let the last connections settle
		after := heapNow()
		if p := os.Getenv("PREDICTKIT_STREAM_BENCH_HEAPPROFILE"); p != "" {
			f, err := os.Create(p)
			if err == nil {
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
		child.stop(b)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-B/conn")
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/float64(n), "heapinuse-B/conn")
		b.ReportMetric(float64(after.StackInuse-before.StackInuse)/float64(n), "stack-B/conn")
		b.ReportMetric(float64(after.Goroutines-before.Goroutines)/float64(n), "goroutines/conn")
	}
}

// BenchmarkStreamFanOut: subscribers of one market while trades go on at
// a steady rate; the subscribers report how long after each trade's
// time (taken inside its transaction, just before the commit) its message
// reached them.
func BenchmarkStreamFanOut(b *testing.B) {
	subs := envInt("PREDICTKIT_STREAM_BENCH_SUBS", 1000)
	rate := envInt("PREDICTKIT_STREAM_BENCH_RATE", 100)
	secs := envInt("PREDICTKIT_STREAM_BENCH_SECONDS", 10)
	cases := []struct {
		name  string
		store func(b *testing.B) server.Store
	}{{"memory", func(*testing.B) server.Store { return memoryStore() }}}
	if os.Getenv(pgtest.EnvURL) != "" {
		cases = append(cases, struct {
			name  string
			store func(b *testing.B) server.Store
		}{"postgres", func(b *testing.B) server.Store { return pgtest.New(b) }})
	}
	for _, sc := range cases {
		b.Run(sc.name, func(b *testing.B) {
			for range b.N {
				h := benchServer(b, sc.store(b))
				market, tokens := benchWorld(b, h.base)
				child := startClients(b, h.base, "fanout", subs, fmt.Sprintf("topics=market:%d", market))
				tick := time.NewTicker(time.Second / time.Duration(rate))
				end := time.Now().Add(time.Duration(secs) * time.Second)
				made := 0
				var wg sync.WaitGroup
				for time.Now().Before(end) {
					<-tick.C
					tok := tokens[made%len(tokens)]
					made++
					wg.Go(func() { benchBuy(b, h.base, tok, market) })
				}
				tick.Stop()
				wg.Wait()
				out := child.stopAfter(b, made)
				var r fanoutResult
				if err := json.Unmarshal(out, &r); err != nil {
					b.Fatalf("the clients said %q: %v", out, err)
				}
				if r.Count != made*subs {
					b.Errorf("%d deliveries, want %d trades × %d subscribers (%s)", r.Count, made, subs, streamCounters(b, h.base))
				}
				b.ReportMetric(r.P50, "p50-ms")
				b.ReportMetric(r.P99, "p99-ms")
				b.ReportMetric(r.Max, "max-ms")
				b.ReportMetric(float64(made)/float64(secs), "trades/s")
			}
		})
	}
}

// streamCounters are the server's stream metrics.
func streamCounters(b *testing.B, base string) string {
	res, err := http.Get("http://" + base + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "predictkit_stream_") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "; ")
}

type fanoutResult struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// benchServer starts a server that listens, on store, without the
// stream's limits and the trade rate limit.
func benchServer(b *testing.B, store server.Store) *harness {
	b.Helper()
	cfg := testConfig(store)
	cfg.Addr = "127.0.0.1:0"
	cfg.StreamMaxConnections = 1_000_000
	cfg.StreamMaxPerAddress = 1_000_000
	cfg.RateTrade = server.Rate{}
	var where *server.Listening
	app := server.New(cfg, fx.Populate(&where))
	if err := app.Start(b.Context()); err != nil {
		b.Fatalf("start: %v", err)
	}
	b.Cleanup(func() { _ = app.Stop(context.Background()) })
	return &harness{base: where.Addr()}
}

// benchWorld makes, through the API, an active event with one market and
// two traders with money; it returns the market and the traders' tokens.
func benchWorld(b *testing.B, base string) (int64, []string) {
	b.Helper()
	call := func(method, path, token string, in, out any) {
		b.Helper()
		body, _ := json.Marshal(in)
		req, _ := http.NewRequest(method, "http://"+base+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				b.Fatal(err)
			}
		}
	}
	user := func(name string) (int64, string) {
		var out struct {
			User struct {
				ID int64 `json:"id"`
			} `json:"user"`
			Token string `json:"access_token"`
		}
		call(http.MethodPost, "/api/v1/auth/register", "", map[string]string{"email": fmt.Sprintf("%s-%d@bench.test", name, emailSeq.Add(1)), "password": "password-123", "name": name}, &out)
		return out.User.ID, out.Token
	}
	cid, ctok := user("creator")
	call(http.MethodPatch, fmt.Sprintf("/api/v1/admin/users/%d", cid), adminToken, map[string]bool{"is_creator": true}, nil)
	var ev apiEvent
	call(http.MethodPost, "/api/v1/events", ctok, map[string]any{"name": "Bench", "pools": []any{map[string]any{
		"name": "Pool", "margin": 0.02, "lmsr_b_kopecks": 100_000_000, "markets": []any{map[string]any{"name": "M", "probability": 0.5}}}}}, &ev)
	call(http.MethodPost, fmt.Sprintf("/api/v1/events/%d/active", ev.ID), ctok, map[string]bool{"is_active": true}, nil)
	var tokens []string
	for i := range 4 {
		id, tok := user(fmt.Sprintf("trader%d", i))
		call(http.MethodPost, fmt.Sprintf("/api/v1/admin/users/%d/credit", id), adminToken, map[string]int64{"amount_kopecks": 1_000_000_000}, nil)
		tokens = append(tokens, tok)
	}
	return ev.Pools[0].Markets[0].ID, tokens
}

func benchBuy(b *testing.B, base, token string, market int64) {
	body := strings.NewReader(`{"side":"YES","amount_kopecks":100}`)
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://%s/api/v1/markets/%d/buy", base, market), body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Errorf("buy: %d", res.StatusCode)
	}
}

type heapFigures struct {
	HeapAlloc, HeapInuse, StackInuse uint64
	Goroutines                       int
}

func heapNow() heapFigures {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return heapFigures{ms.HeapAlloc, ms.HeapInuse, ms.StackInuse, runtime.NumGoroutine()}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// clients is the child process holding the subscribers.
type clients struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startClients runs n subscribers of query against addr in a child
// process and waits until every stream is open.
func startClients(b *testing.B, addr, mode string, n int, query string) *clients {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamClientProcess$")
	cmd.Env = append(os.Environ(), "PREDICTKIT_STREAM_CLIENT="+mode, "PREDICTKIT_STREAM_CLIENT_ADDR="+addr,
		"PREDICTKIT_STREAM_CLIENT_N="+strconv.Itoa(n), "PREDICTKIT_STREAM_CLIENT_QUERY="+query)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &clients{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	line, err := c.out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		b.Fatalf("the clients did not open their streams: %q %v", line, err)
	}
	return c
}

// stop tells the clients to finish and returns what they printed last.
func (c *clients) stop(b *testing.B) []byte {
	return c.stopAfter(b, 0)
}

// stopAfter tells the clients to finish once each has received n trades
// (or a minute has passed), and returns what they printed last.
func (c *clients) stopAfter(b *testing.B, n int) []byte {
	b.Helper()
	fmt.Fprintln(c.stdin, n)
	c.stdin.Close()
	rest, _ := io.ReadAll(c.out)
	if err := c.cmd.Wait(); err != nil {
		b.Fatalf("the clients: %v", err)
	}
	return bytes.TrimSpace(rest)
}

// TestStreamClientProcess is the benchmarks' child process; it does
// nothing in a normal run.
func TestStreamClientProcess(t *testing.T) {
	mode := os.Getenv("PREDICTKIT_STREAM_CLIENT")
	if mode == "" {
		return
	}
	addr := os.Getenv("PREDICTKIT_STREAM_CLIENT_ADDR")
	n := envInt("PREDICTKIT_STREAM_CLIENT_N", 1)
	query := os.Getenv("PREDICTKIT_STREAM_CLIENT_QUERY")
	conns := make([]net.Conn, 0, n)
	var received atomic.Int64 // trades received, over all connections
	var mu sync.Mutex
	var lat []float64
	var wg sync.WaitGroup
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "connection %d: %v\n", i, err)
			os.Exit(1)
		}
		fmt.Fprintf(c, "GET /api/v1/stream?%s HTTP/1.1\r\nHost: %s\r\n\r\n", query, addr)
		br := bufio.NewReaderSize(c, 4096)
		// The headers, then the body (chunked), from its opening comment.
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				fmt.Fprintf(os.Stderr, "connection %d: %v\n", i, err)
				os.Exit(1)
			}
			if strings.HasPrefix(line, "HTTP/1.1 ") && !strings.HasPrefix(line, "HTTP/1.1 200") {
				fmt.Fprintf(os.Stderr, "connection %d: %s", i, line)
				os.Exit(1)
			}
			if line == "\r\n" {
				break
			}
		}
		br = bufio.NewReaderSize(httputil.NewChunkedReader(br), 4096)
		if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, ": ok") {
			fmt.Fprintf(os.Stderr, "connection %d: %q %v\n", i, line, err)
			os.Exit(1)
		}
		conns = append(conns, c)
		if mode == "fanout" {
			wg.Go(func() {
				var mine []float64
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						break
					}
					if !strings.HasPrefix(line, "data: ") || !strings.Contains(line, `"trade_id"`) || strings.Contains(line, `"q_yes"`) {
						continue
					}
					now := time.Now()
					i := strings.Index(line, `"created_at":"`)
					if i < 0 {
						continue
					}
					rest := line[i+len(`"created_at":"`):]
					at, err := time.Parse(time.RFC3339Nano, rest[:strings.IndexByte(rest, '"')])
					if err != nil {
						continue
					}
					mine = append(mine, float64(now.Sub(at))/float64(time.Millisecond))
					received.Add(1)
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
		}
	}
	fmt.Println("ready")
	var expect int
	_, _ = fmt.Fscan(os.Stdin, &expect) // the parent says stop, and how many trades it made
	for deadline := time.Now().Add(time.Minute); received.Load() < int64(expect*n) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	out, _ := json.Marshal(fanoutResult{Count: len(lat), P50: pct(0.50), P99: pct(0.99), Max: pct(1)})
	fmt.Println(string(out))
	os.Exit(0)
}
