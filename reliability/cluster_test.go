package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// cluster is a PostgreSQL server of the test's own, which it may stop and
// start at will: the shared server on 127.0.0.1:5432 serves other tests
// meanwhile and is never touched.
type cluster struct {
	t    *testing.T
	bin  string // directory of initdb and pg_ctl
	dir  string // data, socket and log
	port int
	// asPostgres runs a command as the postgres OS user (PostgreSQL
	// refuses to run as root); nil when the test is not root.
	asPostgres []string
}

// postgresBin finds the newest installed PostgreSQL's binaries.
func postgresBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a > b
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// startCluster initializes and starts a throwaway cluster, stopped and
// deleted when t ends. It skips t when PostgreSQL's binaries (or, as
// root, runuser and the postgres user) are missing, unless
// PREDICTKIT_REQUIRE_POSTGRES=1, which makes that a failure.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		if os.Getenv(pgtest.EnvRequire) == "1" {
			t.Fatalf("%s=1 but %s", pgtest.EnvRequire, what)
		}
		t.Skipf("a throwaway PostgreSQL cluster needs %s", what)
	}
	c := &cluster{t: t, bin: postgresBin()}
	if c.bin == "" {
		missing("initdb and pg_ctl (/usr/lib/postgresql/<version>/bin)")
	}
	dir, err := os.MkdirTemp("", "predictkit-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	t.Cleanup(func() {
		c.pgctl("-m", "immediate", "stop")
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			missing("runuser, to run PostgreSQL as the postgres user")
		}
		u, err := user.Lookup("postgres")
		if err != nil {
			missing("the postgres OS user")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.asPostgres = []string{runuser, "-u", "postgres", "--"}
	}
	if out, err := c.run(filepath.Join(c.bin, "initdb"), "-D", c.data(), "-A", "trust", "-U", "postgres", "-N", "-E", "UTF8"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.port = portOf(t, freeAddr(t))
	c.start()
	return c
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, _ := strings.Cut(addr, ":")
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// URL is the cluster's postgres database.
func (c *cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

func (c *cluster) run(name string, args ...string) ([]byte, error) {
	argv := append(append(append([]string{}, c.asPostgres...), name), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

func (c *cluster) pgctl(args ...string) ([]byte, error) {
	return c.run(filepath.Join(c.bin, "pg_ctl"), append([]string{"-D", c.data()}, args...)...)
}

// start starts the server and waits until it accepts connections.
func (c *cluster) start() {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=100", c.port, c.dir)
	if out, err := c.pgctl("-o", opts, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// crash stops the server the way a crash would: no checkpoint, no
// goodbye to the clients; the next start replays the WAL.
func (c *cluster) crash() {
	c.t.Helper()
	start := time.Now()
	if out, err := c.pgctl("-m", "immediate", "-w", "stop"); err != nil {
		c.t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
	c.t.Logf("PostgreSQL stopped (immediate) in %v", time.Since(start).Round(time.Millisecond))
}
