//go:build unix

package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// The samples of the README and of the guides in docs/ are kept true by
// TestReadmeSamples and TestDocsSamples (readme_docs_test.go). The rules,
// which docs/development.md repeats for whoever writes a sample:
//
//   - A ```sh block is run. All of a file's run in its order as one bash
//     session (a variable set in one block is there in the next, and
//     `set -o pipefail` is on), in an empty temporary directory, with
//     `predictkit` on PATH, against a demo server of the file's own,
//     started as the file's `$ PREDICTKIT_...=... go run ./cmd/predictkit`
//     line says (the README's for a guide without one): its variables are
//     the server's environment.
//     `predictkit` is the test binary itself (see TestMain), and the
//     environment adds only what changes no output: bcrypt's lowest cost
//     and no sleep at exit under -race, which keep the run to seconds.
//     In the commands, `localhost:8080` and `127.0.0.1:8080` are
//     rewritten to that server's address, and in what they print the
//     address is rewritten back to `127.0.0.1:8080`.
//   - A ```sh postgres block runs as well when PREDICTKIT_TEST_DATABASE_URL
//     is set, with readmeDatabaseURL rewritten to the URL of a fresh,
//     empty schema (and back in what they print); without the variable it
//     is left out (and the test fails instead when
//     PREDICTKIT_REQUIRE_POSTGRES=1).
//   - A ```console block (commands after a `$ ` prompt) is shown, not run:
//     the text beside it says why. Other shell fences (bash, shell, zsh) are
//     refused, so that no sample is left out by accident.
//   - What a command prints is shown by the `#` lines right under it, up
//     to a blank line or the next command (`#` alone is an empty line), or
//     by a comment on the command's own line that starts with `{` or `[`.
//     Comments after a blank line, or before a command, are prose.
//   - Output shown as JSON (it starts with `{` or `[`) is compared by
//     value, one JSON value per answer: every key and value shown must be
//     in the answer; an object or array that shows `…` (or `...`) among
//     its members may hold more, and one that does not must hold exactly
//     those; key order does not matter; `…` as a value stands for any
//     value, inside a string for any text, and right after a number's
//     digits for the digits that follow. A line of its own `…` stands for
//     any number of answers. Text after a JSON value on its line is a
//     note.
//   - Other output is compared line by line, runs of spaces and tabs read
//     as one space and a trailing carriage return dropped; `…` stands for
//     any text, and a line of its own `…` for any number of lines. A
//     trailing `(...)` after two spaces, or a line that is all `(...)`, is
//     a note.
//   - A command must exit 0, unless a note of its output says `exit N`.
//     A command whose output the README does not show must not answer a
//     JSON error object (`{"error": ...}`): shown or not, an answer never
//     says something the file does not.
//   - No sample writes a file where it runs, and every curl that sends a
//     body sends it as JSON (TestSamplesSendJSONAndWriteNoFiles).

// readmeDatabaseURL is the database URL of the README's PostgreSQL samples.
const readmeDatabaseURL = "postgres://predictkit@db:5432/predictkit?sslmode=disable"

// readmeMainEnv makes the test binary run as predictkit: the samples call
// `predictkit`, which is a link to the test binary, so that the binary
// they run is the one under test without a separate build. The name has
// no PREDICTKIT_ prefix, so the server does not warn about it.
const readmeMainEnv = "README_SAMPLES_RUN_AS_PREDICTKIT"

func TestMain(m *testing.M) {
	if os.Getenv(readmeMainEnv) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// readmeBlock is a fenced block of the README.
type readmeBlock struct {
	file  string   // the file it is in, for messages ("" is README.md)
	info  string   // the fence's info string: "sh", "sh postgres", "console", ...
	line  int      // the line number of its first line (after the fence)
	lines []string // its lines
}

// readmeBlocks returns the fenced blocks of a Markdown text.
func readmeBlocks(text string) []readmeBlock {
	var blocks []readmeBlock
	var cur *readmeBlock
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			if cur != nil {
				blocks = append(blocks, *cur)
				cur = nil
			} else {
				cur = &readmeBlock{info: strings.TrimSpace(line[3:]), line: i + 2}
			}
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, line)
		}
	}
	return blocks
}

// sampleStep is one command of a sample and the output the README shows.
type sampleStep struct {
	line     int    // the README line of the command's first line
	command  string // the command as the README writes it (rewritten)
	expected []string
	expLine  int // the README line of the first output line
}

// shellScan follows the quoting of one line of shell, continuing the
// state of the lines before it: it reports whether the command is still
// open after the line, and where a comment starts (-1: none).
type shellScan struct {
	stack []byte // '\'', '"', '(' for $( ... )
}

func (s *shellScan) line(line string) (open bool, comment int) {
	comment = -1
	top := func() byte {
		if len(s.stack) == 0 {
			return 0
		}
		return s.stack[len(s.stack)-1]
	}
	continued := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		continued = false
		switch top() {
		case '\'':
			if c == '\'' {
				s.stack = s.stack[:len(s.stack)-1]
			}
			continue
		case '"':
			switch {
			case c == '\\':
				if i == len(line)-1 {
					continued = true
				}
				i++
			case c == '"':
				s.stack = s.stack[:len(s.stack)-1]
			case c == '$' && i+1 < len(line) && line[i+1] == '(':
				s.stack = append(s.stack, '(')
				i++
			}
			continue
		}
		// Outside quotes: at the top or inside $( ... ).
		switch {
		case c == '\\':
			if i == len(line)-1 {
				continued = true
			}
			i++
		case c == '\'' || c == '"':
			s.stack = append(s.stack, c)
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			s.stack = append(s.stack, '(')
			i++
		case c == '(' && top() == '(':
			s.stack = append(s.stack, '(')
		case c == ')' && top() == '(':
			s.stack = s.stack[:len(s.stack)-1]
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			if len(s.stack) == 0 {
				comment = i
			}
			return len(s.stack) > 0, comment
		}
	}
	return len(s.stack) > 0 || continued, comment
}

// sampleSteps splits a block into its commands and their shown outputs.
func sampleSteps(b readmeBlock, lines []string) ([]sampleStep, error) {
	var steps []sampleStep
	for i := 0; i < len(lines); {
		line := lines[i]
		trim := strings.TrimSpace(line)
		if trim == "" || strings.HasPrefix(trim, "#") {
			i++ // prose, or an output with no command above it
			continue
		}
		st := sampleStep{line: b.line + i}
		var sc shellScan
		var cmd []string
		comment := -1
		for {
			if i >= len(lines) {
				return nil, fmt.Errorf("%s:%d: the command does not end (an unclosed quote or $( ?)", cmp.Or(b.file, "README.md"), st.line)
			}
			var open bool
			open, comment = sc.line(lines[i])
			cmd = append(cmd, lines[i])
			i++
			if !open {
				break
			}
		}
		st.command = strings.Join(cmd, "\n")
		if comment >= 0 {
			note := strings.TrimSpace(cmd[len(cmd)-1][comment+1:])
			if strings.HasPrefix(note, "{") || strings.HasPrefix(note, "[") {
				st.expected = append(st.expected, note)
				st.expLine = b.line + i - 1
			}
		}
		for i < len(lines) && (lines[i] == "#" || strings.HasPrefix(lines[i], "# ")) {
			if st.expLine == 0 {
				st.expLine = b.line + i
			}
			st.expected = append(st.expected, strings.TrimPrefix(strings.TrimPrefix(lines[i], "#"), " "))
			i++
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// readmeServer starts `predictkit` (bin) with env on a port of 127.0.0.1
// the kernel gives it, waits until it answers, and returns its address;
// it is stopped when t ends. Its log is shown if the test fails.
//
// The address is read from the server's own "listening" log line: a
// port picked beforehand and handed over could be picked by a parallel
// test's server too, and a health check on it could then be answered by
// that server, whose samples' end would cut this test's off.
func readmeServer(t *testing.T, bin string, env []string) string {
	t.Helper()
	log := &lockedBuffer{}
	cmd := exec.Command(bin)
	cmd.Env = append(slices.Clone(env), "PREDICTKIT_ADDR=127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("the demo server's log:\n%s", tail(log.String(), 40))
		}
	})
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case err := <-exited:
			t.Fatalf("the demo server exited: %v\n%s", err, log.String())
		default:
		}
		if addr := listeningAddr(log.String()); addr != "" {
			res, err := client.Get("http://" + addr + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					return addr
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo server did not answer within a minute:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listeningAddr is the address of the server's "listening" log line
// (JSON, the default format), "" before it has one.
func listeningAddr(log string) string {
	for _, line := range strings.Split(log, "\n") {
		var l struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "listening" {
			return l.Addr
		}
	}
	return ""
}

// lockedBuffer is a bytes.Buffer the server's output is copied into
// while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// walkthroughServer reads, from the README's console line that starts
// the server for the walkthrough, the variables it sets.
var walkthroughServer = regexp.MustCompile(`(?m)^\$ ((?:PREDICTKIT_[A-Z_]+=\S+ )+)go run \./cmd/predictkit$`)

func TestReadmeSamples(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("read the README: %v", err)
	}
	needSampleTools(t)
	serverEnv, ok := sampleServerEnv(string(raw))
	if !ok {
		t.Fatalf("the README has no console line `$ PREDICTKIT_...=... go run ./cmd/predictkit` starting the walkthrough's server")
	}
	runSamples(t, "README.md", string(raw), serverEnv)
}

// needSampleTools skips the test when a tool the samples call is missing.
func needSampleTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the samples need %s, which is not installed (CI installs it)", tool)
		}
	}
}

// sampleServerEnv reads, from a Markdown text's console line that starts
// the demo server (`$ PREDICTKIT_...=... go run ./cmd/predictkit`), the
// variables it sets.
func sampleServerEnv(text string) ([]string, bool) {
	m := walkthroughServer.FindStringSubmatch(text)
	if m == nil {
		return nil, false
	}
	return strings.Fields(m[1]), true
}

// runSamples runs the ```sh blocks of the Markdown file name (text), in
// order, as one bash session against a demo server of their own started
// with serverEnv, and checks what each command prints.
func runSamples(t *testing.T, name, text string, serverEnv []string) {
	t.Helper()
	start := time.Now()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	predictkit := filepath.Join(bin, "predictkit")
	if err := os.Symlink(self, predictkit); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"LC_ALL=C.UTF-8",
		readmeMainEnv + "=1",
		// Plumbing that changes no output, for speed: under -race a
		// process sleeps a second at exit by default, and bcrypt at the
		// default cost takes a second a hash; the samples start some thirty
		// processes and hash a dozen passwords.
		"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
		"PREDICTKIT_BCRYPT_COST=4",
	}
	if testing.CoverMode() != "" {
		// A binary built for coverage warns at exit without a place to
		// write it.
		env = append(env, "GOCOVERDIR="+t.TempDir())
	}
	addr := readmeServer(t, predictkit, append(slices.Clone(env), serverEnv...))
	// The commands are rewritten to the test's server and database; what
	// they print is rewritten back, so that the outputs read as the
	// file's.
	rewrite := strings.NewReplacer("localhost:8080", addr, "127.0.0.1:8080", addr)
	back := []string{addr, "127.0.0.1:8080"}

	var dbURL string
	if os.Getenv(pgtest.EnvURL) != "" || os.Getenv(pgtest.EnvRequire) == "1" {
		dbURL = pgtest.SchemaURL(t)
		rewrite = strings.NewReplacer("localhost:8080", addr, "127.0.0.1:8080", addr, readmeDatabaseURL, dbURL)
		back = append(back, dbURL, readmeDatabaseURL)
	}

	var steps []sampleStep
	var skipped []int
	for _, b := range readmeBlocks(text) {
		b.file = name
		lang, _, _ := strings.Cut(b.info, " ")
		switch {
		case b.info == "sh":
		case b.info == "sh postgres":
			if dbURL == "" {
				skipped = append(skipped, b.line)
				continue
			}
		case lang == "sh" || lang == "bash" || lang == "shell" || lang == "zsh":
			t.Errorf("%s:%d: a ```%s block: fence a sample ```sh (run by this test), ```sh postgres (run with PostgreSQL) or ```console (shown, not run)", name, b.line-1, b.info)
			continue
		default:
			continue
		}
		s, err := sampleSteps(b, b.lines)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s {
			s[i].command = rewrite.Replace(s[i].command)
		}
		steps = append(steps, s...)
	}
	if len(skipped) > 0 {
		t.Logf("left out the PostgreSQL samples at %s lines %v: set %s to run them", name, skipped, pgtest.EnvURL)
	}
	if len(steps) == 0 {
		t.Fatalf("%s has no ```sh samples", name)
	}

	// One script: each command between two markers that carry its
	// number and exit code.
	var script strings.Builder
	script.WriteString("set -o pipefail\n")
	for i, s := range steps {
		fmt.Fprintf(&script, "printf '\\n\\036begin %d\\036\\n'; __t=$EPOCHREALTIME\n%s\n__rc=$?; printf '\\n\\036end %d %%d %%s %%s\\036\\n' $__rc $__t $EPOCHREALTIME\n", i, s.command, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-s")
	cmd.Dir = t.TempDir()
	cmd.Env = env
	cmd.Stdin = strings.NewReader(script.String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A sample that leaves a process behind must not hold the test: at
	// the end the whole process group goes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}

	outputs, codes, took := splitSampleOutput(strings.NewReplacer(back...).Replace(out.String()), len(steps))
	for i, s := range steps {
		if codes[i] < 0 {
			t.Fatalf("%s:%d: the samples stopped before this command (bash: %v); the end of their output:\n%s", name, s.line, runErr, tail(out.String(), 30))
		}
		if msg := checkStep(s, outputs[i], codes[i]); msg != "" {
			t.Errorf("%s:%d: %s\n%s", name, s.line, firstLine(s.command), msg)
		}
	}
	slowest := make([]int, len(steps))
	for i := range slowest {
		slowest[i] = i
	}
	slices.SortFunc(slowest, func(a, b int) int { return cmp.Compare(took[b], took[a]) })
	var slow []string
	for _, i := range slowest[:min(3, len(slowest))] {
		slow = append(slow, fmt.Sprintf("line %d %v", steps[i].line, took[i].Round(time.Millisecond)))
	}
	t.Logf("%d commands of %s ran in %v (the slowest: %s)", len(steps), name, time.Since(start).Round(time.Millisecond), strings.Join(slow, ", "))
}

func firstLine(s string) string {
	line, _, more := strings.Cut(s, "\n")
	if more {
		line += " …"
	}
	return line
}

// splitSampleOutput cuts the script's output at its markers: the output,
// exit code and duration of each of n commands (exit code -1 for one that
// never ended).
func splitSampleOutput(out string, n int) ([]string, []int, []time.Duration) {
	outputs := make([]string, n)
	codes := make([]int, n)
	took := make([]time.Duration, n)
	for i := range codes {
		codes[i] = -1
	}
	for _, part := range strings.Split(out, "\n\036begin ")[1:] {
		num, rest, _ := strings.Cut(part, "\036\n")
		i, err := strconv.Atoi(num)
		if err != nil || i < 0 || i >= n {
			continue
		}
		body, end, ok := strings.Cut(rest, "\n\036end ")
		if !ok {
			outputs[i] = rest
			continue
		}
		// "i code start end": the times are bash 5's $EPOCHREALTIME,
		// empty in an older bash.
		end, _, _ = strings.Cut(end, "\036")
		f := strings.Fields(end)
		if len(f) >= 2 && f[0] == strconv.Itoa(i) {
			if code, err := strconv.Atoi(f[1]); err == nil {
				codes[i] = code
			}
		}
		if len(f) == 4 {
			from, err1 := strconv.ParseFloat(f[2], 64)
			to, err2 := strconv.ParseFloat(f[3], 64)
			if err1 == nil && err2 == nil {
				took[i] = time.Duration((to - from) * float64(time.Second))
			}
		}
		outputs[i] = body
	}
	return outputs, codes, took
}

// markdownAnchors returns the anchors of a Markdown text: GitHub's slugs
// of its headings (a repeated one gets -1, -2, ...) and its <a id>s.
func markdownAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		heading := strings.TrimLeft(line, "#")
		if heading == line || !strings.HasPrefix(heading, " ") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

var (
	htmlAnchor   = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan     = regexp.MustCompile("`[^`]*`")
)

// TestReadmeLinks keeps the links of the README and of docs/ working: an
// #anchor names a heading of its file, a relative link names a file of
// the repository (and a heading in it), and no link leaves the
// repository.
func TestReadmeLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md")}, docs...)
	texts := map[string]string{}
	anchors := map[string]map[string]bool{}
	read := func(path string) (string, bool) {
		if text, ok := texts[path]; ok {
			return text, true
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		texts[path] = string(raw)
		return texts[path], true
	}
	for _, file := range files {
		text, ok := read(file)
		if !ok {
			t.Fatalf("cannot read %s", file)
		}
		name, _ := filepath.Rel(root, file)
		t.Run(name+" links only to what exists in the repository", func(t *testing.T) {
			inFence := false
			for i, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "```") {
					inFence = !inFence
				}
				if inFence {
					continue
				}
				for _, m := range markdownLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, "``"), -1) {
					target := m[1]
					if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
						continue
					}
					path, anchor, _ := strings.Cut(target, "#")
					dest := file
					if path != "" {
						dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
						if rel, err := filepath.Rel(root, dest); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
							t.Errorf("%s:%d: %s leaves the repository", name, i+1, target)
							continue
						}
						if _, err := os.Stat(dest); err != nil {
							t.Errorf("%s:%d: %s: no such file in the repository", name, i+1, target)
							continue
						}
					}
					if anchor == "" || !strings.HasSuffix(dest, ".md") {
						continue
					}
					destText, ok := read(dest)
					if !ok {
						t.Errorf("%s:%d: %s: cannot read it", name, i+1, target)
						continue
					}
					if anchors[dest] == nil {
						anchors[dest] = markdownAnchors(destText)
					}
					if !anchors[dest][anchor] {
						t.Errorf("%s:%d: %s: no heading or <a id> makes the anchor #%s", name, i+1, target, anchor)
					}
				}
			}
		})
	}
}
