package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// playwrightVersion is the playwright-core .ci/run installs (into a cache
// directory outside the repository) to drive Chromium.
const playwrightVersion = "1.65.1"

// playwrightCore is the playwright-core package's directory, or "":
// PREDICTKIT_PLAYWRIGHT_CORE, else where .ci/run installs it.
func playwrightCore() string {
	dir := ciPackage("PREDICTKIT_PLAYWRIGHT_CORE", "playwright-core", playwrightVersion)
	if _, err := os.Stat(filepath.Join(dir, "package.json")); dir == "" || err != nil {
		return ""
	}
	return dir
}

// ciPackage is the directory of npm package name: the one env names, else
// version's where .ci/run installs it (under PREDICTKIT_CI_CACHE, or the
// user's cache directory), or "" when there is neither.
func ciPackage(env, name, version string) string {
	if dir := os.Getenv(env); dir != "" {
		return dir
	}
	cache := os.Getenv("PREDICTKIT_CI_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(base, "predictkit-ci")
	}
	return filepath.Join(cache, name+"-"+version, "node_modules", name)
}

// browserTools are the Chromium, Node.js and playwright-core a browser
// test of what needs, or the test skips: without Chromium (a failure with
// PREDICTKIT_REQUIRE_CHROMIUM=1), Node.js or playwright-core.
func browserTools(t *testing.T, what string) (chromiumBin, node, playwright string) {
	t.Helper()
	chromiumBin = chromium()
	if chromiumBin == "" {
		if os.Getenv("PREDICTKIT_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("PREDICTKIT_REQUIRE_CHROMIUM=1 but no chromium is installed (apt-get install chromium)")
		}
		t.Skipf("no chromium: install it (apt-get install chromium) to test %s in a browser; PREDICTKIT_REQUIRE_CHROMIUM=1 makes this a failure", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node: the browser test drives Chromium with playwright-core on Node.js (apt-get install nodejs npm)")
	}
	playwright = playwrightCore()
	if playwright == "" {
		t.Skipf("no playwright-core: .ci/run installs it, or: npm install --prefix \"$HOME/.cache/predictkit-ci/playwright-core-%s\" playwright-core@%s (or set PREDICTKIT_PLAYWRIGHT_CORE to its directory)", playwrightVersion, playwrightVersion)
	}
	return chromiumBin, node, playwright
}

// cutProxy is a TCP proxy in front of the server that the test can cut:
// every connection through it is closed, and new ones are closed at once,
// until it is let through again: what a browser sees when its network
// drops.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go pipe(s, c)
		go pipe(c, s)
	}
}

// cut closes every connection and refuses new ones until let through.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *cutProxy) letThrough() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// browserMsg is a message a page's EventSource received.
type browserMsg struct {
	ID    string          `json:"id"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

type browserSource struct {
	Got     []browserMsg `json:"got"`
	Opens   int          `json:"opens"`
	Errors  int          `json:"errors"`
	Tickets int          `json:"tickets"`
}

type browserState struct {
	Pub   browserSource `json:"pub"`
	Me    browserSource `json:"me"`
	Error string        `json:"error"`
}

// TestStreamInBrowser: headless Chromium's EventSource, through a network
// the test cuts, receives a trade made through the API, loses its
// connection, and after it reconnects by itself (sending Last-Event-ID)
// receives the trades made meanwhile, each once. A second EventSource
// follows the me topic with a ticket, and after the cut opens again as
// the documentation says (a new ticket, last_event_id). It skips without
// Chromium (a failure with PREDICTKIT_REQUIRE_CHROMIUM=1), Node.js or
// playwright-core (which .ci/run installs).
func TestStreamInBrowser(t *testing.T) {
	bin, node, pw := browserTools(t, "the stream")
	script, err := filepath.Abs("testdata/stream_browser.js")
	if err != nil {
		t.Fatal(err)
	}

	h := streamHarness(t, memoryStore())
	w := newWorld(t, h)
	proxy := newCutProxy(t, h.base)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_CORE="+pw, "CHROMIUM="+bin, "BASE=http://"+proxy.addr(),
		fmt.Sprintf("MARKET=%d", w.a1.ID), "TOKEN="+w.alice.token)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		fmt.Fprintln(stdin, "quit")
		stdin.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node's log (end):\n%s", tail(stderr.String(), 4000))
		}
	}()
	out := bufio.NewReader(stdout)
	ask := func(command string) browserState {
		t.Helper()
		fmt.Fprintln(stdin, command)
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: the browser script said nothing (%v); its log:\n%s", command, err, tail(stderr.String(), 4000))
		}
		var st browserState
		if err := json.Unmarshal([]byte(line), &st); err != nil {
			t.Fatalf("%s: %q: %v", command, line, err)
		}
		if st.Error != "" {
			t.Fatalf("%s: %s; the page has %+v", command, st.Error, st)
		}
		return st
	}
	tradeIDs := func(ms []browserMsg) []int64 {
		var ids []int64
		for _, m := range ms {
			if m.Event == "trade" {
				var d struct {
					TradeID int64 `json:"trade_id"`
				}
				_ = json.Unmarshal(m.Data, &d)
				ids = append(ids, d.TradeID)
			}
		}
		return ids
	}

	ask("opens 1")
	first := h.buy(t, w.alice.token, w.a1.ID, "YES", 2_000)
	st := ask("wait 2 2") // the trade and its price; alice's notification and balance
	if got := tradeIDs(st.Pub.Got); len(got) != 1 || got[0] != first.TradeID {
		t.Fatalf("the page got trades %v, want %d", got, first.TradeID)
	}

	// The network drops; meanwhile two trades are made.
	proxy.cut()
	second := h.buy(t, w.bob.token, w.a1.ID, "NO", 3_000)
	third := h.buy(t, w.alice.token, w.a1.ID, "YES", 1_000)
	time.Sleep(300 * time.Millisecond) // a reconnection or two fails meanwhile
	proxy.letThrough()

	st = ask("opens 2")
	st = ask("wait 6 4")
	if got := tradeIDs(st.Pub.Got); len(got) != 3 || got[1] != second.TradeID || got[2] != third.TradeID {
		t.Fatalf("after reconnecting the page has trades %v, want %d, %d, %d", got, first.TradeID, second.TradeID, third.TradeID)
	}
	var last int64
	for _, m := range st.Pub.Got {
		var id int64
		fmt.Sscan(m.ID, &id)
		if id <= last {
			t.Fatalf("ids out of order or repeated: %+v", st.Pub.Got)
		}
		last = id
	}
	if st.Pub.Errors == 0 {
		t.Error("the page's EventSource saw no error: the connection was not cut")
	}
	// alice's me: her first trade's notification and balance, then those
	// of the third (not bob's), through a second ticket.
	if len(st.Me.Got) != 4 || st.Me.Got[2].Event != "notification" || st.Me.Got[3].Event != "balance" || st.Me.Tickets < 2 {
		t.Fatalf("me got %+v with %d tickets, want alice's two notifications and balances through a new ticket", st.Me.Got, st.Me.Tickets)
	}
	var n struct {
		UserID int64 `json:"user_id"`
	}
	_ = json.Unmarshal(st.Me.Got[3].Data, &n)
	if n.UserID != w.alice.id {
		t.Fatalf("me's last message is user %d's", n.UserID)
	}
}

// lockedBuffer is a bytes.Buffer safe for a process's writes and the
// test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
