package server

import (
	"os"
	"strings"
	"testing"
)

// readmeRow is a setting's row in the README's configuration table.
func readmeRow(s setting) string {
	d := DefaultConfig()
	def := "empty"
	if v := s.get(&d); v != "" {
		def = "`" + v + "`"
	}
	return "| `-" + s.flag + "` | `" + s.env + "` | " + def + " | " + s.help + " |"
}

// TestReadmeListsEverySetting keeps the README's configuration table
// equal to the settings `predictkit serve -h` prints: every setting, in
// order, with its flag, variable, default and meaning, and nothing else.
func TestReadmeListsEverySetting(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skipf("no README beside the module: %v", err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Configuration\n")
	if !ok {
		t.Fatal("the README has no Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var have []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `-") {
			have = append(have, line)
		}
	}
	var want []string
	for _, s := range settings() {
		want = append(want, readmeRow(s))
	}
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's configuration table differs from the settings; it should read:\n\n| flag | environment | default | meaning |\n|---|---|---|---|\n%s", strings.Join(want, "\n"))
	}
}
