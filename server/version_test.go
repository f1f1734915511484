package server_test

import (
	"log/slog"
	"runtime"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// TestTheBuildIsNamed: the build's version, VCS revision and Go version
// are one thing, told the same by the build-info gauge and the start-up
// log line.
func TestTheBuildIsNamed(t *testing.T) {
	b := server.ReadBuild()
	t.Run("the build names its version, its revision and the Go version", func(t *testing.T) {
		if b.Version == "" || b.Revision == "" {
			t.Errorf("empty field in %+v", b)
		}
		if b.GoVersion != runtime.Version() {
			t.Errorf("Go version %q, want %q", b.GoVersion, runtime.Version())
		}
	})
	t.Run("predictkit_build_info carries version, revision, modified and goversion", func(t *testing.T) {
		h := newHarness(t, memoryStore())
		fam := h.scrape(t)["predictkit_build_info"]
		if fam == nil || len(fam.Metric) != 1 {
			t.Fatalf("predictkit_build_info: %v", fam)
		}
		got := map[string]string{}
		for _, l := range fam.Metric[0].Label {
			got[l.GetName()] = l.GetValue()
		}
		want := map[string]string{"version": b.Version, "revision": b.Revision, "modified": b.ModifiedLabel(), "goversion": b.GoVersion}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("label %s = %q, want %q (labels %v)", k, got[k], v, got)
			}
		}
	})
	t.Run("the start-up log line names the build", func(t *testing.T) {
		var logs syncBuffer
		cfg := server.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Store: memoryStore()}
		startServer(t, cfg)
		var found bool
		for _, l := range logLines(t, logs.String()) {
			if l["msg"] != "listening" {
				continue
			}
			found = true
			if l["version"] != b.Version || l["revision"] != b.Revision || l["go"] != b.GoVersion {
				t.Errorf("the start-up line does not name the build %+v: %v", b, l)
			}
		}
		if !found {
			t.Errorf("no start-up line in:\n%s", logs.String())
		}
	})
}
