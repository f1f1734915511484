package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// quick is a small, fast configuration of each mode.
var quick = map[string][]string{
	"binary markets": {"-b", "100", "-outcomes", "2", "-traders", "5", "-trades", "10", "-runs", "2", "-seed", "3"},
	"exclusive pool": {"-exclusive", "-b", "100", "-outcomes", "3", "-traders", "5", "-trades", "10", "-runs", "2", "-seed", "3"},
}

// emptyWorkingDirectory makes the test run in an empty directory of its
// own and returns it.
func emptyWorkingDirectory(t *testing.T) string {
	t.Helper()
	wd := t.TempDir()
	t.Chdir(wd)
	return wd
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s was written into the working directory", e.Name())
	}
}

func TestRunWritesIntoOutAndNothingIntoTheWorkingDirectory(t *testing.T) {
	for mode, args := range quick {
		t.Run(mode+": the CSV and the plots go into -out, made if missing", func(t *testing.T) {
			wd := emptyWorkingDirectory(t)
			out := filepath.Join(t.TempDir(), "new", "sim")
			var stdout bytes.Buffer
			if err := run(append([]string{"-out", out}, args...), &stdout); err != nil {
				t.Fatalf("run: %v\n%s", err, stdout.String())
			}
			want := []string{"simulate.csv", "prices.png", "pnl.png"}
			if mode == "exclusive pool" {
				want = append(want, "simulate-runs.csv", "sums.png")
			}
			for _, name := range want {
				if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
					t.Errorf("%s is not in -out: %v", name, err)
				}
			}
			if line := "wrote into " + out + ": simulate.csv ("; !strings.Contains(stdout.String(), line) {
				t.Errorf("the summary does not say %q:\n%s", line, stdout.String())
			}
			assertEmpty(t, wd)
		})
	}
}

var wroteInto = regexp.MustCompile(`(?m)^wrote into (.+): simulate\.csv \(\d+ rows\), prices\.png, pnl\.png, calibration\.png$`)

func TestRunWithoutOutWritesIntoANewTemporaryDirectoryItPrints(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	wd := emptyWorkingDirectory(t)
	var stdout bytes.Buffer
	if err := run(quick["binary markets"], &stdout); err != nil {
		t.Fatalf("run: %v\n%s", err, stdout.String())
	}
	m := wroteInto.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("the summary does not print where it wrote:\n%s", stdout.String())
	}
	if filepath.Dir(m[1]) != tmp || !strings.HasPrefix(filepath.Base(m[1]), "predictkit-simulate-") {
		t.Errorf("it wrote into %s, want a new predictkit-simulate-* directory in %s", m[1], tmp)
	}
	for _, name := range []string{"simulate.csv", "prices.png", "pnl.png", "calibration.png"} {
		if _, err := os.Stat(filepath.Join(m[1], name)); err != nil {
			t.Errorf("%s is not where the summary says: %v", name, err)
		}
	}
	assertEmpty(t, wd)
}

func TestRunWithNoOutputMakesNoDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	wd := emptyWorkingDirectory(t)
	args := append([]string{"-csv", "", "-prices", "", "-pnl", "", "-calibration", ""}, quick["binary markets"]...)
	var stdout bytes.Buffer
	if err := run(args, &stdout); err != nil {
		t.Fatalf("run: %v\n%s", err, stdout.String())
	}
	if strings.Contains(stdout.String(), "wrote") {
		t.Errorf("the summary names files although none was asked for:\n%s", stdout.String())
	}
	assertEmpty(t, tmp)
	assertEmpty(t, wd)
}
