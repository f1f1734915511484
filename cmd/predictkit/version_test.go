package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, &errs); code != 0 {
		t.Fatalf("predictkit version exited %d: %s%s", code, out.String(), errs.String())
	}
	t.Run("predictkit version prints the version, the revision and the Go version", func(t *testing.T) {
		fields := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok {
				fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		for _, k := range []string{"version", "revision", "go"} {
			if fields[k] == "" {
				t.Errorf("no %s in:\n%s", k, out.String())
			}
		}
		if fields["go"] != runtime.Version() {
			t.Errorf("go: %q, want %q", fields["go"], runtime.Version())
		}
	})
}
