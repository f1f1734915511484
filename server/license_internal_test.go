package server

import (
	"os"
	"strings"
	"testing"
)

// TestTheProjectIsApacheLicensed: the LICENSE file is the Apache License
// 2.0, the API document says so, and the README links the file.
func TestTheProjectIsApacheLicensed(t *testing.T) {
	t.Run("the LICENSE file is the Apache License 2.0 with the project's copyright line", func(t *testing.T) {
		raw, err := os.ReadFile("../LICENSE")
		if err != nil {
			t.Fatalf("no LICENSE beside the module: %v", err)
		}
		for _, want := range []string{"Apache License", "Version 2.0, January 2004", "Grant of Patent License", "Copyright 2026 The predictkit authors"} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("LICENSE does not say %q", want)
			}
		}
	})
	t.Run("the API document names the licence", func(t *testing.T) {
		doc, err := OpenAPIDocument()
		if err != nil {
			t.Fatal(err)
		}
		if doc.Info.License == nil || doc.Info.License.Name != "Apache-2.0" || doc.Info.License.URL != "https://www.apache.org/licenses/LICENSE-2.0" {
			t.Errorf("info.license is %+v, want Apache-2.0 with its URL", doc.Info.License)
		}
	})
	t.Run("the README's first screen names the licence and links LICENSE", func(t *testing.T) {
		raw, err := os.ReadFile("../README.md")
		if err != nil {
			t.Skipf("no README beside the module: %v", err)
		}
		head := strings.Join(strings.SplitN(string(raw), "\n", 25)[:24], "\n")
		if !strings.Contains(head, "Apache License 2.0](LICENSE)") {
			t.Errorf("the README's first lines do not link the licence:\n%s", head)
		}
	})
}
