//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The guides in docs/ are kept true as the README is (see the rules at
// the top of readme_test.go), with one difference: each guide is a bash
// session of its own, against a demo server of its own, so that a reader
// can follow any guide alone on a fresh `go run ./cmd/predictkit`. The
// server's variables are those of the guide's own
// `$ PREDICTKIT_...=... go run ./cmd/predictkit` line, or the README's
// when the guide has none.

// sampleFiles returns the README and the guides of docs/, by their names
// relative to the repository's root, with their texts.
func sampleFiles(t *testing.T) (names []string, texts map[string]string) {
	t.Helper()
	guides, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	texts = map[string]string{}
	for _, path := range append([]string{"../../README.md"}, guides...) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(path), "../../")
		names = append(names, name)
		texts[name] = string(raw)
	}
	return names, texts
}

// hasSamples reports whether a Markdown text has a block the samples'
// test runs.
func hasSamples(text string) bool {
	for _, b := range readmeBlocks(text) {
		if b.info == "sh" || b.info == "sh postgres" {
			return true
		}
	}
	return false
}

func TestDocsSamples(t *testing.T) {
	needSampleTools(t)
	names, texts := sampleFiles(t)
	readmeEnv, ok := sampleServerEnv(texts["README.md"])
	if !ok {
		t.Fatal("the README has no console line `$ PREDICTKIT_...=... go run ./cmd/predictkit` starting the walkthrough's server")
	}
	ran := 0
	for _, name := range names[1:] {
		if !hasSamples(texts[name]) {
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, ok := sampleServerEnv(texts[name])
			if !ok {
				env = readmeEnv
			}
			runSamples(t, name, texts[name], env)
		})
	}
	if ran == 0 {
		t.Fatal("no guide in docs/ has ```sh samples")
	}
}

var (
	// curlBody is a curl option that sends a body.
	curlBody = regexp.MustCompile(`(?:^|\s)(?:-d|--data(?:-raw|-binary|-urlencode)?|--json)(?:\s|=)`)
	// redirect is a redirection of output into a file.
	redirect = regexp.MustCompile(`(?:^|[^0-9&>])>>?\s*([^\s;&|)]+)`)
	// curlWrite is an option of curl that writes a file.
	curlWrite = regexp.MustCompile(`\s(?:-[ocD]|--(?:output|cookie-jar|dump-header))\s+([^\s;&|)]+)`)
)

// unquoted returns a command with the text inside its quotes left out, so
// that a `>` in a JSON string is not read as a redirection.
func unquoted(cmd string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
				b.WriteByte(c)
			} else if quote == '"' && c == '$' {
				b.WriteByte(c) // a variable in double quotes stays
			}
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// shellCommands returns the commands of a block: those of a ```sh block
// as the samples' test splits them, and those after a `$ ` prompt of a
// ```console block with their continuation lines.
func shellCommands(b readmeBlock) []sampleStep {
	switch b.info {
	case "sh", "sh postgres":
		steps, err := sampleSteps(b, b.lines)
		if err != nil {
			return nil
		}
		return steps
	case "console":
	default:
		return nil
	}
	var steps []sampleStep
	for i := 0; i < len(b.lines); i++ {
		cmd, ok := strings.CutPrefix(b.lines[i], "$ ")
		if !ok {
			continue
		}
		st := sampleStep{line: b.line + i, command: cmd}
		for strings.HasSuffix(strings.TrimSpace(b.lines[i]), `\`) && i+1 < len(b.lines) {
			i++
			st.command += "\n" + b.lines[i]
		}
		steps = append(steps, st)
	}
	return steps
}

// TestSamplesSendJSONAndWriteNoFiles: every curl of the README and the
// guides that sends a body says it is JSON (the server refuses any other
// body with 415), and no sample that is run writes a file where it runs,
// which would be the reader's clone: samples keep files in a temporary
// directory.
func TestSamplesSendJSONAndWriteNoFiles(t *testing.T) {
	names, texts := sampleFiles(t)
	for _, name := range names {
		t.Run(name+" sends JSON bodies as JSON and writes no file where it runs", func(t *testing.T) {
			for _, b := range readmeBlocks(texts[name]) {
				b.file = name
				for _, s := range shellCommands(b) {
					var writes [][]string
					for _, cmd := range strings.Split(unquoted(s.command), "|") {
						if !strings.Contains(cmd, "curl ") {
							continue
						}
						if curlBody.MatchString(cmd) && !strings.Contains(s.command, "Content-Type: ") {
							t.Errorf("%s:%d: curl sends a body without -H 'Content-Type: application/json':\n%s", name, s.line, s.command)
						}
						writes = append(writes, curlWrite.FindAllStringSubmatch(cmd, -1)...)
					}
					if b.info == "console" {
						continue
					}
					for _, m := range append(writes, redirect.FindAllStringSubmatch(unquoted(s.command), -1)...) {
						target := strings.Trim(m[1], `"`)
						if strings.HasPrefix(target, "/dev/") || strings.HasPrefix(target, "$") || strings.HasPrefix(target, "&") || strings.HasPrefix(target, "-") {
							continue
						}
						t.Errorf("%s:%d: the sample writes %q where it runs: write into a temporary directory (\"$(mktemp -d)\") instead:\n%s", name, s.line, target, s.command)
					}
				}
			}
		})
	}
}
