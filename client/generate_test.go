package client_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestGeneratedCodeIsUpToDate runs the //go:generate command of doc.go,
// with the generator pinned in go.mod, and compares what it makes with the
// committed file: a change to server/openapi.yaml (or to the generator's
// configuration) fails here until `go generate ./client` is run.
func TestGeneratedCodeIsUpToDate(t *testing.T) {
	args, output := generateCommand(t)
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the generator: %v", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(goCmd, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	committed, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	if line, ok := firstDifference(committed, stdout.Bytes()); !ok {
		t.Fatalf("client/%s is stale: it differs from what the generator makes of server/openapi.yaml with client/oapi-codegen.yaml "+
			"(first difference at line %d).\nRun `go generate ./client` and commit the result.", output, line)
	}
}

// generateCommand returns the arguments of doc.go's `go generate` command
// after "go", without its -o, and the file that -o names.
func generateCommand(t *testing.T) (args []string, output string) {
	t.Helper()
	f, err := os.Open("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "//go:generate go ")
		if !ok {
			continue
		}
		fields := strings.Fields(line)
		for i := 0; i < len(fields); i++ {
			if fields[i] == "-o" && i+1 < len(fields) {
				output = fields[i+1]
				i++
				continue
			}
			args = append(args, fields[i])
		}
		if output == "" {
			t.Fatalf("doc.go's go:generate line names no -o file: %q", sc.Text())
		}
		return args, output
	}
	t.Fatal("doc.go has no //go:generate go ... line")
	return nil, ""
}

// firstDifference reports whether a and b are equal and, when they are
// not, the first line where they differ.
func firstDifference(a, b []byte) (line int, equal bool) {
	if bytes.Equal(a, b) {
		return 0, true
	}
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range max(len(al), len(bl)) {
		if i >= len(al) || i >= len(bl) || !bytes.Equal(al[i], bl[i]) {
			return i + 1, false
		}
	}
	return len(al), false
}
