package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/predictkit/predictkit/server"
)

// The Dockerfile and compose.yaml are checked here, where no container
// engine is needed: what they configure must be what the binary reads.

// composeVars are the values the checks give the variables compose.yaml
// takes from the operator's environment.
var composeVars = map[string]string{
	"POSTGRES_PASSWORD":      "0123456789abcdef",
	"PREDICTKIT_ADMIN_TOKEN": "0123456789abcdef0123",
}

func TestContainerFiles(t *testing.T) {
	dockerText := readRepoFile(t, "Dockerfile")
	composeText := readRepoFile(t, "compose.yaml")
	df := parseDockerfile(dockerText)
	if len(df) == 0 {
		t.Fatal("the Dockerfile has no FROM")
	}
	final := df[len(df)-1]
	var cf composeFile
	if err := yaml.Unmarshal([]byte(composeText), &cf); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	known := serveSettings(t)

	t.Run("every PREDICTKIT_ variable the files name is a setting of predictkit serve", func(t *testing.T) {
		for file, text := range map[string]string{"Dockerfile": dockerText, "compose.yaml": composeText} {
			names := regexp.MustCompile(`PREDICTKIT_[A-Z0-9_]*`).FindAllString(text, -1)
			if file == "compose.yaml" && len(names) == 0 {
				t.Errorf("compose.yaml names no PREDICTKIT_ variable: the check would check nothing")
			}
			for _, name := range names {
				if !known[name] {
					t.Errorf("%s names %s, which is not a setting (predictkit serve -h)", file, name)
				}
			}
		}
	})

	t.Run("the image runs as a numeric user that is not root", func(t *testing.T) {
		user := final.last("USER")
		if user == "" {
			t.Fatal("the final stage sets no USER: the server would run as root")
		}
		uid, gid, hasGID := strings.Cut(user, ":")
		if n, err := strconv.Atoi(uid); err != nil || n == 0 {
			t.Errorf("USER %s: the user must be a number other than 0 (a runtime cannot check a name)", user)
		}
		if n, err := strconv.Atoi(gid); hasGID && (err != nil || n == 0) {
			t.Errorf("USER %s: the group must be a number other than 0", user)
		}
	})

	entrypoint := execForm(t, "ENTRYPOINT", final.last("ENTRYPOINT"))
	if len(entrypoint) != 1 || !strings.HasSuffix(entrypoint[0], "/predictkit") {
		t.Fatalf("ENTRYPOINT %q: want the predictkit binary alone", entrypoint)
	}
	imageEnv := final.env()

	// The services built from this Dockerfile, with their environment as
	// the container sees it: the image's ENV, then the service's own.
	type service struct {
		name    string
		command []string
		env     map[string]string
		s       composeService
	}
	var built []service
	serveAt := -1
	for name, s := range cf.Services {
		if s.Build == nil {
			continue
		}
		env := map[string]string{}
		for k, v := range imageEnv {
			env[k] = v
		}
		for k, v := range s.Environment {
			env[k] = interpolate(t, "services."+name+".environment."+k, v)
		}
		cmd := s.Command
		if len(cmd) == 0 {
			cmd = execForm(t, "CMD", final.last("CMD"))
		}
		built = append(built, service{name, cmd, env, s})
		if len(cmd) > 0 && cmd[0] == "serve" {
			serveAt = len(built) - 1
		}
	}
	if serveAt < 0 {
		t.Fatal("no service of compose.yaml builds the Dockerfile and runs predictkit serve")
	}
	serve := built[serveAt]
	lookup := func(env map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	}
	cfg, err := server.LoadConfig(serve.command[1:], lookup(serve.env), io.Discard)
	if err != nil {
		t.Fatalf("service %s: predictkit serve refuses its configuration: %v", serve.name, err)
	}
	listenHost, listenPort, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		t.Fatalf("listen address %q: %v", cfg.Addr, err)
	}

	t.Run("the server listens on every interface of the container", func(t *testing.T) {
		if listenHost != "" && listenHost != "0.0.0.0" && listenHost != "::" {
			t.Errorf("PREDICTKIT_ADDR %q: only the container itself could reach the server", cfg.Addr)
		}
	})

	t.Run("the image exposes the port the server listens on", func(t *testing.T) {
		exposed := strings.Fields(final.last("EXPOSE"))
		if !slices.Contains(exposed, listenPort) && !slices.Contains(exposed, listenPort+"/tcp") {
			t.Errorf("EXPOSE %q, but the server listens on %s", exposed, cfg.Addr)
		}
	})

	t.Run("the health check runs predictkit health against the port the server listens on", func(t *testing.T) {
		hc := final.last("HEALTHCHECK")
		opts, cmd, ok := strings.Cut(hc, "CMD ")
		if !ok {
			t.Fatalf("HEALTHCHECK %q: want HEALTHCHECK [options] CMD [...]", hc)
		}
		args := execForm(t, "HEALTHCHECK CMD", cmd)
		if len(args) < 2 || args[0] != entrypoint[0] || args[1] != "health" {
			t.Fatalf("HEALTHCHECK CMD %q: want [%q, \"health\", ...]", args, entrypoint[0])
		}
		var stderr bytes.Buffer
		h, err := parseHealthArgs(args[2:], lookup(serve.env), &stderr)
		if err != nil {
			t.Fatalf("predictkit %s refuses its arguments: %s", strings.Join(args[1:], " "), stderr.String())
		}
		u, _ := url.Parse(h.url)
		if u.Port() != listenPort {
			t.Errorf("the health check asks %s, but the server listens on %s", h.url, cfg.Addr)
		}
		if u.Path != "/readyz" {
			t.Errorf("the health check asks %s, want /readyz", h.url)
		}
		limit := 30 * time.Second // Docker's default --timeout
		for _, o := range strings.Fields(opts) {
			if v, ok := strings.CutPrefix(o, "--timeout="); ok {
				if limit, err = time.ParseDuration(v); err != nil {
					t.Fatalf("HEALTHCHECK %s: %v", o, err)
				}
			}
		}
		if h.timeout >= limit {
			t.Errorf("predictkit health waits %v, not less than the HEALTHCHECK's %v: the engine would kill it before it says why", h.timeout, limit)
		}
	})

	t.Run("compose publishes the port the server listens on", func(t *testing.T) {
		if len(serve.s.Ports) == 0 {
			t.Fatalf("service %s publishes no port", serve.name)
		}
		for _, p := range serve.s.Ports {
			parts := strings.Split(strings.TrimSuffix(p, "/tcp"), ":")
			if parts[len(parts)-1] != listenPort {
				t.Errorf("service %s publishes %q, but the server listens on %s", serve.name, p, cfg.Addr)
			}
		}
	})

	t.Run("every service built from the Dockerfile has a configuration the binary accepts", func(t *testing.T) {
		for _, s := range built {
			var names []string
			for k := range s.env {
				names = append(names, k+"=")
			}
			if w := server.UnknownVariables(names); len(w) > 0 {
				t.Errorf("service %s: %v", s.name, w)
			}
			if _, err := server.LoadConfig(nil, lookup(s.env), io.Discard); err != nil {
				t.Errorf("service %s: %v", s.name, err)
			}
		}
	})

	t.Run("the server waits for a healthy PostgreSQL with a named volume", func(t *testing.T) {
		u, err := url.Parse(cfg.DatabaseURL)
		if err != nil || cfg.DatabaseURL == "" {
			t.Fatalf("service %s has no PostgreSQL URL: it would run on the in-memory store", serve.name)
		}
		db, ok := cf.Services[u.Hostname()]
		if !ok || !strings.HasPrefix(db.Image, "postgres:") {
			t.Fatalf("the database URL names host %q, which is no postgres service", u.Hostname())
		}
		if !strings.Contains(strings.Join(db.Healthcheck.Test, " "), "pg_isready") {
			t.Errorf("service %s has no pg_isready health check: %q", u.Hostname(), db.Healthcheck.Test)
		}
		if got := serve.s.DependsOn[u.Hostname()].Condition; got != "service_healthy" {
			t.Errorf("service %s depends on %s with condition %q, want service_healthy", serve.name, u.Hostname(), got)
		}
		named := false
		for _, v := range db.Volumes {
			src, dst, _ := strings.Cut(v, ":")
			_, declared := cf.Volumes[src]
			named = named || (declared && strings.HasPrefix(dst, "/var/lib/postgresql/data"))
		}
		if !named {
			t.Errorf("service %s keeps its data in no named volume: %q", u.Hostname(), db.Volumes)
		}
	})

	t.Run("the migrations run before the server starts", func(t *testing.T) {
		if cfg.MigrateOnStart {
			return // the server applies them itself
		}
		for _, s := range built {
			if len(s.command) == 0 || s.command[0] != "migrate" || (len(s.command) > 1 && s.command[1] != "up") {
				continue
			}
			if s.env["PREDICTKIT_DATABASE_URL"] != cfg.DatabaseURL {
				t.Errorf("service %s migrates another database than the server's", s.name)
			}
			if got := serve.s.DependsOn[s.name].Condition; got != "service_completed_successfully" {
				t.Errorf("service %s depends on %s with condition %q, want service_completed_successfully", serve.name, s.name, got)
			}
			return
		}
		t.Errorf("PREDICTKIT_MIGRATE_ON_START is off and no service runs predictkit migrate up")
	})

	t.Run("no secret is written in compose.yaml", func(t *testing.T) {
		required := regexp.MustCompile(`^\$\{[A-Z0-9_]+:?\?[^}]*\}$`)
		for name, s := range cf.Services {
			for k, v := range s.Environment {
				if regexp.MustCompile(`PASSWORD|TOKEN|SECRET`).MatchString(k) && !required.MatchString(v) {
					t.Errorf("services.%s.environment.%s is %q: want ${VARIABLE:?message}, which compose refuses to run without", name, k, v)
				}
				if u, err := url.Parse(v); err == nil && u.User != nil {
					if p, ok := u.User.Password(); ok && !strings.HasPrefix(p, "${") {
						t.Errorf("services.%s.environment.%s holds a password: take it from a variable", name, k)
					}
				}
			}
		}
	})
}

// TestInterpolate checks the checks' stand-in for compose's variable
// substitution.
func TestInterpolate(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"a plain value is kept", "postgres://db/x", "postgres://db/x"},
		{"a set variable is substituted", "p=${POSTGRES_PASSWORD}", "p=0123456789abcdef"},
		{"a required variable that is set is substituted", "${PREDICTKIT_ADMIN_TOKEN:?set it}", "0123456789abcdef0123"},
		{"an unset variable takes its default", "${NOPE:-8080}", "8080"},
		{"$$ is a dollar", "a$$b", "a$b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := interpolate(t, c.name, c.in); got != c.want {
				t.Errorf("%q became %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serveSettings are the variables `predictkit serve -h` lists.
func serveSettings(t *testing.T) map[string]bool {
	t.Helper()
	var out bytes.Buffer
	if code := run(context.Background(), []string{"serve", "-h"}, &out, &out); code != 0 {
		t.Fatalf("serve -h exited %d", code)
	}
	known := map[string]bool{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], "PREDICTKIT_") {
			known[f[1]] = true
		}
	}
	if len(known) < 10 {
		t.Fatalf("serve -h lists %d settings:\n%s", len(known), out.String())
	}
	return known
}

// interpolate substitutes variables as compose does: ${NAME},
// ${NAME:-default}, ${NAME-default}, ${NAME:?message}, ${NAME?message},
// $NAME and $$, from composeVars. A required variable that is unset fails
// the test.
func interpolate(t *testing.T, where, s string) string {
	t.Helper()
	return os.Expand(s, func(expr string) string {
		if expr == "$" {
			return "$"
		}
		name, rest := expr, ""
		if i := strings.IndexAny(expr, ":-?"); i >= 0 {
			name, rest = expr[:i], expr[i:]
		}
		v, ok := composeVars[name]
		empty := !ok || (strings.HasPrefix(rest, ":") && v == "")
		switch {
		case strings.HasPrefix(strings.TrimPrefix(rest, ":"), "-"):
			if empty {
				return strings.TrimPrefix(strings.TrimPrefix(rest, ":"), "-")
			}
		case strings.HasPrefix(strings.TrimPrefix(rest, ":"), "?"):
			if empty {
				t.Errorf("%s: %s is required and unset", where, name)
			}
		case rest != "":
			t.Errorf("%s: cannot read ${%s}", where, expr)
		}
		return v
	})
}

// composeFile is the part of compose.yaml the checks read.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// dockerStage is one FROM of a Dockerfile and its instructions, each as
// {INSTRUCTION, arguments} with continuation lines joined.
type dockerStage struct {
	from         string
	instructions [][2]string
}

func parseDockerfile(text string) []dockerStage {
	var stages []dockerStage
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		instr, args, _ := strings.Cut(line, " ")
		instr, args = strings.ToUpper(instr), strings.TrimSpace(args)
		if instr == "FROM" {
			stages = append(stages, dockerStage{from: args})
			return
		}
		if len(stages) > 0 {
			s := &stages[len(stages)-1]
			s.instructions = append(s.instructions, [2]string{instr, args})
		}
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue // a comment, also between continuation lines
		}
		if strings.HasSuffix(trimmed, `\`) {
			cur.WriteString(strings.TrimSuffix(trimmed, `\`) + " ")
			continue
		}
		cur.WriteString(trimmed)
		flush()
	}
	flush()
	return stages
}

// last is the arguments of the stage's last instr, which is the one in
// force, or "".
func (s dockerStage) last(instr string) string {
	v := ""
	for _, in := range s.instructions {
		if in[0] == instr {
			v = in[1]
		}
	}
	return v
}

// env is what the stage's ENV instructions set (KEY=value forms).
func (s dockerStage) env() map[string]string {
	env := map[string]string{}
	for _, in := range s.instructions {
		if in[0] != "ENV" {
			continue
		}
		for _, kv := range strings.Fields(in[1]) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = strings.Trim(v, `"`)
			}
		}
	}
	return env
}

// execForm reads an instruction's JSON array form: in an image with no
// shell, the shell form cannot run.
func execForm(t *testing.T, instr, args string) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatalf("%s %s: want the exec form [\"...\", ...] (the image has no shell): %v", instr, args, err)
	}
	return v
}
