package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binDir holds the predictkit binary the process tests build once.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// binary builds ./cmd/predictkit once per test run and returns its path.
func predictkitBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := filepath.Abs("..")
		if err != nil {
			buildErr = err
			return
		}
		if binDir, err = os.MkdirTemp("", "predictkit-reliability-"); err != nil {
			buildErr = err
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("the go tool is not on PATH: %w", err)
			return
		}
		buildPath = filepath.Join(binDir, "predictkit")
		cmd := exec.Command(goTool, "build", "-o", buildPath, "./cmd/predictkit")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/predictkit: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// adminToken is every test server's operator token.
const adminToken = "reliability-admin-token-0123456789"

// proc is the predictkit server running as a child process, restarted on
// the same address after it is killed.
type proc struct {
	t    *testing.T
	bin  string
	addr string
	env  []string
	log  *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// newProc prepares a server on databaseURL; start runs it.
func newProc(t *testing.T, databaseURL string, extraEnv ...string) *proc {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, bin: predictkitBinary(t), addr: freeAddr(t), log: log}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PREDICTKIT_") {
			p.env = append(p.env, kv)
		}
	}
	p.env = append(p.env,
		"PREDICTKIT_ADDR="+p.addr,
		"PREDICTKIT_DATABASE_URL="+databaseURL,
		"PREDICTKIT_ADMIN_TOKEN="+adminToken,
		"PREDICTKIT_LOG_LEVEL=warn",
		"PREDICTKIT_BCRYPT_COST=4",
		"PREDICTKIT_RATE_LOGIN=off", "PREDICTKIT_RATE_TRADE=off", "PREDICTKIT_RATE_PARTNER=off",
		// No background transaction: the ambiguous-commit test cuts the
		// first COMMIT after it arms its proxy.
		"PREDICTKIT_AUDIT_INTERVAL=0",
	)
	p.env = append(p.env, extraEnv...)
	t.Cleanup(func() {
		p.kill()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("server log (tail):\n%s", b)
		}
	})
	return p
}

func (p *proc) base() string { return "http://" + p.addr }

// start runs the server and waits until /readyz answers 200.
func (p *proc) start() {
	p.t.Helper()
	p.mu.Lock()
	cmd := exec.Command(p.bin, "serve")
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	fmt.Fprintf(p.log, "---- start %s\n", time.Now().Format(time.RFC3339Nano))
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		p.t.Fatalf("start the server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	if err := p.waitReady(30 * time.Second); err != nil {
		p.t.Fatal(err)
	}
}

// waitReady polls /readyz until it answers 200.
func (p *proc) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		done := p.done
		p.mu.Unlock()
		select {
		case <-done:
			return errors.New("the server exited while starting (see its log)")
		default:
		}
		if st, _, err := get(p.base() + "/readyz"); err == nil && st == http.StatusOK {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the server did not become ready within %v", limit)
}

// alive reports whether the process still runs.
func (p *proc) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the process to end: no shutdown hook
// runs, in-flight requests and transactions are cut wherever they are.
func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	fmt.Fprintf(p.log, "---- SIGKILL %s\n", time.Now().Format(time.RFC3339Nano))
	p.cmd = nil
}

// httpClient is the load's client: keep-alive, short time limits.
var httpClient = &http.Client{
	Timeout:   15 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
}

func get(url string) (int, []byte, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// call sends a JSON request and returns the status and body; status 0
// means no answer came (the request may or may not have been executed).
func call(ctx context.Context, method, url string, headers map[string]string, in any) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, b, nil
}

// mustCall is call for the setup: anything but want fails the test.
func mustCall(t *testing.T, method, url string, headers map[string]string, in, out any, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, b, err := call(ctx, method, url, headers, in)
	if err != nil || st != want {
		t.Fatalf("%s %s: %d %s %v", method, url, st, b, err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
}

// postJSON posts in and returns the status, the headers and the body of
// the answer; no answer fails t.
func postJSON(t *testing.T, url string, headers map[string]string, in any) (int, http.Header, []byte) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp.StatusCode, resp.Header, body
}
