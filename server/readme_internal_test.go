package server

import (
	"os"
	"strings"
	"testing"
)

// readmeRow is a setting's row in the configuration table of
// docs/configuration.md.
func readmeRow(s setting) string {
	d := DefaultConfig()
	def := "empty"
	if v := s.get(&d); v != "" {
		def = "`" + v + "`"
	}
	return "| `-" + s.flag + "` | `" + s.env + "` | " + def + " | " + s.help + " |"
}

// TestReadmeListsEverySetting keeps the configuration table of
// docs/configuration.md equal to the settings `predictkit serve -h`
// prints: every setting, in order, with its flag, variable, default and
// meaning, and nothing else.
func TestReadmeListsEverySetting(t *testing.T) {
	raw, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Skipf("no docs/configuration.md beside the module: %v", err)
	}
	var have []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "| `-") {
			have = append(have, line)
		}
	}
	var want []string
	for _, s := range settings() {
		want = append(want, readmeRow(s))
	}
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		t.Errorf("the configuration table of docs/configuration.md differs from the settings; it should read:\n\n| flag | environment | default | meaning |\n|---|---|---|---|\n%s", strings.Join(want, "\n"))
	}
}
